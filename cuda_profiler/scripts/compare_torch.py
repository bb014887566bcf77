#!/usr/bin/env python3
"""GEMM times of a budget-profile profile against PyTorch-eager measurements of the same shapes.

    compare_torch.py PROFILE.json TORCH.jsonl

Both are cuBLAS underneath (PyTorch calls cublasLt for bf16 matmuls), so the ratios should be near
1; prints the median ratio ours/torch per pass and overall, and every shape off by more than 10%.
Run here (no GPU) on the profile that gpu_check.sh brought back (it times the jsonl's GEMM shapes
with --gemms-from).
"""
import json
import statistics
import sys


def main(profile_path: str, torch_path: str) -> int:
    ours = {}
    for row in json.load(open(profile_path))["rows"]:
        if row["op"] == "gemm" and not row.get("refused", False):
            ours[(row["M"], row["K"], row["N"], row["pass"])] = row["ms"]
    ratios = {}
    for line in open(torch_path):
        r = json.loads(line)
        if r.get("op") != "gemm":
            continue
        key = (r["M"], r["K"], r["N"], r["pass"])
        if key in ours:
            ratios[key] = ours[key] / r["ms"]
    if not ratios:
        print("no GEMM shape in common: was the sweep run with --gemms-from?")
        return 1
    print(f"{len(ratios)} GEMM shapes in common")
    for p in ("forward", "input_grad", "weight_grad"):
        vals = [v for k, v in ratios.items() if k[3] == p]
        if vals:
            print(f"  {p:<12} median ours/torch = {statistics.median(vals):.3f} over {len(vals)}")
    print(f"  all          median ours/torch = {statistics.median(ratios.values()):.3f}")
    off = sorted(((v, k) for k, v in ratios.items() if abs(v - 1) > 0.10), reverse=True)
    print(f"{len(off)} shapes off by more than 10%:")
    for v, (m, k, n, p) in off:
        align = "x8" if k % 8 == 0 and n % 8 == 0 else "not x8"
        print(f"  M={m} K={k} N={n} {p:<12} ratio {v:.2f} ({align})")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
