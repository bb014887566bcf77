#!/usr/bin/env bash
# Measures a from-scratch build in CPU seconds, configured exactly as scripts/build.sh configures
# it (cmake -DCMAKE_BUILD_TYPE=Release, the default generator), ccache off. CPU seconds (user+sys
# of every process the build starts) are what a fresh machine's wall time follows; the wall time
# of a shared machine is not. Prints the configure and build CPU, the build's estimated wall on a
# fresh 2-core machine (CPU/2) and the per-file CPU of the slowest files (docs/architecture.md,
# "Compile time").
# Usage: scripts/measure-build.sh [--source DIR] [--build-dir DIR] [--jobs N] [--top N] [TARGET ...]
#   --source     the tree to build (default: this checkout), e.g. a throwaway worktree of an old commit
#   --build-dir  where (default: a new temporary directory, removed afterwards)
#   --jobs       parallel jobs (default 2, the reference machine's cores)
#   TARGET       the targets to build (default budget-match, the target scripts/run.sh builds)
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir="$PWD"
build_dir=""
jobs=2
top=15
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --source) source_dir="$(cd "$2" && pwd)"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --top) top="$2"; shift 2 ;;
    -*) echo "error: unknown option $1 (allowed: --source, --build-dir, --jobs, --top)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(budget-match)
[ -x /usr/bin/time ] || { echo "error: needs /usr/bin/time (Debian package time)" >&2; exit 1; }
remove_build_dir=0
if [ -z "$build_dir" ]; then
  build_dir="$(mktemp -d /tmp/budget-measure.XXXXXX)"
  remove_build_dir=1
elif [ -e "$build_dir" ] && [ -n "$(ls -A "$build_dir")" ]; then
  echo "error: --build-dir $build_dir is not empty (a from-scratch build needs an empty one)" >&2
  exit 2
fi
mkdir -p "$build_dir"
build_dir="$(cd "$build_dir" && pwd)"
export CCACHE_DISABLE=1

# Every compiler and linker call runs under /usr/bin/time, which appends "user sys output" to a log.
log="$build_dir/measure-cpu.log"
launcher="$build_dir/measure-launcher.sh"
cat >"$launcher" <<EOF
#!/usr/bin/env bash
output=unknown
previous=""
for arg in "\$@"; do
  [ "\$previous" = -o ] && output="\$arg"
  previous="\$arg"
done
exec /usr/bin/time -a -o "$log" -f "%U %S \$output" "\$@"
EOF
chmod +x "$launcher"

cpu_seconds() {  # cpu_seconds FILE: the user+sys seconds /usr/bin/time -f "%U %S" wrote there
  awk 'END { printf "%.1f", $1 + $2 }' "$1"
}
/usr/bin/time -o "$build_dir/measure-configure.time" -f "%U %S" \
  cmake -S "$source_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" -DCMAKE_CXX_LINKER_LAUNCHER="$launcher" >/dev/null
source_revision="$(git -C "$source_dir" rev-parse --short HEAD 2>/dev/null || echo 'not a git tree')"
if [ -n "$(git -C "$source_dir" status --porcelain 2>/dev/null)" ]; then source_revision+=" + uncommitted changes"; fi
build_args=()
for target in "${targets[@]}"; do build_args+=(--target "$target"); done
/usr/bin/time -o "$build_dir/measure-build.time" -f "%U %S %e" \
  cmake --build "$build_dir" -j"$jobs" "${build_args[@]}" >"$build_dir/measure-build.out"

build_cpu="$(cpu_seconds "$build_dir/measure-build.time")"
echo "source         : $source_dir ($source_revision at the start)"
echo "targets        : ${targets[*]} (-j$jobs, ccache off)"
echo "configure CPU  : $(cpu_seconds "$build_dir/measure-configure.time") s"
echo "build CPU      : $build_cpu s (user+sys; wall here $(awk '{print $3}' "$build_dir/measure-build.time") s on a shared machine)"
echo "fresh 2-core   : $(awk -v c="$build_cpu" 'BEGIN { printf "%.0f", c / 2 }') s estimated wall (build CPU / 2)"
echo "compiler+linker: $(awk '{ s += $1 + $2 } END { printf "%.1f", s }' "$log") s CPU in $(wc -l <"$log") calls"
echo "slowest $top files (CPU s):"
awk '{ printf "%8.2f  %s\n", $1 + $2, $3 }' "$log" | sed "s|$build_dir/||" | sort -rn | head -n "$top"
if [ "$remove_build_dir" = 1 ]; then
  rm -rf "$build_dir"
else
  echo "per-file log   : $log"
fi
