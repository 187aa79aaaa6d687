{
  "targets": [
    {
      "target_name": "cordon",
      "sources": ["native/addon.cc", "native/spawn.cc", "native/confine.cc", "native/landlock.cc"],
      "cflags": ["-Wall", "-Wextra", "-O2", "-fno-exceptions"],
      "cflags_cc": ["-Wall", "-Wextra", "-O2", "-std=c++17", "-fno-exceptions"],
      "defines": ["NAPI_VERSION=8"]
    },
    {
      "target_name": "cordon-exec",
      "type": "executable",
      "sources": ["native/helper.cc"],
      "ldflags": ["-static"],
      "cflags": ["-Wall", "-Wextra", "-O2"],
      "cflags_cc": ["-Wall", "-Wextra", "-O2", "-std=c++17"]
    }
  ]
}
