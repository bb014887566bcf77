"""Tests of budget.layout (docs/cluster.md): the dict equals budget-match layout's JSON, the keys the
issue lists, loops (weights once, activations per execution), and errors as budget.Error.
Run by ctest (pytest when installed, else this file's own runner)."""

import json
import os
import subprocess
import sys

import budget

SOURCE = os.environ.get("BUDGET_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("BUDGET_CLI")
BASELINE = os.path.join(SOURCE, "examples", "configs", "paper-200M-S95-baseline.json")
SMELT = os.path.join(SOURCE, "examples", "configs", "paper-200M-S95-smelt.json")
MIXTRAL = os.path.join(SOURCE, "examples", "hf", "mixtral-8x7b.json")
H200 = os.path.join(SOURCE, "examples", "clusters", "h200.json")


def test_layout_keys():
    r = budget.layout(MIXTRAL, H200, tp=2, sequence_parallel=True, pp=4, ep=4, etp=1, gpus=16, nodes=2,
                      micro_batch_size=1, micro_batches=8, distributed_optimizer=True)
    memory = r["memory"]
    assert memory["peak_bytes"] == max(s["peak_bytes"] for s in memory["stages"])
    assert len(memory["stages"]) == 4
    stage = memory["stages"][0]
    assert stage["layers"] == list(range(1, 9))
    assert set(stage["by_component"]) == {"weights", "gradients", "optimizer_states", "activations", "logits", "buffers"}
    assert abs(sum(stage["by_component"].values()) - stage["peak_bytes"]) <= 1e-6 * stage["peak_bytes"]
    assert r["layout"]["dp"] == 2 and r["layout"]["expert_dp"] == 1
    assert memory["stages"][3]["by_component"]["logits"] > 0 == memory["stages"][0]["by_component"]["logits"]


def test_layout_equals_cli_json():
    if not CLI:
        return
    out = subprocess.run([CLI, "layout", BASELINE, "--cluster", H200, "--micro-batch-size", "4", "--micro-batches", "1",
                          "--recompute", "selective", "--format", "json"], check=True, capture_output=True, text=True)
    cli = json.loads(out.stdout)
    r = budget.layout(BASELINE, H200, micro_batch_size=4, recompute="selective")
    for key in r:
        assert cli[key] == r[key], key


def test_loop_weights_once_activations_per_execution():
    with open(SMELT) as f:
        looped = json.load(f)
    unlooped = dict(looped)
    del unlooped["loop"]
    a = budget.layout(looped, H200)["memory"]["stages"][0]
    b = budget.layout(unlooped, H200)["memory"]["stages"][0]
    assert a["executed_layers"] == 18 and b["executed_layers"] == 12
    assert a["by_component"]["weights"] == b["by_component"]["weights"]
    assert abs(a["by_component"]["activations"] / b["by_component"]["activations"] - 1.5) < 1e-12


def test_layout_errors():
    try:
        budget.layout(SMELT, H200, pp=2, micro_batches=4)
    except budget.Error as e:
        assert e.source == "layout" and "crosses pipeline chunks" in e.message
    else:
        raise AssertionError("no budget.Error")
    try:
        budget.layout(BASELINE, H200, recompute="sometimes")
    except budget.Error as e:
        assert e.source == "recompute"
    else:
        raise AssertionError("no budget.Error")
    try:
        budget.layout(BASELINE, {"schema": "budget.cluster", "schema_version": 1, "gpus": 8})
    except budget.Error as e:
        assert e.source == "cluster" and e.path == "/gpus"
    else:
        raise AssertionError("no budget.Error")


if __name__ == "__main__":
    tests = [(name, fn) for name, fn in sorted(globals().items()) if name.startswith("test_") and callable(fn)]
    for name, fn in tests:
        fn()
        print("ok", name)
    print(f"{len(tests)} tests passed", file=sys.stderr)
