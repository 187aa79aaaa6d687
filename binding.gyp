{
  "targets": [
    {
      "target_name": "cordon",
      "sources": [
        "native/addon.cc",
        "native/pipe-reader.cc",
        "native/remove-tree.cc",
        "native/tty-modes.cc",
        "native/spawn.cc",
        "native/confine.cc",
        "native/landlock.cc",
        "native/fd-channel.cc"
      ],
      "cflags": [
        "-Wall",
        "-Wextra",
        "-O2",
        "-fno-exceptions"
      ],
      "cflags_cc": [
        "-Wall",
        "-Wextra",
        "-O2",
        "-std=c++17",
        "-fno-exceptions"
      ],
      "defines": [
        "NAPI_VERSION=8"
      ]
    },
    {
      "target_name": "cordon-exec",
      "type": "executable",
      "sources": [
        "native/exec-main.cc",
        "native/zygote.cc",
        "native/launch.cc",
        "native/launch-reply.cc",
        "native/launch-spec.cc",
        "native/supervisor.cc",
        "native/tree.cc",
        "native/namespaces.cc",
        "native/mount-view.cc",
        "native/resident.cc",
        "native/device-seal.cc",
        "native/canary.cc",
        "native/spawn.cc",
        "native/confine.cc",
        "native/landlock.cc",
        "native/fd-channel.cc"
      ],
      "ldflags": [
        "-static"
      ],
      "cflags": [
        "-Wall",
        "-Wextra",
        "-O2"
      ],
      "cflags_cc": [
        "-Wall",
        "-Wextra",
        "-O2",
        "-std=c++17"
      ]
    }
  ]
}
