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
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stages.h"

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
  int sources[kMaxChildFds];  // fd to install as child fd i; i itself: the caller's fd (inherit)
  SessionMode session;
  int foreground_tty;
  uint64_t reset_signals;
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
  // Every caller handler runs on the caller's memory: reset all of them before any signal can
  // be unblocked. SIG_IGN (Node ignores SIGPIPE) would survive exec, so it goes too. A caller
  // that knows which ones it changed (cordon-exec) names them: 64 syscalls cost ~80 us here.
  KernelSigaction dfl = {SIG_DFL, 0, nullptr, 0};
  for (int sig = 1; sig < 65; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    if (a->reset_signals != 0 && (a->reset_signals & (1ULL << (sig - 1))) == 0) continue;
    syscall(SYS_rt_sigaction, sig, &dfl, nullptr, sizeof(uint64_t));
  }
  if (a->session == SessionMode::NewSession) {
    if (syscall(SYS_setsid) < 0) child_fail(a, kStageSetsid, errno);
  } else if (syscall(SYS_setpgid, 0, 0) != 0) {
    child_fail(a, kStageSetsid, errno);
  }
  if (a->cwd != nullptr && syscall(SYS_chdir, a->cwd) != 0) child_fail(a, kStageChdir, errno);
  for (int i = 0; i < a->fd_count; i++) {
    int src = a->sources[i];
    if (src == i) {
      // Inherited: the caller's own fd i, which Node marks close-on-exec. Clear that flag (this
      // fd table is the child's own copy, so the caller's flag is untouched).
      if (syscall(SYS_fcntl, i, F_SETFD, 0) != 0) child_fail(a, kStageDup2, errno);
      continue;
    }
    // dup3 without O_CLOEXEC: the new fd survives exec (the caller's end is close-on-exec).
    if (syscall(SYS_dup3, src, i, 0) < 0) child_fail(a, kStageDup2, errno);
  }
  if (a->foreground_tty >= 0) {
    // Our own group becomes the terminal's foreground (every signal is still blocked here, so
    // the kernel sends no SIGTTOU for a background group's request).
    pid_t self = static_cast<pid_t>(syscall(SYS_getpid));
    if (syscall(SYS_ioctl, a->foreground_tty, TIOCSPGRP, &self) != 0) child_fail(a, kStageSetsid, errno);
  }
  if (a->plan != nullptr) {
    int error = 0;
    const char* stage = apply_confinement(*a->plan, &error);
    if (stage != nullptr) child_fail(a, stage, error);
  }
  // Nothing of the caller beyond the child's own fds (the ruleset fd was needed until now).
  if (syscall(SYS_close_range, a->fd_count, ~0U, 0) != 0) child_fail(a, kStageCloseRange, errno);
  uint64_t empty = 0;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty, nullptr, sizeof(empty));
  syscall(SYS_execve, a->path, a->argv, a->envp);
  child_fail(a, kStageExec, errno);
}

// An fd number >= floor, so installing it onto 0..floor-1 never clobbers another source.
int above(int fd, int floor) {
  if (fd >= floor || fd < 0) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, floor);
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
  int dev_null = above(open("/dev/null", O_RDWR | O_CLOEXEC), kMaxChildFds);
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
  if (req.path == nullptr || strchr(req.path, '/') == nullptr) {
    out->stage = kStageExec;
    out->error = ENOENT;
    return false;
  }
  const int n = req.fd_count;
  ChildArgs args = {};
  args.path = req.path;
  args.argv = req.argv;
  args.envp = req.envp;
  args.cwd = req.cwd;
  args.fd_count = n;
  args.session = req.session;
  args.foreground_tty = req.session == SessionMode::NewGroup ? req.foreground_tty : -1;
  args.reset_signals = req.reset_signals;
  // Temporaries opened for this spawn (child pipe ends, sources moved above the slots).
  int temps[2 * kMaxChildFds + 1 + kMaxCgroupFds];
  int temp_count = 0;
  auto fail = [&](const char* stage, int error) {
    for (int j = 0; j < temp_count; j++)
      close(temps[j]);
    for (int j = 0; j < n; j++)
      close_if_open(&out->parent_fds[j]);
    out->stage = stage;
    out->error = error;
    return false;
  };
  for (int i = 0; i < n; i++) {
    const Slot& slot = req.slots[i];
    switch (slot.kind) {
      case SlotKind::Null:
        args.sources[i] = ctx->dev_null;
        break;
      case SlotKind::Inherit:
        args.sources[i] = i;
        break;
      case SlotKind::Fd: {
        if (slot.fd < 0) return fail(kStageDup2, EBADF);
        if (slot.fd >= n || slot.fd == i) {
          args.sources[i] = slot.fd;
          break;
        }
        // A source inside the slot range could be overwritten by an earlier dup3: move it up.
        int moved = fcntl(slot.fd, F_DUPFD_CLOEXEC, n);
        if (moved < 0) return fail(kStageDup2, errno);
        temps[temp_count++] = moved;
        args.sources[i] = moved;
        break;
      }
      case SlotKind::Pipe: {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0) return fail(kStagePipe, errno);
        // fd 0 is read by the child; every other fd is written by it.
        int child_end = above(i == 0 ? fds[0] : fds[1], n);
        out->parent_fds[i] = above(i == 0 ? fds[1] : fds[0], n);
        if (child_end < 0 || out->parent_fds[i] < 0) {
          if (child_end >= 0) close(child_end);
          return fail(kStagePipe, EMFILE);
        }
        temps[temp_count++] = child_end;
        args.sources[i] = child_end;
        break;
      }
    }
  }
  // The ruleset fd must survive the slot installation until landlock_restrict_self.
  ConfinementPlan plan;
  if (req.plan != nullptr) {
    plan = *req.plan;
    if (plan.landlock_ruleset_fd >= 0 && plan.landlock_ruleset_fd < n) {
      int moved = fcntl(plan.landlock_ruleset_fd, F_DUPFD_CLOEXEC, n);
      if (moved < 0) return fail(kStageLandlock, errno);
      temps[temp_count++] = moved;
      plan.landlock_ruleset_fd = moved;
    }
    // So must the cgroup.procs fds, until the child has joined each.
    for (int k = 0; k < plan.cgroup_fd_count; k++) {
      if (plan.cgroup_fds[k] < 0 || plan.cgroup_fds[k] >= n) continue;
      int moved = fcntl(plan.cgroup_fds[k], F_DUPFD_CLOEXEC, n);
      if (moved < 0) return fail(kStageCgroup, errno);
      temps[temp_count++] = moved;
      plan.cgroup_fds[k] = moved;
    }
    args.plan = &plan;
  }

  // Block every signal so none runs a caller handler on the child's stack before it resets them.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  int pidfd = -1;
  char* stack_top = static_cast<char*>(ctx->stack) + ctx->stack_size;
  pid_t pid =
      clone(child_main, stack_top, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &args, &pidfd, nullptr, nullptr);
  int clone_error = errno;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);

  for (int j = 0; j < temp_count; j++)
    close(temps[j]);
  temp_count = 0;

  if (pid < 0 || args.stage != nullptr) {
    if (pid >= 0) {
      // The child has exited (vfork released us on exit): reap it so it leaves no zombie.
      siginfo_t info;
      while (waitid(static_cast<idtype_t>(P_PIDFD), pidfd, &info, WEXITED) != 0 && errno == EINTR) {
      }
      close(pidfd);
    }
    return fail(pid < 0 ? kStageClone : args.stage, pid < 0 ? clone_error : args.error);
  }
  out->pid = pid;
  out->pidfd = pidfd;
  return true;
}

std::vector<char*> c_array(std::vector<std::string>& strings) {
  std::vector<char*> ptrs;
  ptrs.reserve(strings.size() + 1);
  for (auto& s : strings)
    ptrs.push_back(&s[0]);
  ptrs.push_back(nullptr);
  return ptrs;
}

}  // namespace cordon
