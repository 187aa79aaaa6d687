// The one spawn primitive: a clone(CLONE_VM|CLONE_VFORK|CLONE_PIDFD) child that resets signals,
// leads a new session (or only a new process group), wires its descriptors, optionally confines
// itself, and execs. No policy lives here: the caller decides every disposition and hands over
// a finished confinement plan. Used by the addon (in the Node host) and by cordon-exec (the
// supervisor that confines the command it forks).
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "confine.h"

namespace cordon {

// What fd N of the child becomes.
enum class SlotKind : uint8_t {
  Null = 0,     // /dev/null
  Pipe = 1,     // a fresh pipe; the child reads slot 0 and writes every other slot
  Inherit = 2,  // the caller's own fd N (its close-on-exec flag is cleared in the child)
  Fd = 3,       // the caller's fd `Slot::fd`, installed as fd N
};

struct Slot {
  SlotKind kind = SlotKind::Null;
  int fd = -1;  // SlotKind::Fd only
};

constexpr int kMaxChildFds = 10;

// How the child relates to sessions and process groups.
enum class SessionMode : uint8_t {
  NewSession = 0,  // setsid(): no controlling terminal, its own group (every piped command)
  NewGroup = 1,    // setpgid(0, 0) only: stays in the caller's session (a terminal's job)
};

struct SpawnRequest {
  const char* path = nullptr;   // the program, an absolute path (the caller searched PATH)
  char* const* argv = nullptr;  // NULL-terminated
  char* const* envp = nullptr;  // NULL-terminated, complete (the caller merged it)
  const char* cwd = nullptr;    // NULL: inherit the caller's cwd
  int fd_count = 3;             // 3..kMaxChildFds; fds >= fd_count are closed before exec
  Slot slots[kMaxChildFds];
  SessionMode session = SessionMode::NewSession;
  int foreground_tty = -1;                // NewGroup only: the child fd of a terminal whose foreground group it becomes
  uint64_t reset_signals = 0;             // handlers the child resets (bit n-1 for signal n); 0: every one
  const ConfinementPlan* plan = nullptr;  // NULL: unconfined
};

struct SpawnResult {
  pid_t pid = -1;
  int pidfd = -1;
  int parent_fds[kMaxChildFds] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};  // host ends of Pipe slots, O_CLOEXEC
  const char* stage = nullptr;                                              // set on failure before exec
  int error = 0;                                                            // errno of that stage
};

// Per-caller-thread resources reused across spawns (the child stack, an O_CLOEXEC /dev/null).
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

// A NULL-terminated char* array over `strings` (for exec's argv and envp; valid while they are).
std::vector<char*> c_array(std::vector<std::string>& strings);

}  // namespace cordon
