// The confinement a child applies to itself between its session/stdio set-up and exec. The
// caller builds every part of it in advance (ruleset fd, BPF program, limits); the child only
// issues the syscalls that make them take effect, in the one order that works for root and
// unprivileged callers alike.
#pragma once

#include <linux/filter.h>
#include <stdint.h>
#include <sys/types.h>

namespace cordon {

struct RlimitSetting {
  int resource = 0;
  uint64_t soft = 0;
  uint64_t hard = 0;
};

constexpr int kMaxRlimits = 8;
constexpr int kMaxCgroupFds = 3;

struct ConfinementPlan {
  // cgroup.procs files of the run's leaves (pids, memory, cpu), opened by the host: the child writes
  // "0" to each first, so the command and every descendant are born inside; its supervisor stays
  // out (never counted, never the memory controller's OOM victim).
  int cgroup_fd_count = 0;
  int cgroup_fds[kMaxCgroupFds] = {-1, -1, -1};
  // Raised first, while the caller's /proc and capabilities are still its own (a root caller's
  // CAP_SYS_RESOURCE makes it the floor the command cannot go below). 0: left as it is.
  int oom_score_adj = 0;
  int rlimit_count = 0;  // applied first (RLIMIT_CORE 0 and the policy's limits)
  RlimitSetting rlimits[kMaxRlimits];
  bool drop_caps = false;        // empty every capability set
  bool drop_bounding = false;    // the caller holds CAP_SETPCAP: bounding set + locked securebits too
  int cap_last = 40;             // /proc/sys/kernel/cap_last_cap, read once by the caller
  bool set_credentials = false;  // become uid/gid (no supplementary groups) before the caps go
  uid_t uid = 0;
  gid_t gid = 0;
  bool no_new_privs = false;
  int landlock_ruleset_fd = -1;         // -1: no Landlock step
  uint32_t landlock_flags = 0;          // landlock_restrict_self flags
  const sock_filter* filter = nullptr;  // NULL: no seccomp step
  uint16_t filter_len = 0;
};

// The part of a plan a launcher applies to itself once, so every command it starts inherits it
// instead of paying for it per spawn: the bounding set and locked securebits (drop_bounding),
// no_new_privs, and the seccomp program (attached, and JIT-compiled, once). Returns nullptr or
// the failed stage (errno in *err).
const char* prepare_launcher(const ConfinementPlan& plan, int* err);

// Clears the ambient set and empties every other capability set; false with errno in *err.
bool drop_all_capabilities(int* err);

// Runs inside the CLONE_VM child: raw syscalls only. Returns nullptr on success, else the stage
// name that failed (errno of the failure stored in *err).
const char* apply_confinement(const ConfinementPlan& plan, int* err);

}  // namespace cordon
