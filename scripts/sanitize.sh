#!/usr/bin/env bash
# Builds budget with AddressSanitizer + UndefinedBehaviorSanitizer (the system C++ compiler, -O1,
# every report fatal) into build-asan/ (or $BUDGET_ASAN_BUILD_DIR) and runs the CTest suite there,
# the find_package consumers included (they are built with the same flags), short of the three tests
# that run no sanitized code (below). CUDA targets and benchmarks are off in this build.
# Usage: scripts/sanitize.sh [ctest arguments...]
#
# scripts/sanitize.sh --integer [ctest arguments...]: the integer checks instead (issue 23): clang-14
# with UBSan's integer set short of unsigned wrap-around (which hashing and the random generators
# use on purpose): signed overflow, shifts, division by zero, float-to-integer overflow and
# implicit conversions that truncate or change the sign of a signed value; every report fatal.
# Only budget-match and the cluster domain's unit tests (budget_cluster_tests: the layout, its
# search, memory, time and links) are built (into build-intsan/ or $BUDGET_INTSAN_BUILD_DIR), and
# only the CLI tests and those unit tests (ctest -R '^(cli[.]|cluster-only[.])') run unless other
# ctest arguments are given.
#
# scripts/sanitize.sh --thread [ctest arguments...]: ThreadSanitizer (the system C++ compiler,
# -O1, every report fatal) on the code that runs on several threads: the library's parallel loop
# (base/parallel_for.hpp), the cluster ranking, the bootstrap and the fit's starts that use it. Only the unit tests
# are built (into build-tsan/ or $BUDGET_TSAN_BUILD_DIR) and only those tests run unless other
# ctest arguments are given.
set -euo pipefail
cd "$(dirname "$0")/.."

# configure BUILD_DIR FLAGS [cmake arguments...]: a RelWithDebInfo build at -O1 with line tables
# (fast enough to build on two cores, stack traces with file:line; assertions stay on, no NDEBUG),
# FLAGS on every compile and link, benchmarks, fuzzers and CUDA off, ccache when installed.
configure() {
  local dir="$1" flags="$2"
  shift 2
  local launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
    "-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_EXE_LINKER_FLAGS=$flags" "-DCMAKE_SHARED_LINKER_FLAGS=$flags" \
    -DBUDGET_BUILD_BENCH=OFF -DBUDGET_FUZZ=OFF -DBUDGET_CUDA=OFF -DCMAKE_CUDA_COMPILER= "${launcher[@]}" "$@" >/dev/null
}

if [ "${1:-}" = --thread ]; then
  shift
  scripts/install-deps.sh
  build_dir="${BUDGET_TSAN_BUILD_DIR:-build-tsan}"
  configure "$build_dir" "-fsanitize=thread -fno-omit-frame-pointer" -DBUDGET_BUILD_PYTHON=OFF
  # GCC 12's TSan stops at start ("unexpected memory mapping") on kernels that randomise mmap with
  # 32 bits; with address randomisation off (setarch -R, inherited by the test discovery the build
  # runs and by ctest's children) it does not. Where setarch cannot, the tests run as they are.
  runner=()
  if command -v setarch >/dev/null && setarch "$(uname -m)" -R true 2>/dev/null; then
    runner=(setarch "$(uname -m)" -R)
  fi
  export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"
  "${runner[@]}" cmake --build "$build_dir" -j"$(nproc)" --target budget_tests
  if [ $# -eq 0 ]; then
    # Left to the Release and ASan runs: the three DeepSeek-scale shared-work rankings, whose threads
    # run the same parallel loop as the smaller ranking cases kept here (one thread and several, bit
    # for bit; duplicates and refusals; the time limit). Since issue 41 every looped candidate tries
    # each loop placement, and under TSan these three took 346 s, 161 s and 310 s on two
    # cores (2026-12-07), past the step's cap with the build.
    set -- -R '^(parallel for|cluster ranking|scaling bootstrap|scaling fit):' \
      -E "for every top and thread count|first dense layers and shared experts on 1,024 GPUs|in the per-FLOP order with refusals"
  fi
  "${runner[@]}" ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" "$@"
  exit
fi
if [ "${1:-}" = --integer ]; then
  shift
  scripts/install-deps.sh --fuzz  # clang-14
  build_dir="${BUDGET_INTSAN_BUILD_DIR:-build-intsan}"
  checks="signed-integer-overflow,shift,integer-divide-by-zero,float-cast-overflow,implicit-signed-integer-truncation,implicit-integer-sign-change"
  # Third-party headers are exempt (scripts/intsan-ignorelist.txt says which and why).
  sanitize="-fsanitize=$checks -fno-sanitize-recover=all -fno-omit-frame-pointer -fsanitize-ignorelist=$PWD/scripts/intsan-ignorelist.txt"
  CC=clang-14 CXX=clang++-14 configure "$build_dir" "$sanitize" -DBUDGET_BUILD_PYTHON=OFF -DBUDGET_CLUSTER_ONLY_TESTS=ON
  cmake --build "$build_dir" -j"$(nproc)" --target budget-match budget_cluster_tests
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
  if [ $# -eq 0 ]; then
    set -- -R '^(cli[.]|cluster-only[.])'
  fi
  ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" "$@"
  exit
fi
scripts/install-deps.sh
build_dir="${BUDGET_ASAN_BUILD_DIR:-build-asan}"
configure "$build_dir" "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake --build "$build_dir" -j"$(nproc)"
# halt_on_error / abort: the first report fails the test; leaks fail it at exit.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Left to scripts/test.sh unless other ctest arguments are given: the tests that run none of this
# build's sanitized code. shared.build_and_install compiles the library again as a shared library
# with the build type's own flags (no sanitizer: a third build, about 270 s of the suite's 2,040
# test-seconds under ASan), shared.consumer links against that copy, and headers.cxx17 only
# compiles the public headers as C++17.
if [ $# -eq 0 ]; then
  set -- -E '^(shared[.](build_and_install|consumer)|headers[.]cxx17)$'
fi
ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" "$@"
