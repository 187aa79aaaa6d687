// The host's device nodes inside a bubblewrap sandbox. bwrap's --dev (and a resident instance's
// --dev-bind) puts the host's /dev/null, zero, full, random, urandom and tty in (and /dev/console,
// the host's terminal, when one is attached) as read-write bind mounts: host inodes that the
// sandbox's root owns when the host's root does, so chmod, utime and xattrs on them would change
// the host's nodes (ownership is enough, no capability needed). bwrap's own --remount-ro adds
// nodev, and the nodes stop working; a read-only bind keeps them working (a device's reads and
// writes never ask the mount) and refuses every metadata change with EROFS.
#pragma once

namespace cordon {

// Remounts each character device directly under /dev that sits on a read-write mount read-only,
// keeping every other flag it has (the locked nosuid and atime flags included). Needs
// CAP_SYS_ADMIN in the sandbox's user namespace; 0 or -errno.
int seal_device_binds();

// `fd` when it is not one of the host's device nodes under /dev on another mount: else the same
// node opened through the sandbox's own (sealed) /dev with the same access mode, dup'ed over
// `fd` (a host /dev/null handed in as stdio would otherwise reach the host's read-write /dev).
// A terminal is left as it is. 0 or -errno.
int rehome_device_fd(int fd);

}  // namespace cordon
