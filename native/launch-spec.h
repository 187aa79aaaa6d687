// What one supervised run needs: the program, its environment and descriptors, the confinement
// plan for the command (never for the supervisor itself), namespaces, and how to supervise it.
// It arrives either on cordon-exec's argv (under bwrap and node-pty, where no fd can carry a
// plan's ruleset, so the rules come as paths with the inode each must still be), or as one
// binary request from the Node host over the launcher's control socket (src/subprocess/
// launcher/wire.ts writes it; the layout is documented there and in parse_wire below).
#pragma once

#include <linux/filter.h>
#include <stdint.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "confine.h"

namespace cordon {

struct LandlockRuleSpec {
  std::string path;
  uint64_t allowed = 0;
  dev_t dev = 0;
  ino_t ino = 0;
};

struct LaunchSpec {
  std::string path;
  std::vector<std::string> argv;
  std::vector<std::string> envp;  // empty in argv mode: the environment is cordon-exec's own
  bool has_cwd = false;
  std::string cwd;
  bool background = false;  // stay until the tree is empty; else end the tree when the command exits
  long grace_ms = 3000;
  bool terminal = false;  // the command joins our session in its own group, made the tty's foreground
  bool unshare_ipc = false;
  bool unshare_net = false;
  bool unshare_user = false;
  // /proc/keys and /proc/key-users read empty, in a mount namespace of the run's own (root: the
  // launcher keeps the host's, so mounts the host makes later, a session's tmpfs, show in its runs).
  bool mask_keys = false;
  // argv mode under a per-run bwrap that kept CAP_SYS_ADMIN and CAP_SETPCAP for us: in a mount
  // namespace of our own, the host's device binds are remounted read-only (device-seal.h), then
  // every capability goes, before anything else.
  bool seal_devices = false;
  bool confined = false;
  ConfinementPlan plan;
  std::vector<sock_filter> filter;
  // A ruleset built here from rules (argv mode), or received ready-made (fd).
  bool build_ruleset = false;
  uint64_t handled_fs = 0;
  uint64_t handled_net = 0;
  uint64_t scoped = 0;
  uint32_t attr_size = 24;
  std::vector<LandlockRuleSpec> rules;
  // A rule on the sandbox's own /dev/pts (bubblewrap's private devpts: own ptys for tmux, script,
  // expect), checked here to be a devpts that is not the host's (device number host_devpts_dev).
  bool devpts_rule = false;
  uint64_t devpts_allowed = 0;
  dev_t host_devpts_dev = 0;
  int ruleset_fd = -1;
  // stdio of the command: received fds (-1: /dev/null); in argv mode the process's own 0..2.
  bool inherit_stdio = false;
  int stdio_fds[3] = {-1, -1, -1};
  pid_t expected_parent = 0;  // the supervisor exits at once when its parent is already gone
  // A network allow-list: the supervisor listens on 127.0.0.1:proxy_port in the run's network
  // namespace and hands the listener to the host (with the reply, or over proxy_fd in argv mode).
  int proxy_port = 0;
  int proxy_fd = -1;
  int proxy_listener = -1;  // made ahead (a resident instance's idle supervisor)
  // A read-only view of the host (native/mount-view.h): a mount namespace of the run's own where
  // every mount is read-only but these paths.
  bool read_only_view = false;
  std::vector<std::string> view_writable;
  // Raised in the supervisor before it forks (inherited by the command): the OOM killer's first
  // choice is the run, not the host. 0: left as it is.
  int oom_score_adj = 0;
};

// Stdio kinds of a wire request, per slot (the host makes every pipe: a pipe end is an Fd).
enum class WireStdio : uint8_t { Null = 0, Fd = 2 };

// Fields of a wire request that say which descriptors travel with it, in this order: the status
// pipe's write end, the Fd stdio slots, the ruleset, the cgroup.procs files.
struct WireShape {
  WireStdio stdio[3] = {WireStdio::Null, WireStdio::Null, WireStdio::Null};
  bool has_status_fd = false;
  bool has_ruleset_fd = false;
  int cgroup_fds = 0;  // cgroup.procs fds after the ruleset (native/confine.h: cgroup_fds)
};

// Parses `cordon-exec init` options (argv mode); false with `error` set on bad usage.
bool parse_init_argv(int argc, char** argv, LaunchSpec* spec, int* status_fd, std::string* error);

// Parses one wire request body; false with `error` set when it is malformed.
bool parse_wire(const uint8_t* data, size_t len, LaunchSpec* spec, WireShape* shape, std::string* error);

}  // namespace cordon
