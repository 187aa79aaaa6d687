// A resident bubblewrap instance: one bwrap per sandbox and plan, whose init is a launcher
// (cordon-exec instance) that keeps CAP_SYS_ADMIN in the sandbox's user namespace so that each
// run gets namespaces of its own inside it. What one run could leave for the next is gone with
// its supervisor: its pid namespace (every process), its mount namespace (its /proc and devpts:
// ptys), its IPC namespace and, under a denied network, its network namespace.
#pragma once

#include "launch-spec.h"

namespace cordon {

// Clone flags of one run's namespaces (the idle supervisor is cloned with them: it is the run's
// pid 1).
int resident_clone_flags(const LaunchSpec& tmpl);

// In an idle supervisor (pid 1 of its namespaces): a read-only /proc of its own pid namespace with
// the key files masked, a devpts instance of its own, loopback, the command's write domain built
// (`*ruleset`), a network allow-list's listener (`*listener`, see proxy_listener), then every
// capability dropped (bounding set included), not dumpable, no_new_privs and the command's seccomp
// program on itself. nullptr, or the stage that failed (errno in *err).
const char* prepare_resident_run(const LaunchSpec& tmpl, int* ruleset, int* listener, int* err);

}  // namespace cordon
