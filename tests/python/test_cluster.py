"""Tests of budget.layout, budget.layout_search and budget.match(cluster=...) (docs/cluster.md): the
dicts equal budget-match's JSON (layout, layout --gpus N, --cluster ... --rank-by time), the keys the
issue lists, loops (weights once, activations per execution), and errors as budget.Error.
Run by ctest (pytest when installed, else this file's own runner)."""

import json
import os
import subprocess

import budget
from budget_test_support import SOURCE, CLI, BASELINE, SMELT, MIXTRAL, H200, PROFILE, raises_budget_error, run_tests

# The H200 example without its profile (gpu.compute.datasheet only): the refusals that need one.
H200_DATASHEET = os.path.join(SOURCE, "tests", "data", "clusters", "h200-datasheet-only.json")


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


def test_layout_bridge_config():
    """budget.layout(bridge_config=FILE.yaml, gpus=N) reads a Megatron-Bridge config as the same recipe as its
    Megatron-LM arguments (issue 42 item 3; tests/data/bridge/README.md), and the two keywords exclude each other."""
    qwen3 = os.path.join(SOURCE, "tests", "data", "hf", "qwen3-30b-a3b.json")
    h100 = os.path.join(SOURCE, "examples", "clusters", "h100-sxm.json")
    yaml = os.path.join(SOURCE, "tests", "data", "bridge", "qwen3_30b_a3b_h100_bf16_n16.yaml")
    r = budget.layout(qwen3, h100, gpus=16, nodes=2, bridge_config=yaml)
    assert r["layout"]["ep"] == 16 and r["layout"]["micro_batches"] == 64
    assert any(line.startswith("env_vars.CUDA_DEVICE_MAX_CONNECTIONS") for line in r["megatron_args"]["read_not_modelled"])
    try:
        budget.layout(qwen3, h100, gpus=16, nodes=2, bridge_config=yaml, megatron_args=yaml)
        assert False, "no error"
    except budget.Error as e:
        assert "bridge_config" in str(e)


def test_bridge_config_kernel_settings_equal_cli():
    """A Bridge config's CUDA graphs (the router graphed) and dispatcher settings price budget.layout and
    match(cluster=) as the CLI prices them (issue 42); match on a cluster read a Bridge config's FP8 recipe
    as Megatron-LM arguments before, refusing the YAML."""
    qwen3 = os.path.join(SOURCE, "tests", "data", "hf", "qwen3-30b-a3b.json")
    h100 = os.path.join(SOURCE, "examples", "clusters", "h100-sxm.json")
    yaml = os.path.join(SOURCE, "tests", "data", "bridge", "qwen3_30b_a3b_h100_bf16_n16.yaml")
    profile = os.path.join(SOURCE, "cuda_profiler", "profiles", "h100-sxm-published.json")
    r = budget.layout(qwen3, h100, gpus=16, nodes=2, bridge_config=yaml, calibration=profile)
    m = budget.match(qwen3, top=2, calibration=profile, rank_by="time", cluster=h100, gpus=16, nodes=2,
                     bridge_config=yaml)
    assert m["cluster"]["team_layout"] == "TP1 CP1 PP1 DP16 EP16 ETP1 b1 m64 none dist-opt"
    if not CLI:
        return
    out = subprocess.run([CLI, "layout", qwen3, "--cluster", h100, "--nodes", "2", "--gpus", "16", "--bridge-config",
                          yaml, "--profile", profile, "--format", "json"], capture_output=True, text=True)
    assert json.loads(out.stdout)["time"]["seconds_per_step"] == r["time"]["seconds_per_step"]
    out = subprocess.run([CLI, "--baseline", qwen3, "--calibration", profile, "--rank-by", "time", "--cluster", h100,
                          "--nodes", "2", "--gpus", "16", "--top", "2", "--bridge-config", yaml, "--format", "json"],
                         check=True, capture_output=True, text=True)
    cli = json.loads(out.stdout)["cluster"]
    assert cli["team_baseline"]["ratio_to_baseline"] == m["cluster"]["team_baseline"]["ratio_to_baseline"]


def test_layout_megatron_args():
    """budget.layout(megatron_args=FILE, gpus=N) prices Megatron-LM's arguments as the CLI does, and the
    native keywords express the same layout (issue 31)."""
    args = os.path.join(SOURCE, "examples", "megatron", "kimi-k2-1024-h100.args")
    kimi = os.path.join(SOURCE, "tests", "data", "hf", "kimi-k2.json")
    h100 = os.path.join(SOURCE, "examples", "clusters", "h100-sxm.json")
    r = budget.layout(kimi, h100, gpus=1024, nodes=128, megatron_args=args)
    assert r["layout"]["pipeline_layout"] == "Et|(tt|)*30L" and r["layout"]["virtual_stages"] == 2
    assert "--pipeline-model-parallel-layout" in r["megatron_args"]["modelled"]
    native = budget.layout(kimi, h100, gpus=1024, nodes=128, tp=8, sequence_parallel=True, pp=16, ep=64, etp=1,
                           pipeline_layout="Et|(tt|)*30L", micro_batch_size=1, micro_batches=1024,
                           recompute="selective:mla_up_proj,mlp", distributed_optimizer=True,
                           cross_entropy_fusion=True, vocab_divisible_by=128, grad_reduce_in_bf16=True,
                           moe_permute_fusion=True, moe_grouped_gemm=True)
    assert native["memory"] == r["memory"]
    if CLI:
        # One JSON form of what was read (render::megatron_read_json): Python's is the CLI's, commit included.
        out = subprocess.run([CLI, "layout", kimi, "--cluster", h100, "--gpus", "1024", "--nodes", "128",
                              "--megatron-args", args, "--format", "json"], check=True, capture_output=True, text=True)
        assert json.loads(out.stdout)["megatron_args"] == r["megatron_args"]
        assert r["megatron_args"]["commit"].startswith("d98e8a64")
    try:
        budget.layout(kimi, h100, gpus=1024, nodes=128, fp8="fp4")
        assert False, "no error"
    except budget.Error as e:
        assert "fp8" in str(e) and "mxfp8" in str(e)


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


def _cli_json(*args):
    out = subprocess.run([CLI, *args, "--format", "json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def _same_as_cli(result, cli):
    """Every key the binding returns is the CLI's, with the same value; the CLI adds only its schema keys."""
    for key in result:
        assert cli[key] == result[key], key
    assert set(cli) - set(result) <= {"schema_version", "budget_version"}, set(cli) - set(result)


def test_layout_search():
    r = budget.layout_search(SMELT, H200, gpus=8, calibration=PROFILE, global_batch_tokens=8 * 4096 * 4, top=3)
    assert r["gpus"] == 8 and r["global_batch_tokens"] == 8 * 4096 * 4
    assert r["enumerated"] >= r["valid"] >= r["fitting"] >= len(r["layouts"]) == 3
    seconds = [item["time"]["seconds_per_step"] for item in r["layouts"]]
    assert seconds == sorted(seconds)
    for item in r["layouts"]:
        assert item["layout"]["gpus"] == 8 and item["memory"]["fits"]
        assert set(item["time"]) >= {"seconds_per_step", "tokens_per_second_per_gpu", "mfu", "by_component"}
    if CLI:
        _same_as_cli(r, _cli_json("layout", SMELT, "--cluster", H200, "--gpus", "8", "--profile", PROFILE,
                                  "--global-batch-tokens", str(8 * 4096 * 4), "--top", "3"))
        mixtral = budget.layout_search(MIXTRAL, H200, gpus=16, nodes=2, calibration=PROFILE, top=2,
                                       global_batch_tokens=1 << 20)
        _same_as_cli(mixtral, _cli_json("layout", MIXTRAL, "--cluster", H200, "--nodes", "2", "--gpus", "16",
                                        "--profile", PROFILE, "--top", "2", "--global-batch-tokens", str(1 << 20)))


def test_match_on_a_cluster():
    # A 2% tolerance: several equally matched candidates (the 0.25% default leaves one here).
    tolerance = os.path.join(SOURCE, "tests", "data", "match", "tolerance_2pct.json")
    r = budget.match(BASELINE, top=3, calibration=PROFILE, rank_by="time", cluster=H200, gpus=8,
                     global_batch_tokens=8 * 4096 * 4, constraints=tolerance)
    assert r["cluster"]["gpus"] == 8
    # Ranked at matched work: GPU-seconds per training FLOP.
    ranked = [c["cluster"]["gpu_seconds_per_flop"] for c in r["candidates"] if c["cluster"]["found"]]
    assert ranked == sorted(ranked) and len(ranked) == 3
    assert r["cluster"]["dropped"] == []
    if CLI:
        _same_as_cli(r, _cli_json("--baseline", BASELINE, "--top", "3", "--calibration", PROFILE, "--rank-by", "time",
                                  "--cluster", H200, "--gpus", "8", "--global-batch-tokens", str(8 * 4096 * 4),
                                  "--constraints", tolerance))


def test_cluster_errors():
    for kwargs, source in [({"gpus": 8}, "gpus"),                                      # gpus without cluster
                           ({"cluster": H200}, "gpus"),                                # cluster without gpus
                           ({"cluster": H200_DATASHEET, "gpus": 8, "rank_by": "time"}, "rank_by"),  # no profile
                           ({"cluster": H200, "gpus": 8, "calibration": PROFILE}, "cluster")]:  # rank_by budget
        try:
            budget.match(BASELINE, top=1, **kwargs)
        except budget.Error as e:
            assert e.source == source, (kwargs, e.source, str(e))
        else:
            raise AssertionError(f"no budget.Error for {kwargs}")
    try:
        budget.layout_search(BASELINE, H200_DATASHEET, gpus=8)  # a cluster of datasheet peaks only
    except budget.Error as e:
        assert e.source == "calibration"
    else:
        raise AssertionError("no budget.Error")
    try:
        budget.layout_search(BASELINE, H200, gpus=64, calibration=PROFILE)  # one node of 8
    except budget.Error as e:
        assert e.source == "gpus" and "64 GPUs" in e.message
    else:
        raise AssertionError("no budget.Error")


PUBLISHED_PROFILE = os.path.join(SOURCE, "cuda_profiler", "profiles", "h200-published.json")  # has FP8 rows


def _team_args(tmp_name, text):
    """A Megatron-LM argument file in the temporary directory (its path)."""
    import tempfile
    path = os.path.join(tempfile.mkdtemp(), tmp_name)
    with open(path, "w") as f:
        f.write(text)
    return path


TEAM_EP8_FP8 = ("--tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --expert-model-parallel-size 8\n"
                "--micro-batch-size 1 --global-batch-size 64 --seq-length 4096 --bf16 --use-distributed-optimizer\n"
                "--recompute-granularity selective --fp8-format hybrid --fp8-recipe tensorwise\n")


def test_layout_search_recipe_keywords():
    """layout_search(fp8=, micro_batch_size=, ...) holds the recipe in every layout (docs/cluster.md, "The recipe
    held"); the searched settings stay free; a parallel size or an unknown keyword is refused by name."""
    r = budget.layout_search(BASELINE, H200, gpus=8, calibration=PUBLISHED_PROFILE, global_batch_tokens=8 * 4096 * 4,
                             top=50, fp8="tensorwise", micro_batch_size=2, grad_reduce_in_bf16=True)
    assert r["recipe"]["fp8"] == "tensorwise" and r["recipe"]["micro_batch_size"] == 2
    assert r["recipe"]["recompute"] is None and r["recipe"]["distributed_optimizer"] is None  # searched
    assert len(r["layouts"]) > 1
    for row in r["layouts"]:
        assert row["layout"]["fp8"] == "tensorwise" and row["layout"]["micro_batch_size"] == 2
        assert row["layout"]["bf16_main_grads"] is True
    assert len({row["layout"]["recompute"] for row in r["layouts"]}) > 1  # recompute still searched
    # The best layout priced directly with the same recipe: the same peak (FP8 changes memory in the search).
    best = r["layouts"][0]["layout"]
    direct = budget.layout(BASELINE, H200, gpus=8, tp=best["tp"], sequence_parallel=best["sequence_parallel"],
                           pp=best["pp"], virtual_stages=best["virtual_stages"], ep=best["ep"], etp=best["etp"],
                           cp=best["cp"], micro_batch_size=2, micro_batches=best["micro_batches"],
                           recompute=best["recompute"], distributed_optimizer=best["distributed_optimizer"],
                           fp8="tensorwise", grad_reduce_in_bf16=True)
    assert direct["memory"]["peak_bytes"] == r["layouts"][0]["memory"]["peak_bytes"]
    plain = budget.layout(BASELINE, H200, gpus=8, tp=best["tp"], sequence_parallel=best["sequence_parallel"],
                          pp=best["pp"], virtual_stages=best["virtual_stages"], ep=best["ep"], etp=best["etp"],
                          cp=best["cp"], micro_batch_size=2, micro_batches=best["micro_batches"],
                          recompute=best["recompute"], distributed_optimizer=best["distributed_optimizer"])
    assert plain["memory"]["peak_bytes"] != direct["memory"]["peak_bytes"]
    for kwargs, source in [({"tp": 2}, "tp"), ({"fp9": "x"}, "fp9"), ({"fp8": "tensorwize"}, "fp8")]:
        try:
            budget.layout_search(BASELINE, H200, gpus=8, calibration=PUBLISHED_PROFILE, **kwargs)
        except budget.Error as e:
            assert e.source == source, (kwargs, e.source, str(e))
        else:
            raise AssertionError(f"no budget.Error for {kwargs}")


def test_layout_search_megatron_args_equals_cli():
    """layout_search(megatron_args=FILE) is `layout --search --megatron-args FILE`; the batch is the file's."""
    args = _team_args("team.args", TEAM_EP8_FP8)
    r = budget.layout_search(BASELINE, H200, gpus=8, calibration=PUBLISHED_PROFILE, top=3, megatron_args=args)
    assert r["global_batch_tokens"] == 64 * 4096
    assert r["recipe"]["fp8"] == "tensorwise" and r["recipe"]["recompute"] == "selective"
    assert "--fp8-recipe" in r["megatron_args"]["modelled"]
    for kwargs in [{"global_batch_tokens": 131072}, {"fp8": "tensorwise"}]:
        try:
            budget.layout_search(BASELINE, H200, gpus=8, calibration=PUBLISHED_PROFILE, megatron_args=args, **kwargs)
        except budget.Error as e:
            assert e.source == "megatron_args", (kwargs, e.source)
        else:
            raise AssertionError(f"no budget.Error for {kwargs}")
    if not CLI:
        return
    out = subprocess.run([CLI, "layout", BASELINE, "--cluster", H200, "--gpus", "8", "--search", "--top", "3",
                          "--profile", PUBLISHED_PROFILE, "--megatron-args", args, "--format", "json"],
                         check=True, capture_output=True, text=True)
    cli = json.loads(out.stdout)
    for key in ["layouts", "recipe", "global_batch_tokens", "seq_len", "enumerated", "valid", "fitting"]:
        assert cli[key] == r[key], key


def test_match_cluster_megatron_args_equals_cli():
    """match(cluster=, gpus=, megatron_args=FILE) is `--cluster ... --megatron-args FILE`: every config at the
    team's recipe held, one basis (the baseline searched too, the team's layout apart), the file's batch;
    global_batch_tokens refused."""
    args = _team_args("team.args", TEAM_EP8_FP8)
    tolerance = os.path.join(SOURCE, "tests", "data", "match", "tolerance_2pct.json")
    r = budget.match(BASELINE, top=2, calibration=PUBLISHED_PROFILE, rank_by="time", cluster=H200, gpus=8,
                     constraints=tolerance, megatron_args=args)
    cluster = r["cluster"]
    assert cluster["team_layout"] == "TP1 CP1 PP1 DP8 EP8 ETP1 b1 m8 selective dist-opt"
    assert cluster["recipe"]["fp8"] == "tensorwise"
    assert cluster["global_batch_tokens"] == 64 * 4096
    assert cluster["basis"] == "searched_with_team_recipe"
    assert "layout_choice" not in cluster["baseline"]
    assert cluster["team_baseline"]["layout_choice"] == "the team's layout"
    assert cluster["team_baseline"]["ratio_to_baseline"] >= 1.0
    try:
        budget.match(BASELINE, top=1, calibration=PUBLISHED_PROFILE, rank_by="time", cluster=H200, gpus=8,
                     megatron_args=args, global_batch_tokens=131072)
    except budget.Error as e:
        assert e.source == "global_batch_tokens"
    else:
        raise AssertionError("no budget.Error")
    if not CLI:
        return
    out = subprocess.run([CLI, "--baseline", BASELINE, "--calibration", PUBLISHED_PROFILE, "--rank-by", "time",
                          "--cluster", H200, "--gpus", "8", "--top", "2", "--constraints", tolerance,
                          "--megatron-args", args, "--format", "json"], check=True, capture_output=True, text=True)
    cli = json.loads(out.stdout)["cluster"]
    for key in cluster:
        if key != "megatron_args":
            assert cli[key] == cluster[key], key
    assert cli["megatron_args"] == cluster["megatron_args"]  # one form (attention_mask was missing in Python's)

def test_layout_loop_placement():
    # SMELT's layers 4-9 x2 (18 executions) on PP 2 x V 3, 3 a chunk: wrapped, rank 0 stores 1-3 and 7-9,
    # rank 1 4-6 and 10-12 (docs/cluster.md, "Loops across pipeline stages"); replicate_loop_weights=True
    # is loop_placement="replicated"; a name not known is budget.Error.
    r = budget.layout(SMELT, H200, pp=2, virtual_stages=3, micro_batches=4, loop_placement="wrap")
    assert r["layout"]["loop_placement"] == "wrap"
    assert [s["layers"] for s in r["memory"]["stages"]] == [[1, 2, 3, 7, 8, 9], [4, 5, 6, 10, 11, 12]]
    assert budget.layout(SMELT, H200, pp=2, micro_batches=4, replicate_loop_weights=True)["layout"]["loop_placement"] \
        == "replicated"
    try:
        budget.layout(SMELT, H200, pp=2, micro_batches=4, loop_placement="around")
    except budget.Error as e:
        assert e.source == "loop_placement" and "in_chunk, wrap, replicated" in e.message
    else:
        raise AssertionError("no budget.Error")


def test_peak_saved_layer_executions():
    # Hand counts (tests/unit/cluster/test_pipeline_schedule.cpp): PP 2 x V 2, m 4, chunks of 1, 2, 3,
    # 4 layers: rank 0 peaks at 9 saved layer executions, rank 1 at 8; 1F1B PP 4, m 3: min(m, PP - s) x
    # layers.
    assert budget.peak_saved_layer_executions([1, 2, 3, 4], 2, 4) == [9, 8]
    assert budget.peak_saved_layer_executions([1, 2, 3, 4], pp=4, micro_batches=3) == [3, 6, 6, 4]
    for args, needle in [(([1, 1, 1, 1], 2, 3), "a multiple of pp"), (([1, 1, 1], 2, 4), "3 entries"),
                         (("12", 2, 4), "list of int"), (([1, 1.5], 2, 4), "chunk_layers")]:
        try:
            budget.peak_saved_layer_executions(*args)
        except budget.Error as e:
            assert needle in str(e), (needle, str(e))
        else:
            raise AssertionError("no budget.Error")


def test_cluster_file_profile_by_default():
    # Issue 32: the cluster file's gpu.compute.calibration times the step when no profile is given:
    # layout() has the step time of the example's h200-published.json, the same as naming it.
    args = dict(micro_batch_size=1, micro_batches=1)
    r = budget.layout(BASELINE, H200, **args)
    named = budget.layout(BASELINE, H200, calibration=os.path.join(SOURCE, "cuda_profiler", "profiles",
                                                                   "h200-published.json"), **args)
    assert r["time"]["seconds_per_step"] > 0
    assert r["time"]["seconds_per_step"] == named["time"]["seconds_per_step"]
    eager = budget.layout(BASELINE, H200, calibration=PROFILE, **args)
    assert eager["time"]["seconds_per_step"] != r["time"]["seconds_per_step"]
    assert "time" not in budget.layout(BASELINE, H200_DATASHEET, **args)
    p = budget.predict_time(BASELINE, cluster=H200)
    assert p == budget.predict_time(BASELINE, calibration=os.path.join(SOURCE, "cuda_profiler", "profiles",
                                                                       "h200-published.json"))


def test_layout_keywords_are_the_field_table():
    """The keywords are the layout field table's (budget/layout_fields.hpp): each lands in the written layout
    field of its row (grad_reduce_in_bf16 in bf16_main_grads); "vp" is a run file's alias, not a keyword; an
    enum keyword lists its names."""
    r = budget.layout(MIXTRAL, H200, tp=2, sequence_parallel=True, pp=4, virtual_stages=2, ep=4, etp=1, gpus=16,
                      nodes=2, micro_batch_size=1, micro_batches=8, distributed_optimizer=True,
                      grad_reduce_in_bf16=True, cross_entropy_fusion=True, capacity_factor=1.5, imbalance=1.25,
                      dispatcher="allgather", moe_permute_fusion=True, seq_len=2048)
    layout = r["layout"]
    for key, value in {"tp": 2, "sequence_parallel": True, "pp": 4, "virtual_stages": 2, "ep": 4, "etp": 1,
                       "gpus": 16, "dp": 2, "micro_batch_size": 1, "micro_batches": 8, "distributed_optimizer": True,
                       "bf16_main_grads": True, "cross_entropy_fusion": True, "capacity_factor": 1.5,
                       "imbalance": 1.25, "dispatcher": "allgather", "moe_permute_fusion": True,
                       "seq_len": 2048}.items():
        assert layout[key] == value, key
    raises_budget_error(lambda: budget.layout(MIXTRAL, H200, vp=2), "vp", "virtual_stages")
    raises_budget_error(lambda: budget.layout(MIXTRAL, H200, dispatcher="a2a"), "dispatcher", "alltoall, allgather, flex")



def _python_text(value):
    """A default as layout()'s help writes it: True, "bf16", 4, 1.5 (%g)."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, str):
        return f'"{value}"'
    return "%g" % value if isinstance(value, float) else str(value)


def test_layout_help_is_the_field_table():
    """help(budget.layout) lists every keyword of the layout's field table (budget.layout_fields()) on its own
    line with its type, its default and its doc line, built from the table (issue 40); replicate_loop_weights
    (derived in JSON, a setting here) and the keywords that are no row are written by hand."""
    lines = budget.layout.__doc__.splitlines()
    fields = budget.layout_fields()
    keywords = [f for f in fields if f["python"]]
    assert len(keywords) >= 37  # 37 at issue 40
    for f in keywords:
        line = next((text for text in lines if text.startswith(f"  {f['python']} (")), None)
        assert line is not None, f["python"]
        if f["role"] == "derived":
            continue
        assert line.endswith("): " + f["doc"]), line
        assert f"; default {_python_text(f['default'])})" in line, line
        if f["type"] == "choice":
            assert " | ".join(f'"{c}"' for c in f["choices"]) in line, line
        if f["type"] == "integer":
            assert f"(int {int(f['minimum'])} to {int(f['maximum'])};" in line, line
    # The table's lines, in table order, come between the heading and the first hand-written line.
    start = next(i for i, text in enumerate(lines) if text.startswith("Keywords of the layout's field table"))
    end = next(i for i, text in enumerate(lines) if text.startswith("  replicate_loop_weights ("))
    listed = [text.split(" (")[0].strip() for text in lines[start + 1:end]]
    assert listed == [f["python"] for f in keywords if f["role"] == "setting"]
    for key in ("replicate_loop_weights", "nodes", "megatron_args", "bridge_config", "calibration", "run_tokens"):
        assert any(text.startswith(f"  {key}") for text in lines), key


def test_layout_dict_has_every_field_of_the_table():
    """The layout dict's keys are the field table's, in its order: every setting a run file needs, the
    vocabulary padding and the MoE memory settings included (issue 40: it reads back as a run file's layout)."""
    r = budget.layout(MIXTRAL, H200, tp=2, sequence_parallel=True, ep=4, gpus=8, micro_batch_size=1, micro_batches=8,
                      vocab_divisible_by=128, moe_grouped_gemm=True)
    assert list(r["layout"]) == [f["name"] for f in budget.layout_fields()]
    assert r["layout"]["vocab_divisible_by"] == 128 and r["layout"]["moe_grouped_gemm"] is True
    assert r["layout"]["padded_vocab"] == 32000  # 32000 is a multiple of 128 x 2 already
    assert r["layout"]["fp8_amax_history"] == 1 and r["layout"]["moe_hybridep"] is False

if __name__ == "__main__":
    run_tests(globals())
