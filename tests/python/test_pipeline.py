"""Tests of budget.torch.pipeline, the gloo pipeline executor that proves the schedule of a looped
model (docs/torch.md, "Pipeline executor"; issue 41 item 5).

The tiny looped MoE of tests/python/data/tiny-looped-moe.json (8 layers, layers 3-6 run twice: 12
executed; hidden 32, 4 experts, top-2) runs under the three loop placements at PP 2 and PP 4 on CPU
processes. References: the single-process module's loss and gradients on the whole batch (every
parameter, every copy; max relative difference 1e-5), the planner's in-flight figure
(budget.peak_saved_layer_executions, the C++ simulation of Megatron-Core's schedule) and hand counts
of the saved layer executions below. Run by ctest as python.pipeline (this file's own runner);
skipped where PyTorch is not installed.
"""

import contextlib
import io
import json
import os
import subprocess
import sys

try:
    import torch  # noqa: F401
except ImportError:  # pragma: no cover - CI installs python3-torch
    torch = None
    if "pytest" in sys.modules:
        import pytest
        pytest.skip("PyTorch is not installed (Debian: python3-torch)", allow_module_level=True)

import budget
from budget_test_support import SOURCE, run_tests

TINY = os.path.join(SOURCE, "tests", "python", "data", "tiny-looped-moe.json")


def _runs(pp, cases):
    """Results of make_plan(TINY, pp, **case) for each case, run in one set of pp processes."""
    from budget.torch import pipeline
    plans = [pipeline.make_plan(case.pop("config", TINY), pp, **case) for case in cases]
    return pipeline.run_plans(plans, timeout_s=60)


def _assert_proves_the_schedule(result):
    assert result["max_rel_grad_diff"] <= 1e-5, (result["worst_parameter"], result["max_rel_grad_diff"])
    assert result["loss_rel_diff"] <= 1e-5, result
    assert result["missing_parameters"] == []
    assert result["planner"] == "budget.peak_saved_layer_executions", result["planner"]
    for row in result["ranks"]:
        assert row["peak_saved_layer_executions"] == row["planner_saved_layer_executions"], result["ranks"]
    assert result["passed"], result["checks"]


def _module_parameters():
    import budget.torch as bt
    return bt.parameter_counts(bt.build_model(TINY, device="meta"))["total"]


def _peaks(result):
    return [row["peak_saved_layer_executions"] for row in result["ranks"]]


def test_three_placements_at_pp2():
    tied = dict(json.load(open(TINY)), tie_embeddings=True)
    in_chunk, wrap, replicated, tied_wrap, uneven, unsummed = _runs(2, [
        dict(vp=2, micro_batches=4, loop_placement="in_chunk"), dict(vp=3, micro_batches=4, loop_placement="wrap"),
        dict(vp=1, micro_batches=4, loop_placement="replicated"),
        dict(config=tied, vp=3, micro_batches=2, loop_placement="wrap"),
        dict(vp=2, micro_batches=6, loop_placement="replicated", chunk_layers=[4, 2, 3, 3]),
        dict(vp=1, micro_batches=4, loop_placement="replicated", all_reduce_copies=False)])
    for result in (in_chunk, wrap, replicated, tied_wrap, uneven):
        _assert_proves_the_schedule(result)
    # Tied embeddings: the matrix is the embedding on rank 0 and the LM head on rank 1, all-reduced
    # between them as Megatron's tied embeddings are.
    assert tied_wrap["replicated_other_parameters"] == ["embedding.weight"] and tied_wrap["replicated_layers"] == []
    # The check fails where it should: without the all-reduce each copy of layers 3-6 holds only its
    # own rank's pass (a large difference), and the others still match.
    assert not unsummed["checks"]["gradients"] and not unsummed["passed"]
    assert unsummed["max_rel_grad_diff"] > 0.01, unsummed["max_rel_grad_diff"]
    assert any(f"layers.{i}." in unsummed["worst_parameter"] for i in (2, 3, 4, 5)), unsummed["worst_parameter"]
    # in_chunk: c0 {1} c1 {2} c2 {3-6 twice} c3 {7, 8}; rank 1 runs the whole loop.
    assert in_chunk["chunks"] == [[1], [2], [3, 4, 5, 6, 3, 4, 5, 6], [7, 8]]
    # wrap, the example: c0=r0 {1,2}, c1=r1 {3,4}, c2=r0 {5,6}, c3=r1 {3,4}, c4=r0 {5,6},
    # c5=r1 {7,8}: each rank stores its 4 layers once and runs 6; nothing is all-reduced.
    assert wrap["chunks"] == [[1, 2], [3, 4], [5, 6], [3, 4], [5, 6], [7, 8]]
    assert [row["stored_layers"] for row in wrap["ranks"]] == [[1, 2, 5, 6], [3, 4, 7, 8]]
    assert [row["executed_layers"] for row in wrap["ranks"]] == [6, 6]
    assert wrap["replicated_layers"] == [] and wrap["all_reduce_groups"] == []
    # Each tensor stored once over the ranks under in_chunk and wrap: the module's parameter count.
    assert sum(row["stored_parameters"] for row in wrap["ranks"]) == _module_parameters()
    assert sum(row["stored_parameters"] for row in in_chunk["ranks"]) == _module_parameters()
    # Hand count (Megatron's interleaved schedule, m = 4, V = 3, groups of P = 2 micro-batches): rank 0
    # warms up with 2·(2 − 0 − 1) + (3 − 1)·2 = 6 forwards of 2-layer chunks (12 saved), then each
    # steady step's forward adds one more before its backward: 14. Rank 1: 0 + 4 warm-up forwards, 8,
    # then 10.
    assert _peaks(wrap) == [14, 10]
    # replicated: c0=r0 {1..6}, c1=r1 {3..6, 7, 8}: layers 3-6 stored on both ranks, their gradients
    # all-reduced between them; every copy equals the single-process gradient.
    assert [row["stored_layers"] for row in replicated["ranks"]] == [[1, 2, 3, 4, 5, 6], [3, 4, 5, 6, 7, 8]]
    assert replicated["all_reduce_groups"] == [[0, 1]]
    assert replicated["replicated_layers"] == [3, 4, 5, 6] and replicated["replicated_other_parameters"] == []
    assert sum(row["stored_parameters"] for row in replicated["ranks"]) > _module_parameters()
    # Non-interleaved 1F1B: rank s keeps min(P − s, m) micro-batches: 2 × 6 and 1 × 6.
    assert _peaks(replicated) == [12, 6]
    # An uneven split, m = 6 (three groups of P): c0=r0 {1..4}, c1=r1 {5, 6}, c2=r0 {3, 4, 5},
    # c3=r1 {6, 7, 8}. Layers 3, 4 run twice on rank 0 and 6 twice on rank 1 (one copy each); only
    # layer 5 has copies on both ranks. Rank 0 (chunks of 4 and 3 layers): 4 warm-up forwards
    # (4 + 4 + 3 + 3 = 14), then steady forwards add 4, 4, 3, 3, ... and backwards free 3, 3, 4, 4, ...:
    # 18, 15, 19, 16, 19, 15, 18, ...: a peak of 19.
    assert uneven["replicated_layers"] == [5] and uneven["all_reduce_groups"] == [[0, 1]]
    assert _peaks(uneven)[0] == 19


def test_three_placements_at_pp4():
    in_chunk, wrap, replicated = _runs(4, [dict(vp=1, micro_batches=4, loop_placement="in_chunk"),
                                           dict(vp=3, micro_batches=4, loop_placement="wrap"),
                                           dict(vp=1, micro_batches=4, loop_placement="replicated")])
    for result in (in_chunk, wrap, replicated):
        _assert_proves_the_schedule(result)
    # Non-interleaved 1F1B with chunks of 1, 1, 8, 2 layers: min(4 − s, 4) micro-batches on rank s.
    assert in_chunk["chunk_layers"] == [1, 1, 8, 2]
    assert _peaks(in_chunk) == [4 * 1, 3 * 1, 2 * 8, 1 * 2]
    # wrap at PP 4 needs V = 3: {1} {2} | {3} {4} {5} {6} | {3} {4} {5} {6} | {7} {8}; loop layer j of
    # pass 2 is chunk c + 4, on the rank of pass 1's.
    assert wrap["chunk_layers"] == [1] * 12
    assert [row["stored_layers"] for row in wrap["ranks"]] == [[1, 5], [2, 6], [3, 7], [4, 8]]
    assert wrap["replicated_layers"] == []
    assert sum(row["stored_parameters"] for row in wrap["ranks"]) == _module_parameters()
    # replicated: {1,2,3} {4,5,6} {3,4,5} {6,7,8}: copies of layer 3 on ranks 0, 2, of 4 and 5 on
    # 1, 2 and of 6 on 1, 3: three overlapping all-reduce groups.
    assert replicated["all_reduce_groups"] == [[0, 2], [1, 2], [1, 3]]
    assert replicated["replicated_layers"] == [3, 4, 5, 6]


def test_refusals_name_the_argument_and_what_is_allowed():
    from budget.torch import pipeline
    cases = [
        (dict(pp=4, vp=2, micro_batches=4, loop_placement="wrap"), "--vp", "allowed vp: 3"),
        (dict(pp=2, vp=2, micro_batches=3), "--micro-batches", "a multiple of pp"),
        (dict(pp=2, vp=3, micro_batches=2, loop_placement="wrap", chunk_layers=[2, 3, 1, 2, 2, 2]), "--chunk-layers",
         "every pass the same way"),
        (dict(pp=2, vp=1, micro_batches=2, chunk_layers=[6, 6]), "--chunk-layers", "in_chunk keeps"),
        (dict(pp=1), "--pp", "allowed: an integer, 2..32"),
        (dict(pp=8, vp=2, micro_batches=8, loop_placement="in_chunk"), "--vp", "pp x vp <= 5"),
        (dict(pp=2, loop_placement="ring"), "--loop-placement", "in_chunk, wrap, replicated"),
    ]
    for kwargs, argument, allowed in cases:
        try:
            pipeline.make_plan(TINY, **kwargs)
        except budget.Error as error:
            assert error.source == argument and allowed in str(error), (kwargs, str(error))
        else:
            raise AssertionError(f"{kwargs} was accepted")
    big = dict(json.load(open(TINY)), hidden_size=1024)
    big["attention"] = {"num_heads": 8, "head_dim": 128}
    try:
        pipeline.make_plan(big, 2, loop_placement="wrap", vp=3)
    except budget.Error as error:
        assert "allowed: at most 20,000,000" in str(error), str(error)
    else:
        raise AssertionError("a 37M-parameter config was accepted")
    loopless = json.load(open(TINY))
    del loopless["loop"]
    try:
        pipeline.make_plan(loopless, 2, loop_placement="wrap")
    except budget.Error as error:
        assert "has no loop" in str(error)
    else:
        raise AssertionError("wrap without a loop was accepted")


def test_command_prints_the_json_and_checks():
    env = dict(os.environ)
    command = [sys.executable, "-m", "budget.torch.pipeline", TINY, "--pp", "2", "--vp", "3", "--micro-batches", "2",
               "--loop-placement", "wrap", "--check"]
    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    result = json.loads(out.stdout)
    assert result["schema_version"] == 1 and result["schedule"] == "interleaved 1F1B"
    assert result["max_rel_grad_diff"] <= 1e-5
    # m = 2 = P: all 6 forwards of rank 0 are warm-up (2 + 4 = 6 ≥ m·V): 6 × 2 layers; rank 1's
    # 4 warm-up forwards and one steady forward: 5 × 2.
    assert _peaks(result) == [12, 10]
    assert out.returncode == (0 if result["passed"] else 1), out.stderr
    assert result["checks"]["saved_layer_executions"] is True, (result["planner"], out.stderr)
    # A V that wrap cannot fill: exit 2, one line on stderr, nothing on stdout (main() in this process).
    from budget.torch import pipeline
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = pipeline.main(command[3:-1] + ["--vp", "2"])
    assert status == 2 and out.getvalue() == "", (status, out.getvalue())
    assert err.getvalue().startswith("python3 -m budget.torch.pipeline: error: --vp: wrap splits each of the loop's "
                                     "2 passes of 4 layers into a multiple of pp = 2 chunks"), err.getvalue()


if __name__ == "__main__":
    if torch is None:
        print("skipped: PyTorch is not installed (Debian: python3-torch)", file=sys.stderr)
        sys.exit(0)
    run_tests(globals())
