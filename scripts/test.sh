#!/usr/bin/env bash
# Builds budget and runs every test (unit, CLI, header and find_package tests) through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir "${BUDGET_BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
