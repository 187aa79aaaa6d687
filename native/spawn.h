// The one spawn primitive: a clone(CLONE_VM|CLONE_VFORK|CLONE_PIDFD) child that leads a new
// session, wires stdio, optionally confines itself, and execs. No policy lives here: the host
// (TypeScript) decides every disposition and hands over a finished confinement plan.
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "confine.h"

namespace cordon {

// What fd N of the child becomes. Indexes 0..2 are stdio; index 3 (optional) is an extra
// child-writes pipe used by the supervisor to report the command's exit.
enum class StdioKind : uint8_t { Null = 0, Pipe = 1, Inherit = 2 };

constexpr int kMaxChildFds = 4;

struct SpawnRequest {
  const char* file;   // argv[0] as given; searched in PATH when it has no '/'
  char* const* argv;  // NULL-terminated
  char* const* envp;  // NULL-terminated, complete (the host already merged it)
  const char* cwd;    // NULL: inherit the host's cwd
  int fd_count;       // 3 or 4
  StdioKind kinds[kMaxChildFds];
  const ConfinementPlan* plan;  // NULL: unconfined
};

struct SpawnResult {
  pid_t pid = -1;
  int pidfd = -1;
  int parent_fds[kMaxChildFds] = {-1, -1, -1, -1};  // host ends of Pipe fds, O_CLOEXEC
  const char* stage = nullptr;                      // set on failure before exec
  int error = 0;                                    // errno of that stage
};

// Per-host-thread resources reused across spawns (the child stack, an O_CLOEXEC /dev/null).
struct SpawnContext {
  void* stack = nullptr;
  size_t stack_size = 0;
  int dev_null = -1;
};

bool spawn_context_init(SpawnContext* ctx);
void spawn_context_free(SpawnContext* ctx);

// Spawns the child. Returns true with pid/pidfd/parent_fds filled, or false with stage+error
// (the child, if one started, is already reaped and every fd opened for it is closed).
bool spawn_process(SpawnContext* ctx, const SpawnRequest& req, SpawnResult* out);

}  // namespace cordon
