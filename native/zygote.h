// The launcher: one long-lived cordon-exec per Node host thread, outside every sandbox, that
// turns each request from the host into a run supervisor (a fork of itself: no exec per run,
// so a confined spawn costs a fork and the command's own confinement steps). It dies with the
// host thread (parent-death signal), and every supervisor dies with it, taking its tree along.
#pragma once

#include <sys/types.h>

namespace cordon {

// Serves requests on `control_fd` until the host closes it; never returns.
[[noreturn]] void run_zygote(int control_fd, pid_t host_pid);

}  // namespace cordon
