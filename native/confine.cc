// Self-confinement inside the CLONE_VM child. Everything here is a raw syscall on memory the
// host prepared: no allocation, no libc state, no locks (the child shares the host's memory).
#include "confine.h"

#include <linux/capability.h>
#include <linux/securebits.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <errno.h>

#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

namespace cordon {

namespace {

bool drop_capabilities(const ConfinementPlan& plan, int* err) {
  if (plan.drop_bounding) {
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
  }
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

}  // namespace

const char* apply_confinement(const ConfinementPlan& plan, int* err) {
  if (plan.drop_caps && !drop_capabilities(plan, err)) return "caps";
  if (plan.no_new_privs && syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    *err = errno;
    return "no_new_privs";
  }
  if (plan.landlock_ruleset_fd >= 0 &&
      syscall(SYS_landlock_restrict_self, plan.landlock_ruleset_fd, plan.landlock_flags) != 0) {
    *err = errno;
    return "landlock";
  }
  if (plan.filter != nullptr) {
    sock_fprog prog = {plan.filter_len, const_cast<sock_filter*>(plan.filter)};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
      *err = errno;
      return "seccomp";
    }
  }
  return nullptr;
}

}  // namespace cordon
