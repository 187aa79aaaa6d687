// The launcher. It never reads the control socket itself: it keeps one idle supervisor forked in
// advance (already a subreaper with its signals set up), which waits for the next request on the
// control socket. Taking one, it tells the launcher ("taken"), and the launcher forks the next
// idle one while the taken one starts its run — the fork is off the spawn's critical path. The
// run's supervisor answers the host itself. A request is a header {u32 magic, u32 body length}
// carrying the request's descriptors, then the body (launch-spec.cc parses it); the reply is
// described in launch-reply.h. The host makes every pipe itself, so it can wire its own ends
// while the supervisor starts the command.
#include "zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "device-seal.h"
#include "fd-channel.h"
#include "launch-reply.h"
#include "launch-spec.h"
#include "launch.h"
#include "namespaces.h"
#include "resident.h"
#include "stages.h"

namespace cordon {
namespace {

constexpr uint32_t kRequestMagic = 0x314e4c43;  // "CLN1"
constexpr uint32_t kMaxBody = 8u << 20;
constexpr int kHostGoneExit = 124;  // an idle supervisor saw the host close the control socket

void close_all(std::vector<int>* fds) {
  for (int fd : *fds) {
    if (fd >= 0) close(fd);
  }
  fds->clear();
}

// The launcher runs as SCHED_BATCH when the host's thread is plain SCHED_OTHER: a batch task never
// preempts the task it wakes beside, so the launcher's bookkeeping and its fork of the next idle
// supervisor wait for a free CPU instead of stalling a supervisor that is answering the host (on
// 2 cores that fork landed on the spawn's critical path: ~0.2 ms). Its children go back to
// SCHED_OTHER at once, which the kernel always permits between the two fair policies at an
// unchanged nice value, so no supervisor or command ever runs as batch.
bool batch_launcher = false;

// The run template of a resident instance (nullptr: a host launcher), and the id this process
// tells its launcher by: a supervisor of an instance is pid 1 of its own namespace, so its pid
// cannot name it.
const LaunchSpec* resident = nullptr;
int32_t event_id = 0;

void become_batch() {
  if (sched_getscheduler(0) != SCHED_OTHER) return;  // RT or idle hosts: keep theirs for every child
  struct sched_param param = {};
  batch_launcher = sched_setscheduler(0, SCHED_BATCH, &param) == 0;
}

// In a child of the launcher: back to the host's policy; false when that failed.
bool leave_batch() {
  if (!batch_launcher) return true;
  struct sched_param param = {};
  return sched_setscheduler(0, SCHED_OTHER, &param) == 0;
}

void tell(int events, int32_t what) {
  LauncherEvent e = {event_id, what};
  write_full(events, &e, sizeof e);
}

// In an idle supervisor: takes one request and becomes its run's supervisor; never returns.
// What an idle supervisor of an instance prepared before any request: its failed stage (and
// errno), or the command's write domain.
struct Prepared {
  const char* failed = nullptr;
  int error = 0;
  int ruleset = -1;
  int listener = -1;
};

[[noreturn]] void serve_one(SpawnContext* ctx, int control, int events, int signal_fd, pid_t launcher,
                            const Prepared& prepared) {
  uint32_t header[2];
  int received[kMaxPassedFds];
  int nreceived = 0;
  int got = recv_with_fds(control, header, sizeof header, received, &nreceived, -1);
  std::vector<int> passed(received, received + nreceived);
  if (got <= 0) _exit(kHostGoneExit);
  auto refuse = [&](int error, const char* stage) {  // the request is read and taken by now
    close_all(&passed);
    tell(events, kEventReplying);
    send_reply(control, error, stage, getpid(), -1, nullptr, 0);
    _exit(125);
  };
  bool framed = header[0] == kRequestMagic && header[1] <= kMaxBody;
  std::vector<uint8_t> body(framed ? header[1] : 0);
  if (framed && header[1] > 0 && read_full(control, body.data(), body.size()) != 0) framed = false;
  // Only now, with the whole request read, may the next idle supervisor start reading.
  tell(events, kEventTaken);
  if (!framed) refuse(EPROTO, kStageLauncher);
  if (prepared.failed != nullptr) refuse(prepared.error, prepared.failed);
  // A launcher that died while we waited would leave this run without a parent-death signal
  // (an instance's launcher is its pid 1: its death ends every run).
  if (resident == nullptr && getppid() != launcher) refuse(ESRCH, kStageLauncher);
  LaunchSpec spec;
  WireShape shape;
  std::string error;
  if (!parse_wire(body.data(), body.size(), &spec, &shape, &error)) refuse(EINVAL, kStageLauncher);
  // Received descriptors, in order: the status pipe, the Fd stdio slots, then the ruleset (the
  // host made every pipe, so the host's ends never travel).
  size_t next = 0;
  StartChannel start;
  start.control_fd = control;
  start.events_fd = events;
  start.event_id = event_id;
  if (shape.has_status_fd) start.status_fd = next < passed.size() ? passed[next++] : -1;
  for (int i = 0; i < 3; i++) {
    if (shape.stdio[i] == WireStdio::Fd) spec.stdio_fds[i] = next < passed.size() ? passed[next++] : -1;
  }
  if (shape.has_ruleset_fd) spec.ruleset_fd = next < passed.size() ? passed[next++] : -1;
  for (int k = 0; k < shape.cgroup_fds && next < passed.size(); k++)
    spec.plan.cgroup_fds[spec.plan.cgroup_fd_count++] = passed[next++];
  if (next != passed.size() || !shape.has_status_fd || start.status_fd < 0 ||
      (shape.has_ruleset_fd && spec.ruleset_fd < 0) || spec.plan.cgroup_fd_count != shape.cgroup_fds)
    refuse(EBADF, kStageLauncher);
  if (resident != nullptr) {
    // A host device node (its /dev/null, as an inherited stdout) reaches the host's read-write
    // /dev: the sandbox's own sealed node takes its place.
    for (int i = 0; i < 3; i++) {
      int rc = spec.stdio_fds[i] >= 0 ? rehome_device_fd(spec.stdio_fds[i]) : 0;
      if (rc != 0) refuse(-rc, kStageNamespace);
    }
    // The instance's domain was built ahead; a request never brings its own.
    if (shape.has_ruleset_fd) refuse(EINVAL, kStageLauncher);
    spec.ruleset_fd = prepared.ruleset;
    spec.confined = true;
    // A request never names its own listener either: the instance's plan says whether there is one.
    if (spec.proxy_port > 0) refuse(EINVAL, kStageLauncher);
    spec.proxy_port = resident->proxy_port;
    spec.proxy_listener = prepared.listener;
    // Raised before the instance's read-only /proc was mounted (native/resident.cc); never again here.
    if (spec.oom_score_adj != 0) refuse(EINVAL, kStageLauncher);
  }
  spec.expected_parent = resident != nullptr ? 0 : launcher;
  supervise_run(ctx, &spec, start, signal_fd);
}

// Forks the next idle supervisor (`id`: how it names itself); its pid, or -1. In an instance it
// is cloned into namespaces of its own and prepares its run there, before any request.
pid_t fork_idle(SpawnContext* ctx, int control, const int events[2], int zygote_signal_fd, int32_t id) {
  pid_t launcher = getpid();
  pid_t pid = resident != nullptr ? static_cast<pid_t>(syscall(SYS_clone, resident_clone_flags(*resident) | SIGCHLD,
                                                               nullptr, nullptr, nullptr, nullptr))
                                  : fork();
  if (pid != 0) return pid;
  event_id = id;
  if (!leave_batch()) _exit(125);
  close(zygote_signal_fd);
  close(events[0]);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int sfd = become_supervisor(false, resident != nullptr ? 0 : launcher);
  if (sfd < 0) _exit(125);
  Prepared prepared;
  if (resident != nullptr)
    prepared.failed = prepare_resident_run(*resident, &prepared.ruleset, &prepared.listener, &prepared.error);
  serve_one(ctx, control, events[1], sfd, launcher, prepared);
}

// A launcher that could not confine itself answers every request with why, so the host learns
// the stage and errno instead of a silent death; it never runs anything.
[[noreturn]] void refuse_forever(int control, int error, const char* stage) {
  for (;;) {
    uint32_t header[2];
    int received[kMaxPassedFds];
    int nreceived = 0;
    int got = recv_with_fds(control, header, sizeof header, received, &nreceived, -1);
    for (int i = 0; i < nreceived; i++)
      close(received[i]);
    if (got <= 0) _exit(0);
    if (header[0] != kRequestMagic || header[1] > kMaxBody) _exit(125);
    std::vector<uint8_t> body(header[1]);
    if (header[1] > 0 && read_full(control, body.data(), body.size()) != 0) _exit(0);
    send_reply(control, error, stage, -1, -1, nullptr, 0);
  }
}

// The launcher's loop, once it is set up: one idle supervisor ahead, events, reaping.
[[noreturn]] void serve(int control_fd) {
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, nullptr);
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  int events[2];
  SpawnContext ctx;
  if (sfd < 0 || pipe2(events, O_CLOEXEC) != 0 || !spawn_context_init(&ctx)) _exit(125);
  fcntl(events[0], F_SETFL, O_NONBLOCK);
  pid_t idle = -1;  // the supervisor waiting for the next request
  pid_t busy = -1;  // the one that took a request and has not said it replies yet
  int32_t idle_id = 0, busy_id = 0, next_id = 0;
  bool closing = false;  // the host is gone: an instance waits for its runs, then ends
  for (;;) {
    // The next idle supervisor is forked once the busy one has told it answers: forked at once, it
    // would compete for the CPU with the command being started (a spawn's latency is what counts;
    // a request that comes meanwhile waits that long in the socket). Being batch, the launcher
    // forks only once that supervisor has sent its answer and slept, or on a free CPU.
    if (idle <= 0 && busy <= 0 && !closing) {
      idle_id = ++next_id;
      idle = fork_idle(&ctx, control_fd, events, sfd, idle_id);
    }
    struct pollfd pfds[2] = {{events[0], POLLIN, 0}, {sfd, POLLIN, 0}};
    if (poll(pfds, 2, idle > 0 || busy > 0 || closing ? -1 : 100) < 0 && errno != EINTR) _exit(125);
    // Every event first: a supervisor tells "replying" before it can exit, so with the events
    // drained, a busy supervisor that is reaped below really died before it answered.
    LauncherEvent e;
    while (read(events[0], &e, sizeof e) == static_cast<ssize_t>(sizeof e)) {
      if (e.what == kEventTaken && idle > 0 && e.id == idle_id) {
        busy = idle;
        busy_id = idle_id;
        idle = -1;
      } else if (e.what == kEventReplying && busy > 0 && e.id == busy_id) {
        busy = -1;
      }
    }
    if (pfds[1].revents != 0) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
      }
      int status = 0;
      pid_t pid;
      while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (pid == idle) {
          // The host closed the control socket: nobody will ask again. An instance's runs (a
          // background job among them) live on: its end, as their pid 1, would kill them.
          if (WIFEXITED(status) && WEXITSTATUS(status) == kHostGoneExit) {
            if (resident == nullptr) _exit(0);
            closing = true;
          }
          idle = -1;
        }
        if (pid == busy) {
          // It took a request and died before it could answer: nobody else will.
          busy = -1;
          send_reply(control_fd, EPIPE, kStageLauncher, pid, -1, nullptr, 0);
        }
      }
      if (closing && pid < 0 && errno == ECHILD) _exit(0);
    }
  }
}

}  // namespace

void run_zygote(int control_fd, pid_t host_pid, const ConfinementPlan& self, bool unshare_ipc, bool mask_keys) {
  // Dies with the host thread; a host already gone shows as a new parent.
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (host_pid > 0 && getppid() != host_pid) _exit(125);
  fcntl(control_fd, F_SETFD, FD_CLOEXEC);
  signal(SIGPIPE, SIG_IGN);
  become_batch();
  // Before the launcher's own seccomp program, which may refuse mount.
  if (mask_keys) {
    int rc = mask_kernel_keys();
    if (rc != 0) refuse_forever(control_fd, -rc, kStageNamespace);
  }
  int error = 0;
  const char* failed = prepare_launcher(self, &error);
  if (failed != nullptr) refuse_forever(control_fd, error, failed);
  if (unshare_ipc) {
    int rc = enter_namespaces(false, true, false);
    if (rc != 0) refuse_forever(control_fd, -rc, kStageNamespace);
  }
  serve(control_fd);
}

void run_instance(int control_fd, const LaunchSpec& tmpl) {
  // bwrap started us as its pid 1 (--die-with-parent: we die with bwrap, every run with us).
  fcntl(control_fd, F_SETFD, FD_CLOEXEC);
  signal(SIGPIPE, SIG_IGN);
  // We keep capabilities in the sandbox's user namespace: nothing may ptrace or read us.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  become_batch();
  int rc = lock_user_namespaces();
  if (rc != 0) refuse_forever(control_fd, -rc, kStageNamespace);
  // Once for every run, in the mount namespace of our own that came with the lock (bwrap's is not
  // ours to remount when the caller is not root): the host's device nodes bwrap bound in
  // read-write (device-seal.h).
  rc = seal_device_binds();
  if (rc != 0) refuse_forever(control_fd, -rc, kStageNamespace);
  resident = &tmpl;
  serve(control_fd);
}

}  // namespace cordon
