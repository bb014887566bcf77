"""Tests of the Python module `budget` (run by ctest: pytest when installed, else plain asserts).

References are the same as the C++ tests': the paper's 200M baseline has 3,872,226,560
non-embedding parameters (docs/accounting.md, "Worked example"), its row #1 is hidden 1008,
6x168 heads (1 KV head), 288x368 experts, loop 4-9 x2 (README; on the whole lattice, tightest
first: hidden 1680, 20x84, 712x88) with all_trainable_shapes=True (--all-trainable-shapes), and the
dicts equal budget-match's JSON. Without a kernel target both default to the portable set (issue 43,
docs/kernels.md): on the 200M baseline its row #1 is hidden 1152, 9x128 heads (1 KV head), 320x288
experts, loop 4-9 (KV -25%: the README).
"""

import json
import os
import subprocess

import budget
from budget_test_support import SOURCE, CLI, BASELINE, MIXTRAL, PROFILE, run_tests


def test_load_and_account_native_file():
    config = budget.load_config(BASELINE)
    assert config.name == "paper-200M-S95-baseline"
    assert not config.is_hugging_face
    b = budget.account(config)
    assert b["params"]["non_embedding_total"] == 3_872_226_560
    # A path and a dict give the same answer as a Config.
    assert budget.account(BASELINE) == b
    with open(BASELINE) as f:
        assert budget.account(json.load(f)) == b


def test_account_matches_cli_report():
    if not CLI:
        return
    out = subprocess.run([CLI, "report", BASELINE, "--format", "json"], check=True, capture_output=True, text=True)
    report = json.loads(out.stdout)
    b = budget.account(BASELINE)
    for key in b:
        assert report[key] == b[key], key


def test_hugging_face_dict_and_file():
    with open(MIXTRAL) as f:
        doc = json.load(f)
    config = budget.load_config(doc)
    assert config.is_hugging_face
    assert config.to_dict()["ffn"]["num_experts"] == 8
    total = budget.account(MIXTRAL)["params"]["non_embedding_total"]
    assert total == budget.account(doc)["params"]["non_embedding_total"]


def test_match_is_the_cli_json():
    result = budget.match(BASELINE, top=1, all_trainable_shapes=True)
    assert result["summary"]["feasible"]
    best = result["candidates"][0]
    assert best["config"]["hidden_size"] == 1008
    assert best["config"]["ffn"]["num_experts"] == 288
    assert best["config"]["loop"] == {"first": 4, "last": 9, "repeats": 2}
    assert result["summary"]["shapes"] == "trainable"
    # The whole lattice, tightest first (--free-shapes --order tightest), as before issue 30.
    free = budget.match(BASELINE, top=1, free_shapes=True, order="tightest")
    assert free["candidates"][0]["config"]["hidden_size"] == 1680
    assert free["candidates"][0]["config"]["ffn"]["num_experts"] == 712
    assert free["summary"]["shapes"] == "free"
    # The constraints key does the same.
    assert budget.match(BASELINE, top=1, constraints={"free_shapes": True, "order": "tightest"})["candidates"] == \
        free["candidates"]
    if CLI:
        out = subprocess.run([CLI, "--baseline", BASELINE, "--all-trainable-shapes", "--top", "1", "--format", "json"], check=True,
                             capture_output=True, text=True)
        cli = json.loads(out.stdout)
        assert cli["candidates"] == result["candidates"]
    # Explicit loop, as a string and as a tuple.
    assert budget.match(BASELINE, loop="3-10", top=1)["candidates"][0]["config"]["loop"]["first"] == 3
    assert budget.match(BASELINE, loop=(3, 10), top=1)["candidates"][0]["config"]["loop"]["last"] == 10


def test_export_any_row_of_a_match():
    # export(result, row=N) is --out N's row: row 2 of a 2% tolerance (several rows), and row 1 by default.
    result = budget.match(BASELINE, top=3, constraints={"tolerance": 0.02})
    assert len(result["candidates"]) >= 2
    second = budget.export(result, to="native", row=2)
    assert json.loads(second["text"])["hidden_size"] == result["candidates"][1]["config"]["hidden_size"]
    first = budget.export(result, to="native")
    assert json.loads(first["text"])["hidden_size"] == result["candidates"][0]["config"]["hidden_size"]
    for bad in (0, 4, "2", True):
        try:
            budget.export(result, to="native", row=bad)
        except budget.Error as e:
            assert e.source == "row", e
        else:
            raise AssertionError(f"row={bad!r} was accepted")
    try:
        budget.export(BASELINE, row=1)
    except budget.Error as e:
        assert e.source == "row" and "match result" in e.message
    else:
        raise AssertionError("row was accepted for a plain config")
    try:
        budget.match(BASELINE, order="widest")
    except budget.Error as e:
        assert e.source == "order"
    else:
        raise AssertionError("order='widest' was accepted")


def test_match_count_lm_head_through_the_constraints_dict():
    # Mixtral-8x7B (V 32,000, H 4096): the LM head's training FLOPs are 3 passes of 2·H·V per token.
    plain = budget.match(MIXTRAL, top=1, all_trainable_shapes=True)
    with_head = budget.match(MIXTRAL, top=1, constraints={"count_lm_head": True}, all_trainable_shapes=True)
    assert not plain["summary"]["lm_head_in_flops"] and with_head["summary"]["lm_head_in_flops"]
    assert with_head["baseline"]["lm_head_training_flops_per_token"] == 3 * 2 * 4096 * 32000
    for result, key in ((plain, "flops_without_lm_head"), (with_head, "flops_with_lm_head")):
        d = result["candidates"][0]["deviation"]
        assert d["flops"] == d[key]
    if CLI:
        out = subprocess.run([CLI, "--baseline", MIXTRAL, "--all-trainable-shapes", "--top", "1", "--count-lm-head", "--format", "json"],
                             check=True, capture_output=True, text=True)
        assert json.loads(out.stdout)["candidates"] == with_head["candidates"]


def test_grid_paper():
    g = budget.grid(all_trainable_shapes=True)
    assert len(g["cells"]) == 16
    assert all(cell["matched"] is not None for cell in g["cells"])
    assert g["schema_version"] == budget.schema_version
    if CLI:
        out = subprocess.run([CLI, "grid", "--all-trainable-shapes", "--format", "json"], check=True, capture_output=True, text=True)
        cli = json.loads(out.stdout)
        assert [c["matched"] for c in cli["cells"]] == [c["matched"] for c in g["cells"]]
        assert [c["paper_max_deviation"] for c in cli["cells"]] == [c["paper_max_deviation"] for c in g["cells"]]
        assert cli["loop"] == g["loop"] and cli["workload"] == g["workload"]


def test_grid_free_shapes_and_order():
    # grid(free_shapes=, order=) as grid --free-shapes --order (issue 30): every cell's search space and
    # row order say so, each cell's row #1 is match()'s with the same options, and equals the CLI's.
    g = budget.grid(free_shapes=True, order="tightest")
    assert all(cell["shapes"] == "free" and cell["order"] != "proportions" for cell in g["cells"])
    assert all(cell["shapes"] == "portable" and cell["order"] == "proportions" for cell in budget.grid()["cells"])
    cell = json.load(open(os.path.join(SOURCE, "examples", "grids", "paper_grid.json")))["cells"][6]
    direct = budget.match(cell["baseline"], loop=tuple(cell["loop_layers_1based"]), top=1, free_shapes=True,
                          order="tightest")
    assert g["cells"][6]["matched"] == direct["candidates"][0]
    if CLI:
        out = subprocess.run([CLI, "grid", "--free-shapes", "--order", "tightest", "--format", "json"], check=True,
                             capture_output=True, text=True)
        assert [c["matched"] for c in json.loads(out.stdout)["cells"]] == [c["matched"] for c in g["cells"]]
    try:
        budget.grid(order="widest")
    except budget.Error as error:
        assert error.source == "order" and "widest" in str(error)
    else:
        raise AssertionError("grid(order='widest'): no budget.Error")


def test_grid_with_constraints():
    # hidden sizes multiples of 128 in every cell: each cell's match obeys it, equals the CLI's
    # grid --constraints, and a constraint over a cell's own defaults is refused with the key named.
    constraints = {"hidden_size": {"multiple_of": 128}}
    g = budget.grid(constraints=constraints, all_trainable_shapes=True)
    assert all(cell["matched"]["config"]["hidden_size"] % 128 == 0 for cell in g["cells"] if cell["matched"])
    unconstrained = budget.grid(all_trainable_shapes=True)
    assert [c["matched"] for c in g["cells"]] != [c["matched"] for c in unconstrained["cells"]]
    if CLI:
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(constraints, f)
        try:
            out = subprocess.run([CLI, "grid", "--all-trainable-shapes", "--constraints", f.name, "--format", "json"], check=True,
                                 capture_output=True, text=True)
            assert [c["matched"] for c in json.loads(out.stdout)["cells"]] == [c["matched"] for c in g["cells"]]
            assert budget.grid(constraints=f.name, all_trainable_shapes=True) == g
        finally:
            os.unlink(f.name)
    try:
        budget.grid(constraints={"hidden_size": {"multiple_off": 64}})
    except budget.Error as error:
        assert error.source == "constraints" and "multiple_off" in str(error)
    else:
        raise AssertionError("an unknown constraints key was accepted")


def test_export_targets():
    best = budget.match(BASELINE, top=1, all_trainable_shapes=True)["candidates"][0]["config"]
    megatron = budget.export(best, to="megatron")
    assert "--hidden-size 1008\n" in megatron["text"]
    assert any(note.startswith("the loop (layers 4-9") for note in megatron["not_expressed"])
    titan = budget.export(best, to="torchtitan")["text"]  # a Python module (docs/export.md)
    assert "\nDIM = 1008\n" in titan and "\ndef budget_config(" in titan
    compile(titan, "torchtitan_export.py", "exec")
    hf = budget.export(best, to="hf")
    doc = json.loads(hf["text"])
    assert doc["budget_loop"] == {"first": 4, "last": 9, "repeats": 2}
    # Round trip: the exported HF document gives the same budgets as the matched config.
    assert budget.account(doc) == budget.account(best)
    # An HF input keeps its other keys.
    mixtral = budget.load_config(MIXTRAL)
    kept = json.loads(budget.export(mixtral, to="hf")["text"])
    assert kept["rope_theta"] == 1e6


def test_predict_time_is_the_cli_report_time():
    profile = os.path.join(SOURCE, "cuda_profiler", "profiles", "h200-torch-eager.json")
    t = budget.predict_time(BASELINE, profile)
    assert t["seconds_per_step"] > 0 and 0 < t["mfu"] < 1
    # Beside the time: does it fit one GPU of the profile's kind (its capacity from the example cluster).
    assert t["fits_one_gpu"] is True
    assert t["one_gpu_memory"]["capacity_source"] == "cluster_example"
    assert 0 < t["one_gpu_memory"]["needed_bytes"] < t["one_gpu_memory"]["capacity_bytes"]
    if CLI:
        out = subprocess.run([CLI, "report", BASELINE, "--calibration", profile, "--format", "json"], check=True,
                             capture_output=True, text=True)
        assert json.loads(out.stdout)["time"] == t
    with open(profile) as f:
        assert budget.predict_time(BASELINE, json.load(f))["seconds_per_step"] == t["seconds_per_step"]


def test_export_with_hf_template():
    qwen = os.path.join(SOURCE, "examples", "hf", "qwen1.5-moe-a2.7b.json")
    best = budget.match(qwen, top=1)["candidates"][0]
    hf = budget.export(best["config"], to="hf", hf_template=qwen)
    doc = json.loads(hf["text"])
    with open(qwen) as f:
        original = json.load(f)
    assert doc["model_type"] == original["model_type"] and doc["rope_theta"] == original["rope_theta"]
    assert doc["hidden_size"] == best["config"]["hidden_size"]
    assert budget.account(doc) == best["budgets"]
    try:
        budget.export(best["config"], to="hf", hf_template=BASELINE)
    except budget.Error as e:
        assert e.source == "hf_template"
    else:
        raise AssertionError("a native template was accepted")


def test_errors_carry_source_and_path():
    bad = {"name": "x", "hidden_size": 64, "num_layers": 2, "attention": {"num_heads": 4, "head_dim": 16},
           "ffn": {"num_experts": 8, "top_k": 20, "expert_dim": 32}}
    try:
        budget.account(bad)
    except budget.Error as e:
        assert e.path == "/ffn/top_k", e.path
        assert e.source == "config"
        assert e.value == 20
        assert "allowed" in e.message
    else:
        raise AssertionError("no budget.Error")
    # The value is found in a file too.
    bad_file = os.path.join(SOURCE, "tests", "data", "match", "typo.json")
    try:
        budget.match(BASELINE, constraints=bad_file)
    except budget.Error as e:
        assert e.file == bad_file and e.path == "/hidden_size/multiple_off"
        assert e.value is not None
    else:
        raise AssertionError("no budget.Error")
    try:
        budget.load_config(os.path.join(SOURCE, "no-such-file.json"))
    except budget.Error as e:
        assert e.file.endswith("no-such-file.json")
        assert "no such file" in e.message
    else:
        raise AssertionError("no budget.Error")
    try:
        budget.export(BASELINE, to="onnx")
    except budget.Error as e:
        assert e.source == "to"
    else:
        raise AssertionError("no budget.Error")
    assert issubclass(budget.Error, ValueError)


def test_loop_arguments_are_checked():
    """Audit 3 (issue 23) and issue 17: loop specs that used to raise IndexError/RuntimeError or
    silently return an unlooped match are budget.Error naming the argument."""
    bad = [
        (dict(loop="99999999999999999999-1"), "loop"),
        (dict(loop=(2**70, 5)), "loop"),
        (dict(loop=[2**70, 5]), "loop"),
        (dict(loop=(-(2**70), 5)), "loop"),
        (dict(loop=("a", "b")), "loop"),
        (dict(loop=["a", "b"]), "loop"),
        (dict(loop=(4.0, 9)), "loop"),
        (dict(loop=(True, 9)), "loop"),
        (dict(loop=(4, 9, 2)), "loop"),
        (dict(loop=[4]), "loop"),
        (dict(loop=(0, 5)), "loop"),
        (dict(loop=(5, 3)), "loop"),
        (dict(loop=(1, 2**31)), "loop"),
        (dict(loop=(4, 13)), "loop"),  # the baseline has 12 layers
        (dict(loop="4-13"), "loop"),
        (dict(loop={4, 9}), "loop"),
        (dict(repeats=-1), "repeats"),
        (dict(repeats=0), "repeats"),
        (dict(repeats=1025), "repeats"),
        (dict(span_fraction=-1.0), "span_fraction"),
        (dict(span_fraction=0.0), "span_fraction"),
        (dict(span_fraction=float("nan")), "span_fraction"),
        (dict(span_fraction=1.5), "span_fraction"),
    ]
    for kwargs, argument in bad:
        try:
            budget.match(BASELINE, **kwargs)
        except budget.Error as e:
            assert e.source == argument, (kwargs, e.source, e.message)
            assert str(e).startswith(argument + ": "), (kwargs, str(e))
        else:
            raise AssertionError(f"no budget.Error for {kwargs}")
    for kwargs, argument in [(dict(repeats=0), "repeats"), (dict(span_fraction=0.0), "span_fraction")]:
        try:
            budget.grid(**kwargs)
        except budget.Error as e:
            assert e.source == argument, (kwargs, e.source)
        else:
            raise AssertionError(f"grid: no budget.Error for {kwargs}")


def test_loop_as_list_is_the_tuple():
    as_tuple = budget.match(BASELINE, loop=(3, 10), top=2)
    assert budget.match(BASELINE, loop=[3, 10], top=2) == as_tuple
    assert budget.match(BASELINE, loop="3-10", top=2) == as_tuple
    assert as_tuple["candidates"][0]["config"]["loop"] == {"first": 3, "last": 10, "repeats": 2}
    # repeats 1 is no loop (allowed, as --repeats 1); the full stack is a valid range.
    assert budget.match(BASELINE, loop=[1, 12], top=1)["candidates"][0]["config"]["loop"]["last"] == 12


def test_error_is_a_value_error():
    assert issubclass(budget.Error, ValueError)
    try:
        budget.match(BASELINE, loop=("a", "b"))
    except ValueError as e:
        assert isinstance(e, budget.Error) and e.source == "loop" and e.path == "" and e.value is None
        assert "allowed" in e.message
    else:
        raise AssertionError("no ValueError")
    try:
        budget.account({"hidden_size": -1})
    except ValueError as e:
        assert e.source == "config" and e.path.startswith("/")
    else:
        raise AssertionError("no ValueError")


def _cli_match(*args):
    # The CLI's defaults (the portable set without --gpu), which Python's are.
    out = subprocess.run([CLI, "--baseline", BASELINE, "--format", "json", *args], check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout)


def _same_as_cli(result, cli):
    """Every key budget.match() returns is the CLI's, with the same value (the CLI adds only its
    schema keys)."""
    for key in result:
        assert cli[key] == result[key], key
    assert set(cli) - set(result) <= {"schema_version", "tool", "tool_version", "kind"}, set(cli) - set(result)


def test_match_with_calibration_is_the_cli_json():
    timed = budget.match(BASELINE, top=3, calibration=PROFILE)
    assert timed["time"]["rank_by"] == "budget" and timed["time"]["max_time_ratio"] is None
    assert all(c["time_ratio"] > 0 for c in timed["candidates"])
    assert timed["summary"]["timed"] >= timed["summary"]["equally_matched"]["count"] >= 1
    # With or without a profile, summary.equally_matched is the same object (its bounds), plus the count.
    plain = budget.match(BASELINE, top=3)["summary"]["equally_matched"]
    assert {k: v for k, v in timed["summary"]["equally_matched"].items() if k != "count"} == plain
    # The trainable defaults are kernel-ready already: no aligned alternative is searched; on the
    # whole lattice there is one.
    assert "aligned_alternative" not in timed
    assert "aligned_alternative" in budget.match(BASELINE, top=1, free_shapes=True)
    with open(PROFILE) as f:
        assert budget.match(BASELINE, top=3, calibration=json.load(f)) == timed
    by_time = budget.match(BASELINE, top=3, calibration=PROFILE, rank_by="time")
    assert by_time["time"]["rank_by"] == "time"
    # Ranked by time: the candidates within the model's ± of the fastest come first, equal in time
    # as far as the model can tell (so the first is within that ± of the fastest shown).
    ratios = [c["time_ratio"] for c in by_time["candidates"]]
    assert ratios[0] <= min(ratios) + by_time["time"]["fastest_ratio_half_width"], ratios
    assert by_time["summary"]["order"] in ("predicted_time", "predicted_time_within_accuracy")
    capped = budget.match(BASELINE, top=3, calibration=PROFILE, rank_by="time", max_time_ratio=1.5)
    assert capped["time"]["max_time_ratio"] == 1.5
    assert all(c["time_ratio"] <= 1.5 for c in capped["candidates"])
    flash = budget.match(BASELINE, top=1, calibration=PROFILE, attention_backend="flash")
    assert "flash" in json.dumps(flash["time"]["baseline"]["attention_backend"]), flash["time"]["baseline"]
    if CLI:
        _same_as_cli(timed, _cli_match("--top", "3", "--calibration", PROFILE))
        _same_as_cli(by_time, _cli_match("--top", "3", "--calibration", PROFILE, "--rank-by", "time"))
        _same_as_cli(capped, _cli_match("--top", "3", "--calibration", PROFILE, "--rank-by", "time",
                                        "--max-time-ratio", "1.5"))
        _same_as_cli(flash, _cli_match("--top", "1", "--calibration", PROFILE, "--attention-backend", "flash"))


def test_match_explain_and_align_are_the_cli_json():
    explained = budget.match(BASELINE, top=2, explain=True)
    assert explained["sensitivity"] and "alignment" not in explained
    explained_timed = budget.match(BASELINE, top=2, explain=True, calibration=PROFILE)
    assert explained_timed["alignment"] and explained_timed["alignment"][0]["alignment"] == "as given"
    aligned = budget.match(BASELINE, top=2, align=8)
    assert "aligned_alternative" not in aligned
    for c in aligned["candidates"]:
        assert c["config"]["hidden_size"] % 8 == 0 and c["config"]["attention"]["head_dim"] % 8 == 0
        assert c["off_kernel_path"] == [], c["off_kernel_path"]
    assert "sensitivity" not in budget.match(BASELINE, top=1)
    if CLI:
        _same_as_cli(explained, _cli_match("--top", "2", "--explain"))
        _same_as_cli(explained_timed, _cli_match("--top", "2", "--explain", "--calibration", PROFILE))
        _same_as_cli(aligned, _cli_match("--top", "2", "--align", "8"))


def test_match_options_are_checked():
    bad = [
        (dict(rank_by="time"), "rank_by"),  # needs calibration
        (dict(rank_by="speed", calibration=PROFILE), "rank_by"),
        (dict(max_time_ratio=1.2), "max_time_ratio"),  # needs calibration
        (dict(max_time_ratio=0.0, calibration=PROFILE), "max_time_ratio"),
        (dict(max_time_ratio=-1, calibration=PROFILE), "max_time_ratio"),
        (dict(max_time_ratio=float("nan"), calibration=PROFILE), "max_time_ratio"),
        (dict(max_time_ratio=float("inf"), calibration=PROFILE), "max_time_ratio"),
        (dict(max_time_ratio="1.2", calibration=PROFILE), "max_time_ratio"),
        (dict(attention_backend="flash"), "attention_backend"),  # needs calibration
        (dict(align=-8), "align"),
        (dict(align=5000), "align"),
        (dict(calibration=3), "calibration"),
        (dict(calibration=os.path.join(SOURCE, "no-such-profile.json")), os.path.join(SOURCE, "no-such-profile.json")),
    ]
    for kwargs, argument in bad:
        try:
            budget.match(BASELINE, top=1, **kwargs)
        except budget.Error as e:
            assert e.source == argument, (kwargs, e.source, e.message)
        else:
            raise AssertionError(f"no budget.Error for {kwargs}")


def test_hybrid_state_beside_kv():
    # Qwen3-Next-80B-A3B (tests/data/hf): 36 Gated DeltaNet layers keep 32·128·128 + 8192·3 state
    # elements each per sequence, beside the KV cache of its 12 full-attention layers (2·2·256 each).
    qwen3_next = os.path.join(SOURCE, "tests", "data", "hf", "qwen3-next-80b-a3b-thinking.json")
    b = budget.account(qwen3_next)
    assert b["recurrent_state"]["elements_per_sequence"] == 36 * 548_864
    assert b["kv_cache"]["elements_per_token"] == 12 * 1_024
    # A config without linear attention or Mamba-2 has no such key.
    assert "recurrent_state" not in budget.account(BASELINE)
    config = budget.load_config(qwen3_next).to_dict()
    assert config["layer_mixers"].count("linear_attention") == 36


if __name__ == "__main__":
    run_tests(globals())
