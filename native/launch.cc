// The steps of a supervised run, in the order the kernel needs them.
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <vector>

#include "fd-channel.h"
#include "landlock.h"
#include "device-seal.h"
#include "mount-view.h"
#include "namespaces.h"
#include "stages.h"
#include "supervisor.h"

extern char** environ;

namespace cordon {
namespace {

void report_start(StartChannel* start, int error, const char* stage, pid_t pid) {
  if (start->control_fd >= 0) {
    // The launcher learns first that the reply is on its way (a supervisor that dies before
    // telling it is answered for by the launcher), then the host gets it straight from us.
    LauncherEvent event = {start->event_id, kEventReplying};
    write_full(start->events_fd, &event, sizeof event);
    close(start->events_fd);
    start->events_fd = -1;
    // Our pidfd was opened before the command started: nothing it does can keep us from answering.
    int self = start->self_pidfd;
    start->self_pidfd = -1;
    if (error == 0 && self < 0) error = EBADF;
    int fds[2] = {self, start->proxy_listener};
    int nfds = error != 0 ? 0 : (start->proxy_listener >= 0 ? 2 : 1);
    send_reply(start->control_fd, error, error == 0 ? nullptr : (stage != nullptr ? stage : kStageLauncher), getpid(),
               pid, fds, nfds);
    if (self >= 0) close(self);
    // The host holds the listener now; ours would keep its port taken after the host let go.
    if (start->proxy_listener >= 0) close(start->proxy_listener);
    start->proxy_listener = -1;
    close(start->control_fd);
    start->control_fd = -1;
    if (error != 0 && start->status_fd >= 0) {
      close(start->status_fd);
      start->status_fd = -1;
    }
    return;
  }
  char line[96];
  if (error == 0) {
    snprintf(line, sizeof line, "started %d\n", static_cast<int>(pid));
    if (start->status_fd >= 0) write_full(start->status_fd, line, strlen(line));  // the status fd stays open
  } else {
    snprintf(line, sizeof line, "error %s %d\n", stage, error);
    report_line(&start->status_fd, line);
  }
}

[[noreturn]] void fail_start(StartChannel* start, const char* stage, int error) {
  if (start->status_fd < 0 && start->control_fd < 0) {
    // Nobody asked for a status (a terminal's supervisor: node-pty passes only the pty), so the
    // person at the terminal is told, instead of a bare exit status.
    char line[160];
    snprintf(line, sizeof line, "cordon-exec: the command did not start (%s: %s)\n", stage, strerror(error));
    write_full(STDERR_FILENO, line, strlen(line));
  }
  report_start(start, error, stage, -1);
  if (start->status_fd >= 0) close(start->status_fd);
  _exit(strcmp(stage, kStageExec) == 0 ? 127 : 125);
}

// A network allow-list's listener, made in the run's network namespace before the command exists:
// it rides with the reply (launcher mode) or goes now over the proxy socket (argv mode).
void hand_over_proxy_listener(LaunchSpec* spec, StartChannel* start) {
  int listener = spec->proxy_listener;
  spec->proxy_listener = -1;
  if (listener < 0 && spec->proxy_port > 0) {
    // Only in a namespace of the run's own: the host's loopback must never get the listener.
    if (!spec->unshare_net && spec->proxy_fd < 0 && start->control_fd >= 0) fail_start(start, kStageNamespace, EINVAL);
    listener = proxy_listener(spec->proxy_port);
    if (listener < 0) fail_start(start, kStageNamespace, -listener);
  }
  if (listener < 0) return;
  if (spec->proxy_fd >= 0) {
    int rc = send_with_fds(spec->proxy_fd, "L", 1, &listener, 1);
    close(spec->proxy_fd);
    spec->proxy_fd = -1;
    close(listener);
    if (rc < 0) fail_start(start, kStageNamespace, -rc);
    return;
  }
  if (start->control_fd < 0) fail_start(start, kStageNamespace, EINVAL);  // nobody to hand it to
  start->proxy_listener = listener;
}

}  // namespace

int build_spec_ruleset(const LaunchSpec& spec) {
  int fd = landlock_create(spec.handled_fs, spec.handled_net, spec.scoped, spec.attr_size);
  if (fd < 0) return fd;
  for (const LandlockRuleSpec& rule : spec.rules) {
    int rc = landlock_add_path(fd, rule.path.c_str(), rule.allowed, true, rule.dev, rule.ino);
    if (rc != 0) {
      close(fd);
      return rc;
    }
  }
  if (spec.devpts_rule) {
    int rc = landlock_add_private_devpts(fd, spec.devpts_allowed, spec.host_devpts_dev);
    if (rc != 0) {
      close(fd);
      return rc;
    }
  }
  return fd;
}

int become_supervisor(bool terminal, pid_t expected_parent) {
  // Our own session (a terminal's supervisor already leads the terminal's), so no signal meant
  // for the launcher's group reaches the run, and the host's group signals never reach us.
  if (!terminal) setsid();
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) return -errno;
  if (prctl(PR_SET_PDEATHSIG, pdeath_signal(), 0, 0, 0) != 0) return -errno;
  // The death signal covers deaths after the prctl only; a parent already gone shows as a new
  // parent. Nothing has started yet, so nothing is left behind.
  if (expected_parent > 0 && getppid() != expected_parent) return -ESRCH;
  int sfd = block_supervisor_signals();
  if (sfd < 0) return -errno;
  signal(SIGPIPE, SIG_IGN);  // a status reader that went away must not kill us
  if (terminal) {
    // Job control in the command's terminal must never stop its supervisor.
    signal(SIGTTOU, SIG_IGN);
    signal(SIGTTIN, SIG_IGN);
    signal(SIGTSTP, SIG_IGN);
  }
  return sfd;
}

void run_supervised(SpawnContext* ctx, LaunchSpec* spec, StartChannel start) {
  int sfd = become_supervisor(spec->terminal, spec->expected_parent);
  if (sfd < 0) fail_start(&start, kStageLauncher, -sfd);
  supervise_run(ctx, spec, start, sfd);
}

void supervise_run(SpawnContext* ctx, LaunchSpec* spec, StartChannel start, int sfd) {
  if (start.status_fd >= 0) fcntl(start.status_fd, F_SETFD, FD_CLOEXEC);
  if (start.control_fd >= 0) {
    start.self_pidfd = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
    if (start.self_pidfd < 0) fail_start(&start, kStageLauncher, errno);
    fcntl(start.self_pidfd, F_SETFD, FD_CLOEXEC);
  }

  // Before any namespace or view: the host's /proc is writable here, a view's is not.
  if (spec->oom_score_adj > 0) {
    int oom = raise_oom_score(spec->oom_score_adj);
    if (oom != 0) fail_start(&start, kStageCgroup, -oom);
  }
  int rc = enter_namespaces(spec->unshare_user, spec->unshare_ipc, spec->unshare_net);
  // Without a view of its own, a mount namespace only for the masks.
  if (rc == 0 && spec->mask_keys && !spec->read_only_view) rc = mask_kernel_keys();
  if (rc != 0) fail_start(&start, kStageNamespace, -rc);
  if (spec->read_only_view) {
    rc = enter_read_only_view(spec->view_writable);
    // The view is the first mount namespace such a run has: /proc/keys goes there.
    if (rc == 0 && (spec->unshare_user || spec->mask_keys)) rc = mask_key_files();
    // A host device node handed in as stdio (the CLI's /dev/null), or the /dev/null the launcher
    // opened ahead for empty slots, keeps the host's read-write mount: the same node opened
    // through the view takes its place.
    if (rc == 0) rc = rehome_device_fd(ctx->dev_null);
    for (int i = 0; i < 3 && rc == 0; i++) {
      int fd = spec->inherit_stdio ? i : spec->stdio_fds[i];
      if (fd >= 0) rc = rehome_device_fd(fd);
    }
    if (rc != 0) fail_start(&start, kStageNamespace, -rc);
  }
  hand_over_proxy_listener(spec, &start);

  ConfinementPlan plan = spec->plan;
  int built_ruleset = -1;
  if (spec->build_ruleset) {
    built_ruleset = build_spec_ruleset(*spec);
    if (built_ruleset < 0) fail_start(&start, kStageLandlock, -built_ruleset);
    plan.landlock_ruleset_fd = built_ruleset;
  } else if (spec->ruleset_fd >= 0) {
    plan.landlock_ruleset_fd = spec->ruleset_fd;
  }
  if (!spec->filter.empty()) {
    plan.filter = spec->filter.data();
    plan.filter_len = static_cast<uint16_t>(spec->filter.size());
  }

  std::vector<char*> argv = c_array(spec->argv);
  std::vector<char*> envp = c_array(spec->envp);
  SpawnRequest req;
  req.path = spec->path.c_str();
  req.argv = argv.data();
  req.envp = spec->envp.empty() ? environ : envp.data();
  req.cwd = spec->has_cwd ? spec->cwd.c_str() : nullptr;
  req.fd_count = 3;
  for (int i = 0; i < 3; i++) {
    if (spec->inherit_stdio) {
      req.slots[i].kind = SlotKind::Inherit;
    } else if (spec->stdio_fds[i] >= 0) {
      req.slots[i] = {SlotKind::Fd, spec->stdio_fds[i]};
    }
  }
  req.session = spec->terminal ? SessionMode::NewGroup : SessionMode::NewSession;
  req.foreground_tty = spec->terminal ? 0 : -1;
  // Our own handlers are default but for these (the command must not inherit SIG_IGN).
  req.reset_signals = 1ULL << (SIGPIPE - 1) | 1ULL << (SIGTTOU - 1) | 1ULL << (SIGTTIN - 1) | 1ULL << (SIGTSTP - 1);
  req.plan = spec->confined ? &plan : nullptr;

  SpawnResult result;
  bool started = spawn_process(ctx, req, &result);
  // The command holds what it needs; a ruleset fd is mutable, so no copy stays around.
  if (built_ruleset >= 0) close(built_ruleset);
  if (spec->ruleset_fd >= 0) close(spec->ruleset_fd);
  for (int k = 0; k < spec->plan.cgroup_fd_count; k++)
    close(spec->plan.cgroup_fds[k]);
  for (int i = 0; i < 3; i++) {
    if (spec->stdio_fds[i] >= 0) close(spec->stdio_fds[i]);
  }
  if (!started) fail_start(&start, result.stage, result.error);
  close(result.pidfd);  // reaped through waitpid(-1) like every other member of the tree
  if (spec->inherit_stdio) {
    // Our stdio is the command's (argv mode): let go of it, so the command's readers see EOF as
    // soon as the tree closes its copies, whatever we still do.
    int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd >= 0) {
      for (int i = 0; i < 3; i++)
        dup3(null_fd, i, 0);
      close(null_fd);
    }
  }
  report_start(&start, 0, nullptr, result.pid);
  SupervisorOptions options;
  options.signal_fd = sfd;
  options.status_fd = start.status_fd;
  options.grace_ms = spec->grace_ms;
  options.background = spec->background;
  supervise(options, result.pid);
}

}  // namespace cordon
