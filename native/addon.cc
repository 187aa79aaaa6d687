// The N-API surface, and only that: argument marshalling onto the native spawn, the pidfd exit
// watch on the event loop, and small host queries. Validation and policy live in TypeScript
// (src/subprocess/native.ts is the one place that knows this module's shape).
#include <errno.h>
#include <linux/capability.h>
#include <node_api.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <string>
#include <vector>

#include "landlock.h"
#include "spawn.h"

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

std::vector<char*> c_array(std::vector<std::string>& strings) {
  std::vector<char*> ptrs;
  ptrs.reserve(strings.size() + 1);
  for (auto& s : strings)
    ptrs.push_back(&s[0]);
  ptrs.push_back(nullptr);
  return ptrs;
}

bool get_prop(napi_env env, napi_value obj, const char* name, napi_value* out) {
  bool has = false;
  if (napi_has_named_property(env, obj, name, &has) != napi_ok || !has) return false;
  return napi_get_named_property(env, obj, name, out) == napi_ok;
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

napi_value make_int(napi_env env, int64_t n) {
  napi_value v;
  napi_create_int64(env, n, &v);
  return v;
}

void set(napi_env env, napi_value obj, const char* name, napi_value v) {
  napi_set_named_property(env, obj, name, v);
}

SpawnContext* context_of(napi_env env) {
  void* data = nullptr;
  napi_get_instance_data(env, &data);
  return static_cast<SpawnContext*>(data);
}

// spawn(file, argv, envp, cwd|null, kinds[], plan|null)
//   -> { pid, pidfd, fds: (number|null)[] } | { stage, errno }
napi_value Spawn(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value a[6];
  NAPI_OK(napi_get_cb_info(env, info, &argc, a, nullptr, nullptr));
  if (argc < 6) return throw_type(env, "spawn takes 6 arguments");

  std::string file, cwd;
  std::vector<std::string> argv, envp;
  if (!get_string(env, a[0], &file)) return throw_type(env, "file must be a string");
  if (!get_string_array(env, a[1], &argv)) return throw_type(env, "argv must be string[]");
  if (!get_string_array(env, a[2], &envp)) return throw_type(env, "envp must be string[]");
  napi_valuetype cwd_type;
  NAPI_OK(napi_typeof(env, a[3], &cwd_type));
  bool has_cwd = cwd_type == napi_string;
  if (has_cwd && !get_string(env, a[3], &cwd)) return throw_type(env, "cwd must be a string");

  SpawnRequest req = {};
  uint32_t kind_count = 0;
  NAPI_OK(napi_get_array_length(env, a[4], &kind_count));
  if (kind_count < 3 || kind_count > kMaxChildFds) return throw_type(env, "kinds must have 3 or 4 entries");
  req.fd_count = static_cast<int>(kind_count);
  for (uint32_t i = 0; i < kind_count; i++) {
    napi_value item;
    int32_t k = 0;
    NAPI_OK(napi_get_element(env, a[4], i, &item));
    NAPI_OK(napi_get_value_int32(env, item, &k));
    if (k < 0 || k > 2 || (i == 3 && k != static_cast<int32_t>(StdioKind::Pipe)))
      return throw_type(env, "bad stdio kind");
    req.kinds[i] = static_cast<StdioKind>(k);
  }

  ConfinementPlan plan;
  std::vector<sock_filter> filter;
  napi_valuetype plan_type;
  NAPI_OK(napi_typeof(env, a[5], &plan_type));
  if (plan_type == napi_object) {
    plan.drop_caps = get_bool_prop(env, a[5], "dropCaps");
    plan.drop_bounding = get_bool_prop(env, a[5], "dropBounding");
    plan.cap_last = get_int_prop(env, a[5], "capLast", 40);
    plan.no_new_privs = get_bool_prop(env, a[5], "noNewPrivs");
    plan.landlock_ruleset_fd = get_int_prop(env, a[5], "rulesetFd", -1);
    plan.landlock_flags = static_cast<uint32_t>(get_int_prop(env, a[5], "landlockFlags", 0));
    napi_value buf;
    if (get_prop(env, a[5], "filter", &buf)) {
      bool is_buffer = false;
      NAPI_OK(napi_is_buffer(env, buf, &is_buffer));
      if (is_buffer) {
        void* data = nullptr;
        size_t len = 0;
        NAPI_OK(napi_get_buffer_info(env, buf, &data, &len));
        if (len == 0 || len % sizeof(sock_filter) != 0 || len / sizeof(sock_filter) > BPF_MAXINSNS)
          return throw_type(env, "filter must be whole sock_filter instructions");
        filter.resize(len / sizeof(sock_filter));
        memcpy(filter.data(), data, len);
        plan.filter = filter.data();
        plan.filter_len = static_cast<uint16_t>(filter.size());
      }
    }
    req.plan = &plan;
  }

  auto argv_c = c_array(argv);
  auto envp_c = c_array(envp);
  req.file = file.c_str();
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
  NAPI_OK(napi_create_array_with_length(env, req.fd_count, &fds));
  for (int i = 0; i < req.fd_count; i++) {
    napi_value v;
    if (res.parent_fds[i] >= 0) {
      v = make_int(env, res.parent_fds[i]);
    } else {
      napi_get_null(env, &v);
    }
    napi_set_element(env, fds, i, v);
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
  napi_env env;
  napi_ref callback;
  napi_async_context async_context;
};

void on_watch_closed(uv_handle_t* handle) {
  ExitWatch* w = static_cast<ExitWatch*>(handle->data);
  close(w->pidfd);
  napi_delete_reference(w->env, w->callback);
  napi_async_destroy(w->env, w->async_context);
  delete w;
}

void on_pidfd_readable(uv_poll_t* handle, int status, int /*events*/) {
  ExitWatch* w = static_cast<ExitWatch*>(handle->data);
  siginfo_t si;
  memset(&si, 0, sizeof(si));
  int exit_code = -1, signal_number = 0;
  if (status == 0) {
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
  napi_env env = w->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value cb, recv, args[2];
  napi_get_reference_value(env, w->callback, &cb);
  napi_get_global(env, &recv);  // make_callback wants an object receiver
  if (exit_code >= 0) {
    args[0] = make_int(env, exit_code);
    napi_get_null(env, &args[1]);
  } else {
    napi_get_null(env, &args[0]);
    args[1] = make_int(env, signal_number);
  }
  // make_callback (not call_function) so promise jobs queued by the callback run now.
  napi_value result;
  napi_make_callback(env, w->async_context, recv, cb, 2, args, &result);
  napi_close_handle_scope(env, scope);
  uv_close(reinterpret_cast<uv_handle_t*>(handle), on_watch_closed);
}

// watch(pidfd, cb(exitCode|null, signal|null)): reaps the process when it exits and calls back
// once. Takes ownership of the pidfd (closed after the callback).
napi_value Watch(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value a[2];
  NAPI_OK(napi_get_cb_info(env, info, &argc, a, nullptr, nullptr));
  int32_t pidfd = -1;
  if (argc < 2 || napi_get_value_int32(env, a[0], &pidfd) != napi_ok || pidfd < 0)
    return throw_type(env, "watch(pidfd, callback)");
  uv_loop_t* loop = nullptr;
  NAPI_OK(napi_get_uv_event_loop(env, &loop));
  ExitWatch* w = new ExitWatch();
  w->pidfd = pidfd;
  w->env = env;
  napi_value name;
  napi_create_string_utf8(env, "cordon:exit", NAPI_AUTO_LENGTH, &name);
  if (napi_create_reference(env, a[1], 1, &w->callback) != napi_ok ||
      napi_async_init(env, nullptr, name, &w->async_context) != napi_ok) {
    delete w;
    return throw_last(env);
  }
  w->poll.data = w;
  int rc = uv_poll_init(loop, &w->poll, pidfd);
  if (rc == 0) rc = uv_poll_start(&w->poll, UV_READABLE, on_pidfd_readable);
  if (rc != 0) {
    napi_throw_error(env, "CORDON_WATCH", uv_strerror(rc));
    return nullptr;
  }
  return nullptr;
}

// pidfdSignal(pidfd, sig) -> 0 | errno: signals exactly this process, never a reused pid.
napi_value PidfdSignal(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value a[2];
  NAPI_OK(napi_get_cb_info(env, info, &argc, a, nullptr, nullptr));
  int32_t pidfd = -1, sig = 0;
  napi_get_value_int32(env, a[0], &pidfd);
  napi_get_value_int32(env, a[1], &sig);
  long rc = syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0);
  return make_int(env, rc == 0 ? 0 : errno);
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

// hostCapabilities() -> { setpcap, capLast, uid }: what the child's cap-drop step may do.
napi_value HostCapabilities(napi_env env, napi_callback_info /*info*/) {
  __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  bool setpcap = syscall(SYS_capget, &header, data) == 0 && (data[0].effective & (1u << CAP_SETPCAP)) != 0;
  int cap_last = 40;
  if (FILE* f = fopen("/proc/sys/kernel/cap_last_cap", "re")) {
    if (fscanf(f, "%d", &cap_last) != 1) cap_last = 40;
    fclose(f);
  }
  napi_value out, b;
  NAPI_OK(napi_create_object(env, &out));
  napi_get_boolean(env, setpcap, &b);
  set(env, out, "setpcap", b);
  set(env, out, "capLast", make_int(env, cap_last));
  set(env, out, "uid", make_int(env, getuid()));
  return out;
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
      {"pidfdSignal", nullptr, PidfdSignal, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"closeFd", nullptr, CloseFd, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"hostCapabilities", nullptr, HostCapabilities, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
  register_landlock(env, exports);
  return exports;
}

}  // namespace
}  // namespace cordon

NAPI_MODULE(NODE_GYP_MODULE_NAME, cordon::Init)
