// See tty-modes.h. Only OPOST changes: every other flag is written back as tcgetattr read it.
#include "tty-modes.h"

#include <errno.h>
#include <termios.h>

namespace cordon {

napi_value SetOutputProcessing(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value a[2];
  napi_value result;
  int32_t fd = -1;
  bool on = false;
  if (napi_get_cb_info(env, info, &argc, a, nullptr, nullptr) != napi_ok || argc < 2 ||
      napi_get_value_int32(env, a[0], &fd) != napi_ok || fd < 0 || napi_get_value_bool(env, a[1], &on) != napi_ok) {
    napi_throw_type_error(env, nullptr, "setOutputProcessing(fd >= 0, on: boolean)");
    return nullptr;
  }
  int status = 0;
  struct termios modes;
  if (tcgetattr(fd, &modes) != 0) {
    status = -errno;
  } else {
    if (on)
      modes.c_oflag |= OPOST;
    else
      modes.c_oflag &= ~static_cast<tcflag_t>(OPOST);
    if (tcsetattr(fd, TCSANOW, &modes) != 0) status = -errno;
  }
  napi_create_int32(env, status, &result);
  return result;
}

}  // namespace cordon
