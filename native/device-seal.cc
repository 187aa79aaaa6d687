// Sealing the host's device nodes inside a bubblewrap sandbox (see device-seal.h).
#include "device-seal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#ifndef ST_NOSYMFOLLOW
#define ST_NOSYMFOLLOW 0x2000
#endif
#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif

namespace cordon {
namespace {

// The mount flags a read-only remount of a bind must keep: the kernel refuses (EPERM) to clear a
// flag locked from the host's mount (nosuid, nodev, noexec, the atime mode).
unsigned long kept_flags(unsigned long st) {
  unsigned long flags = 0;
  if (st & ST_NOSUID) flags |= MS_NOSUID;
  if (st & ST_NODEV) flags |= MS_NODEV;
  if (st & ST_NOEXEC) flags |= MS_NOEXEC;
  if (st & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (st & ST_NOSYMFOLLOW) flags |= MS_NOSYMFOLLOW;
  if (st & ST_NOATIME)
    flags |= MS_NOATIME;
  else if (st & ST_RELATIME)
    flags |= MS_RELATIME;
  else
    flags |= MS_STRICTATIME;
  return flags;
}

// Calls `each(path, st)` for every character device directly under /dev; stops at the first
// non-zero result and returns it (or -errno when /dev cannot be listed).
template <typename Each>
int each_device(Each each) {
  DIR* dir = opendir("/dev");
  if (dir == nullptr) return -errno;
  int rc = 0;
  while (rc == 0) {
    errno = 0;
    struct dirent* entry = readdir(dir);
    if (entry == nullptr) {
      rc = errno != 0 ? -errno : 0;
      break;
    }
    char path[300];
    snprintf(path, sizeof path, "/dev/%s", entry->d_name);
    struct stat st;
    if (entry->d_name[0] == '.' || lstat(path, &st) != 0 || !S_ISCHR(st.st_mode)) continue;
    rc = each(path, st);
  }
  closedir(dir);
  return rc > 0 ? 0 : rc;
}

}  // namespace

int seal_device_binds() {
  return each_device([](const char* path, const struct stat&) {
    struct statvfs vfs;
    if (statvfs(path, &vfs) != 0) return -errno;
    if (vfs.f_flag & ST_RDONLY) return 0;
    unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY | kept_flags(vfs.f_flag);
    if (mount(nullptr, path, nullptr, flags, nullptr) != 0) return -errno;
    // A remount that reported success but left the bind writable would leave the hole open.
    if (statvfs(path, &vfs) != 0) return -errno;
    return (vfs.f_flag & ST_RDONLY) != 0 ? 0 : -EPERM;
  });
}

int rehome_device_fd(int fd) {
  struct stat held;
  if (fstat(fd, &held) != 0) return errno == EBADF ? 0 : -errno;
  if (!S_ISCHR(held.st_mode) || isatty(fd)) return 0;
  int status = fcntl(fd, F_GETFL);
  int fd_flags = fcntl(fd, F_GETFD);
  if (status < 0 || fd_flags < 0) return -errno;
  // 1: replaced (stops the walk); a node not under /dev is left as it is.
  auto replace = [&](const char* path, const struct stat& st) {
    if (st.st_rdev != held.st_rdev) return 0;
    int mine = open(path, (status & (O_ACCMODE | O_APPEND | O_NONBLOCK)) | O_NOCTTY | O_CLOEXEC);
    if (mine < 0) return -errno;
    int rc = dup3(mine, fd, (fd_flags & FD_CLOEXEC) != 0 ? O_CLOEXEC : 0) < 0 ? -errno : 1;
    close(mine);
    return rc;
  };
  // The usual nodes first: a host's /dev holds hundreds of entries, and this runs per run.
  static const char* const kUsual[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/urandom", "/dev/random"};
  for (const char* path : kUsual) {
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISCHR(st.st_mode)) continue;
    int rc = replace(path, st);
    if (rc != 0) return rc > 0 ? 0 : rc;
  }
  return each_device(replace);
}

}  // namespace cordon
