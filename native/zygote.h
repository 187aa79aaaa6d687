// The launcher: one long-lived cordon-exec per Node host thread, outside every sandbox, that
// turns each request from the host into a run supervisor (a fork of itself: no exec per run,
// so a confined spawn costs a fork and the command's own confinement steps). It dies with the
// host thread (parent-death signal), and every supervisor dies with it, taking its tree along.
#pragma once

#include <sys/types.h>

#include "confine.h"
#include "launch-spec.h"

namespace cordon {

// Serves requests on `control_fd` until the host closes it; never returns. A launcher for one
// kind of confined run first applies `self` to itself (bounding set, no_new_privs, the seccomp
// program), so its runs inherit them instead of paying for them per spawn; `self` is never a
// Landlock domain: the supervisors it forks stay outside every command's sandbox.
// With `unshare_ipc`, all its runs share one private IPC namespace (made here, once).
[[noreturn]] void run_zygote(int control_fd, pid_t host_pid, const ConfinementPlan& self, bool unshare_ipc,
                             bool mask_keys);

// Serves requests as the launcher of a resident bubblewrap instance (see resident.h): each run
// gets the namespaces, write domain and self-applied steps of `tmpl`; never returns.
[[noreturn]] void run_instance(int control_fd, const LaunchSpec& tmpl);

}  // namespace cordon
