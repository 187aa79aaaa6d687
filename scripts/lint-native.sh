#!/usr/bin/env bash
# clang-format check of native/: a drift is a failure. Without clang-format it skips with its
# reason locally; in CI (CORDON_REQUIRE_TOOLS or CI set) a missing clang-format is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null 2>&1; then
  if [ -n "${CI:-}${CORDON_REQUIRE_TOOLS:-}" ]; then
    echo "lint:native: clang-format is required here (apt-get install -y clang-format)" >&2
    exit 1
  fi
  echo "lint:native: skipped: clang-format is not installed (apt-get install -y clang-format)"
  exit 0
fi
clang-format --dry-run --Werror native/*.cc native/*.h
