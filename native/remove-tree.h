// Removing a directory tree that a confined command could still be changing (its session temp
// dir): every step relative to a directory fd opened with O_NOFOLLOW, so a link swapped in for
// a directory mid-walk is unlinked, never followed out of the tree.
#pragma once

#include <node_api.h>

namespace cordon {

// removeTree(path, cb(errno)): removes `path` and everything beneath it on the thread pool, then
// calls cb with 0 or the first errno met (what could be removed is gone either way).
napi_value RemoveTree(napi_env env, napi_callback_info info);

// removeTreeSync(path) -> 0 | errno: the same, on the calling thread (for small trees).
napi_value RemoveTreeSync(napi_env env, napi_callback_info info);

}  // namespace cordon
