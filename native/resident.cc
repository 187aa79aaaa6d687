// The per-run namespaces of a resident instance (see resident.h).
#include "resident.h"

#include <errno.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "confine.h"
#include "launch.h"
#include "namespaces.h"
#include "stages.h"

namespace cordon {

int resident_clone_flags(const LaunchSpec& tmpl) {
  return CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | (tmpl.unshare_net ? CLONE_NEWNET : 0);
}

const char* prepare_resident_run(const LaunchSpec& tmpl, int* ruleset, int* listener, int* err) {
  *ruleset = -1;
  *listener = -1;
  const unsigned long proc_flags = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY;
  if (mount("proc", "/proc", "proc", proc_flags, nullptr) != 0) return *err = errno, kStageNamespace;
  int rc = mask_key_files();
  if (rc != 0) return *err = -rc, kStageNamespace;
  if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620") != 0)
    return *err = errno, kStageNamespace;
  if (tmpl.unshare_net) {
    rc = loopback_up();  // the clone made the namespace; its loopback starts down
    if (rc != 0) return *err = -rc, kStageNamespace;
  }
  if (tmpl.proxy_port > 0) {
    // Only in the run's own network namespace: never on the sandbox's or the host's loopback.
    if (!tmpl.unshare_net) return *err = EINVAL, kStageNamespace;
    int fd = proxy_listener(tmpl.proxy_port);
    if (fd < 0) return *err = -fd, kStageNamespace;
    *listener = fd;
  }
  if (tmpl.build_ruleset) {
    int fd = build_spec_ruleset(tmpl);
    if (fd < 0) return *err = -fd, kStageLandlock;
    *ruleset = fd;
  }
  // Nothing below needs a capability: the run's supervisor holds none, so a command that could
  // reach it would gain nothing; not dumpable, so none can.
  ConfinementPlan bounding;
  bounding.drop_bounding = true;
  bounding.cap_last = tmpl.plan.cap_last;
  const char* failed = prepare_launcher(bounding, err);
  if (failed != nullptr) return failed;
  if (!drop_all_capabilities(err)) return kStageCaps;
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return *err = errno, kStageCaps;
  ConfinementPlan self;
  self.no_new_privs = true;
  self.filter = tmpl.filter.empty() ? nullptr : tmpl.filter.data();
  self.filter_len = static_cast<uint16_t>(tmpl.filter.size());
  return prepare_launcher(self, err);
}

}  // namespace cordon
