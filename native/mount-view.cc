// Why a mount namespace: Landlock has no right for a file's mode, owner, times or xattrs, so
// without one a read-only run's seccomp program refuses that family everywhere, the command's own
// TMPDIR included (tar -x, cp -a, chmod +x, venvs fail). Read-only mounts refuse it by place.
#include "mount-view.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

namespace cordon {

namespace {

int close_all(std::vector<int>* fds, int rc) {
  for (int fd : *fds)
    if (fd >= 0) close(fd);
  fds->clear();
  return rc;
}

}  // namespace

int enter_read_only_view(const std::vector<std::string>& writable) {
  if (unshare(CLONE_NEWNS) != 0) return -errno;
  // Nothing done here may reach the host's namespace through shared propagation.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) return -errno;
  // Copies of the writable paths, taken while they are still read-write (parents come first in
  // `writable` order as given; a nested one is put back after its parent, on top of it).
  std::vector<int> trees;
  for (const std::string& path : writable) {
    int fd = open_tree(AT_FDCWD, path.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (fd < 0 && errno != ENOENT) return close_all(&trees, -errno);
    trees.push_back(fd);
  }
  struct mount_attr ro = {};
  ro.attr_set = MOUNT_ATTR_RDONLY;
  if (mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof ro) != 0) return close_all(&trees, -errno);
  for (size_t i = 0; i < writable.size(); i++) {
    if (trees[i] < 0) continue;
    if (move_mount(trees[i], "", AT_FDCWD, writable[i].c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
      return close_all(&trees, -errno);
  }
  close_all(&trees, 0);
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) != nullptr && chdir(cwd) != 0) return -errno;
  return 0;
}

}  // namespace cordon
