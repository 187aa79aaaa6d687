// Landlock syscall wrappers. Constants past Debian 12's headers (ABI 2) live in TypeScript, which
// decides every right; the struct layouts below were checked on a 6.18 kernel (ABI 7).
#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif

namespace cordon {
namespace {

constexpr uint32_t kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;

// The ABI-6+ attribute layout: {fs, net, scoped}. Older kernels take a prefix of it.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

}  // namespace

int landlock_abi() {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return abi >= 0 ? static_cast<int>(abi) : -errno;
}

int landlock_create(uint64_t handled_fs, uint64_t handled_net, uint64_t scoped, uint32_t attr_size) {
  RulesetAttr attr = {handled_fs, handled_net, scoped};
  size_t size = attr_size > sizeof(attr) ? sizeof(attr) : attr_size;
  long fd = syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  return fd >= 0 ? static_cast<int>(fd) : -errno;
}

int landlock_add_path(int ruleset_fd, const char* path, uint64_t allowed, bool check_inode, dev_t dev, ino_t ino) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return -errno;
  if (check_inode) {
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_dev != dev || st.st_ino != ino) {
      close(fd);
      return -ESTALE;
    }
  }
  PathBeneathAttr attr = {allowed, fd};
  long rc = syscall(SYS_landlock_add_rule, ruleset_fd, kRulePathBeneath, &attr, 0);
  int error = rc == 0 ? 0 : -errno;
  close(fd);
  return error;
}

int landlock_add_private_devpts(int ruleset_fd, uint64_t allowed, dev_t host_dev) {
  constexpr long kDevptsMagic = 0x1cd1;  // DEVPTS_SUPER_MAGIC
  int fd = open("/dev/pts", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -errno;
  struct statfs fs;
  struct stat st;
  if (fstatfs(fd, &fs) != 0 || fs.f_type != kDevptsMagic || fstat(fd, &st) != 0 || st.st_dev == host_dev) {
    close(fd);
    return -EPERM;
  }
  PathBeneathAttr attr = {allowed, fd};
  long rc = syscall(SYS_landlock_add_rule, ruleset_fd, kRulePathBeneath, &attr, 0);
  int error = rc == 0 ? 0 : -errno;
  close(fd);
  return error;
}

}  // namespace cordon
