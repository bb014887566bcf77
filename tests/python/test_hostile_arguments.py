"""Issue 33 (docs/reliability.md, fourth audit) through the Python module: arguments of the wrong type
or beyond 64 bits raise budget.Error naming them (not TypeError), a NUL byte in a path is refused,
budget.export writes no code from a name, the layout search takes the workload's attended keys (as
`budget-match layout` and the cluster ranking), min_headroom and run_tokens.
Run by ctest (pytest when installed, else this file's own runner)."""

import ast
import json
import os
import subprocess
import tempfile

import budget
from budget_test_support import BASELINE, H200, PROFILE, raises_budget_error, run_tests


def test_cluster_arguments_raise_budget_error():
    # Before: TypeError ("incompatible function arguments") for each of these.
    raises_budget_error(lambda: budget.layout(BASELINE, H200, tp=2**70), "tp", "outside the 64-bit integer range")
    raises_budget_error(lambda: budget.layout(BASELINE, H200, pp="2"), "pp", "allowed: an integer")
    raises_budget_error(lambda: budget.layout(BASELINE, H200, micro_batch_size=1.5), "micro_batch_size")
    raises_budget_error(lambda: budget.layout(BASELINE, H200, distributed_optimizer=1), "distributed_optimizer",
                        "allowed: True or False")
    raises_budget_error(lambda: budget.layout(BASELINE, H200, imbalance="high"), "imbalance", "allowed: a number")
    raises_budget_error(lambda: budget.layout(BASELINE, H200, recompute=3), "recompute", "allowed: a string")
    raises_budget_error(lambda: budget.layout(BASELINE, H200, nodes=2**64), "nodes")
    raises_budget_error(lambda: budget.layout(BASELINE, H200, tpp=2), "tpp", "unexpected keyword argument")
    raises_budget_error(lambda: budget.layout_search(BASELINE, H200, gpus=2**63, calibration=PROFILE), "gpus")
    raises_budget_error(lambda: budget.layout_search(BASELINE, H200, gpus="8", calibration=PROFILE), "gpus")
    raises_budget_error(lambda: budget.layout_search(BASELINE, H200, gpus=8, calibration=PROFILE, top=10**30), "top")
    raises_budget_error(lambda: budget.match(BASELINE, top=1, cluster=H200, gpus=2**70), "gpus")
    raises_budget_error(lambda: budget.match(BASELINE, top=1, cluster=H200, gpus=8, max_nodes_per_token="x"),
                        "max_nodes_per_token")
    raises_budget_error(lambda: budget.account({"name": {1, 2}}), "dict", "cannot be read as JSON")
    # numpy-style integers (__index__) are integers.
    class Index:
        def __index__(self):
            return 2
    assert budget.layout(BASELINE, H200, tp=Index(), sequence_parallel=True)["layout"]["tp"] == 2


def test_wrapped_products_refused():
    # tokens a step 2^20 · 2^32 · 2^20 · 32 wrapped int64 before; the search's SIGFPE killed the interpreter.
    raises_budget_error(lambda: budget.layout(BASELINE, H200, micro_batch_size=2**20, micro_batches=2**20,
                                              seq_len=2**32, dp=32, nodes=4), "layout", "more than the 2^50")
    raises_budget_error(lambda: budget.layout_search(BASELINE, H200, nodes=512, gpus=4096, seq_len=2**50,
                                                     global_batch_tokens=2**50, calibration=PROFILE),
                        "seq_len", "is not in [1, 2^32]")


def test_nul_in_path_refused():
    raises_budget_error(lambda: budget.load_config(BASELINE + "\0.evil"), BASELINE + "\0.evil",
                        "the file name holds a NUL byte")


def test_export_writes_no_code_from_a_name():
    with open(BASELINE) as f:
        config = json.load(f)
    config["name"] = "evil\ntouch pwned_python_export\n#"
    with tempfile.TemporaryDirectory() as work:
        megatron = budget.export(config, to="megatron")["text"]
        path = os.path.join(work, "args.sh")
        with open(path, "w") as f:
            f.write(megatron)
        out = subprocess.run(["bash", "-c", 'source ./args.sh && echo "${#MODEL_ARGS[@]}"'], cwd=work, check=True,
                             capture_output=True, text=True)
        assert int(out.stdout) > 0
        assert os.listdir(work) == ["args.sh"]
    assert megatron.startswith("# Megatron-LM model arguments for evil\\ntouch pwned_python_export\\n# (")
    for target in ("torchtitan", "torch"):
        text = budget.export(config, to=target)["text"]
        ast.parse(text)
        assert "\ntouch pwned_python_export" not in text


def test_layout_search_defaults_to_the_workload_attention():
    found = budget.layout_search(BASELINE, H200, gpus=8, calibration=PROFILE, top=1, run_tokens=1e12)
    assert found["attended_keys"] == 400.0
    assert found["attention"] == "400 mean attended keys a query"
    assert found["run_tokens"] == 1e12
    run = found["layouts"][0]["time"]["run"]
    assert abs(run["steps"] - 1e12 / found["layouts"][0]["time"]["tokens_per_step"]) < 1e-6 * run["steps"]
    causal = budget.layout_search(BASELINE, H200, gpus=8, calibration=PROFILE, top=1, attended_keys=2048.5)
    assert causal["attended_keys"] == 2048.5
    none = budget.layout_search(BASELINE, H200, gpus=8, calibration=PROFILE, top=1, min_headroom=1000)
    assert none["layouts"] == [] and "--min-headroom" in none["no_layout"]


if __name__ == "__main__":
    run_tests(globals())
