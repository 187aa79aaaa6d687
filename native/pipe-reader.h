// The host end of a child's output pipe read on the event loop into one caller-owned buffer
// (collect mode): no net.Socket, no stream machinery for bytes cordon only counts and copies.
#pragma once

#include <node_api.h>

namespace cordon {

// readPipe(fd, buffer, cb(n)): reads `fd` as it becomes readable into `buffer`, calling cb(n)
// with each read's length (bytes [0, n) valid during the call), then once with 0 at EOF or
// -errno on a read error; owns (and closes) the fd. Returns an id for stopPipe.
napi_value ReadPipe(napi_env env, napi_callback_info info);

// stopPipe(id): stops reading and closes the fd; no callback follows. A finished id is ignored.
napi_value StopPipe(napi_env env, napi_callback_info info);

}  // namespace cordon
