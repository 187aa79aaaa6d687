// Messages with descriptors over a unix stream socket (SCM_RIGHTS), the launcher's transport.
// Each function returns >= 0 or -errno.
#pragma once

#include <stddef.h>

namespace cordon {

constexpr int kMaxPassedFds = 16;

// Sends all of `buf`, the descriptors riding on its first byte.
int send_with_fds(int sock, const void* buf, size_t len, const int* fds, int nfds);

// Reads exactly `len` bytes (blocking, EINTR retried); descriptors that arrive with them are
// stored in `fds` (at most kMaxPassedFds, O_CLOEXEC) and counted in `*nfds`. EOF before the
// first byte returns 0, a short message -EPROTO. `timeout_ms` < 0 waits forever.
int recv_with_fds(int sock, void* buf, size_t len, int* fds, int* nfds, int timeout_ms);

// Reads or writes exactly `len` bytes (EINTR retried); 0 or -errno (-EPIPE on early EOF).
int read_full(int fd, void* buf, size_t len);
int write_full(int fd, const void* buf, size_t len);

}  // namespace cordon
