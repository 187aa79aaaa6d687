// See pipe-reader.h. Each reader is a uv_poll on the fd; a wake-up reads until the pipe is empty
// (at most a few buffers, so one busy pipe cannot starve the loop) and hands each read to JS.
#include "pipe-reader.h"

#include <errno.h>
#include <unistd.h>
#include <uv.h>

#include <unordered_map>

namespace cordon {
namespace {

struct PipeReader {
  uv_poll_t poll;
  int fd;
  int id;
  bool stopped;
  napi_env env;
  napi_ref callback;
  napi_ref buffer;
  char* data;
  size_t capacity;
  napi_async_context async_context;
};

// Readers by id: stopPipe of one already finished finds nothing instead of freed memory. Per
// thread: a reader lives on its env's loop thread (a worker's readers are its own).
std::unordered_map<int, PipeReader*>& readers() {
  thread_local std::unordered_map<int, PipeReader*> map;
  return map;
}
thread_local int next_id = 1;

// Reads per wake-up before yielding to the loop.
constexpr int kReadsPerWake = 16;

void free_reader(uv_handle_t* handle) {
  PipeReader* r = static_cast<PipeReader*>(handle->data);
  if (r->callback != nullptr) napi_delete_reference(r->env, r->callback);
  if (r->buffer != nullptr) napi_delete_reference(r->env, r->buffer);
  if (r->async_context != nullptr) napi_async_destroy(r->env, r->async_context);
  delete r;
}

// Stops the poll and closes the fd at once; the struct goes in the close callback (later on the
// loop), so a caller still on the stack may read `stopped`.
void finish(PipeReader* r) {
  if (r->stopped) return;
  r->stopped = true;
  readers().erase(r->id);
  uv_poll_stop(&r->poll);
  close(r->fd);
  uv_close(reinterpret_cast<uv_handle_t*>(&r->poll), free_reader);
}

void call_back(PipeReader* r, double n) {
  napi_env env = r->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value cb, recv, arg, result;
  napi_get_reference_value(env, r->callback, &cb);
  napi_get_global(env, &recv);
  napi_create_double(env, n, &arg);
  napi_make_callback(env, r->async_context, recv, cb, 1, &arg, &result);
  napi_close_handle_scope(env, scope);
}

void on_readable(uv_poll_t* handle, int status, int /*events*/) {
  PipeReader* r = static_cast<PipeReader*>(handle->data);
  for (int i = 0; i < kReadsPerWake && !r->stopped; i++) {
    ssize_t n = status < 0 ? -1 : read(r->fd, r->data, r->capacity);
    if (n > 0) {
      call_back(r, static_cast<double>(n));
      continue;
    }
    if (n < 0 && status >= 0 && (errno == EAGAIN || errno == EINTR)) return;
    int code = n == 0 ? 0 : (status < 0 ? EIO : errno);
    finish(r);  // before the callback: the fd is closed when JS hears the end
    call_back(r, -static_cast<double>(code));
    return;
  }
}

// Before a stop: hands JS what is already in the pipe (written before the command exited), up to
// a bound, so stopping a pipe that descendants still hold never drops bytes it could have read.
constexpr int kReadsAtStop = 64;
void read_what_is_there(PipeReader* r) {
  for (int i = 0; i < kReadsAtStop && !r->stopped; i++) {
    ssize_t n = read(r->fd, r->data, r->capacity);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    call_back(r, static_cast<double>(n));
  }
}

napi_value throw_args(napi_env env, const char* message) {
  napi_throw_type_error(env, "CORDON_NATIVE_ARGS", message);
  return nullptr;
}

}  // namespace

napi_value ReadPipe(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value a[3];
  if (napi_get_cb_info(env, info, &argc, a, nullptr, nullptr) != napi_ok || argc < 3)
    return throw_args(env, "readPipe(fd, buffer, cb)");
  int32_t fd = -1;
  void* data = nullptr;
  size_t capacity = 0;
  napi_valuetype cb_type;
  if (napi_get_value_int32(env, a[0], &fd) != napi_ok || fd < 0 ||
      napi_get_buffer_info(env, a[1], &data, &capacity) != napi_ok || capacity == 0 ||
      napi_typeof(env, a[2], &cb_type) != napi_ok || cb_type != napi_function)
    return throw_args(env, "readPipe(fd, buffer, cb)");
  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok) return throw_args(env, "readPipe: no event loop");
  PipeReader* r = new PipeReader();
  r->fd = fd;
  r->id = next_id++;
  r->stopped = false;
  r->env = env;
  r->callback = r->buffer = nullptr;
  r->async_context = nullptr;
  r->data = static_cast<char*>(data);
  r->capacity = capacity;
  r->poll.data = r;
  napi_value name;
  napi_create_string_utf8(env, "cordon:pipe", NAPI_AUTO_LENGTH, &name);
  int rc = uv_poll_init(loop, &r->poll, fd);  // also makes the fd non-blocking
  if (rc != 0) {
    close(fd);
    delete r;  // never registered with the loop
    napi_throw_error(env, "CORDON_PIPE", uv_strerror(rc));
    return nullptr;
  }
  readers()[r->id] = r;
  if (napi_create_reference(env, a[2], 1, &r->callback) != napi_ok ||
      napi_create_reference(env, a[1], 1, &r->buffer) != napi_ok ||
      napi_async_init(env, nullptr, name, &r->async_context) != napi_ok) {
    finish(r);
    napi_throw_error(env, "CORDON_PIPE", "readPipe: could not keep the callback");
    return nullptr;
  }
  rc = uv_poll_start(&r->poll, UV_READABLE | UV_DISCONNECT, on_readable);
  if (rc != 0) {
    finish(r);
    napi_throw_error(env, "CORDON_PIPE", uv_strerror(rc));
    return nullptr;
  }
  napi_value id;
  napi_create_int32(env, r->id, &id);
  return id;
}

napi_value StopPipe(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value a[2];
  int32_t id = 0;
  bool read_first = false;
  if (napi_get_cb_info(env, info, &argc, a, nullptr, nullptr) != napi_ok || argc < 2 ||
      napi_get_value_int32(env, a[0], &id) != napi_ok || napi_get_value_bool(env, a[1], &read_first) != napi_ok)
    return throw_args(env, "stopPipe(id, readFirst)");
  auto found = readers().find(id);
  if (found != readers().end()) {
    if (read_first) read_what_is_there(found->second);
    finish(found->second);
  }
  return nullptr;
}

}  // namespace cordon
