// Landlock ruleset building in the host: the child only calls landlock_restrict_self on the fd.
// Constants past Debian 12's headers (ABI 2) are defined here, checked against this kernel.
#pragma once

#include <node_api.h>
#include <stdint.h>

namespace cordon {

constexpr uint64_t kFsTruncate = 1ULL << 14;  // ABI 3
constexpr uint64_t kFsIoctlDev = 1ULL << 15;  // ABI 5
constexpr int kRuleNetPort = 2;               // ABI 4

// Adds landlockAbi, landlockCreateRuleset, landlockAddPathRule, landlockAddNetRule to exports.
void register_landlock(napi_env env, napi_value exports);

}  // namespace cordon
