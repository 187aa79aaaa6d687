// sendmsg/recvmsg with SCM_RIGHTS, plus full reads and writes.
#include "fd-channel.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

namespace cordon {

int send_with_fds(int sock, const void* buf, size_t len, const int* fds, int nfds) {
  if (len == 0 || nfds < 0 || nfds > kMaxPassedFds) return -EINVAL;
  const char* p = static_cast<const char*>(buf);
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)];
  struct iovec iov = {const_cast<char*>(p), len};
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (nfds > 0) {
    memset(control, 0, sizeof control);
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    struct cmsghdr* cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
  }
  ssize_t n;
  do {
    n = sendmsg(sock, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return -errno;
  size_t sent = static_cast<size_t>(n);
  while (sent < len) {
    ssize_t m = send(sock, p + sent, len - sent, MSG_NOSIGNAL);
    if (m < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    sent += static_cast<size_t>(m);
  }
  return 0;
}

int recv_with_fds(int sock, void* buf, size_t len, int* fds, int* nfds, int timeout_ms) {
  *nfds = 0;
  char* p = static_cast<char*>(buf);
  size_t got = 0;
  while (got < len) {
    if (timeout_ms >= 0) {
      struct pollfd pfd = {sock, POLLIN, 0};
      int pr = poll(&pfd, 1, timeout_ms);
      if (pr < 0 && errno == EINTR) continue;
      if (pr < 0) return -errno;
      if (pr == 0) return -ETIMEDOUT;
    }
    alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)];
    struct iovec iov = {p + got, len - got};
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    for (struct cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm != nullptr; cm = CMSG_NXTHDR(&msg, cm)) {
      if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
      int count = static_cast<int>((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      int incoming[kMaxPassedFds];
      memcpy(incoming, CMSG_DATA(cm), sizeof(int) * (count > kMaxPassedFds ? kMaxPassedFds : count));
      for (int i = 0; i < count && i < kMaxPassedFds; i++) {
        if (*nfds < kMaxPassedFds) {
          fds[(*nfds)++] = incoming[i];
        } else {
          close(incoming[i]);
        }
      }
    }
    if (n == 0) return got == 0 ? 0 : -EPROTO;
    got += static_cast<size_t>(n);
  }
  return static_cast<int>(got);
}

int read_full(int fd, void* buf, size_t len) {
  char* p = static_cast<char*>(buf);
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, p + got, len - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (n == 0) return -EPIPE;
    got += static_cast<size_t>(n);
  }
  return 0;
}

int write_full(int fd, const void* buf, size_t len) {
  const char* p = static_cast<const char*>(buf);
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace cordon
