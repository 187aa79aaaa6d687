// cordon-exec: the helper executable.
//
//   cordon-exec zygote --control-fd N [--host-pid PID] [--drop-bounding --cap-last N]
//                      [--no-new-privs] [--seccomp-hex HEX] [--unshare-ipc] [--mask-keys]
//                                                         a launcher (one per Node host thread and
//                                                         kind of run: what it applies to itself,
//                                                         its runs inherit)
//   cordon-exec init [options] -- PROGRAM [ARGS...]       one supervised, confined run from argv
//                                                         (under bwrap, and as a terminal's session
//                                                         leader under node-pty)
//   cordon-exec instance --control-fd N [init options]    the launcher of a resident bwrap instance
//                                                         (its pid 1; see resident.h)
//   cordon-exec canary DIR HOST_PID                       the probe's canary (run confined)
//   cordon-exec --version
//   cordon-exec --landlock-abi                            the kernel's Landlock ABI (0: none), for a
//                                                         host that plans without the addon
//
// `init` options: --status-fd N --grace-ms MS --host-pid PID --background --terminal
// --seal-devices --unshare-ipc --unshare-net --unshare-user --drop-caps --drop-bounding --cap-last N
// --no-new-privs --credentials UID:GID --rlimit RES:SOFT:HARD --ruleset-fd N
// --landlock FS:NET:SCOPED:SIZE (hex masks) --rule RIGHTS:DEV:INO:PATH --rule-devpts RIGHTS:HOSTDEV
// --landlock-flags F --proxy-listener PORT[:FD]
// --seccomp-hex HEX. Status lines on the status fd: "started PID" | "error STAGE ERRNO", then
// "exit N" | "signal N".
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include <linux/filter.h>

#include "canary.h"
#include "confine.h"
#include "device-seal.h"
#include "launch-spec.h"
#include "landlock.h"
#include "launch.h"
#include "spawn.h"
#include "stages.h"
#include "zygote.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

namespace {

constexpr const char* kVersion = "cordon-exec 0.2.0";
constexpr int kUsageExit = 125;  // our own failure, distinct from any command's exit

int usage(const std::string& why) {
  fprintf(
      stderr,
      "cordon-exec: %s\n"
      "usage: cordon-exec zygote --control-fd N [--host-pid PID] [--drop-bounding] [--no-new-privs] [--seccomp-hex H]\n"
      "       [--unshare-ipc] [--mask-keys]\n"
      "       cordon-exec init [options] -- PROGRAM [ARGS...]\n"
      "       cordon-exec instance --control-fd N [init options]\n"
      "       cordon-exec canary DIR HOST_PID\n"
      "       cordon-exec --version\n"
      "       cordon-exec --landlock-abi\n",
      why.c_str());
  return kUsageExit;
}

bool parse_int(const char* s, long min, long max, long* out) {
  if (s == nullptr || *s == '\0') return false;
  char* end = nullptr;
  long v = strtol(s, &end, 10);
  if (*end != '\0' || v < min || v > max) return false;
  *out = v;
  return true;
}

bool decode_hex(const char* hex, std::vector<sock_filter>* out) {
  size_t len = strlen(hex);
  if (len == 0 || len % 16 != 0) return false;
  std::vector<unsigned char> bytes(len / 2);
  for (size_t i = 0; i < bytes.size(); i++) {
    unsigned int v = 0;
    if (sscanf(hex + 2 * i, "%2x", &v) != 1) return false;
    bytes[i] = static_cast<unsigned char>(v);
  }
  out->resize(bytes.size() / sizeof(sock_filter));
  memcpy(out->data(), bytes.data(), bytes.size());
  return out->size() <= BPF_MAXINSNS;
}

int zygote_main(int argc, char** argv) {
  long control = -1, host = 0, cap_last = 40;
  bool unshare_ipc = false;
  bool mask_keys = false;
  cordon::ConfinementPlan self;
  std::vector<sock_filter> filter;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--control-fd") == 0 && i + 1 < argc && parse_int(argv[i + 1], 0, INT_MAX, &control)) {
      i++;
    } else if (strcmp(argv[i], "--host-pid") == 0 && i + 1 < argc && parse_int(argv[i + 1], 1, INT_MAX, &host)) {
      i++;
    } else if (strcmp(argv[i], "--cap-last") == 0 && i + 1 < argc && parse_int(argv[i + 1], 0, 63, &cap_last)) {
      i++;
    } else if (strcmp(argv[i], "--drop-bounding") == 0) {
      self.drop_bounding = true;
    } else if (strcmp(argv[i], "--no-new-privs") == 0) {
      self.no_new_privs = true;
    } else if (strcmp(argv[i], "--unshare-ipc") == 0) {
      unshare_ipc = true;
    } else if (strcmp(argv[i], "--mask-keys") == 0) {
      mask_keys = true;
    } else if (strcmp(argv[i], "--seccomp-hex") == 0 && i + 1 < argc && decode_hex(argv[i + 1], &filter)) {
      i++;
    } else {
      return usage(std::string("bad zygote argument ") + argv[i]);
    }
  }
  if (control < 0) return usage("zygote needs --control-fd");
  self.cap_last = static_cast<int>(cap_last);
  if (!filter.empty()) {
    self.filter = filter.data();
    self.filter_len = static_cast<uint16_t>(filter.size());
  }
  cordon::run_zygote(static_cast<int>(control), static_cast<pid_t>(host), self, unshare_ipc, mask_keys);
}

// `cordon-exec instance --control-fd N [init options]`: the launcher of a resident bwrap
// instance; the init options (without a program) are what each run's supervisor applies.
int instance_main(int argc, char** argv) {
  long control = -1;
  if (argc < 4 || strcmp(argv[2], "--control-fd") != 0 || !parse_int(argv[3], 0, INT_MAX, &control))
    return usage("instance needs --control-fd N first");
  // The template is an init spec whose program is never run.
  std::vector<char*> init_argv = {argv[0], const_cast<char*>("init")};
  for (int i = 4; i < argc; i++)
    init_argv.push_back(argv[i]);
  char dash[] = "--", placeholder[] = "/";
  init_argv.push_back(dash);
  init_argv.push_back(placeholder);
  static cordon::LaunchSpec tmpl;
  int status_fd = -1;
  std::string error;
  if (!cordon::parse_init_argv(static_cast<int>(init_argv.size()), init_argv.data(), &tmpl, &status_fd, &error))
    return usage(error);
  if (status_fd >= 0 || tmpl.terminal || tmpl.background || tmpl.unshare_user || tmpl.ruleset_fd >= 0 ||
      tmpl.proxy_fd >= 0 || tmpl.seal_devices || tmpl.plan.cgroup_fd_count > 0)
    return usage(
        "instance takes no status fd, terminal, background, user namespace, ruleset fd, proxy fd, cgroup "
        "fd or --seal-devices (it seals its /dev itself)");
  cordon::run_instance(static_cast<int>(control), tmpl);
}

// Closes every descriptor above 2 but those in `keep` (-1: none).
void close_inherited(int a, int b, int c) {
  int keep[3] = {a, b, c};
  std::sort(keep, keep + 3);
  unsigned int lo = 3;
  for (int k : keep) {
    if (k < static_cast<int>(lo)) continue;
    if (static_cast<unsigned int>(k) > lo) syscall(SYS_close_range, lo, static_cast<unsigned int>(k) - 1, 0);
    lo = static_cast<unsigned int>(k) + 1;
  }
  if (syscall(SYS_close_range, lo, ~0U, 0) == 0) return;
  long max = sysconf(_SC_OPEN_MAX);  // a kernel before 5.9: one by one
  for (long fd = lo; fd < (max > 0 ? max : 1024); fd++)
    close(static_cast<int>(fd));
}

// Under a per-run bwrap (`--seal-devices`): a mount namespace of our own (bwrap's belongs to its
// outer user namespace, and --disable-userns starts us in a nested one, whose CAP_SYS_ADMIN may
// remount only in a namespace it owns), the host's device binds read-only there, a host device
// node handed in as stdio replaced by the sandbox's own, then every capability bwrap kept for this
// (bounding set and securebits included), so neither we nor the command hold any. nullptr, or the
// stage that failed (errno in *err).
const char* seal_devices_and_drop(int cap_last, int* err) {
  int rc = unshare(CLONE_NEWNS) == 0 ? cordon::seal_device_binds() : -errno;
  for (int fd = 0; rc == 0 && fd < 3; fd++)
    rc = cordon::rehome_device_fd(fd);
  if (rc != 0) return *err = -rc, cordon::kStageNamespace;
  cordon::ConfinementPlan bounding;
  bounding.drop_bounding = true;
  bounding.cap_last = cap_last;
  const char* failed = cordon::prepare_launcher(bounding, err);
  if (failed != nullptr) return failed;
  return cordon::drop_all_capabilities(err) ? nullptr : cordon::kStageCaps;
}

// A start that failed before the supervisor exists: told on the status fd, or on the terminal.
int init_failed(int status_fd, const char* stage, int error) {
  char line[160];
  if (status_fd >= 0) {
    int n = snprintf(line, sizeof line, "error %s %d\n", stage, error);
    ssize_t written = write(status_fd, line, static_cast<size_t>(n));
    (void)written;
  } else {
    int n = snprintf(line, sizeof line, "cordon-exec: the command did not start (%s: %s)\n", stage, strerror(error));
    ssize_t written = write(STDERR_FILENO, line, static_cast<size_t>(n));
    (void)written;
  }
  return kUsageExit;
}

int init_main(int argc, char** argv) {
  cordon::LaunchSpec spec;
  cordon::StartChannel start;
  std::string error;
  if (!cordon::parse_init_argv(argc, argv, &spec, &start.status_fd, &error)) return usage(error);
  // A terminal's supervisor is forked by node-pty straight from the host, which closes nothing:
  // every host fd without close-on-exec arrives here. Only the pty (0..2) and the named fds stay.
  if (spec.terminal) close_inherited(start.status_fd, spec.ruleset_fd, spec.proxy_fd);
  if (spec.seal_devices) {
    int err = 0;
    const char* failed = seal_devices_and_drop(spec.plan.cap_last, &err);
    if (failed != nullptr) return init_failed(start.status_fd, failed, err);
  }
  cordon::SpawnContext ctx;
  if (!cordon::spawn_context_init(&ctx)) return usage("cannot prepare the spawn context");
  cordon::run_supervised(&ctx, &spec, start);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    printf("%s\n", kVersion);
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "--landlock-abi") == 0) {
    int abi = cordon::landlock_abi();
    printf("%d\n", abi > 0 ? abi : 0);
    return 0;
  }
  if (argc < 2) return usage("missing mode");
  if (strcmp(argv[1], "zygote") == 0) return zygote_main(argc, argv);
  if (strcmp(argv[1], "init") == 0) return init_main(argc, argv);
  if (strcmp(argv[1], "instance") == 0) return instance_main(argc, argv);
  if (strcmp(argv[1], "canary") == 0) return cordon::run_canary(argc, argv);
  return usage(std::string("unknown mode ") + argv[1]);
}
