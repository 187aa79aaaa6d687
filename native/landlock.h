// Landlock syscalls as plain wrappers (each returns a value >= 0 or -errno). The addon builds and
// caches ruleset fds in the Node host; cordon-exec builds one from a plan given on its argv
// (where no fd can be handed over), checking that every path is still the inode planned for.
// Which rights to handle and grant is decided in TypeScript from the grants table.
#pragma once

#include <stdint.h>
#include <sys/types.h>

namespace cordon {

// The Landlock ABI version (>= 1), or -errno when Landlock is unavailable.
int landlock_abi();

// A new ruleset fd (O_CLOEXEC) handling these rights; `attr_size` selects the ABI's attr prefix.
int landlock_create(uint64_t handled_fs, uint64_t handled_net, uint64_t scoped, uint32_t attr_size);

// Adds a path-beneath rule. With `check_inode`, the opened path must be (dev, ino), else -ESTALE:
// a path swapped since the plan was made never receives the planned rights.
int landlock_add_path(int ruleset_fd, const char* path, uint64_t allowed, bool check_inode, dev_t dev, ino_t ino);

// Adds a rule on /dev/pts when it is a devpts file system other than the host's (device
// `host_dev`): a sandbox's private instance, whose ptys reach no host terminal. Else -EPERM.
int landlock_add_private_devpts(int ruleset_fd, uint64_t allowed, dev_t host_dev);

}  // namespace cordon
