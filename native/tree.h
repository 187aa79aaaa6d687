// The process tree below a subreaper: every descendant, found by walking the children lists in
// /proc from ourselves, each pinned with a pidfd before it is signalled (a recycled pid is never
// signalled, which matters most for a root supervisor).
#pragma once

#include <sys/types.h>

namespace cordon {

// Sends `sig` once to every live descendant of this process, skipping members of `skip_pgid`
// (already signalled as a group); returns how many live (non-zombie) descendants it saw.
int signal_descendants(int sig, pid_t skip_pgid);

// Signals the whole tree once: the command's group atomically while its leader is unreaped (its
// pgid is then still pinned), then every other descendant; returns the live descendants seen.
int signal_tree(int sig, pid_t command_pid, bool command_reaped);

}  // namespace cordon
