#!/usr/bin/env python3
"""Golden outputs of budget-match: the JSON (or exported text) that each main command prints on the
bundled examples, byte for byte, so that a restructuring that changes no behaviour is shown to
change no output.

  golden.py --exe build/cli/budget-match --source . --check     compare with tests/golden/expected/
  golden.py --exe build/cli/budget-match --source . --update    rewrite tests/golden/expected/

Outputs are compared as parsed JSON after removing the wall-clock fields (WALL_CLOCK_KEYS, none of
which the default outputs fill in), exported text exactly. An intended change of an output is
made by --update and reviewed in the diff of tests/golden/expected/.
"""
import argparse
import difflib
import json
import os
import pathlib
import subprocess
import sys

BASE = "examples/configs/paper-200M-S95-baseline.json"
LOOPED = "examples/configs/paper-200M-S95-smelt.json"
PROFILE = "cuda_profiler/profiles/h200-torch-eager.json"

# name, arguments (paths relative to the source tree), kind of output ("json" or "text").
CASES = [
    ("report-paper-200M", ["report", BASE, "--format", "json"], "json"),
    ("report-deepseek-v3", ["report", "tests/data/hf/deepseek-v3.json", "--format", "json"], "json"),
    ("report-calibration", ["report", BASE, "--calibration", PROFILE, "--format", "json"], "json"),
    ("baseline-paper-200M", ["--baseline", BASE, "--format", "json"], "json"),
    ("baseline-deepseek-v3-mla", ["--baseline", "tests/data/hf/deepseek-v3.json", "--format", "json"], "json"),
    # Issue 43: a kernel target (B200, MXFP8): kernel_fit per row, summary.kernel_stack, and the
    # native reach of a padded row #1 (best native beside best padded); FP8 blockwise on Hopper with
    # the KV budget the native shapes cannot reach and the loop suggested; the portable set.
    ("baseline-kernels-b200-mxfp8", ["--baseline", "examples/hf/mixtral-8x7b.json", "--gpu", "b200", "--precision",
                                     "mxfp8", "--format", "json"], "json"),
    ("baseline-kernels-h100-blockwise", ["--baseline", "tests/data/hf/deepseek-v3.json", "--gpu", "h100-sxm",
                                         "--precision", "fp8-blockwise", "--format", "json"], "json"),
    ("baseline-kernels-portable", ["--baseline", "examples/hf/qwen1.5-moe-a2.7b.json", "--portable-shapes",
                                   "--format", "json"], "json"),
    ("grid-kernels-b200", ["grid", "--gpu", "b200", "--precision", "mxfp8", "--format", "json"], "json"),
    ("baseline-calibration-time", ["--baseline", BASE, "--calibration", PROFILE, "--rank-by", "time",
                                   "--format", "json"], "json"),
    ("compare", ["compare", BASE, LOOPED, "--format", "json"], "json"),
    ("grid", ["grid", "--format", "json"], "json"),
    ("grid-ablation-span", ["grid", "--ablation", "span", "--format", "json"], "json"),
    ("grid-mla", ["grid", "--grid", "examples/grids/mla_grid.json", "--format", "json"], "json"),
    ("plan", ["plan", "--format", "json"], "json"),
    # Issue 40: the layout object holds every setting a run file needs (vocab_divisible_by, the MoE memory settings).
    ("layout-mixtral-h200", ["layout", "examples/hf/mixtral-8x7b.json", "--cluster", "examples/clusters/h200.json",
                             "--nodes", "2", "--gpus", "16", "--tp", "2", "--sequence-parallel", "--pp", "4", "--ep",
                             "4", "--etp", "1", "--micro-batch-size", "1", "--micro-batches", "8",
                             "--distributed-optimizer", "--vocab-divisible-by", "128", "--format", "json"], "json"),
    ("attention-dist", ["attention", "--dist", "exp:mean=600", "--seq-len", "4096", "--format", "json"], "json"),
    ("fit", ["fit", "examples/scaling/smelt_synthetic.csv", "--format", "json"], "json"),
    ("frontier", ["frontier", "examples/scaling/baseline.json", "examples/scaling/looped.json",
                  "--C", "1e20,1e21,1e22", "--S", "0.85,0.95", "--format", "json"], "json"),
    ("ce-gain-bootstrap", ["ce-gain", "--target", "examples/scaling/looped.json",
                           "--reference", "examples/scaling/baseline.json", "--C", "1e20,1e21", "--S", "0.95",
                           "--bootstrap", "examples/scaling/smelt_synthetic.csv", "--resamples", "40",
                           "--format", "json"], "json"),
    ("calibrate-validate", ["calibrate", "--profile", PROFILE, "--validate", "--format", "json"], "json"),
    ("export-hf", ["export", LOOPED, "--to", "hf"], "json"),
    ("export-hf-template", ["export", "examples/hf/mixtral-8x7b.json", "--to", "hf"], "json"),
    ("export-megatron", ["export", LOOPED, "--to", "megatron"], "text"),
    ("export-torchtitan", ["export", LOOPED, "--to", "torchtitan"], "text"),
]

WALL_CLOCK_KEYS = {"seconds", "elapsed_s", "wall_s", "search_seconds"}


def strip_wall_clock(value):
    if isinstance(value, dict):
        return {k: strip_wall_clock(v) for k, v in value.items() if k not in WALL_CLOCK_KEYS}
    if isinstance(value, list):
        return [strip_wall_clock(v) for v in value]
    return value


def run_case(exe, source, args):
    env = dict(os.environ, LC_ALL="C")
    return subprocess.run([exe, *args], cwd=source, capture_output=True, text=True, env=env,
                          timeout=300, stdin=subprocess.DEVNULL)


def canonical(kind, text):
    if kind == "json":
        return json.dumps(strip_wall_clock(json.loads(text)), indent=1, sort_keys=False) + "\n"
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exe")
    parser.add_argument("--source")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--list", action="store_true", help="print the case names, one a line")
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--update", action="store_true")
    parser.add_argument("--only", help="run only the case of this name")
    args = parser.parse_args()
    if args.list:
        print("\n".join(name for name, _, _ in CASES))
        return 0
    if not args.exe or not args.source:
        parser.error("--exe and --source are required with --check and --update")
    expected_dir = pathlib.Path(args.source) / "tests" / "golden" / "expected"
    failures = 0
    ran = 0
    for name, case_args, kind in CASES:
        if args.only and name != args.only:
            continue
        ran += 1
        result = run_case(args.exe, args.source, case_args)
        if result.returncode != 0:
            print(f"golden {name}: exit {result.returncode}: {result.stderr.strip()}")
            failures += 1
            continue
        try:
            got = canonical(kind, result.stdout)
        except ValueError as error:
            print(f"golden {name}: output is not JSON ({error})")
            failures += 1
            continue
        path = expected_dir / f"{name}.{'json' if kind == 'json' else 'txt'}"
        if args.update:
            expected_dir.mkdir(parents=True, exist_ok=True)
            path.write_text(got, encoding="utf-8")
            continue
        if not path.is_file():
            print(f"golden {name}: no expected output {path} (run with --update and review it)")
            failures += 1
            continue
        want = path.read_text(encoding="utf-8")
        if got != want:
            failures += 1
            diff = difflib.unified_diff(want.splitlines(), got.splitlines(), f"expected/{path.name}",
                                        f"budget-match {' '.join(case_args)}", lineterm="", n=2)
            print(f"golden {name}: output changed:")
            print("\n".join(list(diff)[:60]))
    if ran == 0:
        print("golden: no case of that name")
        return 2
    print(f"golden: {ran - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
