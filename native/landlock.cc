// Landlock syscalls issued by the host to build (and cache, in TypeScript) one ruleset fd per
// policy. Which rights to handle and grant is decided in TypeScript from the grants table.
#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif

namespace cordon {
namespace {

constexpr uint32_t kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;

// The ABI-6+ attribute layout: {fs, net, scoped}. Older kernels take a prefix of it.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

struct NetPortAttr {
  uint64_t allowed_access;
  uint64_t port;
};

napi_value number(napi_env env, double n) {
  napi_value v;
  napi_create_double(env, n, &v);
  return v;
}

bool args(napi_env env, napi_callback_info info, size_t want, napi_value* out) {
  size_t argc = want;
  if (napi_get_cb_info(env, info, &argc, out, nullptr, nullptr) != napi_ok || argc < want) {
    napi_throw_type_error(env, "CORDON_NATIVE_ARGS", "missing arguments");
    return false;
  }
  return true;
}

uint64_t u64(napi_env env, napi_value v) {
  double d = 0;
  napi_get_value_double(env, v, &d);
  return d < 0 ? 0 : static_cast<uint64_t>(d);
}

// landlockAbi() -> ABI version (>= 1), or -errno when Landlock is unavailable.
napi_value Abi(napi_env env, napi_callback_info /*info*/) {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return number(env, abi >= 0 ? static_cast<double>(abi) : -static_cast<double>(errno));
}

// landlockCreateRuleset(handledFs, handledNet, scoped, attrSize) -> fd (O_CLOEXEC) or -errno.
napi_value CreateRuleset(napi_env env, napi_callback_info info) {
  napi_value a[4];
  if (!args(env, info, 4, a)) return nullptr;
  RulesetAttr attr = {u64(env, a[0]), u64(env, a[1]), u64(env, a[2])};
  size_t size = static_cast<size_t>(u64(env, a[3]));
  if (size > sizeof(attr)) size = sizeof(attr);
  long fd = syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  return number(env, fd >= 0 ? static_cast<double>(fd) : -static_cast<double>(errno));
}

// landlockAddPathRule(rulesetFd, path, allowed) -> 0 or errno (ENOENT for a missing path).
napi_value AddPathRule(napi_env env, napi_callback_info info) {
  napi_value a[3];
  if (!args(env, info, 3, a)) return nullptr;
  double ruleset = 0;
  napi_get_value_double(env, a[0], &ruleset);
  size_t len = 0;
  napi_get_value_string_utf8(env, a[1], nullptr, 0, &len);
  std::string path(len, '\0');
  napi_get_value_string_utf8(env, a[1], &path[0], len + 1, &len);
  int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return number(env, errno);
  PathBeneathAttr attr = {u64(env, a[2]), fd};
  long rc = syscall(SYS_landlock_add_rule, static_cast<int>(ruleset), kRulePathBeneath, &attr, 0);
  int error = rc == 0 ? 0 : errno;
  close(fd);
  return number(env, error);
}

// landlockAddNetRule(rulesetFd, port, allowed) -> 0 or errno.
napi_value AddNetRule(napi_env env, napi_callback_info info) {
  napi_value a[3];
  if (!args(env, info, 3, a)) return nullptr;
  double ruleset = 0;
  napi_get_value_double(env, a[0], &ruleset);
  NetPortAttr attr = {u64(env, a[2]), u64(env, a[1])};
  long rc = syscall(SYS_landlock_add_rule, static_cast<int>(ruleset), kRuleNetPort, &attr, 0);
  return number(env, rc == 0 ? 0 : errno);
}

}  // namespace

void register_landlock(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"landlockAbi", nullptr, Abi, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"landlockCreateRuleset", nullptr, CreateRuleset, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"landlockAddPathRule", nullptr, AddPathRule, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"landlockAddNetRule", nullptr, AddNetRule, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
}

}  // namespace cordon
