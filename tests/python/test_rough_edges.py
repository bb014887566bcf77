"""Issue 44 §5 through the Python module: budget.layout() takes run_tokens as layout_search() and
`budget-match layout --run-tokens` do. Run by ctest (pytest when installed, else this file's own runner)."""

import json
import os
import subprocess

import budget
from budget_test_support import BASELINE, H200, PROFILE, raises_budget_error, run_tests


def test_layout_takes_run_tokens():
    # Before: budget.Error "unexpected keyword argument" for run_tokens.
    plain = budget.layout(BASELINE, H200, gpus=8, tp=2, sequence_parallel=True, calibration=PROFILE)
    assert "run" not in plain["time"]
    found = budget.layout(BASELINE, H200, gpus=8, tp=2, sequence_parallel=True, calibration=PROFILE, run_tokens=1e12)
    t = found["time"]
    # By hand: steps = tokens / tokens a step; wall clock = steps x seconds a step; GPU-hours =
    # wall clock x 8 GPUs / 3600.
    steps = 1e12 / t["tokens_per_step"]
    assert abs(t["run"]["steps"] - steps) <= 1e-12 * steps
    wall = steps * t["seconds_per_step"]
    assert abs(t["run"]["wall_clock_seconds"] - wall) <= 1e-12 * wall
    assert abs(t["run"]["gpu_hours"] - wall * 8 / 3600) <= 1e-12 * wall
    # The CLI gives the same run for the same layout.
    cli = os.environ.get("BUDGET_CLI")
    if cli:
        out = subprocess.run([cli, "layout", BASELINE, "--cluster", H200, "--gpus", "8", "--tp", "2", "--sequence-parallel", "--micro-batch-size", "1", "--micro-batches", "1", "--profile",
                              PROFILE, "--run-tokens", "1e12", "--format", "json"], capture_output=True, text=True)
        assert out.returncode in (0, 3), out.stderr
        assert json.loads(out.stdout)["time"]["run"] == t["run"]
    raises_budget_error(lambda: budget.layout(BASELINE, H200, gpus=8, calibration=PROFILE, run_tokens=0),
                        "run_tokens", "above 0")
    raises_budget_error(lambda: budget.layout(BASELINE, H200, gpus=8, calibration=PROFILE, run_tokens="many"),
                        "run_tokens")
    # A cluster with datasheet peaks only and no profile: no step time, so no run.
    with open(H200) as f:
        datasheet_only = json.load(f)
    del datasheet_only["gpu"]["compute"]["calibration"]
    raises_budget_error(lambda: budget.layout(BASELINE, datasheet_only, gpus=8, run_tokens=1e12), "run_tokens",
                        "need the step time")


if __name__ == "__main__":
    run_tests(globals())
