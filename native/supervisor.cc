// The supervision loop: one signalfd, reaping with waitpid(-1), descendant walks for signals.
#include "supervisor.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fd-channel.h"
#include "tree.h"

namespace cordon {
namespace {

constexpr int kKillRetryMs = 10;  // re-walk cadence while SIGKILLing a tree that still has members
constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

struct Command {
  pid_t pid = -1;
  bool reaped = false;
  int wait_status = 0;
};

long long now_ms() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void report_command(int* status_fd, const Command& cmd) {
  char line[64];
  if (WIFSIGNALED(cmd.wait_status)) {
    snprintf(line, sizeof line, "signal %d\n", WTERMSIG(cmd.wait_status));
  } else {
    snprintf(line, sizeof line, "exit %d\n", WEXITSTATUS(cmd.wait_status));
  }
  report_line(status_fd, line);
}

// Reaps every waitable child, reporting the command's status; false once we have no children
// at all, i.e. the whole tree is gone (orphans would have been reparented to us).
bool reap_children(Command* cmd, int* status_fd) {
  for (;;) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG | __WALL);
    if (pid == 0) return true;
    if (pid < 0) {
      if (errno == EINTR) continue;
      return errno != ECHILD;
    }
    if (pid == cmd->pid && !cmd->reaped) {
      cmd->reaped = true;
      cmd->wait_status = status;
      report_command(status_fd, *cmd);
    }
  }
}

// Ends the supervisor the way the command ended: same exit code, or death by the same signal.
[[noreturn]] void mirror_exit(const Command& cmd) {
  if (!cmd.reaped) _exit(125);
  if (!WIFSIGNALED(cmd.wait_status)) _exit(WEXITSTATUS(cmd.wait_status));
  int sig = WTERMSIG(cmd.wait_status);
  // Dying by a core-dumping signal must not drop a core of the supervisor in the cwd.
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
  // Only signals whose default action is to ignore get here (or we are a namespace's init,
  // which the kernel does not let a signal kill); 128+n is the shell's convention.
  _exit(128 + sig);
}

}  // namespace

int pdeath_signal() {
  return SIGRTMIN + 2;
}

void report_line(int* fd, const char* line) {
  if (*fd < 0) return;
  write_full(*fd, line, strlen(line));
  close(*fd);
  *fd = -1;
}

int block_supervisor_signals() {
  sigset_t handled;
  sigemptyset(&handled);
  for (int s : kForwarded)
    sigaddset(&handled, s);
  sigaddset(&handled, SIGCHLD);
  sigaddset(&handled, pdeath_signal());
  sigprocmask(SIG_BLOCK, &handled, nullptr);
  return signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
}

void supervise(const SupervisorOptions& options, pid_t command_pid) {
  int status_fd = options.status_fd;
  Command cmd;
  cmd.pid = command_pid;
  long long deadline = -1;  // grace expiry (monotonic ms) once termination began
  bool killing = false;     // SIGKILL everything until no descendant is left
  bool ended_rest = false;  // foreground: the rest of the tree was told to end
  int kill_live = 0;        // live descendants the last SIGKILL pass saw

  while (reap_children(&cmd, &status_fd)) {
    if (cmd.reaped && !options.background && !ended_rest) {
      // The command is done; whatever it left behind goes with it (TERM now, KILL at grace).
      ended_rest = true;
      signal_tree(SIGTERM, cmd.pid, true);
      if (deadline < 0) deadline = now_ms() + options.grace_ms;
    }
    if (killing) kill_live = signal_tree(SIGKILL, cmd.pid, cmd.reaped);

    int timeout = -1;
    if (killing) {
      // Members that were mid-fork may have escaped the last pass; look again soon. With none
      // left alive, only zombies remain and their SIGCHLD wakes us.
      timeout = kill_live > 0 ? kKillRetryMs : -1;
    } else if (deadline >= 0) {
      long long left = deadline - now_ms();
      timeout = left > 0 ? static_cast<int>(left) : 0;
    }

    struct pollfd pfd = {options.signal_fd, POLLIN, 0};
    int pr = poll(&pfd, 1, timeout);
    if (pr < 0 && errno != EINTR) killing = true;  // cannot supervise any more: take the tree down
    if (!killing && deadline >= 0 && now_ms() >= deadline) killing = true;

    // Drain before the next reap, so a death after that reap leaves a fresh SIGCHLD pending.
    struct signalfd_siginfo si;
    while (read(options.signal_fd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
      int sig = static_cast<int>(si.ssi_signo);
      if (sig == SIGCHLD) continue;
      if (sig == pdeath_signal()) {
        killing = true;  // our parent is gone: nobody will ever ask politely again
        continue;
      }
      if (killing) continue;
      signal_tree(sig, cmd.pid, cmd.reaped);
      if (sig == SIGTERM && deadline < 0) deadline = now_ms() + options.grace_ms;
    }
  }
  mirror_exit(cmd);
}

}  // namespace cordon
