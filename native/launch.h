// One supervised run from a LaunchSpec: become the run's supervisor (subreaper, parent-death
// signal, private namespaces), build the command's Landlock ruleset when the plan came as rules,
// fork the command (which confines itself and execs), report the start, then supervise.
#pragma once

#include "launch-reply.h"
#include "launch-spec.h"
#include "spawn.h"

namespace cordon {

// The command's ruleset from a spec's rules (each must still be the inode planned for, and the
// private devpts not the host's): its fd, or -errno.
int build_spec_ruleset(const LaunchSpec& spec);

// Makes this process a run's supervisor before any request is known (subreaper, parent-death
// signal, its own session unless `terminal`, the handled signals blocked): returns the signalfd,
// or -errno.
int become_supervisor(bool terminal, pid_t expected_parent);

// The rest of a supervised run, once this process is a supervisor (`signal_fd` from
// become_supervisor): namespaces, the ruleset, the command, the start report, supervision.
[[noreturn]] void supervise_run(SpawnContext* ctx, LaunchSpec* spec, StartChannel start, int signal_fd);

// Runs the whole supervised life of one command (argv mode): its start is told through `start`
// (a reply to the host in launcher mode, a status line in argv mode), its end on `status_fd`.
[[noreturn]] void run_supervised(SpawnContext* ctx, LaunchSpec* spec, StartChannel start);

}  // namespace cordon
