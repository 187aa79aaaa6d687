// Parsing of a LaunchSpec from argv and from the wire. Every number is range-checked and every
// length bounded: the wire comes from our own host, argv from whoever runs cordon-exec.
#include "launch-spec.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

namespace cordon {
namespace {

// Wire tags (src/subprocess/launcher/wire.ts is the other half).
enum WireTag : uint16_t {
  kTagPath = 1,
  kTagArgv = 2,
  kTagEnv = 3,
  kTagCwd = 4,
  kTagStdio = 5,
  kTagFlags = 6,
  kTagGraceMs = 7,
  kTagCapLast = 8,
  kTagLandlockFlags = 9,
  kTagFilter = 10,
  kTagCredentials = 11,
  kTagRlimit = 12,
  kTagProxyPort = 13,
  kTagReadOnlyView = 14,
  kTagCgroupFds = 15,
  kTagOomScoreAdj = 16,
};

enum WireFlag : uint32_t {
  kFlagBackground = 1u << 0,
  kFlagDropCaps = 1u << 1,
  kFlagDropBounding = 1u << 2,
  kFlagNoNewPrivs = 1u << 3,
  kFlagUnshareIpc = 1u << 4,
  kFlagUnshareNet = 1u << 5,
  kFlagUnshareUser = 1u << 6,
  kFlagRulesetFd = 1u << 7,
  kFlagConfined = 1u << 8,
  kFlagStatusFd = 1u << 9,
  kFlagMaskKeys = 1u << 10,
};

bool parse_long(const char* s, long min, long max, long* out) {
  if (s == nullptr || *s == '\0') return false;
  errno = 0;
  char* end = nullptr;
  long v = strtol(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max) return false;
  *out = v;
  return true;
}

bool parse_u64(const char* s, int base, uint64_t* out) {
  if (s == nullptr || *s == '\0') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = strtoull(s, &end, base);
  if (errno != 0 || *end != '\0') return false;
  *out = static_cast<uint64_t>(v);
  return true;
}

// "A:B:C..." split into exactly `n` fields, the last one taking the rest (paths may hold ':').
bool split_fields(const char* s, size_t n, std::vector<std::string>* out) {
  out->clear();
  const char* p = s;
  for (size_t i = 0; i + 1 < n; i++) {
    const char* colon = strchr(p, ':');
    if (colon == nullptr) return false;
    out->emplace_back(p, static_cast<size_t>(colon - p));
    p = colon + 1;
  }
  out->emplace_back(p);
  return true;
}

bool decode_hex(const char* hex, std::vector<uint8_t>* out) {
  size_t len = strlen(hex);
  if (len % 2 != 0) return false;
  out->resize(len / 2);
  for (size_t i = 0; i < len / 2; i++) {
    auto nibble = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

bool set_filter(const uint8_t* bytes, size_t len, LaunchSpec* spec) {
  if (len == 0 || len % sizeof(sock_filter) != 0 || len / sizeof(sock_filter) > BPF_MAXINSNS) return false;
  spec->filter.resize(len / sizeof(sock_filter));
  memcpy(spec->filter.data(), bytes, len);
  return true;
}

bool add_cgroup_fd(LaunchSpec* spec, long fd) {
  if (spec->plan.cgroup_fd_count >= kMaxCgroupFds) return false;
  spec->plan.cgroup_fds[spec->plan.cgroup_fd_count++] = static_cast<int>(fd);
  return true;
}

bool add_rlimit(LaunchSpec* spec, long resource, uint64_t soft, uint64_t hard) {
  if (spec->plan.rlimit_count >= kMaxRlimits || resource < 0 || resource >= RLIM_NLIMITS || soft > hard) return false;
  spec->plan.rlimits[spec->plan.rlimit_count++] = {static_cast<int>(resource), soft, hard};
  return true;
}

uint32_t read_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

uint64_t read_u64(const uint8_t* p) {
  return static_cast<uint64_t>(read_u32(p)) | static_cast<uint64_t>(read_u32(p + 4)) << 32;
}

// NUL-terminated strings packed back to back.
bool split_nul(const uint8_t* data, size_t len, std::vector<std::string>* out) {
  out->clear();
  size_t start = 0;
  for (size_t i = 0; i < len; i++) {
    if (data[i] != 0) continue;
    out->emplace_back(reinterpret_cast<const char*>(data + start), i - start);
    start = i + 1;
  }
  return start == len;
}

bool all_absolute(const std::vector<std::string>& paths) {
  for (const std::string& p : paths)
    if (p.empty() || p[0] != '/') return false;
  return true;
}

}  // namespace

bool parse_init_argv(int argc, char** argv, LaunchSpec* spec, int* status_fd, std::string* error) {
  spec->inherit_stdio = true;
  int i = 2;  // argv[1] is "init"
  auto need = [&](const char* what) -> const char* {
    if (i + 1 >= argc) {
      *error = std::string("missing value for ") + what;
      return nullptr;
    }
    return argv[++i];
  };
  for (; i < argc; i++) {
    const char* a = argv[i];
    long v = 0;
    std::vector<std::string> f;
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    } else if (strcmp(a, "--status-fd") == 0) {
      const char* s = need(a);
      if (s == nullptr || !parse_long(s, 0, INT_MAX, &v)) return *error = "bad --status-fd", false;
      *status_fd = static_cast<int>(v);
    } else if (strcmp(a, "--grace-ms") == 0) {
      const char* s = need(a);
      if (s == nullptr || !parse_long(s, 0, 24L * 3600 * 1000, &v)) return *error = "bad --grace-ms", false;
      spec->grace_ms = v;
    } else if (strcmp(a, "--host-pid") == 0) {
      const char* s = need(a);
      if (s == nullptr || !parse_long(s, 1, INT_MAX, &v)) return *error = "bad --host-pid", false;
      spec->expected_parent = static_cast<pid_t>(v);
    } else if (strcmp(a, "--background") == 0) {
      spec->background = true;
    } else if (strcmp(a, "--terminal") == 0) {
      spec->terminal = true;
    } else if (strcmp(a, "--unshare-ipc") == 0) {
      spec->unshare_ipc = true;
    } else if (strcmp(a, "--unshare-net") == 0) {
      spec->unshare_net = true;
    } else if (strcmp(a, "--unshare-user") == 0) {
      spec->unshare_user = true;
    } else if (strcmp(a, "--read-only-view") == 0) {
      spec->read_only_view = true;
    } else if (strcmp(a, "--view-writable") == 0) {
      const char* s = need(a);
      if (s == nullptr || s[0] != '/') return *error = "bad --view-writable", false;
      spec->view_writable.emplace_back(s);
    } else if (strcmp(a, "--seal-devices") == 0) {
      spec->seal_devices = true;
    } else if (strcmp(a, "--drop-caps") == 0) {
      spec->confined = true;
      spec->plan.drop_caps = true;
    } else if (strcmp(a, "--drop-bounding") == 0) {
      spec->plan.drop_bounding = true;
    } else if (strcmp(a, "--cap-last") == 0) {
      const char* s = need(a);
      if (s == nullptr || !parse_long(s, 0, 63, &v)) return *error = "bad --cap-last", false;
      spec->plan.cap_last = static_cast<int>(v);
    } else if (strcmp(a, "--no-new-privs") == 0) {
      spec->confined = true;
      spec->plan.no_new_privs = true;
    } else if (strcmp(a, "--credentials") == 0) {
      const char* s = need(a);
      long uid = 0, gid = 0;
      if (s == nullptr || !split_fields(s, 2, &f) || !parse_long(f[0].c_str(), 0, INT_MAX, &uid) ||
          !parse_long(f[1].c_str(), 0, INT_MAX, &gid))
        return *error = "bad --credentials UID:GID", false;
      spec->plan.set_credentials = true;
      spec->plan.uid = static_cast<uid_t>(uid);
      spec->plan.gid = static_cast<gid_t>(gid);
    } else if (strcmp(a, "--rlimit") == 0) {
      const char* s = need(a);
      uint64_t soft = 0, hard = 0;
      if (s == nullptr || !split_fields(s, 3, &f) || !parse_long(f[0].c_str(), 0, RLIM_NLIMITS - 1, &v) ||
          !parse_u64(f[1].c_str(), 10, &soft) || !parse_u64(f[2].c_str(), 10, &hard) ||
          !add_rlimit(spec, v, soft, hard))
        return *error = "bad --rlimit RESOURCE:SOFT:HARD", false;
    } else if (strcmp(a, "--cgroup-fd") == 0) {
      const char* s = need(a);
      if (s == nullptr || !parse_long(s, 3, INT_MAX, &v) || !add_cgroup_fd(spec, v))
        return *error = "bad --cgroup-fd", false;
    } else if (strcmp(a, "--oom-score-adj") == 0) {
      const char* s = need(a);
      if (s == nullptr || !parse_long(s, 1, 1000, &v)) return *error = "bad --oom-score-adj", false;
      spec->oom_score_adj = static_cast<int>(v);
    } else if (strcmp(a, "--proxy-listener") == 0) {
      // PORT, or PORT:FD (the unix socket the listener goes over, argv mode)
      const char* s = need(a);
      long port = 0, fd = -1;
      bool with_fd = s != nullptr && strchr(s, ':') != nullptr;
      if (s == nullptr || (with_fd ? !split_fields(s, 2, &f) || !parse_long(f[0].c_str(), 1, 65535, &port) ||
                                         !parse_long(f[1].c_str(), 3, INT_MAX, &fd)
                                   : !parse_long(s, 1, 65535, &port)))
        return *error = "bad --proxy-listener PORT[:FD]", false;
      spec->proxy_port = static_cast<int>(port);
      spec->proxy_fd = static_cast<int>(fd);
    } else if (strcmp(a, "--ruleset-fd") == 0) {
      const char* s = need(a);
      if (s == nullptr || !parse_long(s, 3, INT_MAX, &v)) return *error = "bad --ruleset-fd", false;
      spec->confined = true;
      spec->ruleset_fd = static_cast<int>(v);
    } else if (strcmp(a, "--landlock") == 0) {
      // HANDLED_FS:HANDLED_NET:SCOPED:ATTR_SIZE (hex masks)
      const char* s = need(a);
      uint64_t size = 0;
      if (s == nullptr || !split_fields(s, 4, &f) || !parse_u64(f[0].c_str(), 16, &spec->handled_fs) ||
          !parse_u64(f[1].c_str(), 16, &spec->handled_net) || !parse_u64(f[2].c_str(), 16, &spec->scoped) ||
          !parse_u64(f[3].c_str(), 10, &size) || size > 64)
        return *error = "bad --landlock FS:NET:SCOPED:SIZE", false;
      spec->confined = true;
      spec->build_ruleset = true;
      spec->attr_size = static_cast<uint32_t>(size);
    } else if (strcmp(a, "--rule") == 0) {
      // RIGHTS:DEV:INO:PATH (rights hex)
      const char* s = need(a);
      LandlockRuleSpec rule;
      uint64_t dev = 0, ino = 0;
      if (s == nullptr || !split_fields(s, 4, &f) || !parse_u64(f[0].c_str(), 16, &rule.allowed) ||
          !parse_u64(f[1].c_str(), 10, &dev) || !parse_u64(f[2].c_str(), 10, &ino) || f[3].empty() || f[3][0] != '/')
        return *error = "bad --rule RIGHTS:DEV:INO:/PATH", false;
      rule.dev = static_cast<dev_t>(dev);
      rule.ino = static_cast<ino_t>(ino);
      rule.path = f[3];
      spec->rules.push_back(rule);
    } else if (strcmp(a, "--rule-devpts") == 0) {
      // RIGHTS:HOSTDEV (rights hex, the host's /dev/pts device number)
      const char* s = need(a);
      uint64_t dev = 0;
      if (s == nullptr || !split_fields(s, 2, &f) || !parse_u64(f[0].c_str(), 16, &spec->devpts_allowed) ||
          !parse_u64(f[1].c_str(), 10, &dev))
        return *error = "bad --rule-devpts RIGHTS:HOSTDEV", false;
      spec->devpts_rule = true;
      spec->host_devpts_dev = static_cast<dev_t>(dev);
    } else if (strcmp(a, "--landlock-flags") == 0) {
      const char* s = need(a);
      if (s == nullptr || !parse_long(s, 0, 0xff, &v)) return *error = "bad --landlock-flags", false;
      spec->plan.landlock_flags = static_cast<uint32_t>(v);
    } else if (strcmp(a, "--seccomp-hex") == 0) {
      const char* s = need(a);
      std::vector<uint8_t> bytes;
      if (s == nullptr || !decode_hex(s, &bytes) || !set_filter(bytes.data(), bytes.size(), spec))
        return *error = "bad --seccomp-hex", false;
      spec->confined = true;
    } else {
      return *error = std::string("unknown argument ") + a, false;
    }
  }
  if ((!spec->rules.empty() || spec->devpts_rule) && !spec->build_ruleset)
    return *error = "--rule needs --landlock", false;
  if (i >= argc) return *error = "missing -- PROGRAM", false;
  if (strchr(argv[i], '/') == nullptr) return *error = "PROGRAM must be a path (the caller searches PATH)", false;
  spec->path = argv[i];
  for (int k = i; k < argc; k++)
    spec->argv.emplace_back(argv[k]);
  return true;
}

bool parse_wire(const uint8_t* data, size_t len, LaunchSpec* spec, WireShape* shape, std::string* error) {
  size_t at = 0;
  bool has_path = false, has_argv = false;
  while (at < len) {
    if (len - at < 8) return *error = "truncated field header", false;
    uint16_t tag = static_cast<uint16_t>(data[at] | data[at + 1] << 8);
    uint32_t flen = read_u32(data + at + 4);
    at += 8;
    if (flen > len - at) return *error = "field overruns the request", false;
    const uint8_t* f = data + at;
    at += flen;
    switch (tag) {
      case kTagPath:
        spec->path.assign(reinterpret_cast<const char*>(f), flen);
        has_path = true;
        break;
      case kTagArgv:
        if (!split_nul(f, flen, &spec->argv)) return *error = "bad argv", false;
        has_argv = !spec->argv.empty();
        break;
      case kTagEnv:
        if (!split_nul(f, flen, &spec->envp)) return *error = "bad env", false;
        break;
      case kTagCwd:
        spec->cwd.assign(reinterpret_cast<const char*>(f), flen);
        spec->has_cwd = true;
        break;
      case kTagStdio:
        if (flen != 3) return *error = "bad stdio", false;
        for (int i = 0; i < 3; i++) {
          if (f[i] != 0 && f[i] != 2) return *error = "bad stdio kind", false;
          shape->stdio[i] = static_cast<WireStdio>(f[i]);
        }
        break;
      case kTagFlags: {
        if (flen != 4) return *error = "bad flags", false;
        uint32_t flags = read_u32(f);
        spec->background = (flags & kFlagBackground) != 0;
        spec->plan.drop_caps = (flags & kFlagDropCaps) != 0;
        spec->plan.drop_bounding = (flags & kFlagDropBounding) != 0;
        spec->plan.no_new_privs = (flags & kFlagNoNewPrivs) != 0;
        spec->unshare_ipc = (flags & kFlagUnshareIpc) != 0;
        spec->unshare_net = (flags & kFlagUnshareNet) != 0;
        spec->unshare_user = (flags & kFlagUnshareUser) != 0;
        spec->mask_keys = (flags & kFlagMaskKeys) != 0;
        shape->has_ruleset_fd = (flags & kFlagRulesetFd) != 0;
        shape->has_status_fd = (flags & kFlagStatusFd) != 0;
        spec->confined = (flags & kFlagConfined) != 0;
        break;
      }
      case kTagGraceMs:
        if (flen != 4) return *error = "bad grace", false;
        spec->grace_ms = static_cast<long>(read_u32(f));
        break;
      case kTagCapLast:
        if (flen != 4 || read_u32(f) > 63) return *error = "bad cap_last", false;
        spec->plan.cap_last = static_cast<int>(read_u32(f));
        break;
      case kTagLandlockFlags:
        if (flen != 4) return *error = "bad landlock flags", false;
        spec->plan.landlock_flags = read_u32(f);
        break;
      case kTagFilter:
        if (!set_filter(f, flen, spec)) return *error = "bad filter", false;
        break;
      case kTagCredentials:
        if (flen != 8) return *error = "bad credentials", false;
        spec->plan.set_credentials = true;
        spec->plan.uid = static_cast<uid_t>(read_u32(f));
        spec->plan.gid = static_cast<gid_t>(read_u32(f + 4));
        break;
      case kTagRlimit:
        if (flen != 20 || !add_rlimit(spec, static_cast<long>(read_u32(f)), read_u64(f + 4), read_u64(f + 12)))
          return *error = "bad rlimit", false;
        break;
      case kTagProxyPort:
        if (flen != 4 || read_u32(f) == 0 || read_u32(f) > 65535) return *error = "bad proxy port", false;
        spec->proxy_port = static_cast<int>(read_u32(f));
        break;
      case kTagReadOnlyView:
        if (!split_nul(f, flen, &spec->view_writable) || !all_absolute(spec->view_writable))
          return *error = "bad read-only view", false;
        spec->read_only_view = true;
        break;
      case kTagCgroupFds:
        if (flen != 4 || read_u32(f) > kMaxCgroupFds) return *error = "bad cgroup fds", false;
        shape->cgroup_fds = static_cast<int>(read_u32(f));
        break;
      case kTagOomScoreAdj:
        if (flen != 4 || read_u32(f) > 1000) return *error = "bad oom_score_adj", false;
        spec->oom_score_adj = static_cast<int>(read_u32(f));
        break;
      default:
        return *error = "unknown field " + std::to_string(tag), false;
    }
  }
  if (!has_path || spec->path.empty() || spec->path[0] != '/') return *error = "missing absolute path", false;
  if (!has_argv) return *error = "missing argv", false;
  return true;
}

}  // namespace cordon
