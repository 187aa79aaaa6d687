// The launcher's request loop. A request is a header {u32 magic, u32 body length} carrying the
// request's descriptors, then the body (launch-spec.cc parses it). The reply is a fixed record
// {u32 magic, i32 errno, char stage[16], i32 supervisor pid, i32 command pid} carrying the
// supervisor's pidfd, the status pipe's read end and the host ends of the stdio pipes.
#include "zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "fd-channel.h"
#include "launch-spec.h"
#include "launch.h"
#include "stages.h"

namespace cordon {
namespace {

constexpr uint32_t kRequestMagic = 0x314e4c43;  // "CLN1"
constexpr uint32_t kReplyMagic = 0x31524c43;    // "CLR1"
constexpr uint32_t kMaxBody = 8u << 20;
constexpr int kReadyTimeoutMs = 30000;

struct Reply {
  uint32_t magic = kReplyMagic;
  int32_t error = 0;
  char stage[16] = {0};
  int32_t supervisor_pid = -1;
  int32_t command_pid = -1;
};

void send_reply(int control, int error, const char* stage, pid_t supervisor, pid_t command, const int* fds, int n) {
  Reply reply;
  reply.error = error;
  if (stage != nullptr) snprintf(reply.stage, sizeof reply.stage, "%s", stage);
  reply.supervisor_pid = supervisor;
  reply.command_pid = command;
  send_with_fds(control, &reply, sizeof reply, fds, n);
}

void close_all(std::vector<int>* fds) {
  for (int fd : *fds) {
    if (fd >= 0) close(fd);
  }
  fds->clear();
}

// Handles one request; false when the control socket is gone (EOF or a broken protocol).
bool serve_one(SpawnContext* ctx, int control, int signal_fd) {
  uint32_t header[2];
  int received[kMaxPassedFds];
  int nreceived = 0;
  int got = recv_with_fds(control, header, sizeof header, received, &nreceived, -1);
  std::vector<int> passed(received, received + nreceived);
  if (got <= 0 || header[0] != kRequestMagic || header[1] > kMaxBody) {
    close_all(&passed);
    return false;
  }
  std::vector<uint8_t> body(header[1]);
  if (header[1] > 0 && read_full(control, body.data(), body.size()) != 0) {
    close_all(&passed);
    return false;
  }
  LaunchSpec spec;
  WireShape shape;
  std::string error;
  if (!parse_wire(body.data(), body.size(), &spec, &shape, &error)) {
    close_all(&passed);
    send_reply(control, EINVAL, kStageLauncher, -1, -1, nullptr, 0);
    return true;
  }
  // Received descriptors, in order: the Fd stdio slots, then the ruleset.
  size_t next = 0;
  for (int i = 0; i < 3; i++) {
    if (shape.stdio[i] == WireStdio::Fd) spec.stdio_fds[i] = next < passed.size() ? passed[next++] : -1;
  }
  if (shape.has_ruleset_fd) spec.ruleset_fd = next < passed.size() ? passed[next++] : -1;
  if (next != passed.size() || (shape.has_ruleset_fd && spec.ruleset_fd < 0)) {
    close_all(&passed);
    send_reply(control, EBADF, kStageLauncher, -1, -1, nullptr, 0);
    return true;
  }
  // Pipes: the supervisor's ends stay here until the fork, the host's go back in the reply.
  std::vector<int> child_side = passed;  // closed here after the fork
  std::vector<int> host_side;
  int status[2], ready[2];
  bool ok = pipe2(status, O_CLOEXEC) == 0;
  if (ok && pipe2(ready, O_CLOEXEC) != 0) {
    close(status[0]);
    close(status[1]);
    ok = false;
  }
  if (!ok) {
    close_all(&child_side);
    send_reply(control, errno, kStagePipe, -1, -1, nullptr, 0);
    return true;
  }
  child_side.push_back(status[1]);
  child_side.push_back(ready[1]);
  host_side.push_back(status[0]);
  for (int i = 0; i < 3 && ok; i++) {
    if (shape.stdio[i] != WireStdio::Pipe) continue;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      ok = false;
      break;
    }
    int child_end = i == 0 ? fds[0] : fds[1];
    int host_end = i == 0 ? fds[1] : fds[0];
    spec.stdio_fds[i] = child_end;
    child_side.push_back(child_end);
    host_side.push_back(host_end);
  }
  if (!ok) {
    int e = errno;
    close_all(&child_side);
    close_all(&host_side);
    close(ready[0]);
    send_reply(control, e, kStagePipe, -1, -1, nullptr, 0);
    return true;
  }

  pid_t self = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    // The run's supervisor: nothing of the launcher but what the run needs.
    close(control);
    close(signal_fd);
    close(ready[0]);
    for (int fd : host_side)
      close(fd);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    spec.expected_parent = self;
    run_supervised(ctx, &spec, status[1], ready[1]);
  }
  int fork_error = errno;
  close_all(&child_side);
  if (pid < 0) {
    close_all(&host_side);
    close(ready[0]);
    send_reply(control, fork_error, kStageLauncher, -1, -1, nullptr, 0);
    return true;
  }
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  StartRecord record;
  struct pollfd pfd = {ready[0], POLLIN, 0};
  int rc = poll(&pfd, 1, kReadyTimeoutMs) == 1 ? read_full(ready[0], &record, sizeof record) : -ETIMEDOUT;
  close(ready[0]);
  if (rc != 0) {
    // The supervisor died (or hung) before it could say: take it down, report the launcher.
    kill(pid, SIGKILL);
    record.error = -rc;
    snprintf(record.stage, sizeof record.stage, "%s", kStageLauncher);
  }
  record.stage[sizeof record.stage - 1] = '\0';
  if (record.error != 0 || pidfd < 0) {
    if (pidfd >= 0) close(pidfd);
    close_all(&host_side);
    send_reply(control, record.error != 0 ? record.error : errno, record.error != 0 ? record.stage : kStageLauncher,
               pid, -1, nullptr, 0);
    return true;
  }
  std::vector<int> reply_fds;
  reply_fds.push_back(pidfd);
  for (int fd : host_side)
    reply_fds.push_back(fd);
  send_reply(control, 0, nullptr, pid, record.command_pid, reply_fds.data(), static_cast<int>(reply_fds.size()));
  close_all(&reply_fds);
  return true;
}

void reap(int signal_fd) {
  struct signalfd_siginfo si;
  while (read(signal_fd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
  }
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

}  // namespace

void run_zygote(int control_fd, pid_t host_pid) {
  // Dies with the host thread; a host already gone shows as a new parent.
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (host_pid > 0 && getppid() != host_pid) _exit(125);
  fcntl(control_fd, F_SETFD, FD_CLOEXEC);
  signal(SIGPIPE, SIG_IGN);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, nullptr);
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  SpawnContext ctx;
  if (sfd < 0 || !spawn_context_init(&ctx)) _exit(125);
  for (;;) {
    struct pollfd pfds[2] = {{control_fd, POLLIN, 0}, {sfd, POLLIN, 0}};
    if (poll(pfds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      _exit(125);
    }
    if (pfds[1].revents != 0) reap(sfd);
    if (pfds[0].revents != 0 && !serve_one(&ctx, control_fd, sfd)) _exit(0);
  }
}

}  // namespace cordon
