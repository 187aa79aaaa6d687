// The N-API surface, and only that: argument marshalling onto the plain syscall wrappers (spawn,
// landlock, fd-channel), the pidfd exit watch on the event loop, and small host queries.
// Validation, policy and the launcher's wire format live in TypeScript (src/subprocess/native.ts
// is the one place that knows this module's shape). Every wrapper reports failure as -errno.
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <node_api.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/mount.h>
#include <unistd.h>
#include <uv.h>

#include <string>
#include <unordered_set>
#include <vector>

#include "fd-channel.h"
#include "landlock.h"
#include "pipe-reader.h"
#include "remove-tree.h"
#include "spawn.h"
#include "tty-modes.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

namespace cordon {
namespace {

#define NAPI_OK(call)                              \
  do {                                             \
    if ((call) != napi_ok) return throw_last(env); \
  } while (0)

napi_value throw_last(napi_env env) {
  const napi_extended_error_info* info = nullptr;
  napi_get_last_error_info(env, &info);
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending)
    napi_throw_error(env, "CORDON_NAPI", info && info->error_message ? info->error_message : "N-API call failed");
  return nullptr;
}

napi_value throw_type(napi_env env, const char* message) {
  napi_throw_type_error(env, "CORDON_NATIVE_ARGS", message);
  return nullptr;
}

bool get_string(napi_env env, napi_value v, std::string* out) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, nullptr, 0, &len) != napi_ok) return false;
  out->resize(len);
  return napi_get_value_string_utf8(env, v, &(*out)[0], len + 1, &len) == napi_ok;
}

bool get_string_array(napi_env env, napi_value v, std::vector<std::string>* out) {
  uint32_t n = 0;
  if (napi_get_array_length(env, v, &n) != napi_ok) return false;
  out->resize(n);
  for (uint32_t i = 0; i < n; i++) {
    napi_value item;
    if (napi_get_element(env, v, i, &item) != napi_ok || !get_string(env, item, &(*out)[i])) return false;
  }
  return true;
}

bool get_int_array(napi_env env, napi_value v, std::vector<int32_t>* out, uint32_t max) {
  uint32_t n = 0;
  if (napi_get_array_length(env, v, &n) != napi_ok || n > max) return false;
  out->resize(n);
  for (uint32_t i = 0; i < n; i++) {
    napi_value item;
    if (napi_get_element(env, v, i, &item) != napi_ok || napi_get_value_int32(env, item, &(*out)[i]) != napi_ok)
      return false;
  }
  return true;
}

bool get_prop(napi_env env, napi_value obj, const char* name, napi_value* out) {
  bool has = false;
  if (napi_has_named_property(env, obj, name, &has) != napi_ok || !has) return false;
  napi_valuetype type;
  return napi_get_named_property(env, obj, name, out) == napi_ok && napi_typeof(env, *out, &type) == napi_ok &&
         type != napi_undefined && type != napi_null;
}

bool get_bool_prop(napi_env env, napi_value obj, const char* name) {
  napi_value v;
  bool b = false;
  if (get_prop(env, obj, name, &v)) napi_get_value_bool(env, v, &b);
  return b;
}

int32_t get_int_prop(napi_env env, napi_value obj, const char* name, int32_t fallback) {
  napi_value v;
  int32_t n = fallback;
  if (get_prop(env, obj, name, &v)) napi_get_value_int32(env, v, &n);
  return n;
}

double get_double_prop(napi_env env, napi_value obj, const char* name, double fallback) {
  napi_value v;
  double n = fallback;
  if (get_prop(env, obj, name, &v)) napi_get_value_double(env, v, &n);
  return n;
}

napi_value make_int(napi_env env, int64_t n) {
  napi_value v;
  napi_create_int64(env, n, &v);
  return v;
}

napi_value make_bool(napi_env env, bool b) {
  napi_value v;
  napi_get_boolean(env, b, &v);
  return v;
}

void set(napi_env env, napi_value obj, const char* name, napi_value v) {
  napi_set_named_property(env, obj, name, v);
}

napi_value make_int_array(napi_env env, const int* values, int n) {
  napi_value arr;
  napi_create_array_with_length(env, static_cast<size_t>(n), &arr);
  for (int i = 0; i < n; i++)
    napi_set_element(env, arr, static_cast<uint32_t>(i), make_int(env, values[i]));
  return arr;
}

SpawnContext* context_of(napi_env env) {
  void* data = nullptr;
  napi_get_instance_data(env, &data);
  return static_cast<SpawnContext*>(data);
}

// The plan object (NativeConfinementPlan in native.ts) onto a ConfinementPlan; `filter` keeps
// the program's bytes alive for the spawn.
bool read_plan(napi_env env, napi_value obj, ConfinementPlan* plan, std::vector<sock_filter>* filter) {
  plan->drop_caps = get_bool_prop(env, obj, "dropCaps");
  plan->drop_bounding = get_bool_prop(env, obj, "dropBounding");
  plan->cap_last = get_int_prop(env, obj, "capLast", 40);
  plan->no_new_privs = get_bool_prop(env, obj, "noNewPrivs");
  plan->landlock_ruleset_fd = get_int_prop(env, obj, "rulesetFd", -1);
  plan->landlock_flags = static_cast<uint32_t>(get_int_prop(env, obj, "landlockFlags", 0));
  int64_t oom = get_int_prop(env, obj, "oomScoreAdj", 0);
  if (oom < 0 || oom > 1000) return false;
  plan->oom_score_adj = static_cast<int>(oom);
  napi_value creds;
  if (get_prop(env, obj, "credentials", &creds)) {
    plan->set_credentials = true;
    plan->uid = static_cast<uid_t>(get_int_prop(env, creds, "uid", -1));
    plan->gid = static_cast<gid_t>(get_int_prop(env, creds, "gid", -1));
  }
  napi_value limits;
  if (get_prop(env, obj, "rlimits", &limits)) {
    uint32_t n = 0;
    if (napi_get_array_length(env, limits, &n) != napi_ok || n > kMaxRlimits) return false;
    for (uint32_t i = 0; i < n; i++) {
      napi_value item;
      if (napi_get_element(env, limits, i, &item) != napi_ok) return false;
      plan->rlimits[i] = {get_int_prop(env, item, "resource", -1),
                          static_cast<uint64_t>(get_double_prop(env, item, "soft", 0)),
                          static_cast<uint64_t>(get_double_prop(env, item, "hard", 0))};
    }
    plan->rlimit_count = static_cast<int>(n);
  }
  napi_value buf;
  if (get_prop(env, obj, "filter", &buf)) {
    bool is_buffer = false;
    if (napi_is_buffer(env, buf, &is_buffer) != napi_ok || !is_buffer) return false;
    void* data = nullptr;
    size_t len = 0;
    if (napi_get_buffer_info(env, buf, &data, &len) != napi_ok) return false;
    if (len == 0 || len % sizeof(sock_filter) != 0 || len / sizeof(sock_filter) > BPF_MAXINSNS) return false;
    filter->resize(len / sizeof(sock_filter));
    memcpy(filter->data(), data, len);
    plan->filter = filter->data();
    plan->filter_len = static_cast<uint16_t>(filter->size());
  }
  return true;
}

// spawn(path, argv, envp, cwd|null, slots, plan|null)
//   slots[i]: -1 /dev/null, -2 a new pipe, -3 inherit fd i, >= 0 that fd
//   -> { pid, pidfd, fds: (number|null)[] } | { stage, errno }
napi_value Spawn(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value a[6];
  NAPI_OK(napi_get_cb_info(env, info, &argc, a, nullptr, nullptr));
  if (argc < 6) return throw_type(env, "spawn takes 6 arguments");

  std::string path, cwd;
  std::vector<std::string> argv, envp;
  std::vector<int32_t> slots;
  if (!get_string(env, a[0], &path)) return throw_type(env, "path must be a string");
  if (!get_string_array(env, a[1], &argv)) return throw_type(env, "argv must be string[]");
  if (!get_string_array(env, a[2], &envp)) return throw_type(env, "envp must be string[]");
  napi_valuetype cwd_type;
  NAPI_OK(napi_typeof(env, a[3], &cwd_type));
  bool has_cwd = cwd_type == napi_string;
  if (has_cwd && !get_string(env, a[3], &cwd)) return throw_type(env, "cwd must be a string");
  if (!get_int_array(env, a[4], &slots, kMaxChildFds) || slots.size() < 3)
    return throw_type(env, "slots must have 3 to 8 entries");

  SpawnRequest req;
  req.fd_count = static_cast<int>(slots.size());
  for (size_t i = 0; i < slots.size(); i++) {
    int32_t s = slots[i];
    if (s == -1) {
      req.slots[i].kind = SlotKind::Null;
    } else if (s == -2) {
      req.slots[i].kind = SlotKind::Pipe;
    } else if (s == -3) {
      req.slots[i].kind = SlotKind::Inherit;
    } else if (s >= 0) {
      req.slots[i] = {SlotKind::Fd, s};
    } else {
      return throw_type(env, "bad slot");
    }
  }

  ConfinementPlan plan;
  std::vector<sock_filter> filter;
  napi_valuetype plan_type;
  NAPI_OK(napi_typeof(env, a[5], &plan_type));
  if (plan_type == napi_object) {
    if (!read_plan(env, a[5], &plan, &filter)) return throw_type(env, "bad confinement plan");
    req.plan = &plan;
  }

  auto argv_c = c_array(argv);
  auto envp_c = c_array(envp);
  req.path = path.c_str();
  req.argv = argv_c.data();
  req.envp = envp_c.data();
  req.cwd = has_cwd ? cwd.c_str() : nullptr;

  SpawnResult res;
  napi_value out;
  NAPI_OK(napi_create_object(env, &out));
  if (!spawn_process(context_of(env), req, &res)) {
    napi_value stage;
    NAPI_OK(napi_create_string_utf8(env, res.stage, NAPI_AUTO_LENGTH, &stage));
    set(env, out, "stage", stage);
    set(env, out, "errno", make_int(env, res.error));
    return out;
  }
  napi_value fds;
  NAPI_OK(napi_create_array_with_length(env, static_cast<size_t>(req.fd_count), &fds));
  for (int i = 0; i < req.fd_count; i++) {
    napi_value v;
    if (res.parent_fds[i] >= 0) {
      v = make_int(env, res.parent_fds[i]);
    } else {
      napi_get_null(env, &v);
    }
    napi_set_element(env, fds, static_cast<uint32_t>(i), v);
  }
  set(env, out, "pid", make_int(env, res.pid));
  set(env, out, "pidfd", make_int(env, res.pidfd));
  set(env, out, "fds", fds);
  return out;
}

// One pidfd watched by the event loop: readable once the process has exited.
struct ExitWatch {
  uv_poll_t poll;
  int pidfd;
  bool reap;  // our child: collect its status; else (a launcher's supervisor) only the fact
  napi_env env;
  napi_ref callback;
  napi_async_context async_context;
};

// The watches of this thread's environment still waiting (each environment has its own thread).
thread_local std::unordered_set<ExitWatch*> live_watches;

void free_watch(ExitWatch* w) {
  live_watches.erase(w);
  close(w->pidfd);
  if (w->callback != nullptr) napi_delete_reference(w->env, w->callback);
  if (w->async_context != nullptr) napi_async_destroy(w->env, w->async_context);
  delete w;
}

void on_watch_closed(uv_handle_t* handle) {
  free_watch(static_cast<ExitWatch*>(handle->data));
}

void on_pidfd_readable(uv_poll_t* handle, int status, int /*events*/) {
  ExitWatch* w = static_cast<ExitWatch*>(handle->data);
  int exit_code = -1, signal_number = 0;
  if (status == 0 && w->reap) {
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    // uv_poll made the pidfd non-blocking: spurious wakeups are possible, so WNOHANG and retry.
    if (waitid(static_cast<idtype_t>(P_PIDFD), w->pidfd, &si, WEXITED | WNOHANG) != 0) {
      if (errno == EINTR || errno == EAGAIN) return;
    } else if (si.si_pid == 0) {
      return;
    }
    if (si.si_code == CLD_EXITED) {
      exit_code = si.si_status;
    } else {
      signal_number = si.si_status;
    }
  }
  uv_poll_stop(handle);
  live_watches.erase(w);
  napi_env env = w->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value cb, recv, args[2];
  napi_get_reference_value(env, w->callback, &cb);
  napi_get_global(env, &recv);  // make_callback wants an object receiver
  if (exit_code >= 0) {
    args[0] = make_int(env, exit_code);
    napi_get_null(env, &args[1]);
  } else if (signal_number > 0) {
    napi_get_null(env, &args[0]);
    args[1] = make_int(env, signal_number);
  } else {
    napi_get_null(env, &args[0]);
    napi_get_null(env, &args[1]);
  }
  // make_callback (not call_function) so promise jobs queued by the callback run now.
  napi_value result;
  napi_make_callback(env, w->async_context, recv, cb, 2, args, &result);
  napi_close_handle_scope(env, scope);
  uv_close(reinterpret_cast<uv_handle_t*>(handle), on_watch_closed);
}

// watch(pidfd, reap, keepAlive, cb(exitCode|null, signal|null)): calls back once when the process
// exits (with its status when `reap`: our own child, reaped here); without `keepAlive` the watch
// does not hold the event loop open. Owns the pidfd from here on.
napi_value Watch(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value a[4];
  NAPI_OK(napi_get_cb_info(env, info, &argc, a, nullptr, nullptr));
  int32_t pidfd = -1;
  bool reap = true, keep_alive = true;
  if (argc < 4 || napi_get_value_int32(env, a[0], &pidfd) != napi_ok || pidfd < 0 ||
      napi_get_value_bool(env, a[1], &reap) != napi_ok || napi_get_value_bool(env, a[2], &keep_alive) != napi_ok)
    return throw_type(env, "watch(pidfd, reap, keepAlive, callback)");
  uv_loop_t* loop = nullptr;
  NAPI_OK(napi_get_uv_event_loop(env, &loop));
  ExitWatch* w = new ExitWatch();
  w->pidfd = pidfd;
  w->reap = reap;
  w->env = env;
  w->callback = nullptr;
  w->async_context = nullptr;
  napi_value name;
  napi_create_string_utf8(env, "cordon:exit", NAPI_AUTO_LENGTH, &name);
  if (napi_create_reference(env, a[3], 1, &w->callback) != napi_ok ||
      napi_async_init(env, nullptr, name, &w->async_context) != napi_ok) {
    free_watch(w);
    return throw_last(env);
  }
  w->poll.data = w;
  int rc = uv_poll_init(loop, &w->poll, pidfd);
  if (rc != 0) {
    free_watch(w);  // the handle was never registered with the loop
    napi_throw_error(env, "CORDON_WATCH", uv_strerror(rc));
    return nullptr;
  }
  rc = uv_poll_start(&w->poll, UV_READABLE, on_pidfd_readable);
  if (rc != 0) {
    uv_close(reinterpret_cast<uv_handle_t*>(&w->poll), on_watch_closed);
    napi_throw_error(env, "CORDON_WATCH", uv_strerror(rc));
    return nullptr;
  }
  if (!keep_alive) uv_unref(reinterpret_cast<uv_handle_t*>(&w->poll));
  live_watches.insert(w);
  return nullptr;
}

// stopWatches(): drops every watch still waiting, without calling back. For the process's 'exit':
// Node's teardown runs the loop once more, and a process that exits then (a launcher, a resident
// instance: watched without holding the loop) would call into an environment being torn down.
napi_value StopWatches(napi_env env, napi_callback_info /*info*/) {
  std::vector<ExitWatch*> watches(live_watches.begin(), live_watches.end());
  for (ExitWatch* w : watches) {
    if (w->env != env) continue;
    uv_poll_stop(&w->poll);
    napi_delete_reference(env, w->callback);
    napi_async_destroy(env, w->async_context);
    w->callback = nullptr;
    w->async_context = nullptr;
    live_watches.erase(w);
    uv_close(reinterpret_cast<uv_handle_t*>(&w->poll), on_watch_closed);
  }
  return nullptr;
}

// pipes(n) -> [r0, w0, r1, w1, ...] (O_CLOEXEC) | -errno: n pipes in one call (nothing left open on failure).
napi_value Pipes(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value a[1];
  NAPI_OK(napi_get_cb_info(env, info, &argc, a, nullptr, nullptr));
  int32_t n = 0;
  if (argc < 1 || napi_get_value_int32(env, a[0], &n) != napi_ok || n < 1 || n > 8)
    return throw_type(env, "pipes(1..8)");
  int fds[16];
  for (int i = 0; i < n; i++) {
    if (pipe2(fds + 2 * i, O_CLOEXEC) != 0) {
      int e = errno;
      for (int j = 0; j < 2 * i; j++)
        close(fds[j]);
      return make_int(env, -e);
    }
  }
  return make_int_array(env, fds, 2 * n);
}

// pidfdSignal(pidfd, sig) -> 0 | -errno: signals exactly this process, never a reused pid.
napi_value PidfdSignal(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value a[2];
  NAPI_OK(napi_get_cb_info(env, info, &argc, a, nullptr, nullptr));
  int32_t pidfd = -1, sig = 0;
  napi_get_value_int32(env, a[0], &pidfd);
  napi_get_value_int32(env, a[1], &sig);
  long rc = syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0);
  return make_int(env, rc == 0 ? 0 : -errno);
}

// pidfdOpen(pid) -> pidfd (O_CLOEXEC) | -errno.
napi_value PidfdOpen(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value a[1];
  NAPI_OK(napi_get_cb_info(env, info, &argc, a, nullptr, nullptr));
  int32_t pid = 0;
  if (argc < 1 || napi_get_value_int32(env, a[0], &pid) != napi_ok || pid <= 0)
    return throw_type(env, "pidfdOpen(pid)");
  long fd = syscall(SYS_pidfd_open, pid, 0);
  return make_int(env, fd >= 0 ? fd : -errno);
}

// closeFd(fd): closes a descriptor the addon handed out (ruleset fds, unused pipe ends).
napi_value CloseFd(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value a[1];
  NAPI_OK(napi_get_cb_info(env, info, &argc, a, nullptr, nullptr));
  int32_t fd = -1;
  if (argc < 1 || napi_get_value_int32(env, a[0], &fd) != napi_ok || fd < 3) return throw_type(env, "closeFd(fd >= 3)");
  close(fd);
  return nullptr;
}

// setCloexec(fd, on = true) -> 0 | -errno: marks a descriptor another library opened without
// close-on-exec (node-pty's pty masters), so no later child of the host inherits it; `false` lets
// the very next child inherit one (a terminal's ruleset, around node-pty's fork).
napi_value SetCloexec(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value a[2];
  NAPI_OK(napi_get_cb_info(env, info, &argc, a, nullptr, nullptr));
  int32_t fd = -1;
  if (argc < 1 || napi_get_value_int32(env, a[0], &fd) != napi_ok || fd < 3)
    return throw_type(env, "setCloexec(fd >= 3, on?)");
  bool on = true;
  if (argc >= 2 && napi_get_value_bool(env, a[1], &on) != napi_ok)
    return throw_type(env, "setCloexec(fd, on: boolean)");
  int flags = fcntl(fd, F_GETFD);
  if (flags < 0 || fcntl(fd, F_SETFD, on ? (flags | FD_CLOEXEC) : (flags & ~FD_CLOEXEC)) != 0)
    return make_int(env, -errno);
  return make_int(env, 0);
}

// socketPair() -> [fd, fd] (unix stream, O_CLOEXEC) | -errno.
napi_value SocketPair(napi_env env, napi_callback_info /*info*/) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return make_int(env, -errno);
  return make_int_array(env, fds, 2);
}

// launcherSend(controlFd, request, fds) -> 0 | -errno: one request, its descriptors riding along.
napi_value LauncherSend(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value a[3];
  NAPI_OK(napi_get_cb_info(env, info, &argc, a, nullptr, nullptr));
  int32_t control = -1;
  std::vector<int32_t> fds;
  bool is_buffer = false;
  if (argc < 3 || napi_get_value_int32(env, a[0], &control) != napi_ok ||
      napi_is_buffer(env, a[1], &is_buffer) != napi_ok || !is_buffer || !get_int_array(env, a[2], &fds, kMaxPassedFds))
    return throw_type(env, "launcherSend(controlFd, request, fds)");
  void* data = nullptr;
  size_t len = 0;
  NAPI_OK(napi_get_buffer_info(env, a[1], &data, &len));
  return make_int(env, send_with_fds(control, data, len, fds.data(), static_cast<int>(fds.size())));
}

// launcherReceive(controlFd, replySize, timeoutMs) -> { reply: Buffer, fds } | -errno (-EPIPE at EOF).
napi_value LauncherReceive(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value a[3];
  NAPI_OK(napi_get_cb_info(env, info, &argc, a, nullptr, nullptr));
  int32_t control = -1, reply_size = 0, timeout = -1;
  if (argc < 3 || napi_get_value_int32(env, a[0], &control) != napi_ok ||
      napi_get_value_int32(env, a[1], &reply_size) != napi_ok || reply_size <= 0 || reply_size > 4096 ||
      napi_get_value_int32(env, a[2], &timeout) != napi_ok)
    return throw_type(env, "launcherReceive(controlFd, replySize, timeoutMs)");
  std::vector<uint8_t> reply(static_cast<size_t>(reply_size));
  int got_fds[kMaxPassedFds];
  int nfds = 0;
  int rc = recv_with_fds(control, reply.data(), reply.size(), got_fds, &nfds, timeout);
  if (rc <= 0) {
    for (int i = 0; i < nfds; i++)
      close(got_fds[i]);
    return make_int(env, rc == 0 ? -EPIPE : rc);
  }
  napi_value out, buffer;
  NAPI_OK(napi_create_object(env, &out));
  void* copy = nullptr;
  NAPI_OK(napi_create_buffer_copy(env, reply.size(), reply.data(), &copy, &buffer));
  set(env, out, "reply", buffer);
  set(env, out, "fds", make_int_array(env, got_fds, nfds));
  return out;
}

// hostCapabilities() -> { setpcap, capLast }: whether the child may drop the bounding set, and the
// highest capability number it drops.
napi_value HostCapabilities(napi_env env, napi_callback_info /*info*/) {
  __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  bool got = syscall(SYS_capget, &header, data) == 0;
  bool setpcap = got && (data[0].effective & (1u << CAP_SETPCAP)) != 0;
  int cap_last = 40;
  if (FILE* f = fopen("/proc/sys/kernel/cap_last_cap", "re")) {
    if (fscanf(f, "%d", &cap_last) != 1) cap_last = 40;
    fclose(f);
  }
  napi_value out;
  NAPI_OK(napi_create_object(env, &out));
  set(env, out, "setpcap", make_bool(env, setpcap));
  set(env, out, "capLast", make_int(env, cap_last));
  return out;
}

// landlockAbi() -> ABI version (>= 1) | -errno.
napi_value LandlockAbi(napi_env env, napi_callback_info /*info*/) {
  return make_int(env, landlock_abi());
}

double number_arg(napi_env env, napi_value v) {
  double d = 0;
  napi_get_value_double(env, v, &d);
  return d;
}

// landlockCreateRuleset(handledFs, handledNet, scoped, attrSize) -> fd (O_CLOEXEC) | -errno.
napi_value LandlockCreateRuleset(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value a[4];
  NAPI_OK(napi_get_cb_info(env, info, &argc, a, nullptr, nullptr));
  if (argc < 4) return throw_type(env, "landlockCreateRuleset(fs, net, scoped, attrSize)");
  auto u64 = [&](napi_value v) { return static_cast<uint64_t>(number_arg(env, v) < 0 ? 0 : number_arg(env, v)); };
  return make_int(env, landlock_create(u64(a[0]), u64(a[1]), u64(a[2]), static_cast<uint32_t>(u64(a[3]))));
}

// landlockAddPathRule(rulesetFd, path, allowed) -> 0 | -errno (-ENOENT for a missing path).
napi_value LandlockAddPathRule(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value a[3];
  NAPI_OK(napi_get_cb_info(env, info, &argc, a, nullptr, nullptr));
  std::string path;
  if (argc < 3 || !get_string(env, a[1], &path)) return throw_type(env, "landlockAddPathRule(fd, path, allowed)");
  double allowed = number_arg(env, a[2]);
  return make_int(env, landlock_add_path(static_cast<int>(number_arg(env, a[0])), path.c_str(),
                                         static_cast<uint64_t>(allowed < 0 ? 0 : allowed), false, 0, 0));
}

// tmpfsMount(path, sizeBytes, uid, gid, remount) -> 0 | -errno: a size-bounded tmpfs over `path`
// (mode 0700, owned by uid:gid, nosuid, nodev) on an unbindable bind of it, or a new size for the one there.
napi_value TmpfsMount(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value a[5];
  NAPI_OK(napi_get_cb_info(env, info, &argc, a, nullptr, nullptr));
  std::string path;
  bool remount = false;
  if (argc < 5 || !get_string(env, a[0], &path) || napi_get_value_bool(env, a[4], &remount) != napi_ok)
    return throw_type(env, "tmpfsMount(path, sizeBytes, uid, gid, remount)");
  char data[96];
  auto n = [&](int i) {
    return static_cast<unsigned long long>(number_arg(env, a[i]) < 0 ? 0 : number_arg(env, a[i]));
  };
  if (remount)
    snprintf(data, sizeof data, "size=%llu", n(1));
  else
    snprintf(data, sizeof data, "size=%llu,mode=0700,uid=%llu,gid=%llu", n(1), n(2), n(3));
  unsigned long flags = MS_NOSUID | MS_NODEV | (remount ? MS_REMOUNT : 0);
  if (remount) return make_int(env, mount("tmpfs", path.c_str(), "tmpfs", flags, data) == 0 ? 0 : -errno);
  // Beneath the tmpfs, an unbindable bind of the directory itself: another sandbox's bwrap, binding
  // the host's tree recursively, skips it, and neither mount propagates into its namespace, so its
  // removal cannot pull a mount from under that bwrap while it sets up (ENOENT).
  if (mount(path.c_str(), path.c_str(), nullptr, MS_BIND, nullptr) != 0) return make_int(env, -errno);
  if (mount(nullptr, path.c_str(), nullptr, MS_UNBINDABLE, nullptr) != 0 ||
      mount("tmpfs", path.c_str(), "tmpfs", flags, data) != 0) {
    int err = errno;
    umount2(path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
    return make_int(env, -err);
  }
  return make_int(env, 0);
}

// detachMount(path) -> 0 | -errno: the mount at `path` detached (lazily: a run still in it keeps it).
napi_value DetachMount(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value a[1];
  NAPI_OK(napi_get_cb_info(env, info, &argc, a, nullptr, nullptr));
  std::string path;
  if (argc < 1 || !get_string(env, a[0], &path)) return throw_type(env, "detachMount(path)");
  return make_int(env, umount2(path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) == 0 ? 0 : -errno);
}

void free_context(napi_env /*env*/, void* data, void* /*hint*/) {
  SpawnContext* ctx = static_cast<SpawnContext*>(data);
  spawn_context_free(ctx);
  delete ctx;
}

napi_value Init(napi_env env, napi_value exports) {
  SpawnContext* ctx = new SpawnContext();
  if (!spawn_context_init(ctx)) {
    delete ctx;
    napi_throw_error(env, "CORDON_INIT", "cordon: could not prepare the spawn context (mmap or /dev/null)");
    return nullptr;
  }
  napi_set_instance_data(env, ctx, free_context, nullptr);
  napi_property_descriptor props[] = {
      {"spawn", nullptr, Spawn, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"watch", nullptr, Watch, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"stopWatches", nullptr, StopWatches, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"pidfdSignal", nullptr, PidfdSignal, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"pidfdOpen", nullptr, PidfdOpen, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"closeFd", nullptr, CloseFd, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"setCloexec", nullptr, SetCloexec, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"setOutputProcessing", nullptr, SetOutputProcessing, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"socketPair", nullptr, SocketPair, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"pipes", nullptr, Pipes, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"readPipe", nullptr, ReadPipe, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"stopPipe", nullptr, StopPipe, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"removeTree", nullptr, RemoveTree, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"removeTreeSync", nullptr, RemoveTreeSync, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"launcherSend", nullptr, LauncherSend, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"launcherReceive", nullptr, LauncherReceive, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"hostCapabilities", nullptr, HostCapabilities, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"landlockAbi", nullptr, LandlockAbi, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"landlockCreateRuleset", nullptr, LandlockCreateRuleset, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"landlockAddPathRule", nullptr, LandlockAddPathRule, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"tmpfsMount", nullptr, TmpfsMount, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"detachMount", nullptr, DetachMount, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
  return exports;
}

}  // namespace
}  // namespace cordon

NAPI_MODULE(NODE_GYP_MODULE_NAME, cordon::Init)
