// Private namespaces a supervisor enters before it forks the command: IPC (SysV and POSIX message
// queues of the host become unreachable), network (a new namespace with only loopback, brought
// up here), and, for an unprivileged caller, the user namespace that makes the other two
// possible (mapping the caller's own uid and gid, so files keep their owners).
#pragma once

namespace cordon {

// Enters the namespaces asked for; 0 or -errno.
int enter_namespaces(bool user, bool ipc, bool net);

}  // namespace cordon
