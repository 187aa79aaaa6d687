// Private namespaces a supervisor enters before it forks the command: IPC (SysV and POSIX message
// queues of the host become unreachable), network (a new namespace with only loopback, brought
// up here), and, for an unprivileged caller, the user namespace that makes the other two
// possible (mapping the caller's own uid and gid, so files keep their owners).
#pragma once

namespace cordon {

// Enters the namespaces asked for; 0 or -errno.
int enter_namespaces(bool user, bool ipc, bool net);

// Brings loopback up in a fresh network namespace; 0 or -errno.
int loopback_up();

// A listening TCP socket on 127.0.0.1:`port` of the current network namespace (close-on-exec), the
// only way out of a network allow-list's namespace once the host's proxy holds it; fd or -errno.
int proxy_listener(int port);

// Enters a private mount namespace (a slave of the host's: later host mounts still show) in which
// /proc/keys and /proc/key-users read empty (/dev/null bound over them): the names of the user's
// keys are not listed to what runs below. Needs CAP_SYS_ADMIN; 0 or -errno.
int mask_kernel_keys();

// In a mount namespace of the caller's own: /proc/keys and /proc/key-users read empty. 0 or -errno.
int mask_key_files();

// Once, in a resident instance's launcher: no user namespace can be made in the sandbox any more
// (its max_user_namespaces set to 0 through a private proc mount, detached after). 0 or -errno.
int lock_user_namespaces();

// Raises the caller's own /proc/self/oom_score_adj to `adj` (its children inherit it): under
// memory pressure the OOM killer takes the run before the host. 0 or -errno.
int raise_oom_score(int adj);

}  // namespace cordon
