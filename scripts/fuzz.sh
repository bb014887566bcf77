#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang-14, ASan + UBSan) into build-fuzz/ (or
# $BUDGET_FUZZ_BUILD_DIR) and runs TARGET, or every target, for SECONDS each.
#
#   scripts/fuzz.sh list                  the targets
#   scripts/fuzz.sh TARGET [SECONDS]      one target (default 60 s), e.g. scripts/fuzz.sh fuzz_config 600
#   scripts/fuzz.sh all [SECONDS]         every target, $FUZZ_JOBS at a time (default: nproc)
#
# Seeds come from tests/fuzz/corpus/<target>/ (read only); inputs that add coverage accumulate in
# <build>/fuzz-corpus/<target>/. Any crash, sanitizer report, leak, uncaught non-budget::Error
# exception, input slower than $FUZZ_TIMEOUT s (default 10) or memory above $FUZZ_RSS_MB MiB
# (default 2048) fails the run: the reproducer is saved under <build>/fuzz-artifacts/<target>/ and
# printed; replay it with `<build>/tests/fuzz/<target> FILE`. Exit status 0 iff every target is clean.
# Inputs may grow to $FUZZ_MAX_LEN bytes (default 131072, libFuzzer's -max_len): enough for the
# deep-nesting class (JSON nested 20,000 levels; the strict reader's limit is 64), which the
# default, the largest seed, never reached.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; }
[ $# -ge 1 ] || { usage >&2; exit 64; }
what="$1"
seconds="${2:-60}"
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "error: SECONDS must be a positive integer, got '$seconds'" >&2; exit 64; }

all_targets=()
for source in tests/fuzz/fuzz_*.cpp; do
  all_targets+=("$(basename "$source" .cpp)")
done
if [ "$what" = list ]; then
  printf '%s\n' "${all_targets[@]}"
  exit 0
elif [ "$what" = all ]; then
  targets=("${all_targets[@]}")
elif [ -f "tests/fuzz/$what.cpp" ]; then
  targets=("$what")
else
  echo "error: unknown fuzz target '$what'; targets: ${all_targets[*]} (or all)" >&2
  exit 64
fi

scripts/install-deps.sh --fuzz
build_dir="${BUDGET_FUZZ_BUILD_DIR:-build-fuzz}"
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUDGET_FUZZ=ON \
  -DBUDGET_BUILD_CLI=OFF -DBUDGET_BUILD_TESTS=OFF -DBUDGET_BUILD_BENCH=OFF -DBUDGET_INSTALL=OFF \
  -DBUDGET_CUDA=OFF "${launcher[@]}" >/dev/null
cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]}"

timeout_s="${FUZZ_TIMEOUT:-10}"
rss_mb="${FUZZ_RSS_MB:-2048}"
max_len="${FUZZ_MAX_LEN:-131072}"
jobs="${FUZZ_JOBS:-$(nproc)}"
# Every UBSan report is fatal (the build also has -fno-sanitize-recover=all); leaks are findings.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
log_dir="$build_dir/fuzz-logs"
mkdir -p "$log_dir"

run_target() {
  local target="$1" work="$build_dir/fuzz-corpus/$1" artifacts="$build_dir/fuzz-artifacts/$1"
  mkdir -p "$work" "$artifacts"
  local started=$SECONDS status=0
  # The work corpus comes first: libFuzzer writes new inputs there, never into the seeds.
  "$build_dir/tests/fuzz/$target" "$work" "tests/fuzz/corpus/$target" \
    -dict=tests/fuzz/budget.dict -max_total_time="$seconds" -timeout="$timeout_s" -rss_limit_mb="$rss_mb" -max_len="$max_len" \
    -malloc_limit_mb="$rss_mb" -use_value_profile=1 -print_final_stats=1 -artifact_prefix="$artifacts/" \
    >"$log_dir/$target.log" 2>&1 || status=$?
  echo "$status $((SECONDS - started))" >"$log_dir/$target.status"
}

echo "fuzzing ${#targets[@]} target(s) for ${seconds} s each, ${jobs} at a time (timeout ${timeout_s} s/input, ${rss_mb} MiB, inputs up to ${max_len} bytes)"
running=0
for target in "${targets[@]}"; do
  rm -f "$build_dir/fuzz-artifacts/$target"/* "$log_dir/$target.status" 2>/dev/null || true
  run_target "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

failed=()
printf '%-22s %-8s %12s %8s %8s\n' target result executions seconds corpus
for target in "${targets[@]}"; do
  read -r status elapsed <"$log_dir/$target.status"
  log="$log_dir/$target.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  corpus=$(find "$build_dir/fuzz-corpus/$target" -type f | wc -l)
  result=clean
  if [ "$status" -ne 0 ] || grep -qE '^(==[0-9]+== ?ERROR|SUMMARY: )|fuzz finding in|runtime error:' "$log"; then
    result=FAILED
    failed+=("$target")
  fi
  printf '%-22s %-8s %12s %8s %8s\n' "$target" "$result" "${execs:-?}" "$elapsed" "$corpus"
done

for target in "${failed[@]}"; do
  echo
  finding='fuzz finding|runtime error|ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer)'
  echo "=== $target: $(grep -hE "$finding" "$log_dir/$target.log" | head -1)"
  echo "--- last lines of $log_dir/$target.log:"
  grep -vE '^#[0-9]+\s|NEW_FUNC' "$log_dir/$target.log" | tail -40
  for artifact in "$build_dir/fuzz-artifacts/$target"/*; do
    [ -f "$artifact" ] || continue
    echo "--- reproducer $artifact ($(stat -c %s "$artifact") bytes; replay: $build_dir/tests/fuzz/$target $artifact):"
    head -c 512 "$artifact" | od -An -c | head -20
  done
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing found problems in: ${failed[*]}" >&2
  exit 1
fi
echo "fuzzing: every target clean"
