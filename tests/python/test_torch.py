"""Tests of budget.torch, the reference PyTorch module of what the planner counts (docs/torch.md).

References: the planner's own budgets (budget.account) and op list (budget.torch.layer_ops, i.e.
budget::layer_ops), compared exactly; torch's profiler (with_flops) as an independent count of the
matmuls torch actually ran. Skipped as a whole where PyTorch is not installed (CI installs
python3-torch: scripts/install-deps.sh).
"""

import collections
import glob
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import budget  # noqa: E402
import budget.torch as bt  # noqa: E402

SOURCE = os.environ.get("BUDGET_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("BUDGET_CLI")
HF_FILES = sorted(glob.glob(os.path.join(SOURCE, "tests", "data", "hf", "*.json")))
PAPER_CONFIGS = sorted(glob.glob(os.path.join(SOURCE, "examples", "configs", "*.json")))


def _grid_configs():
    """The paper grid's 16 baselines and their matched looped configs (budget.grid())."""
    configs = []
    for cell in budget.grid(os.path.join(SOURCE, "examples", "grids", "paper_grid.json"))["cells"]:
        configs.append(cell["baseline"]["config"])
        if cell.get("matched"):
            configs.append(cell["matched"]["config"])
    return configs


# The 2025 layer kinds budget.torch does not build (docs/torch.md): a released config using one is
# refused by name, the refusal's path naming the field.
_NOT_BUILT = ("/attention/indexer", "/attention/sinks", "/attention/output_gate", "/attention/layer_types",
              "/attention/chunk_size", "/settings/partial_rotary_factor", "/settings/nope_layers", "/layer_mixers",
              "/layer_ffns", "/linear_attention", "/mamba")


def _uses_unbuilt_kinds(config):
    """The fields of the native config (budget.load_config) that budget.torch refuses."""
    native = budget.load_config(config).to_dict()
    attention = native.get("attention", {})
    settings = native.get("settings", {})
    found = [f"/attention/{key}" for key in ("indexer", "sinks", "output_gate", "chunk_size") if attention.get(key)]
    if "chunked" in attention.get("layer_types", []):
        found.append("/attention/layer_types")
    found += [f"/settings/{key}" for key in ("partial_rotary_factor", "nope_layers") if key in settings]
    found += [f"/{key}" for key in ("layer_mixers", "layer_ffns", "linear_attention", "mamba") if native.get(key)]
    return found


def _assert_refused_by_name(config, build):
    """build(config) raises budget.Error whose path names one of the fields the config uses."""
    fields = _uses_unbuilt_kinds(config)
    with pytest.raises(budget.Error) as refusal:
        build(config)
    assert any(field in str(refusal.value) for field in fields), (fields, str(refusal.value))


def _assert_counts_match(config):
    model = bt.build_model(config, device="meta")
    counts = bt.parameter_counts(model)
    report = budget.account(config)
    params = report["params"]
    assert counts["by_component"] == params["by_component"]
    assert counts["non_embedding_total"] == params["non_embedding_total"]
    assert counts["embedding"] == params["embedding"]
    assert counts["mtp"] == report.get("mtp", {}).get("params", 0)
    # Every stored tensor once: the module's own parameter count is the same total.
    assert sum(p.numel() for p in model.parameters()) == counts["total"]
    return model


def test_budget_works_without_torch_and_budget_torch_says_what_to_install():
    # torch made unimportable (None in sys.modules): import budget still works, budget.torch explains.
    script = ("import sys; sys.modules['torch'] = None\n"
              "import budget\n"
              "assert budget.account({'hidden_size': 8, 'num_layers': 1, 'attention': {'num_heads': 1, 'head_dim': 8},"
              " 'ffn': {'dense_dim': 8}})['params']['non_embedding_total'] > 0\n"
              "try:\n    import budget.torch\nexcept ImportError as e:\n    print(e)\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=dict(os.environ),
                         check=True)
    assert "budget.torch needs PyTorch" in run.stdout and "python3-torch" in run.stdout


# ---- full-size modules on the meta device: exactly the accounting's parameters -----------------

def test_hf_files_are_all_found():
    assert len(HF_FILES) >= 17 and len(PAPER_CONFIGS) == 2


@pytest.mark.parametrize("path", HF_FILES, ids=os.path.basename)
def test_meta_parameters_of_released_families(path):
    if _uses_unbuilt_kinds(path):
        _assert_refused_by_name(path, lambda config: bt.build_model(config, device="meta"))
        return
    _assert_counts_match(path)


def test_released_files_with_2025_kinds_are_refused_not_skipped():
    # The refusal above is a check of its own: these released files use kinds budget.torch lacks.
    refused = {os.path.basename(path) for path in HF_FILES if _uses_unbuilt_kinds(path)}
    assert {"gpt-oss-120b.json", "qwen3-next-80b-a3b-thinking.json", "nemotron-3-nano-30b-a3b.json",
            "deepseek-v3.2.json", "llama-4-scout-17b-16e-instruct.json"} <= refused
    assert "deepseek-v3.json" not in refused and "llama-3-8b.json" not in refused


@pytest.mark.parametrize("path", PAPER_CONFIGS, ids=os.path.basename)
def test_meta_parameters_of_paper_configs(path):
    model = _assert_counts_match(path)
    # docs/accounting.md, "Worked example": hand-computed totals.
    expected = {"paper-200M-S95-baseline": 3_872_226_560, "paper-200M-S95-smelt": 3_888_809_760}
    assert bt.parameter_counts(model)["non_embedding_total"] == expected[model.config["name"]]


def test_meta_parameters_of_paper_grid_and_matches():
    configs = _grid_configs()
    assert len(configs) == 32
    for config in configs:
        _assert_counts_match(config)


def test_meta_parameters_of_matched_hf_configs():
    # A matched looped config of a released MLA family and of a GQA one, as the matcher writes them.
    for name in ("deepseek-v2-lite.json", "qwen3-30b-a3b.json"):
        result = budget.match(os.path.join(SOURCE, "tests", "data", "hf", name), top=1)
        assert result["candidates"], name
        _assert_counts_match(result["candidates"][0]["config"])


# ---- tiny configs on CPU --------------------------------------------------------------------------

TINY = {
    # GQA, q/k/v and output biases, per-head q/k norms, sliding-window layers, MLP biases, routed +
    # two shared experts with the Qwen-MoE gate, a dense first layer, tied embeddings with an
    # LM-head bias, a loop of three repeats over layers 2-3.
    "gqa": {"name": "tiny-gqa", "hidden_size": 32, "num_layers": 4, "vocab_size": 50, "tie_embeddings": True,
            "lm_head_bias": True,
            "attention": {"num_heads": 4, "head_dim": 8, "num_kv_heads": 2, "qkv_bias": True, "output_bias": True,
                          "qk_norm": "per_head", "sliding_window": 5,
                          "layer_types": ["full", "sliding", "full", "sliding"]},
            "ffn": {"num_experts": 6, "top_k": 2, "expert_dim": 12, "bias": True, "num_shared_experts": 2,
                    "shared_expert_dim": 10, "shared_expert_gate": True, "first_dense_layers": 1, "dense_dim": 20},
            "loop": {"first": 2, "last": 3, "repeats": 3}},
    # MLA with q LoRA, router bias, one shared expert, a dense first layer, an MTP module, untied.
    "mla": {"name": "tiny-mla", "hidden_size": 32, "num_layers": 3, "vocab_size": 40, "mtp_layers": 1,
            "attention": {"num_heads": 4, "mla": {"q_lora_rank": 12, "kv_lora_rank": 10, "qk_nope_head_dim": 6,
                                                  "qk_rope_head_dim": 4, "v_head_dim": 5}},
            "ffn": {"num_experts": 5, "top_k": 2, "expert_dim": 8, "router_bias": True, "num_shared_experts": 1,
                    "shared_expert_dim": 8, "first_dense_layers": 1, "dense_dim": 16},
            "loop": {"first": 2, "last": 3, "repeats": 2}},
    # MLA without q LoRA (DeepSeek-V2-Lite's form), no loop, every layer MoE.
    "mla-direct-q": {"name": "tiny-mla-direct", "hidden_size": 24, "num_layers": 2, "vocab_size": 30,
                     "attention": {"num_heads": 2, "mla": {"kv_lora_rank": 8, "qk_nope_head_dim": 4,
                                                           "qk_rope_head_dim": 2, "v_head_dim": 4}},
                     "ffn": {"num_experts": 4, "top_k": 1, "expert_dim": 8}},
    # GPT-NeoX-like: LayerNorm, plain MLPs with biases, full-width q/k norms, dense, no vocabulary.
    "dense-layernorm": {"name": "tiny-neox", "hidden_size": 24, "num_layers": 3, "norm": "layernorm",
                        "attention": {"num_heads": 3, "head_dim": 8, "qkv_bias": True, "output_bias": True,
                                      "qk_norm": "full"},
                        "ffn": {"dense_dim": 40, "gated": False, "bias": True},
                        "loop": {"first": 1, "last": 3, "repeats": 2}},
    # The paper's shape family, shrunk: an MoE stack with a centred loop.
    "paper-like": {"name": "tiny-paper", "hidden_size": 16, "num_layers": 4,
                   "attention": {"num_heads": 2, "head_dim": 8, "num_kv_heads": 1},
                   "ffn": {"num_experts": 8, "top_k": 2, "expert_dim": 8},
                   "loop": {"span_fraction": 0.5}},
}
TOKENS = 9
BATCH = 2


def _inputs(model, tokens=TOKENS):
    generator = torch.Generator().manual_seed(1)
    s = model.spec
    if s.vocab > 0:
        return torch.randint(0, s.vocab, (BATCH, tokens), generator=generator)
    return torch.randn(BATCH, tokens, s.hidden, generator=generator)


def _expected_forward_flops(config, tokens=TOKENS):
    """Op list forward FLOPs per token × executions, by op, for one causal window of `tokens`."""
    expected = collections.Counter()
    for op in bt.layer_ops(config, {"seq_len": tokens, "attention_mask": "causal"}):
        if op["forward_flops"] and op["kind"] != "mtp_module":
            expected[op["kind"]] += op["forward_flops"] * op["executed_layers"]
    return dict(expected)


@pytest.mark.parametrize("name", sorted(TINY))
def test_tiny_counts_forward_and_backward(name):
    config = TINY[name]
    torch.manual_seed(0)
    model = _assert_counts_match(config)  # on the meta device
    model = bt.build_model(config)
    assert bt.parameter_counts(model) == bt.parameter_counts(bt.build_model(config, device="meta"))
    x = _inputs(model)
    out, hidden = model(x, return_hidden=True)
    expected_shape = (BATCH, TOKENS, model.spec.vocab or model.spec.hidden)
    assert tuple(out.shape) == expected_shape
    loss = out.float().pow(2).mean()
    if len(model.mtp) > 0:
        loss = loss + sum(logits.float().pow(2).mean() for logits in model.mtp_forward(hidden, x))
    loss.backward()
    assert torch.isfinite(loss)
    for parameter_name, parameter in model.named_parameters():
        if parameter.requires_grad:
            assert parameter.grad is not None and torch.isfinite(parameter.grad).all(), parameter_name
        else:
            assert parameter_name.endswith("router.bias"), parameter_name  # balanced by rule, not gradient


@pytest.mark.parametrize("name", sorted(TINY))
def test_forward_flops_equal_the_op_list(name):
    config = TINY[name]
    torch.manual_seed(0)
    model = bt.build_model(config)
    with torch.no_grad(), bt.FlopCounter() as counter:
        model(_inputs(model))
    per_token = {op: flops / (BATCH * TOKENS) for op, flops in counter.by_op.items()}
    assert per_token == _expected_forward_flops(config)


def test_mtp_flops_equal_the_op_list():
    config = TINY["mla"]
    model = bt.build_model(config)
    x = _inputs(model)
    with torch.no_grad():
        _, hidden = model(x, return_hidden=True)
        with bt.FlopCounter() as counter:
            model.mtp_forward(hidden, x)
    # The module runs over TOKENS − 1 positions (one causal window of that length).
    ops = bt.layer_ops(config, {"seq_len": TOKENS - 1, "attention_mask": "causal"})
    mtp = next(op for op in ops if op["kind"] == "mtp_module")
    head = next(op for op in ops if op["kind"] == "lm_head")
    rows = BATCH * (TOKENS - 1)
    assert counter.by_op["mtp_module"] == mtp["forward_flops"] * mtp["executed_layers"] * rows
    assert counter.by_op["lm_head"] == head["forward_flops"] * rows


def _profiled_matmul_flops(model, x):
    from torch.profiler import ProfilerActivity, profile
    with torch.no_grad(), bt.FlopCounter() as counter, profile(activities=[ProfilerActivity.CPU],
                                                               with_flops=True) as prof:
        model(x)
    names = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"}
    return sum(e.flops for e in prof.events() if e.name in names and e.flops), counter


@pytest.mark.parametrize("name", ["gqa", "mla", "dense-layernorm"])
def test_profiler_sees_the_same_weight_matmuls(name):
    # torch's profiler counts 2·m·k·n for every mm/bmm torch ran. Weight matmuls must equal the
    # instrumentation's; attention is a dense T×T product for every head (the masked half is
    # multiplied too), 2·B·heads·T²·(d_qk + d_v) per executed layer, which the op list does not count.
    config = TINY[name]
    model = bt.build_model(config)
    x = _inputs(model)
    profiled, counter = _profiled_matmul_flops(model, x)
    s = model.spec
    qk = s.head_dim
    v = s.mla["v_head_dim"] if s.mla else s.head_dim
    dense_attention = len(model.schedule) * 2 * BATCH * s.heads * TOKENS * TOKENS * (qk + v)
    assert profiled == counter.total - counter.by_op["attention_scores"] + dense_attention


def test_hook_sees_loop_layers_run_repeats_times_with_weights_stored_once():
    config = TINY["gqa"]  # loop over layers 2-3, three repeats, of 4
    model = bt.build_model(config)
    calls = collections.Counter()
    scales = collections.defaultdict(list)
    for index, layer in enumerate(model.layers):
        layer.register_forward_hook(lambda module, args, output, index=index: calls.update([index]))
        layer.register_forward_pre_hook(lambda module, args, index=index: scales[index].append(args[3]))
    order = []
    for layer in model.layers:
        layer.register_forward_hook(lambda module, args, output: order.append(module.index))
    with torch.no_grad():
        model(_inputs(model))
    assert calls == {0: 1, 1: 3, 2: 3, 3: 1}
    assert order == [0, 1, 2, 1, 2, 1, 2, 3]
    assert scales == {0: [1.0], 1: [1 / 3] * 3, 2: [1 / 3] * 3, 3: [1.0]}
    # Weights stored once: 4 physical layers, every tensor distinct, none duplicated for the loop.
    assert len(model.layers) == 4
    storage = [p.data_ptr() for p in model.parameters()]
    assert len(storage) == len(set(storage))
    executed = budget.account(config)["effective_layers"]
    assert sum(calls.values()) == executed == 8


def test_loop_scales_the_residual_update_by_one_over_r():
    # The same weights run unlooped (r = 1) and looped (r = 2 over all layers): with scale 1/2
    # the looped model is h + f(h)/2 + f(h + f(h)/2)/2, computed here by hand from the layer.
    config = {"hidden_size": 8, "num_layers": 1, "attention": {"num_heads": 2, "head_dim": 4},
              "ffn": {"dense_dim": 16}, "loop": {"first": 1, "last": 1, "repeats": 2}}
    torch.manual_seed(0)
    model = bt.build_model(config)
    x = torch.randn(1, 5, 8)
    layer = model.layers[0]
    masks = model._masks(5, x.device, None)
    positions = torch.arange(5)
    with torch.no_grad():
        h = layer(x, masks, positions, 0.5)
        h = layer(h, masks, positions, 0.5)
        by_hand = model.final_norm(h)
        assert torch.allclose(model(x), by_hand)
        unscaled = model.final_norm(layer(layer(x, masks, positions, 1.0), masks, positions, 1.0))
        assert not torch.allclose(model(x), unscaled)


def test_schedule_follows_executed_depth_of_the_planner():
    assert bt.execution_schedule(5, None) == [(i, 1.0) for i in range(5)]
    assert [i for i, _ in bt.execution_schedule(12, (4, 9, 2))] == list(range(3)) + list(range(3, 9)) * 2 + [9, 10, 11]
    for path in PAPER_CONFIGS + [path for path in HF_FILES if not _uses_unbuilt_kinds(path)]:
        model = bt.build_model(path, device="meta")
        assert len(model.schedule) == budget.account(path)["effective_layers"]


def test_causal_and_document_masks():
    mask = bt.attention_mask(4)
    assert mask.tolist() == [[True, False, False, False], [True, True, False, False],
                             [True, True, True, False], [True, True, True, True]]
    window = bt.attention_mask(4, window=2)
    assert window.sum(-1).tolist() == [1, 2, 2, 2]  # min(i, W) keys for 1-based query i
    docs = bt.attention_mask(4, document_ids=torch.tensor([[0, 0, 1, 1]]))
    assert docs[0].sum(-1).tolist() == [1, 2, 1, 2]


def test_refuses_what_it_does_not_build():
    config = json.loads(json.dumps(TINY["paper-like"]))
    config["attention"]["rope_scaling"] = 2.0
    with pytest.raises(budget.Error):  # the config reader refuses the unknown key first
        bt.build_model(config)
    spec_error = None
    try:
        bt.model._Spec({"hidden_size": 8, "num_layers": 1, "attention": {"num_heads": 1, "head_dim": 8},
                        "ffn": {"dense_dim": 8}, "rope_theta": 1e6})
    except budget.Error as e:
        spec_error = e
    assert spec_error is not None and spec_error.path == "/rope_theta" and "not built by budget.torch" in spec_error.message


def test_torch_export_writes_a_file_that_builds_the_model(tmp_path):
    if not CLI:
        pytest.skip("BUDGET_CLI is not set (ctest sets it)")
    for source in (PAPER_CONFIGS[1], os.path.join(SOURCE, "tests", "data", "hf", "deepseek-v3.json")):
        out = tmp_path / (os.path.basename(source) + ".py")
        subprocess.run([CLI, "export", source, "--to", "torch", "--out", str(out)], check=True)
        text = out.read_text()
        assert "build_model" in text
        run = subprocess.run([sys.executable, str(out)], check=True, capture_output=True, text=True,
                             env=dict(os.environ))
        report = budget.account(source)
        line = json.loads(run.stdout)
        assert line["non_embedding_params"] == report["params"]["non_embedding_total"]
        assert line["embedding_params"] == report["params"]["embedding"]
        assert line["executed_layers"] == report["effective_layers"]


def test_torch_export_text_survives_odd_names_and_builds_in_process():
    config = json.loads(json.dumps(TINY["gqa"]))
    config["name"] = 'odd """ name \\ with\nnewline'
    exported = budget.export(config, to="torch")
    assert exported["target"] == "torch" and exported["not_expressed"] == []
    namespace = {"__name__": "exported"}
    exec(compile(exported["text"], "exported.py", "exec"), namespace)
    assert namespace["CONFIG"] == budget.load_config(config).to_dict()
    model = namespace["build"]()
    assert bt.parameter_counts(model)["non_embedding_total"] == budget.account(config)["params"]["non_embedding_total"]
    assert len(model.schedule) == 8


def test_torch_export_round_trip_keeps_every_budget():
    # import → export --to torch → the file's CONFIG → import: the same budgets, for every released
    # config, the paper configs and the grid's baselines and matches.
    for config in HF_FILES + PAPER_CONFIGS + _grid_configs():
        if isinstance(config, str) and config in HF_FILES and _uses_unbuilt_kinds(config):
            continue  # budget.torch does not build it; the torch export refuses some by name (test_export)
        namespace = {"__name__": "exported"}
        exec(compile(budget.export(config, to="torch")["text"], "exported.py", "exec"), namespace)
        assert budget.account(namespace["CONFIG"]) == budget.account(config), config


# ---- layer timing ---------------------------------------------------------------------------------

def _layer_time(*args, check=False):
    return subprocess.run([sys.executable, "-m", "budget.torch.layer_time", *args], capture_output=True, text=True,
                          env=dict(os.environ), check=check)


def test_layer_time_refuses_without_cuda(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    run = _layer_time(PAPER_CONFIGS[0], "--out", str(tmp_path / "rows.jsonl"))
    assert run.returncode != 0
    message = run.stderr.strip().splitlines()
    assert len(message) == 1 and "CUDA" in message[0], run.stderr
    assert not (tmp_path / "rows.jsonl").exists()


# The keys of tests/data/time/h200_torch_layers.jsonl's layer rows (docs/calibration.md, "Layer rows").
SHARED_LAYER_KEYS = {"config", "tokens", "doc_len", "executed_layers", "attn_block_ms", "moe_block_ms", "layer_ms",
                     "layer_spread_ms", "attention_backend_ms", "pad_fraction"}


def test_layer_time_dry_run_on_cpu_writes_rows_in_the_shared_form(tmp_path):
    out = tmp_path / "rows.jsonl"
    configs = [TINY["paper-like"], {"name": "tiny-dense", "hidden_size": 16, "num_layers": 2,
                                    "attention": {"num_heads": 2, "head_dim": 8}, "ffn": {"dense_dim": 32}},
               # Qwen-MoE-like: q/k/v biases, per-head q/k norms, shared experts with the gate, router bias.
               {"name": "tiny-shared", "hidden_size": 16, "num_layers": 2,
                "attention": {"num_heads": 2, "head_dim": 8, "qkv_bias": True, "qk_norm": "per_head"},
                "ffn": {"num_experts": 4, "top_k": 2, "expert_dim": 8, "num_shared_experts": 2,
                        "shared_expert_dim": 4, "shared_expert_gate": True, "router_bias": True}},
               # GPT-NeoX-like: LayerNorm, full q/k norms, output bias, a plain dense MLP.
               {"name": "tiny-plain", "hidden_size": 16, "num_layers": 3, "norm": "layernorm",
                "attention": {"num_heads": 2, "head_dim": 8, "output_bias": True, "qk_norm": "full"},
                "ffn": {"dense_dim": 32, "gated": False}, "loop": {"first": 2, "last": 2, "repeats": 3}},
               # DeepSeek-like: MLA (with and without q LoRA below), a dense first layer inside the loop.
               {"name": "tiny-mla", "hidden_size": 16, "num_layers": 3,
                "attention": {"num_heads": 2, "mla": {"q_lora_rank": 8, "kv_lora_rank": 6, "qk_nope_head_dim": 4,
                                                      "qk_rope_head_dim": 2, "v_head_dim": 3}},
                "ffn": {"num_experts": 4, "top_k": 2, "expert_dim": 8, "num_shared_experts": 1,
                        "shared_expert_dim": 8, "first_dense_layers": 1, "dense_dim": 24},
                "loop": {"first": 1, "last": 2, "repeats": 2}},
               {"name": "tiny-mla-direct", "hidden_size": 16, "num_layers": 2,
                "attention": {"num_heads": 2, "mla": {"kv_lora_rank": 6, "qk_nope_head_dim": 4,
                                                      "qk_rope_head_dim": 2, "v_head_dim": 4}},
                "ffn": {"num_experts": 4, "top_k": 1, "expert_dim": 8}}]
    paths = []
    for i, config in enumerate(configs):
        paths.append(tmp_path / f"c{i}.json")
        paths[-1].write_text(json.dumps(config))
    _layer_time(*map(str, paths), "--out", str(out), "--device", "cpu", "--allow-cpu", "--docs", "2",
                "--doc-len", "16", "--warmup", "1", "--repeats", "2", "--dtype", "float32", check=True)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["op"] == "device" and rows[0]["tokens"] == 32 and rows[0]["doc_len"] == 16
    assert rows[0]["device"] == "cpu"
    assert len(rows) == 1 + len(configs)
    for row, config in zip(rows[1:], configs):
        assert SHARED_LAYER_KEYS <= set(row), row.keys()
        assert row["config"] == budget.load_config(config).to_dict()
        assert row["executed_layers"] == budget.account(config)["effective_layers"]
        assert row["layer_ms"] > 0 and row["attn_block_ms"] > 0 and row["moe_block_ms"] > 0
        assert row["tokens"] == 32 and row["pad_fraction"] == 0.0
    assert [row["executed_layers"] for row in rows[1:]] == [6, 2, 2, 5, 5, 2]
    assert [row["ffn"] for row in rows[1:]] == ["moe", "dense", "moe", "dense", "moe+dense", "moe"]
    # The mixed stack: layer 1 (dense) runs twice in the loop 1-2 of 3 layers: 2 of 5 executions.
    mixed = rows[5]
    assert mixed["executed_dense_layers"] == 2
    assert mixed["layer_ms"] == pytest.approx((3 * mixed["moe_layer_ms"] + 2 * mixed["dense_layer_ms"]) / 5)


def test_layer_time_refuses_what_it_does_not_time(tmp_path):
    out = tmp_path / "rows.jsonl"
    config_file = tmp_path / "sliding.json"
    config_file.write_text(json.dumps(TINY["gqa"]))
    run = _layer_time(str(config_file), "--out", str(out), "--device", "cpu", "--allow-cpu")
    assert run.returncode == 2 and "sliding-window layers are not timed" in run.stderr, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_cuda_module_and_layer_time(tmp_path):
    # Where a GPU is: the reference module runs in bf16 on it with the op list's FLOPs, and
    # layer_time measures a tiny config (rows as on the CPU, backends timed or refused).
    config = TINY["mla"]
    model = bt.build_model(config, device="cuda", dtype=torch.bfloat16)
    tokens = torch.randint(0, config["vocab_size"], (BATCH, TOKENS), device="cuda")
    with bt.FlopCounter() as counter:
        model(tokens).float().mean().backward()
    assert {op: f / (BATCH * TOKENS) for op, f in counter.by_op.items()} == _expected_forward_flops(config)
    config_file = tmp_path / "tiny.json"
    config_file.write_text(json.dumps(TINY["paper-like"]))
    out = tmp_path / "rows.jsonl"
    _layer_time(str(config_file), "--out", str(out), "--docs", "4", "--doc-len", "64", "--gemm-size", "1024",
                check=True)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["op"] == "device" and rows[0]["device"] != "cpu"
    assert SHARED_LAYER_KEYS <= set(rows[1]) and rows[1]["layer_ms"] > 0
    assert set(rows[1]["attention_backend_ms"]) == {"flash", "efficient", "cudnn"}
