"""Issue 44 §3-§4 (docs/reliability.md, round 5) through the Python module and the CLI: every call
takes max_seconds= and stops on Ctrl-C between units of work; budget.Error for a bad max_seconds and
for pybind11's argument type errors; Python's non-finite numbers in a Hugging Face config read the
same way everywhere; an empty output path refused by every CLI option that writes a file.
Run by ctest (pytest when installed, else this file's own runner)."""

import json
import os
import signal
import subprocess
import sys
import time

import budget
from budget_test_support import SOURCE, CLI, BASELINE, H200, PROFILE, run_tests

NEMOTRON_H = os.path.join(SOURCE, "tests", "data", "hf", "refused", "nemotron-h-56b-base-8k.json")


def million_layers():
    """The paper's baseline with 10^6 layers: each layout the search times takes a while."""
    with open(BASELINE, encoding="utf-8") as f:
        config = json.load(f)
    config.update(name="million-layers", num_layers=1_000_000, vocab_size=32000)
    return config


def test_max_seconds_stops_the_layout_search():
    # 10^6 layers on 2^20 GPUs: before, the pipeline splits alone took minutes (O(L^2)) before the
    # first check, and Python calls had no time limit at all.
    start = time.monotonic()
    try:
        budget.layout_search(million_layers(), H200, gpus=2**20, nodes=2**17, calibration=PROFILE, max_seconds=1)
    except budget.Error as e:
        assert "time limit" in str(e) and "max_seconds=" in e.message, str(e)
    else:
        raise AssertionError("no budget.Error at the time limit")
    assert time.monotonic() - start < 30, time.monotonic() - start  # one unit of work past the limit at most
    # The limit is the call's own: the next call has none.
    assert budget.account(BASELINE)["params"]["non_embedding_total"] > 0


def test_max_seconds_is_checked():
    for bad in (0, -1, float("nan"), float("inf"), True, "5"):
        try:
            budget.account(BASELINE, max_seconds=bad)
        except budget.Error as e:
            assert e.source == "max_seconds", (bad, str(e))
        else:
            raise AssertionError(f"max_seconds={bad!r} accepted")
    assert budget.account(BASELINE, max_seconds=30)["params"]["non_embedding_total"] > 0


def test_ctrl_c_stops_a_call_between_units_of_work():
    # Before: SIGINT waited until the call returned (85 s in the audit); now KeyboardInterrupt at the
    # next unit of work.
    script = (
        "import json, sys, budget\n"
        f"config = json.load(open({BASELINE!r}))\n"
        "config.update(name='m', num_layers=1_000_000, vocab_size=32000)\n"
        "try:\n"
        "    print('started', flush=True)\n"
        f"    budget.layout_search(config, {H200!r}, gpus=1024, nodes=128, calibration={PROFILE!r})\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(3)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=dict(os.environ))
    assert process.stdout.readline().strip() == "started"
    time.sleep(1.0)
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError("Ctrl-C did not stop the call within 20 s")
    assert process.returncode == 3 and "interrupted" in out, (process.returncode, out, err)
    assert time.monotonic() - sent < 20


def test_argument_type_errors_are_budget_errors():
    # pybind11's own TypeError for an argument of the wrong type, raised as budget.Error naming the call.
    try:
        budget.export(BASELINE, to=5)
    except budget.Error as e:
        assert e.source == "export" and "incompatible function arguments" in e.message, str(e)
    else:
        raise AssertionError("no budget.Error")
    assert isinstance(budget.Error("x"), ValueError)


def test_config_constructor_errors_are_budget_errors():
    # Before: budget.Config had no constructor, so budget.Config(...) raised pybind11's TypeError
    # ("No constructor defined!"). Now budget.Config(x) is load_config(x), and a call it cannot take
    # is a budget.Error naming the constructor.
    assert budget.Config(BASELINE).name == budget.load_config(BASELINE).name
    assert budget.Config(config=BASELINE).name == budget.load_config(BASELINE).name
    for args, kwargs in [((), {}), ((BASELINE, BASELINE), {}), ((), {"path": BASELINE})]:
        try:
            budget.Config(*args, **kwargs)
        except budget.Error as e:
            assert e.source == "Config" and "takes one argument" in e.message, str(e)
        else:
            raise AssertionError(("no budget.Error", args, kwargs))
    try:
        budget.Config({"hidden_size": "wide"})
    except budget.Error:
        pass
    else:
        raise AssertionError("an invalid config dict was accepted")


def test_non_finite_hugging_face_config_read_alike_everywhere():
    # Before: read by report/compare/layout, refused by --baseline, export and Python ("not valid JSON").
    config = budget.load_config(NEMOTRON_H)
    assert config.is_hugging_face
    with open(NEMOTRON_H, encoding="utf-8") as f:
        text = f.read()
    document = json.loads(text)  # Python's json reads Infinity as float('inf')
    assert document["time_step_limit"][1] == float("inf")
    assert budget.account(document)["params"]["non_embedding_total"] == 54_176_866_816  # hand count: test_config_hf_python_json.cpp
    # A key the reader uses refuses a non-finite value by name, from a dict as from a file.
    document["hidden_size"] = float("inf")
    try:
        budget.account(document)
    except budget.Error as e:
        assert e.path == "/hidden_size" and "Infinity" in e.message, str(e)
    else:
        raise AssertionError("hidden_size Infinity accepted")
    if CLI:
        native = subprocess.run([CLI, "export", NEMOTRON_H, "--to", "native"], capture_output=True, text=True)
        assert native.returncode == 0, native.stderr
        matched = subprocess.run([CLI, "--baseline", NEMOTRON_H, "--top", "1"], capture_output=True, text=True)
        assert matched.returncode == 0, matched.stderr
        # As an hf template, which an export writes back key for key as JSON: refused by key.
        template = subprocess.run([CLI, "export", BASELINE, "--to", "hf", "--template", NEMOTRON_H],
                                  capture_output=True, text=True)
        assert template.returncode == 2 and "/time_step_limit/1: Infinity is Python's JSON extension" in template.stderr, \
            template.stderr


def test_empty_output_path_refused():
    if not CLI:
        return
    runs = os.path.join(SOURCE, "tests", "data", "runs", "validate_only_runs.jsonl")
    b200 = os.path.join(SOURCE, "cuda_profiler", "profiles", "b200-published.json")
    loss = os.path.join(SOURCE, "tests", "data", "scaling_paired_domains.csv")
    cases = [
        ["calibrate", "--profile", b200, "--from-runs", runs, "--out", ""],
        ["export", BASELINE, "--to", "native", "--out", ""],
        ["--baseline", BASELINE, "--out", ""],
        ["grid", "--plot", ""],
        ["plan", "--data-template", ""],
        ["fit", loss, "--out", ""],
        ["fit", loss, "--plot", ""],
        ["frontier", "--plot", ""],
        ["layout", BASELINE, "--cluster", H200, "--gpus", "8", "--megatron-out", ""],
    ]
    for args in cases:
        done = subprocess.run([CLI] + args, capture_output=True, text=True, cwd=SOURCE)
        # Before: exit 0, nothing written and nothing said.
        assert done.returncode == 64 and "an empty path names no file" in done.stderr, (args, done.returncode, done.stderr)


if __name__ == "__main__":
    run_tests(globals())
