#!/usr/bin/env bash
# Builds budget and runs the main job on the bundled example: the SMELT paper's 200M baseline
# (192 experts, S≈95%) matched by a looped model (middle half twice). Extra arguments are passed to
# budget-match (e.g. --format json). Builds budget-match alone.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh budget-match  # only what this job runs: tests, benches, Python and the profiler wait for scripts/test.sh
"${BUDGET_BUILD_DIR:-build}/cli/budget-match" --baseline examples/configs/paper-200M-S95-baseline.json "$@"
