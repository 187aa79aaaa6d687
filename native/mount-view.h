// A run's read-only view of the host: a mount namespace of its own where every mount is
// read-only but the run's writable paths.
#pragma once

#include <string>
#include <vector>

namespace cordon {

// Enters a new mount namespace (the caller holds CAP_SYS_ADMIN over it: root, or a user namespace
// entered first), makes every mount read-only and puts each path of `writable` back read-write
// (a bind of what it was, submounts included; a missing path is skipped). Metadata calls (chmod,
// utime, xattrs) then fail EROFS outside `writable`, which Landlock does not govern. The cwd is
// re-entered so that one inside a writable path lands on its read-write bind. 0 or -errno.
int enter_read_only_view(const std::vector<std::string>& writable);

}  // namespace cordon
