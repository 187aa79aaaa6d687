// Terminal modes the host changes on its own terminal without running a program (`stty` found
// through PATH would be a program a confined command could plant).
#pragma once

#include <node_api.h>

namespace cordon {

// setOutputProcessing(fd, on) -> 0 | -errno: turns the terminal's output processing (OPOST,
// hence ONLCR's "\n" -> "\r\n") on or off with tcgetattr/tcsetattr (TCSANOW), nothing else.
napi_value SetOutputProcessing(napi_env env, napi_callback_info info);

}  // namespace cordon
