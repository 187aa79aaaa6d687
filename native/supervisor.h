// The supervisor of one run: a child subreaper outside the command's sandbox, so every orphan of
// the command's tree (setsid'd, double-forked, any depth) is reparented to it and stays
// reachable, while the command can neither signal, ptrace nor kill it. It forwards TERM, INT,
// HUP, QUIT, USR1 and USR2 to the whole tree (TERM arms the grace, then KILL), reports how the
// command ended on a status fd ("exit N" / "signal N"), and exits — mirroring the command — once
// no descendant is left. In the foreground it ends the rest of the tree when the command exits;
// in the background it waits for the tree to empty. Its parent's death kills the tree.
#pragma once

#include <sys/types.h>

namespace cordon {

// The parent-death signal: a real-time one glibc does not reserve.
int pdeath_signal();

// Blocks the signals the loop handles (they queue from now on) and returns a signalfd for them.
int block_supervisor_signals();

struct SupervisorOptions {
  int signal_fd = -1;  // from block_supervisor_signals()
  int status_fd = -1;  // where "exit N" / "signal N" goes (closed after)
  long grace_ms = 3000;
  bool background = false;
};

// Supervises `command_pid` (our child) until the tree is empty, then exits like the command.
[[noreturn]] void supervise(const SupervisorOptions& options, pid_t command_pid);

// Writes `line` to `*fd` (errors ignored: the reader may be gone) and closes it.
void report_line(int* fd, const char* line);

}  // namespace cordon
