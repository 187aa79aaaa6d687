// Descendant walks over /proc/<pid>/task/*/children.
#include "tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <vector>

namespace cordon {
namespace {

// Thin wrappers (glibc only grew these in 2.36, the syscalls exist since Linux 5.3): a value
// >= 0, or -errno, like every other wrapper here.
int sys_pidfd_open(pid_t pid) {
  long fd = syscall(SYS_pidfd_open, pid, 0);
  return fd >= 0 ? static_cast<int>(fd) : -errno;
}
int sys_pidfd_send_signal(int pidfd, int sig) {
  return syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0) == 0 ? 0 : -errno;
}

// Appends the pids listed in /proc/<pid>/task/*/children (children of every thread) to `out`.
void read_children(pid_t pid, std::vector<pid_t>* out) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", pid);
  DIR* dir = opendir(path);
  if (dir == nullptr) return;
  while (struct dirent* ent = readdir(dir)) {
    if (ent->d_name[0] < '0' || ent->d_name[0] > '9') continue;
    char file[96];
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

}  // namespace

int signal_descendants(int sig, pid_t skip_pgid) {
  struct Item {
    pid_t pid;
    pid_t parent;
  };
  const pid_t self = getpid();
  std::vector<Item> work;
  std::vector<pid_t> kids;
  read_children(self, &kids);
  for (pid_t k : kids)
    work.push_back({k, self});

  int live = 0;
  while (!work.empty()) {
    Item it = work.back();
    work.pop_back();
    int pidfd = sys_pidfd_open(it.pid);
    // Without pidfds (ENOSYS, or a filter refusing them) fall back to the plain pid: the stat
    // check below still rules out most recycling.
    if (pidfd < 0 && pidfd != -ENOSYS && pidfd != -EPERM) continue;  // already gone (and reaped)
    char state = 0;
    pid_t ppid = 0, pgid = 0;
    // Each pid is checked to still be a child of the process we found it under (or of us, if
    // that one died meanwhile): a pid read from /proc may have been recycled by a stranger.
    if (!read_stat(it.pid, &state, &ppid, &pgid) || (ppid != it.parent && ppid != self) || state == 'Z' ||
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

int signal_tree(int sig, pid_t command_pid, bool command_reaped) {
  pid_t group = 0;
  // Once the leader is reaped its pid (= pgid) may be recycled, so the group is only addressed
  // by number while the leader exists, even as a zombie; the walk still reaches its members.
  if (command_pid > 0 && !command_reaped && kill(-command_pid, sig) == 0) group = command_pid;
  return signal_descendants(sig, group);
}

}  // namespace cordon
