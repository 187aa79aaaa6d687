// The confinement a child applies to itself between setsid/stdio and exec. The host builds every
// part of it in advance (ruleset fd, BPF program); the child only issues the syscalls that make
// them take effect, in the one order that works for root and unprivileged hosts alike.
#pragma once

#include <linux/filter.h>
#include <stdint.h>

namespace cordon {

struct ConfinementPlan {
  bool drop_caps = false;      // empty every capability set (and, with CAP_SETPCAP, lock
                               // the securebits and empty the bounding set)
  bool drop_bounding = false;  // the host holds CAP_SETPCAP: bounding set + securebits too
  int cap_last = 40;           // /proc/sys/kernel/cap_last_cap, read once by the host
  bool no_new_privs = false;
  int landlock_ruleset_fd = -1;         // -1: no Landlock step
  uint32_t landlock_flags = 0;          // landlock_restrict_self flags
  const sock_filter* filter = nullptr;  // NULL: no seccomp step
  uint16_t filter_len = 0;
};

// Runs inside the CLONE_VM child: raw syscalls only. Returns nullptr on success, else the stage
// name that failed (errno of the failure stored in *err).
const char* apply_confinement(const ConfinementPlan& plan, int* err);

}  // namespace cordon
