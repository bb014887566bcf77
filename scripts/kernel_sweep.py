#!/usr/bin/env python3
"""Issue 43's acceptance sweep: nine released MoE baselines (Qwen3, DeepSeek, Kimi, Mixtral, Phi
families) matched on three kernel stacks, and the paper's 16 grid cells on each stack.

For each (baseline, stack) it prints row #1's kernel fit, its largest deviation, whether any row
shown is refused, the unreachable budgets the output names, and the wall time; then the share of
cases whose row #1 is native. Exit 1 when a shown row is refused, when row #1 is native in fewer
than 80% of the cases, or when a deviation above 3.9% is not explained by the output.

usage: scripts/kernel_sweep.py [BUILD_DIR]   (default: build)
"""
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINES = [
    "tests/data/hf/qwen3-30b-a3b.json",
    "tests/data/hf/qwen3-235b-a22b.json",
    "examples/hf/qwen1.5-moe-a2.7b.json",
    "examples/hf/deepseek-moe-16b.json",
    "tests/data/hf/deepseek-v2-lite.json",
    "tests/data/hf/deepseek-v3.json",
    "tests/data/hf/kimi-k2.json",
    "examples/hf/mixtral-8x7b.json",
    "tests/data/hf/phi-3.5-moe.json",
]
STACKS = [
    ["--gpu", "h100-sxm", "--precision", "bf16"],
    ["--gpu", "h100-sxm", "--precision", "fp8-blockwise"],
    ["--gpu", "b200", "--precision", "mxfp8"],
]
PAPER_WORST = 0.039


def run(binary, args):
    start = time.monotonic()
    proc = subprocess.run([str(binary)] + args + ["--format", "json"], cwd=ROOT, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if proc.returncode not in (0, 3):
        sys.exit(f"{' '.join(args)}: exit {proc.returncode}: {proc.stderr.strip()}")
    return json.loads(proc.stdout), seconds


def matched_case(binary, baseline, stack):
    doc, seconds = run(binary, ["--baseline", baseline] + stack)
    rows = doc["candidates"]
    fits = [(r.get("kernel_fit") or {}).get("fit") for r in rows]
    honesty = doc["summary"].get("native_reach") or {}
    first = rows[0] if rows else None
    max_dev = first["deviation"]["max"] if first else None
    explained = bool(honesty.get("unreachable"))
    return {
        "baseline": Path(baseline).stem, "stack": " ".join(stack), "first_fit": fits[0] if fits else None,
        "refused_rows": fits.count("refused"), "max_dev": max_dev, "explained": explained, "seconds": seconds,
        "padded_dims": (first.get("kernel_fit") or {}).get("executed_head_dims") if first else None,
    }


def grid_cells(binary, stack):
    doc, seconds = run(binary, ["grid"] + stack)
    fits = [((c.get("matched") or {}).get("kernel_fit") or {}).get("fit") for c in doc["cells"]]
    return fits, seconds


def main():
    build = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build"
    binary = build / "cli" / "budget-match"
    cases, failures = [], []
    print(f"{'baseline':24} {'stack':40} {'#1 fit':8} {'max dev':>8} {'refused':>7} {'named':>5} {'s':>6}")
    for baseline in BASELINES:
        for stack in STACKS:
            c = matched_case(binary, baseline, stack)
            cases.append(c)
            dev = "-" if c["max_dev"] is None else f"{100 * c['max_dev']:.2f}%"
            print(f"{c['baseline']:24} {c['stack']:40} {str(c['first_fit']):8} {dev:>8} {c['refused_rows']:>7} "
                  f"{'yes' if c['explained'] else 'no':>5} {c['seconds']:6.2f}")
            if c["refused_rows"]:
                failures.append(f"{c['baseline']} on {c['stack']}: {c['refused_rows']} refused rows shown")
            if c["max_dev"] is not None and c["max_dev"] > PAPER_WORST and not c["explained"]:
                failures.append(f"{c['baseline']} on {c['stack']}: {100 * c['max_dev']:.2f}% with no budget named")
    native = sum(1 for c in cases if c["first_fit"] == "native")
    print(f"\nrow #1 native: {native} of {len(cases)} ({100 * native / len(cases):.0f}%)")
    if native < 0.8 * len(cases):
        failures.append(f"row #1 native in {native} of {len(cases)} cases, under 80%")
    for stack in STACKS:
        fits, seconds = grid_cells(binary, stack)
        counts = {k: fits.count(k) for k in sorted(set(map(str, fits)))}
        print(f"paper grid on {' '.join(stack)}: {len(fits)} cells, fits {counts} ({seconds:.2f} s)")
        if "refused" in fits:
            failures.append(f"paper grid on {' '.join(stack)}: a refused row")
        if None in fits:
            failures.append(f"paper grid on {' '.join(stack)}: a cell without kernel_fit")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
