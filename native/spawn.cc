// The clone-based spawn. Why clone and not posix_spawn: the child must run confinement steps
// between fork and exec, and a CLONE_VM|CLONE_VFORK child copies no page tables (libuv's fork()
// copies Node's whole address space). One path serves confined and unconfined spawns alike.
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

namespace cordon {

namespace {

constexpr size_t kStackSize = 256 * 1024;

// Shared with the child through CLONE_VM: inputs it reads, and the failure it leaves behind.
struct ChildArgs {
  const char* path;
  char* const* argv;
  char* const* envp;
  const char* cwd;
  int fd_count;
  int sources[kMaxChildFds];  // fd to install as child fd i; i itself: the host's fd (inherit)
  const ConfinementPlan* plan;
  const char* stage;
  int error;
};

// The kernel's sigaction layout (rt_sigaction takes this, not glibc's struct).
struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)(void);
  uint64_t mask;
};

[[noreturn]] void child_fail(ChildArgs* a, const char* stage, int error) {
  a->stage = stage;
  a->error = error;
  syscall(SYS_exit_group, 127);
  __builtin_unreachable();
}

int child_main(void* arg) {
  ChildArgs* a = static_cast<ChildArgs*>(arg);
  // Every host handler is Node's and runs on the host's memory: reset all of them before any
  // signal can be unblocked. SIG_IGN (Node ignores SIGPIPE) would survive exec, so it goes too.
  KernelSigaction dfl = {SIG_DFL, 0, nullptr, 0};
  for (int sig = 1; sig < 65; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    syscall(SYS_rt_sigaction, sig, &dfl, nullptr, sizeof(uint64_t));
  }
  if (syscall(SYS_setsid) < 0) child_fail(a, "setsid", errno);
  if (a->cwd != nullptr && syscall(SYS_chdir, a->cwd) != 0) child_fail(a, "chdir", errno);
  for (int i = 0; i < a->fd_count; i++) {
    int src = a->sources[i];
    if (src == i) {
      // Inherited: the host's own fd i, which Node marks close-on-exec. Clear that flag (this
      // fd table is the child's own copy, so the host's flag is untouched).
      if (syscall(SYS_fcntl, i, F_SETFD, 0) != 0) child_fail(a, "dup2", errno);
      continue;
    }
    // dup3 without O_CLOEXEC: the new fd survives exec (the host's end is close-on-exec).
    if (syscall(SYS_dup3, src, i, 0) < 0) child_fail(a, "dup2", errno);
  }
  if (a->plan != nullptr) {
    int error = 0;
    const char* stage = apply_confinement(*a->plan, &error);
    if (stage != nullptr) child_fail(a, stage, error);
  }
  // Nothing of the host beyond the child's own fds (the ruleset fd was needed until now).
  if (syscall(SYS_close_range, a->fd_count, ~0U, 0) != 0) child_fail(a, "close_range", errno);
  uint64_t empty = 0;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty, nullptr, sizeof(empty));
  syscall(SYS_execve, a->path, a->argv, a->envp);
  child_fail(a, "exec", errno);
}

// The PATH of the child's environment, or the default a shell would use.
const char* env_path(char* const* envp) {
  for (char* const* e = envp; *e != nullptr; e++) {
    if (strncmp(*e, "PATH=", 5) == 0) return *e + 5;
  }
  return "/usr/local/bin:/usr/bin:/bin";
}

// Resolves a bare program name through PATH in the host (the child cannot allocate or search).
// Empty and relative PATH entries are skipped: they would name the child's cwd, a classic trap.
int resolve_program(const char* file, char* const* envp, char* out, size_t out_size) {
  if (strchr(file, '/') != nullptr) {
    if (strlen(file) >= out_size) return ENAMETOOLONG;
    strcpy(out, file);
    return 0;
  }
  if (file[0] == '\0') return ENOENT;
  int found_error = ENOENT;
  const char* p = env_path(envp);
  while (*p != '\0') {
    const char* end = strchrnul(p, ':');
    size_t dir_len = static_cast<size_t>(end - p);
    if (dir_len > 0 && p[0] == '/' && dir_len + 1 + strlen(file) < out_size) {
      memcpy(out, p, dir_len);
      out[dir_len] = '/';
      strcpy(out + dir_len + 1, file);
      struct stat st;
      if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
        if (access(out, X_OK) == 0) return 0;
        found_error = EACCES;
      }
    }
    p = *end == ':' ? end + 1 : end;
  }
  return found_error;
}

// An fd number >= 3, so installing it onto 0..2 never clobbers another source.
int above_stdio(int fd) {
  if (fd >= 3 || fd < 0) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return moved;
}

void close_if_open(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

}  // namespace

bool spawn_context_init(SpawnContext* ctx) {
  void* stack = mmap(nullptr, kStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return false;
  int dev_null = above_stdio(open("/dev/null", O_RDWR | O_CLOEXEC));
  if (dev_null < 0) {
    munmap(stack, kStackSize);
    return false;
  }
  ctx->stack = stack;
  ctx->stack_size = kStackSize;
  ctx->dev_null = dev_null;
  return true;
}

void spawn_context_free(SpawnContext* ctx) {
  if (ctx->stack != nullptr) munmap(ctx->stack, ctx->stack_size);
  ctx->stack = nullptr;
  close_if_open(&ctx->dev_null);
}

bool spawn_process(SpawnContext* ctx, const SpawnRequest& req, SpawnResult* out) {
  char path[PATH_MAX];
  int resolve_error = resolve_program(req.file, req.envp, path, sizeof(path));
  if (resolve_error != 0) {
    out->stage = "exec";
    out->error = resolve_error;
    return false;
  }

  ChildArgs args = {};
  args.path = path;
  args.argv = req.argv;
  args.envp = req.envp;
  args.cwd = req.cwd;
  args.fd_count = req.fd_count;
  args.plan = req.plan;
  int child_ends[kMaxChildFds] = {-1, -1, -1, -1};
  for (int i = 0; i < req.fd_count; i++) {
    switch (req.kinds[i]) {
      case StdioKind::Null:
        args.sources[i] = ctx->dev_null;
        break;
      case StdioKind::Inherit:
        args.sources[i] = i;
        break;
      case StdioKind::Pipe: {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0) {
          out->stage = "pipe";
          out->error = errno;
          for (int j = 0; j < i; j++) {
            close_if_open(&child_ends[j]);
            close_if_open(&out->parent_fds[j]);
          }
          return false;
        }
        // fd 0 is read by the child; every other fd is written by it.
        int child_end = i == 0 ? fds[0] : fds[1];
        int parent_end = i == 0 ? fds[1] : fds[0];
        child_ends[i] = above_stdio(child_end);
        out->parent_fds[i] = above_stdio(parent_end);
        args.sources[i] = child_ends[i];
        break;
      }
    }
  }

  // Block every signal so none runs a host handler on the child's stack before it resets them.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  int pidfd = -1;
  char* stack_top = static_cast<char*>(ctx->stack) + ctx->stack_size;
  pid_t pid =
      clone(child_main, stack_top, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &args, &pidfd, nullptr, nullptr);
  int clone_error = errno;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);

  for (int i = 0; i < req.fd_count; i++)
    close_if_open(&child_ends[i]);

  if (pid < 0 || args.stage != nullptr) {
    if (pid >= 0) {
      // The child has exited (vfork released us on exit): reap it so it leaves no zombie.
      siginfo_t info;
      while (waitid(static_cast<idtype_t>(P_PIDFD), pidfd, &info, WEXITED) != 0 && errno == EINTR) {
      }
      close(pidfd);
    }
    out->stage = pid < 0 ? "clone" : args.stage;
    out->error = pid < 0 ? clone_error : args.error;
    for (int i = 0; i < req.fd_count; i++)
      close_if_open(&out->parent_fds[i]);
    return false;
  }
  out->pid = pid;
  out->pidfd = pidfd;
  return true;
}

}  // namespace cordon
