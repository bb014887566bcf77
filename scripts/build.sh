#!/usr/bin/env bash
# Configures and builds budget (Release) into build/ (or $BUDGET_BUILD_DIR).
# Usage: scripts/build.sh [TARGET ...]: only those targets (e.g. budget-match), else everything.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build_dir="${BUDGET_BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
if [ $# -gt 0 ]; then
  targets=()
  for target in "$@"; do targets+=(--target "$target"); done
  cmake --build "$build_dir" -j"$(nproc)" "${targets[@]}"
else
  cmake --build "$build_dir" -j"$(nproc)"
fi
