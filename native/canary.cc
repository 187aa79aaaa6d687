// The attempts, each a raw syscall whose errno tells refused (EPERM/EACCES/EROFS), private
// (a namespace of its own) or allowed (0) apart.
#include "canary.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <string>

namespace cordon {
namespace {

constexpr int kKeyctlGetKeyringId = 0;
constexpr int kKeySpecSessionKeyring = -3;

void result(const char* name, int error) {
  printf("%s %d\n", name, error);
}

int errno_of(long rc) {
  return rc < 0 ? errno : 0;
}

// The inode of one of our namespaces, e.g. "ipc" -> "ipc:[4026531839]".
std::string ns_of(const char* kind) {
  char path[64], link[128];
  snprintf(path, sizeof path, "/proc/self/ns/%s", kind);
  ssize_t n = readlink(path, link, sizeof link - 1);
  if (n < 0) return "?";
  link[n] = '\0';
  return link;
}

}  // namespace

int run_canary(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: cordon-exec canary DIR HOST_PID\n");
    return 125;
  }
  std::string dir = argv[2];
  pid_t host = static_cast<pid_t>(strtol(argv[3], nullptr, 10));
  std::string inside = dir + "/allowed/ok";
  std::string outside = dir + "/denied";
  std::string readable = dir + "/readable";

  int fd = open(inside.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  result("write_inside", fd < 0 ? errno : 0);
  if (fd >= 0) {
    ssize_t n = write(fd, "ok\n", 3);
    (void)n;
    close(fd);
  }
  fd = open(outside.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  result("write_outside", fd < 0 ? errno : 0);
  if (fd >= 0) close(fd);
  // Outside the writable set: read-only leaves metadata to the mounts where they refuse it there.
  result("chmod", errno_of(chmod(readable.c_str(), 0600)));
  result("signal", errno_of(kill(host, 0)));
  struct rlimit old;
  result("prlimit", errno_of(syscall(SYS_prlimit64, host, RLIMIT_NOFILE, nullptr, &old)));
  result("prlimit_self", errno_of(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, nullptr, &old)));
  result("keyring", errno_of(syscall(SYS_keyctl, kKeyctlGetKeyringId, kKeySpecSessionKeyring, 0)));
  int shm = static_cast<int>(syscall(SYS_shmget, IPC_PRIVATE, 4096, IPC_CREAT | 0600));
  result("sysv", shm < 0 ? errno : 0);
  if (shm >= 0) shmctl(shm, IPC_RMID, nullptr);
  printf("ipc_ns %s\n", ns_of("ipc").c_str());
  printf("net_ns %s\n", ns_of("net").c_str());
  char c = ' ';
  result("tiocsti", errno_of(ioctl(0, TIOCSTI, &c)));
  int rfd = open(readable.c_str(), O_RDONLY | O_CLOEXEC);
  if (rfd >= 0) {
    result("lease", errno_of(fcntl(rfd, F_SETLEASE, F_RDLCK)));
    long version = 0;
    result("fs_ioctl", errno_of(ioctl(rfd, FS_IOC_SETVERSION, &version)));
    close(rfd);
  } else {
    result("lease", -1);
    result("fs_ioctl", -1);
  }
  // A file-notification watch (Landlock does not govern watches; seccomp refuses them under read-only).
  int watcher = inotify_init1(IN_CLOEXEC);
  result("watch", watcher < 0 ? errno : errno_of(inotify_add_watch(watcher, dir.c_str(), IN_OPEN)));
  if (watcher >= 0) close(watcher);
  int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  result("socket_inet", sock < 0 ? errno : 0);
  if (sock >= 0) close(sock);
  sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  result("socket_unix", sock < 0 ? errno : 0);
  if (sock >= 0) close(sock);
  // Lifetime: a grandchild in a session of its own, which must not outlive the run. We wait
  // until it has said its pid (it closes the pipe then), so the run cannot end before it exists.
  fflush(stdout);
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return 0;
  pid_t pid = fork();
  if (pid == 0) {
    setsid();
    pid_t grandchild = fork();
    if (grandchild == 0) {
      printf("orphan %d\n", static_cast<int>(getpid()));
      fflush(stdout);
      int null_fd = open("/dev/null", O_RDWR);
      if (null_fd >= 0) {
        dup2(null_fd, 1);
        dup2(null_fd, 2);
      }
      close(ready[0]);
      close(ready[1]);
      sleep(30);
      _exit(0);
    }
    _exit(0);
  }
  close(ready[1]);
  char byte;
  while (read(ready[0], &byte, 1) < 0 && errno == EINTR) {
  }
  close(ready[0]);
  if (pid > 0) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  return 0;
}

}  // namespace cordon
