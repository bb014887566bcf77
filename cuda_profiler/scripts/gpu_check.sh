#!/usr/bin/env bash
# One call on the GPU machine (issue 9): correctness checks, the sweep (written as the profile),
# `configs` for the paper's 200M and 1.6B baselines and their matched configs, a short table last.
# Builds nothing there: run cuda_profiler/scripts/make_bundle.sh here first and carry
# cuda_profiler/gpu_bundle (the exact `run` call is in cuda_profiler/README.md). Under 8 minutes:
# each step has its own timeout. Everything is also written under $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
bundle=cuda_profiler/gpu_bundle
out="${OUT:-/tmp/budget-profile-out}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
bp="$bundle/bin/budget-profile"
inputs=cuda_profiler/inputs
status=0

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
  ldd "$bp"; } > "$out/machine.txt" 2>&1
"$bp" --version | tee "$out/version.txt"

echo "== correctness checks"
timeout 90 "$bp" check > "$out/check.txt" 2>&1 || status=1
grep -E "FAIL|attention|all checks|CHECKS|budget-profile" "$out/check.txt" | cut -c1-220

echo "== sweep (profile -> $out/h200.json)"
gemms_from=()
[ -f tests/data/h200_torch_ops.jsonl ] && gemms_from=(--gemms-from tests/data/h200_torch_ops.jsonl)
timeout 270 "$bp" sweep --out "$out/h200.json" "${gemms_from[@]}" > "$out/sweep.txt" 2> "$out/sweep.log" || status=1
tail -n 3 "$out/sweep.log"
sed -n '/^Summary by op:/,$p' "$out/sweep.txt"

echo "== configs (measured vs predicted from the sweep profile)"
calibration=()
[ -f "$out/h200.json" ] && calibration=(--calibration "$out/h200.json")
for size in 200M 1.6B; do
  timeout 90 "$bp" configs "$inputs/paper-$size-E192-baseline.json" "$inputs/paper-$size-E192-matched.json" \
    "${calibration[@]}" > "$out/configs-$size.txt" 2>&1 || status=1
  cat "$out/configs-$size.txt" | tail -n 6
done

echo "== GEMM times against PyTorch eager at the same shapes"
[ -f "$out/h200.json" ] && python3 cuda_profiler/scripts/compare_torch.py "$out/h200.json" tests/data/h200_torch_ops.jsonl \
  > "$out/compare_torch.txt" 2>&1 && head -n 6 "$out/compare_torch.txt"

echo "== collectives (NCCL, needs >= 2 GPUs: a 1-GPU machine prints the refusal, exit 3)"
# libnccl.so.2 is dlopen'ed: the toolkit's lib folder or PyTorch's nvidia-nccl wheel.
nccl_lib="$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null || true)"
LD_LIBRARY_PATH="${nccl_lib:+$nccl_lib:}/usr/local/cuda/lib:$LD_LIBRARY_PATH" timeout 150 "$bp" collectives \
  --base-cluster examples/clusters/h200.json --out "$out/collectives.json" --cluster-out "$out/h200-measured.json" \
  > "$out/collectives.txt" 2>&1
echo "exit $?" >> "$out/collectives.txt"
grep -E "GB/s, |need NCCL|exit" "$out/collectives.txt" | cut -c1-220

echo "== summary"
grep -c PASS "$out/check.txt" | xargs echo "checks passed:"
grep -c FAIL "$out/check.txt" | xargs echo "checks failed:"
grep -c " refused" "$out/sweep.txt" | xargs echo "refused rows:"
exit $status
