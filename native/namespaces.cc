// unshare() plus the two things a fresh namespace needs: an id map (user) and loopback up (net).
#include "namespaces.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

namespace cordon {
namespace {

int write_file(const char* path, const char* text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  size_t len = strlen(text);
  ssize_t n = write(fd, text, len);
  int error = n == static_cast<ssize_t>(len) ? 0 : (n < 0 ? -errno : -EIO);
  close(fd);
  return error;
}

}  // namespace

int proxy_listener(int port) {
  int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return -errno;
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(sock, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0 || listen(sock, SOMAXCONN) != 0) {
    int error = -errno;
    close(sock);
    return error;
  }
  return sock;
}

// A new network namespace starts with loopback down.
int loopback_up() {
  int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return -errno;
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  int rc = ioctl(sock, SIOCGIFFLAGS, &ifr);
  if (rc == 0) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
    rc = ioctl(sock, SIOCSIFFLAGS, &ifr);
  }
  int error = rc == 0 ? 0 : -errno;
  close(sock);
  return error;
}

int enter_namespaces(bool user, bool ipc, bool net) {
  if (!user && !ipc && !net) return 0;
  uid_t uid = getuid();
  gid_t gid = getgid();
  int flags = (user ? CLONE_NEWUSER : 0) | (ipc ? CLONE_NEWIPC : 0) | (net ? CLONE_NEWNET : 0);
  if (unshare(flags) != 0) return -errno;
  if (user) {
    char map[64];
    snprintf(map, sizeof map, "%u %u 1\n", static_cast<unsigned>(uid), static_cast<unsigned>(uid));
    int rc = write_file("/proc/self/uid_map", map);
    if (rc == 0) rc = write_file("/proc/self/setgroups", "deny\n");
    if (rc == 0) {
      snprintf(map, sizeof map, "%u %u 1\n", static_cast<unsigned>(gid), static_cast<unsigned>(gid));
      rc = write_file("/proc/self/gid_map", map);
    }
    if (rc != 0) return rc;
  }
  return net ? loopback_up() : 0;
}

}  // namespace cordon

namespace cordon {

int mask_key_files() {
  static const char* const kKeyFiles[] = {"/proc/keys", "/proc/key-users"};
  for (const char* path : kKeyFiles) {
    if (access(path, F_OK) != 0) continue;
    if (mount("/dev/null", path, nullptr, MS_BIND, nullptr) != 0) return -errno;
  }
  return 0;
}

int mask_kernel_keys() {
  if (unshare(CLONE_NEWNS) != 0) return -errno;
  if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) return -errno;
  return mask_key_files();
}

int lock_user_namespaces() {
  // bwrap's /proc is read-only: a private rw one, gone again once the limit is written.
  if (unshare(CLONE_NEWNS) != 0) return -errno;
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) return -errno;
  int rc = write_file("/proc/sys/user/max_user_namespaces", "0\n");
  if (umount2("/proc", MNT_DETACH) != 0 && rc == 0) rc = -errno;
  return rc;
}

int raise_oom_score(int adj) {
  char text[16];
  snprintf(text, sizeof text, "%d\n", adj);
  return write_file("/proc/self/oom_score_adj", text);
}

}  // namespace cordon
