// cordon-exec: the helper executable.
//
//   cordon-exec --supervise [--status-fd N] [--grace-ms MS] [--host-pid PID] -- PROGRAM [ARGS...]
//   cordon-exec --version
//
// The supervisor stands between the Node host and a command. It is a child subreaper, so every
// orphan of the command's tree (setsid'd, double-forked, any depth) is reparented to it and stays
// reachable; it has a parent-death signal, so the tree dies with the host even on SIGKILL/OOM.
// Its own exit means "the whole tree has exited" and mirrors the command's outcome; the line on
// --status-fd means "the command itself exited" (it can come much earlier).
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vector>

namespace {

constexpr const char* kVersion = "cordon-exec 0.1.0";
constexpr int kUsageExit = 125;     // our own failure, distinct from any command's exit
constexpr int kExecFailExit = 127;  // the shell convention for "command not found / not run"
constexpr int kKillRetryMs = 10;    // re-walk cadence while SIGKILLing a tree that still has members

// The signals we pass on to the tree. SIGTERM additionally arms the grace timer.
constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

struct Options {
  int status_fd = -1;
  long grace_ms = 3000;
  pid_t host_pid = 0;
  char** argv = nullptr;  // PROGRAM followed by ARGS, null-terminated (points into main's argv)
};

// What we know about the direct child (the command).
struct Command {
  pid_t pid = -1;
  bool reaped = false;
  int wait_status = 0;
  int exec_errno = 0;  // non-zero when the exec itself failed
};

// State shared by the loop and the status writer.
int g_status_fd = -1;
pid_t g_self = 0;

// Returns the parent-death signal: a real-time one glibc does not reserve (it keeps 32 and 33).
int pdeath_signal() {
  return SIGRTMIN + 2;
}

// Parses a whole decimal string into [min, max]; false on any junk or overflow.
bool parse_long(const char* s, long min, long max, long* out) {
  if (s == nullptr || *s == '\0') return false;
  errno = 0;
  char* end = nullptr;
  long v = strtol(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max) return false;
  *out = v;
  return true;
}

// Prints the usage error and returns the usage exit code.
int usage(const char* why) {
  fprintf(stderr,
          "cordon-exec: %s\n"
          "usage: cordon-exec --supervise [--status-fd N] [--grace-ms MS] [--host-pid PID] -- "
          "PROGRAM [ARGS...]\n"
          "       cordon-exec --version\n",
          why);
  return kUsageExit;
}

// Fills `opt` from argv; returns 0 on success or the exit code to leave with.
int parse_args(int argc, char** argv, Options* opt) {
  bool supervise = false;
  int i = 1;
  for (; i < argc; i++) {
    const char* a = argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    long v = 0;
    if (strcmp(a, "--supervise") == 0) {
      supervise = true;
    } else if (strcmp(a, "--status-fd") == 0) {
      if (i + 1 >= argc || !parse_long(argv[++i], 0, INT_MAX, &v)) return usage("bad --status-fd");
      opt->status_fd = static_cast<int>(v);
    } else if (strcmp(a, "--grace-ms") == 0) {
      if (i + 1 >= argc || !parse_long(argv[++i], 0, 24L * 3600 * 1000, &v)) return usage("bad --grace-ms");
      opt->grace_ms = v;
    } else if (strcmp(a, "--host-pid") == 0) {
      if (i + 1 >= argc || !parse_long(argv[++i], 1, INT_MAX, &v)) return usage("bad --host-pid");
      opt->host_pid = static_cast<pid_t>(v);
    } else {
      return usage("unknown argument");
    }
  }
  if (!supervise) return usage("missing --supervise");
  if (i >= argc) return usage("missing -- PROGRAM");
  opt->argv = argv + i;
  return 0;
}

// Monotonic clock in milliseconds (the grace deadline must not move with wall-clock changes).
long long now_ms() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Writes the whole buffer, retrying short writes and EINTR; errors (a dead reader) are ignored.
void write_all(int fd, const char* buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    buf += n;
    len -= static_cast<size_t>(n);
  }
}

// Writes the one status line for the command (if a status fd exists) and closes the fd.
void report_status(const char* line) {
  if (g_status_fd < 0) return;
  write_all(g_status_fd, line, strlen(line));
  close(g_status_fd);
  g_status_fd = -1;
}

// Reports how the command ended, in the line protocol the host parses.
void report_command(const Command& cmd) {
  char line[64];
  if (cmd.exec_errno != 0) {
    snprintf(line, sizeof line, "error exec %d\n", cmd.exec_errno);
  } else if (WIFSIGNALED(cmd.wait_status)) {
    snprintf(line, sizeof line, "signal %d\n", WTERMSIG(cmd.wait_status));
  } else {
    snprintf(line, sizeof line, "exit %d\n", WEXITSTATUS(cmd.wait_status));
  }
  report_status(line);
}

// Thin wrappers: glibc only grew these in 2.36, the syscalls exist since Linux 5.3.
int sys_pidfd_open(pid_t pid) {
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
}
int sys_pidfd_send_signal(int pidfd, int sig) {
  return static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
}

// Appends the pids listed in /proc/<pid>/task/*/children (children of every thread) to `out`.
void read_children(pid_t pid, std::vector<pid_t>* out) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", pid);
  DIR* dir = opendir(path);
  if (dir == nullptr) return;
  while (struct dirent* ent = readdir(dir)) {
    if (ent->d_name[0] < '0' || ent->d_name[0] > '9') continue;
    char file[64];
    snprintf(file, sizeof file, "/proc/%d/task/%ld/children", pid, strtol(ent->d_name, nullptr, 10));
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    // The file is a space-separated pid list; parse it as it streams in, so no size is assumed.
    char buf[4096];
    long cur = -1;
    for (;;) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      for (ssize_t k = 0; k < n; k++) {
        char c = buf[k];
        if (c >= '0' && c <= '9') {
          cur = (cur < 0 ? 0 : cur * 10) + (c - '0');
        } else if (cur >= 0) {
          out->push_back(static_cast<pid_t>(cur));
          cur = -1;
        }
      }
    }
    if (cur >= 0) out->push_back(static_cast<pid_t>(cur));
    close(fd);
  }
  closedir(dir);
}

// Reads state, ppid and pgid from /proc/<pid>/stat; false when the process is gone.
bool read_stat(pid_t pid, char* state, pid_t* ppid, pid_t* pgid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  ssize_t n;
  do {
    n = read(fd, buf, sizeof buf - 1);
  } while (n < 0 && errno == EINTR);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  // comm may hold spaces and parentheses; the fields after the last ')' are unambiguous.
  char* p = strrchr(buf, ')');
  if (p == nullptr) return false;
  int pp = 0, pg = 0;
  char st = 0;
  if (sscanf(p + 1, " %c %d %d", &st, &pp, &pg) != 3) return false;
  *state = st;
  *ppid = pp;
  *pgid = pg;
  return true;
}

// Sends `sig` once to every live descendant found by walking the children lists from ourselves,
// skipping members of `skip_pgid` (already signalled as a group); returns how many live
// (non-zombie) descendants it saw, group members included.
//
// Each pid is pinned with a pidfd and then checked to still be a child of the process we found
// it under (or of us, if that one died meanwhile): a pid read from /proc may have been recycled
// by an unrelated process, and as root we must never signal one of those.
int signal_descendants(int sig, pid_t skip_pgid) {
  struct Item {
    pid_t pid;
    pid_t parent;
  };
  std::vector<Item> work;
  std::vector<pid_t> kids;
  read_children(g_self, &kids);
  for (pid_t k : kids)
    work.push_back({k, g_self});

  int live = 0;
  while (!work.empty()) {
    Item it = work.back();
    work.pop_back();
    int pidfd = sys_pidfd_open(it.pid);
    // Without pidfds (ENOSYS, or a filter refusing them) fall back to the plain pid: the stat
    // check below still rules out most recycling.
    if (pidfd < 0 && errno != ENOSYS && errno != EPERM) continue;  // already gone (and reaped)
    char state = 0;
    pid_t ppid = 0, pgid = 0;
    if (!read_stat(it.pid, &state, &ppid, &pgid) || (ppid != it.parent && ppid != g_self) || state == 'Z' ||
        state == 'X') {
      // Gone, a stranger, or a zombie: a zombie has no children left and ignores signals.
      if (pidfd >= 0) close(pidfd);
      continue;
    }
    live++;
    // List its children before signalling it: if it dies at once, they move to us and would be
    // missed by this pass.
    kids.clear();
    read_children(it.pid, &kids);
    for (pid_t k : kids)
      work.push_back({k, it.pid});
    if (skip_pgid <= 0 || pgid != skip_pgid) {
      if (pidfd >= 0) {
        sys_pidfd_send_signal(pidfd, sig);
      } else {
        kill(it.pid, sig);
      }
    }
    if (pidfd >= 0) close(pidfd);
  }
  return live;
}

// Signals the whole tree once: the command's group atomically (while its pgid is still pinned
// by the unreaped leader), then every other descendant; returns the live descendants seen.
int signal_tree(int sig, const Command& cmd) {
  pid_t group = 0;
  // Once the leader is reaped its pid (= pgid) may be recycled, so the group is only addressed
  // by number while the leader exists, even as a zombie; the walk still reaches its members.
  if (cmd.pid > 0 && !cmd.reaped && kill(-cmd.pid, sig) == 0) group = cmd.pid;
  return signal_descendants(sig, group);
}

// Reaps every waitable child, recording the command's status and reporting it; returns false
// once we have no children at all, i.e. the whole tree is gone.
bool reap_children(Command* cmd, int exec_err_fd) {
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
      // The child wrote its errno before _exit, so by the time it is reaped the bytes are there;
      // EOF (exec succeeded and closed the CLOEXEC end) leaves exec_errno at 0.
      int err = 0;
      if (exec_err_fd >= 0 && read(exec_err_fd, &err, sizeof err) == static_cast<ssize_t>(sizeof err)) {
        cmd->exec_errno = err;
      }
      report_command(*cmd);
    }
  }
}

// In the forked child: becomes the command (own process group, pristine signals) or reports
// the exec errno through `err_fd` and exits 127. Never returns.
[[noreturn]] void run_command(char** argv, int err_fd) {
  setpgid(0, 0);
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int s = 1; s < NSIG; s++) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    sigaction(s, &dfl, nullptr);  // fails harmlessly for the glibc-reserved ones
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (g_status_fd >= 0) close(g_status_fd);  // also CLOEXEC; closed here so no path keeps it
  execvp(argv[0], argv);
  int err = errno;
  write_all(err_fd, reinterpret_cast<const char*>(&err), sizeof err);
  _exit(kExecFailExit);
}

// Ends the supervisor the way the command ended: same exit code, or death by the same signal.
[[noreturn]] void mirror_exit(const Command& cmd) {
  if (!cmd.reaped) exit(kUsageExit);
  if (cmd.exec_errno != 0) exit(kExecFailExit);
  if (!WIFSIGNALED(cmd.wait_status)) exit(WEXITSTATUS(cmd.wait_status));
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
  // Only signals whose default action is to ignore get here; 128+n is the shell's convention.
  _exit(128 + sig);
}

// Runs the supervisor; returns only through mirror_exit or an early usage/host-gone exit.
int supervise(const Options& opt) {
  g_self = getpid();

  // Block everything we handle before anything can send it: from here on they queue for the
  // signalfd instead of running default actions (the parent-death signal would kill us).
  sigset_t handled;
  sigemptyset(&handled);
  for (int s : kForwarded)
    sigaddset(&handled, s);
  sigaddset(&handled, SIGCHLD);
  sigaddset(&handled, pdeath_signal());
  sigprocmask(SIG_BLOCK, &handled, nullptr);
  // A status reader that went away must not kill us with SIGPIPE mid-supervision.
  signal(SIGPIPE, SIG_IGN);

  if (opt.status_fd >= 0) {
    // Keep the status pipe out of every exec'd descendant.
    int flags = fcntl(opt.status_fd, F_GETFD);
    if (flags < 0) return usage("--status-fd is not an open descriptor");
    fcntl(opt.status_fd, F_SETFD, flags | FD_CLOEXEC);
    g_status_fd = opt.status_fd;
  }

  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    perror("cordon-exec: PR_SET_CHILD_SUBREAPER");
    return kUsageExit;
  }
  if (prctl(PR_SET_PDEATHSIG, pdeath_signal(), 0, 0, 0) != 0) {
    perror("cordon-exec: PR_SET_PDEATHSIG");
    return kUsageExit;
  }
  // The death signal only covers deaths after the prctl; a host that died before it is seen
  // here as a changed parent. Nothing has been started yet, so there is nothing to kill.
  if (opt.host_pid > 0 && getppid() != opt.host_pid) {
    fprintf(stderr, "cordon-exec: host %d is already gone\n", static_cast<int>(opt.host_pid));
    report_status("error host-gone\n");
    return kUsageExit;
  }

  int sfd = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) {
    perror("cordon-exec: signalfd");
    return kUsageExit;
  }
  // The exec-failure channel: the child's end closes on a successful exec.
  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) != 0) {
    perror("cordon-exec: pipe2");
    return kUsageExit;
  }
  fcntl(errpipe[0], F_SETFL, O_NONBLOCK);

  Command cmd;
  cmd.pid = fork();
  if (cmd.pid < 0) {
    char line[64];
    snprintf(line, sizeof line, "error fork %d\n", errno);
    report_status(line);
    return kUsageExit;
  }
  if (cmd.pid == 0) run_command(opt.argv, errpipe[1]);
  close(errpipe[1]);
  // Also from this side, so a signal forwarded before the child runs still finds its group.
  setpgid(cmd.pid, cmd.pid);

  long long deadline = -1;  // grace expiry (monotonic ms) once SIGTERM arrived
  bool killing = false;     // SIGKILL everything until no descendant is left
  int kill_live = 0;        // live descendants the last SIGKILL pass saw

  while (reap_children(&cmd, errpipe[0])) {
    if (killing) kill_live = signal_tree(SIGKILL, cmd);

    int timeout = -1;
    if (killing) {
      // Members that were mid-fork may have escaped the last pass; look again soon. With none
      // left alive, only zombies remain and their SIGCHLD wakes us.
      timeout = kill_live > 0 ? kKillRetryMs : -1;
    } else if (deadline >= 0) {
      long long left = deadline - now_ms();
      timeout = left > 0 ? static_cast<int>(left) : 0;
    }

    struct pollfd pfd = {sfd, POLLIN, 0};
    int pr = poll(&pfd, 1, timeout);
    if (pr < 0 && errno != EINTR) {
      perror("cordon-exec: poll");
      killing = true;  // cannot supervise any more: take the tree down rather than orphan it
    }
    if (!killing && deadline >= 0 && now_ms() >= deadline) killing = true;

    // Drain before the next reap, so a death after that reap leaves a fresh SIGCHLD pending.
    struct signalfd_siginfo si;
    while (read(sfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
      int sig = static_cast<int>(si.ssi_signo);
      if (sig == SIGCHLD) continue;
      if (sig == pdeath_signal()) {
        killing = true;  // the host is gone: nobody will ever ask politely again
        continue;
      }
      if (killing) continue;
      signal_tree(sig, cmd);
      if (sig == SIGTERM && deadline < 0) deadline = now_ms() + opt.grace_ms;
    }
  }
  // No children means no descendants: orphans would have been reparented to us.
  mirror_exit(cmd);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    printf("%s\n", kVersion);
    return 0;
  }
  Options opt;
  int rc = parse_args(argc, argv, &opt);
  if (rc != 0) return rc;
  return supervise(opt);
}
