// See remove-tree.h. The walk holds one directory fd per level: a subtree at kMaxDepth is moved
// up into the tree's root (renameat, by fd) and walked again from there, rather than holding
// more fds — a command that nested its temp dir deeper must not leave it behind for good.
#include "remove-tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include <string>

namespace cordon {
namespace {

constexpr int kMaxDepth = 256;
// Walks of the root at most (each takes ~kMaxDepth levels off the deepest subtree).
constexpr int kMaxPasses = 4096;

// The tree's root dir, where subtrees too deep to walk are moved, and how many were.
struct Top {
  int fd = -1;
  unsigned long next = 0;
  int hoisted = 0;
};

// Moves `name` in `dir_fd` into the root under a fresh name; 0, or EMLINK when it cannot be.
int hoist(int dir_fd, const char* name, Top* top) {
  char fresh[48];
  for (int tries = 0; tries < 8; tries++) {
    snprintf(fresh, sizeof fresh, ".cordon-deep-%lu", top->next++);
    if (renameat(dir_fd, name, top->fd, fresh) == 0) {
      top->hoisted++;
      return 0;
    }
    if (errno == ENOENT) return 0;
    if (errno != EEXIST && errno != ENOTEMPTY) break;
  }
  return EMLINK;
}

// Removes `name` in `dir_fd`, whatever it is; 0 or an errno (the first one met below it).
int remove_at(int dir_fd, const char* name, int depth, Top* top) {
  if (unlinkat(dir_fd, name, 0) == 0 || errno == ENOENT) return 0;
  if (errno != EISDIR && errno != EPERM) return errno;
  if (depth >= kMaxDepth) return hoist(dir_fd, name, top);
  int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return 0;
    // No longer a directory (a link or file swapped in): unlink that instead.
    if (errno == ELOOP || errno == ENOTDIR) return unlinkat(dir_fd, name, 0) == 0 || errno == ENOENT ? 0 : errno;
    return errno;
  }
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    int error = errno;
    close(fd);
    return error;
  }
  bool is_top = top->fd < 0;
  if (is_top) top->fd = fd;
  int first = 0;
  for (int pass = 0; pass < kMaxPasses; pass++) {
    if (is_top) top->hoisted = 0;
    for (struct dirent* e; (e = readdir(dir)) != nullptr;) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      int rc = remove_at(fd, e->d_name, depth + 1, top);
      if (first == 0) first = rc;
    }
    // Only the root walks again, and only for what was moved into it.
    if (!is_top || top->hoisted == 0) break;
    rewinddir(dir);
  }
  if (is_top) top->fd = -1;
  closedir(dir);
  if (unlinkat(dir_fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT && first == 0) first = errno;
  return first;
}

// Removes `path`: its parent is opened by path (cordon's own directory), the rest by fd.
int remove_tree(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos || slash + 1 >= path.size()) return EINVAL;
  std::string parent = slash == 0 ? "/" : path.substr(0, slash);
  std::string name = path.substr(slash + 1);
  int parent_fd = open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent_fd < 0) return errno == ENOENT ? 0 : errno;
  Top top;
  int rc = remove_at(parent_fd, name.c_str(), 0, &top);
  close(parent_fd);
  return rc;
}

struct RemoveWork {
  uv_work_t req;
  std::string path;
  int error;
  napi_env env;
  napi_ref callback;
  napi_async_context async_context;
};

void work(uv_work_t* req) {
  RemoveWork* w = static_cast<RemoveWork*>(req->data);
  w->error = remove_tree(w->path);
}

void done(uv_work_t* req, int /*status*/) {
  RemoveWork* w = static_cast<RemoveWork*>(req->data);
  napi_env env = w->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) == napi_ok) {
    napi_value cb, recv, arg, result;
    napi_get_reference_value(env, w->callback, &cb);
    napi_get_global(env, &recv);
    napi_create_int32(env, w->error, &arg);
    napi_make_callback(env, w->async_context, recv, cb, 1, &arg, &result);
    napi_close_handle_scope(env, scope);
  }
  napi_delete_reference(env, w->callback);
  napi_async_destroy(env, w->async_context);
  delete w;
}

napi_value throw_args(napi_env env) {
  napi_throw_type_error(env, "CORDON_NATIVE_ARGS", "removeTree(absolutePath, cb) / removeTreeSync(absolutePath)");
  return nullptr;
}

// The absolute path argument (no NUL inside); false when it is not one.
bool absolute_path(napi_env env, napi_value v, std::string* out) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, nullptr, 0, &len) != napi_ok || len == 0) return false;
  out->assign(len, '\0');
  napi_get_value_string_utf8(env, v, &(*out)[0], len + 1, &len);
  return (*out)[0] == '/' && out->find('\0') == std::string::npos;
}

}  // namespace

napi_value RemoveTreeSync(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value a[1];
  std::string path;
  if (napi_get_cb_info(env, info, &argc, a, nullptr, nullptr) != napi_ok || argc < 1 ||
      !absolute_path(env, a[0], &path))
    return throw_args(env);
  napi_value rc;
  napi_create_int32(env, remove_tree(path), &rc);
  return rc;
}

napi_value RemoveTree(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value a[2];
  if (napi_get_cb_info(env, info, &argc, a, nullptr, nullptr) != napi_ok || argc < 2) return throw_args(env);
  napi_valuetype cb_type;
  std::string path;
  if (!absolute_path(env, a[0], &path) || napi_typeof(env, a[1], &cb_type) != napi_ok || cb_type != napi_function)
    return throw_args(env);
  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok) return throw_args(env);
  RemoveWork* w = new RemoveWork();
  w->req.data = w;
  w->path = path;
  w->error = 0;
  w->env = env;
  napi_value name;
  napi_create_string_utf8(env, "cordon:removeTree", NAPI_AUTO_LENGTH, &name);
  if (napi_create_reference(env, a[1], 1, &w->callback) != napi_ok) {
    delete w;
    return throw_args(env);
  }
  if (napi_async_init(env, nullptr, name, &w->async_context) != napi_ok) {
    napi_delete_reference(env, w->callback);
    delete w;
    return throw_args(env);
  }
  int rc = uv_queue_work(loop, &w->req, work, done);
  if (rc != 0) {
    napi_delete_reference(env, w->callback);
    napi_async_destroy(env, w->async_context);
    delete w;
    napi_throw_error(env, "CORDON_REMOVE", uv_strerror(rc));
  }
  return nullptr;
}

}  // namespace cordon
