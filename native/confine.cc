// Self-confinement inside the CLONE_VM child. Everything here is a raw syscall on memory the
// caller prepared: no allocation, no libc state, no locks (the child shares the caller's memory).
#include "confine.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "stages.h"

#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

namespace cordon {

namespace {

// The bounding set and the securebits: only a caller with CAP_SETPCAP may change them, and it
// must happen while the caps are still there (before any uid change or capset).
bool drop_bounding_set(const ConfinementPlan& plan, int* err) {
  for (int cap = 0; cap <= plan.cap_last; cap++) {
    if (syscall(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
      *err = errno;
      return false;
    }
  }
  // Root keeps no special meaning across exec, and nothing can turn that back on.
  const unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                             SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
                             SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
  if (syscall(SYS_prctl, PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) {
    *err = errno;
    return false;
  }
  return true;
}

// No supplementary groups, then gid, then uid (the uid change would forbid the others).
bool become(const ConfinementPlan& plan, int* err) {
  if (syscall(SYS_setgroups, 0, nullptr) != 0 || syscall(SYS_setresgid, plan.gid, plan.gid, plan.gid) != 0 ||
      syscall(SYS_setresuid, plan.uid, plan.uid, plan.uid) != 0) {
    *err = errno;
    return false;
  }
  return true;
}

// The decimal text of `adj` (1..1000) into /proc/self/oom_score_adj, without libc.
bool write_oom_score(int adj, int* err) {
  char digits[8];
  int n = 0;
  for (int v = adj; v > 0 && n < 8; v /= 10)
    digits[n++] = static_cast<char>('0' + v % 10);
  char text[8];
  for (int i = 0; i < n; i++)
    text[i] = digits[n - 1 - i];
  long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd < 0 || syscall(SYS_write, fd, text, n) != n) {
    *err = errno;
    if (fd >= 0) syscall(SYS_close, fd);
    return false;
  }
  syscall(SYS_close, fd);
  return true;
}

}  // namespace

bool drop_all_capabilities(int* err) {
  if (syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    *err = errno;
    return false;
  }
  __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {{0, 0, 0}, {0, 0, 0}};
  if (syscall(SYS_capset, &header, data) != 0) {
    *err = errno;
    return false;
  }
  return true;
}

const char* prepare_launcher(const ConfinementPlan& plan, int* err) {
  if (plan.drop_bounding && !drop_bounding_set(plan, err)) return kStageCaps;
  if (plan.no_new_privs && syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    *err = errno;
    return kStageNoNewPrivs;
  }
  if (plan.filter != nullptr) {
    sock_fprog prog = {plan.filter_len, const_cast<sock_filter*>(plan.filter)};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
      *err = errno;
      return kStageSeccomp;
    }
  }
  return nullptr;
}

const char* apply_confinement(const ConfinementPlan& plan, int* err) {
  if (plan.oom_score_adj > 0 && !write_oom_score(plan.oom_score_adj, err)) return kStageCgroup;
  for (int i = 0; i < plan.cgroup_fd_count; i++) {
    if (syscall(SYS_write, plan.cgroup_fds[i], "0", 1) != 1) {
      *err = errno;
      return kStageCgroup;
    }
  }
  for (int i = 0; i < plan.rlimit_count; i++) {
    struct rlimit limit = {static_cast<rlim_t>(plan.rlimits[i].soft), static_cast<rlim_t>(plan.rlimits[i].hard)};
    if (syscall(SYS_setrlimit, plan.rlimits[i].resource, &limit) != 0) {
      *err = errno;
      return kStageRlimit;
    }
  }
  if (plan.drop_caps && plan.drop_bounding && !drop_bounding_set(plan, err)) return kStageCaps;
  if (plan.set_credentials && !become(plan, err)) return kStageCredentials;
  if (plan.drop_caps && !drop_all_capabilities(err)) return kStageCaps;
  if (plan.no_new_privs && syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    *err = errno;
    return kStageNoNewPrivs;
  }
  if (plan.landlock_ruleset_fd >= 0 &&
      syscall(SYS_landlock_restrict_self, plan.landlock_ruleset_fd, plan.landlock_flags) != 0) {
    *err = errno;
    return kStageLandlock;
  }
  if (plan.filter != nullptr) {
    sock_fprog prog = {plan.filter_len, const_cast<sock_filter*>(plan.filter)};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
      *err = errno;
      return kStageSeccomp;
    }
  }
  return nullptr;
}

}  // namespace cordon
