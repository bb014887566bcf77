#!/usr/bin/env python3
"""Convert the handed-over measured training runs into the run-file form that
`budget-match calibrate --from-runs FILE` reads (docs/calibration.md, "Calibrating from runs"):

  python3 scripts/convert_measured_runs.py MEASURED_RUNS_DIR data/runs/measured_runs.jsonl

writes data/runs/measured_runs.jsonl (SimuMax, Megatron-Bridge dense Llama-3, the two published
Qwen3-30B-A3B H100 runs) and, beside it, data/runs/moe_runs.jsonl (the MoE runs of
megatron_moe_runs.json priced from their exact Megatron-LM arguments; moe_runs() below).

One JSON object a line: id, role ("fit" or "validate"), source, gpu (the profile's device name),
hf_config (a Hugging Face config object), cluster (a cluster object, docs/cluster.md), layout (the
fields of ParallelLayout), time (fp8_recipe, cuda_graphs, cuda_graph_modules, overlap), step_time_s, memory_gib (or
null), megatron_args (the run's Megatron-LM arguments as published or reconstructed: kept for the
Megatron-arguments reader, not read by the fit), notes.

Which runs are kept and how each field is set is written below, once; every value is copied from
the source files (shared/data/measured_runs/*.json, which cite their own sources) or says what was
assumed.
"""
import copy
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def cluster(name, nodes):
    c = load(os.path.join(REPO, "examples", "clusters", name))
    c["nodes"] = nodes
    # The run is priced with the profile being fitted: the example's own profile (a path relative to
    # examples/clusters/) is left out of the run line.
    c["gpu"]["compute"].pop("calibration", None)
    return c


def gb200_cluster(nodes):
    """A GB200 NVL72 rack seen as one NVLink domain of 72 GPUs (docs/cluster.md: a 'node' is a
    GPU's NVLink domain): B200-class GPU, 186 GB HBM3e, NVLink 5 900 GB/s per direction, one
    ConnectX-7 400 Gb/s NIC per GPU between racks (kernels.json "gpus"/GB200; NVIDIA GB200 NVL72 page)."""
    c = cluster("b200.json", nodes)
    c["name"] = "GB200 NVL72 racks (72 GPUs per NVLink domain)"
    c["gpu"]["name"] = "NVIDIA GB200"
    c["gpu"]["memory_GiB"] = 173.2
    c["gpu"]["memory_source"] = "datasheet: 186 GB HBM3e per GPU = 173.2 GiB"
    c["gpus_per_node"] = 72
    c["inter_node"]["source"] = "datasheet: one ConnectX-7 400 Gb/s per GPU = 50 GB/s per direction; latency an estimate"
    return c


def simumax_hf(model):
    if model["arch"] == "dense":
        return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": model["hidden_size"],
                "num_hidden_layers": model["num_layers_run"], "num_attention_heads": model["num_attention_heads"],
                "num_key_value_heads": model["num_query_groups"], "intermediate_size": model["ffn_hidden_size"],
                "hidden_act": "silu", "vocab_size": model["tokenizer_vocab_size"], "tie_word_embeddings": False,
                "rms_norm_eps": model["norm_epsilon"], "attention_bias": False, "mlp_bias": False}
    base = load(os.path.join(REPO, "tests", "data", "hf", "deepseek-v2.json" if model["name"] == "deepseekv2"
                             else "deepseek-v3.json"))
    hf = copy.deepcopy(base)
    moe = model["moe"]
    hf.update({"num_hidden_layers": model["num_layers_run"], "first_k_dense_replace": moe["num_dense_first_layers"],
               "n_routed_experts": moe["num_experts"], "num_experts_per_tok": moe["router_topk"],
               "moe_intermediate_size": moe["moe_ffn_hidden_size"],
               "n_shared_experts": moe["shared_expert_intermediate_size"] // moe["moe_ffn_hidden_size"],
               "intermediate_size": moe["dense_layer_ffn_hidden_size"], "vocab_size": model["tokenizer_vocab_size"]})
    hf["num_nextn_predict_layers"] = 0  # the runs have no MTP (mtp_num_layers 0); absent reads as the family default 1
    return hf


def simumax_runs(data):
    out = []
    for r in data["runs"]:
        m, u, res = r["model"], r["run"], r["results"]
        moe = m.get("moe")
        # Validation: the 8-micro-batch runs and the interleaved one; the rest fit.
        role = "validate" if u["num_microbatches"] == 8 or u.get("vpp") else "fit"
        out.append({
            "id": r["id"], "role": role,
            "source": f"MooreThreads/SimuMax@{data['source']['commit']}:{r['sources'][0]} "
                      "(via shared/data/measured_runs/simumax_b200_runs.json)",
            "gpu": "NVIDIA B200",
            "hf_config": simumax_hf(m),
            "cluster": cluster("b200.json", 1),
            "layout": {"tp": u["tp"], "pp": u["pp"], "vp": u.get("vpp") or 1, "ep": u["ep"] or 1,
                       "etp": u.get("etp") or u["tp"], "cp": u["cp"], "gpus": u["world_size"],
                       "micro_batch_size": u["micro_batch_size"], "micro_batches": u["num_microbatches"],
                       "seq_len": u["seq_length"], "sequence_parallel": bool(u["sequence_parallel_effective"]),
                       "recompute": "none", "distributed_optimizer": u["distributed_optimizer"], "precision": "bf16",
                       "cross_entropy_fusion": bool(u["cross_entropy_loss_fusion"]),
                       "capacity_factor": moe["expert_capacity_factor"] if moe else 0,
                       "vocab_divisible_by": m["make_vocab_size_divisible_by"],
                       **({"dispatcher": moe["token_dispatcher"]} if moe else {})},
            # No overlap of any kind: --overlap-grad-reduce/--overlap-param-gather not passed, TP
            # overlap disabled, p2p overlap off for the non-interleaved schedule (the source's notes).
            # MoE: the alltoall dispatcher, the router unfused, every expert's input padded to its
            # capacity (--moe-pad-expert-input-to-capacity: no host synchronisation).
            "time": dict({"fp8_recipe": "none", "cuda_graphs": False, "overlap": "none"},
                         **({"moe_pad_to_capacity": bool(moe["pad_expert_input_to_capacity"]),
                             "moe_router_fusion": False} if moe else {})),
            "step_time_s": res["real_ms"] / 1000.0,
            "memory_gib": res.get("real_alloc_gib"),
            "megatron_args": u.get("megatron_cli_reconstructed", ""),
            "notes": r.get("notes", []),
        })
    return out


LLAMA = {
    "Llama-3-8B": {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                   "intermediate_size": 14336},
    "Llama-3-70B": {"hidden_size": 8192, "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
                    "intermediate_size": 28672},
    "Llama-3.1-405B": {"hidden_size": 16384, "num_hidden_layers": 126, "num_attention_heads": 128,
                       "num_key_value_heads": 8, "intermediate_size": 53248},
}


def bridge_runs(data):
    out = []
    for r in data["runs"]:
        lay = r["layout"]
        settings = (r.get("recipe_hint") or {}).get("settings") or {}
        if r["task"] != "pretrain" or r["gpu"] not in ("H100-SXM", "B200", "GB200") or r["quality"] != "ok":
            continue
        if r["precision"] not in ("fp8-cs", "mxfp8") or lay["fsdp"] or settings.get("cpu_offloading_num_layers"):
            continue  # FSDP and CPU offloading are not modelled; NVFP4 has no kernel rows
        name = r["model"]["name"]
        arch = LLAMA[name]
        hf = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu", "vocab_size": 128256,
              "tie_word_embeddings": False, "rms_norm_eps": 1e-5, "attention_bias": False, "mlp_bias": False}
        hf.update(arch)
        n = r["num_gpus"]
        dp = n // (lay["tp"] * lay["pp"] * lay["cp"])
        if lay["gbs"] % (lay["mbs"] * dp):
            continue
        graphs = bool(settings.get("cuda_graphs")) or settings.get("cuda_graph_impl") in ("local", "transformer_engine")
        c = gb200_cluster((n + 71) // 72) if r["gpu"] == "GB200" else \
            cluster("h100-sxm.json" if r["gpu"] == "H100-SXM" else "b200.json", max(1, n // 8))
        out.append({
            "id": r["id"], "role": "fit", "source": r["source"] + " (via shared/data/measured_runs/megatron_bridge_dense_llama3.json)",
            "gpu": {"H100-SXM": "NVIDIA H100 SXM5 80GB", "B200": "NVIDIA B200", "GB200": "NVIDIA GB200"}[r["gpu"]],
            "hf_config": hf, "cluster": c,
            "layout": {"tp": lay["tp"], "pp": lay["pp"], "vp": lay["vp"] or 1, "ep": lay["ep"] or 1,
                       "etp": lay["tp"], "cp": lay["cp"], "gpus": n, "micro_batch_size": lay["mbs"],
                       "micro_batches": lay["gbs"] // (lay["mbs"] * dp), "seq_len": lay["seq_len"],
                       "sequence_parallel": lay["tp"] > 1, "recompute": "none", "distributed_optimizer": True,
                       "precision": "bf16", "cross_entropy_fusion": True, "capacity_factor": 0,
                       "vocab_divisible_by": 128},
            # Assumed: the Megatron-Bridge performance recipes overlap DP, TP and PP communication.
            "time": {"fp8_recipe": "tensorwise" if r["precision"] == "fp8-cs" else "mxfp8", "cuda_graphs": graphs,
                     "overlap": "dp,tp,pp"},
            "step_time_s": r["derived"]["step_time_s"],
            "memory_gib": None,
            "megatron_args": "",
            "notes": r.get("notes", []) + ["overlap of DP, TP and PP communication assumed (performance recipes)",
                                           "recompute none assumed (model-level recipe defaults not expanded)"],
        })
    return out


BRIDGE = "NVIDIA-NeMo/Megatron-Bridge@067f987df03b8355b03192d88d70f1709fedf51a"


def published_moe_runs():
    """The published MoE runs issue 32 quotes: Qwen3-30B-A3B on 16 H100, BF16, EP16 (Megatron-Bridge's
    canonical perf recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config: HybridEP with 32 SMs, EP
    overlap, router fusion, CUDA graphs over moe_router and moe_preprocess only, bf16 main gradients
    (grad_reduce_in_fp32 False), force-balanced routing, no recompute, MBS 1, GBS 1024, seq 4096),
    and the matched A/B without EP overlap whose throughput the same page gives (244.039 model TFLOP/s
    against 287.305 with overlap: its step time is derived from the run's by that ratio against the
    published 299.352, an earlier recipe; marked). Validation only: no H100 BF16 run is fitted."""
    hf = load(os.path.join(REPO, "tests", "data", "hf", "qwen3-30b-a3b.json"))
    layout = {"tp": 1, "pp": 1, "vp": 1, "ep": 16, "etp": 1, "cp": 1, "gpus": 16, "micro_batch_size": 1,
              "micro_batches": 64, "seq_len": 4096, "sequence_parallel": False, "recompute": "none",
              "distributed_optimizer": True, "precision": "bf16", "cross_entropy_fusion": True, "capacity_factor": 0,
              "dispatcher": "flex"}
    time = {"fp8_recipe": "none", "cuda_graphs": False, "cuda_graph_modules": ["moe_router", "moe_preprocess"],
            "overlap": "dp,ep", "moe_router_fusion": True, "moe_flex_backend": "hybridep", "moe_comm_sms": 32,
            "main_grad_bytes": 2}
    skill = f"{BRIDGE}:skills/nemo-mbridge-perf-moe-hardware-configs/SKILL.md"
    notes = ["recipe: src/megatron/bridge/perf_recipes/qwen/h100/qwen3_moe.py:35-63 and "
             "src/megatron/bridge/recipes/qwen/h100/qwen3_moe.py:146-225 at the same commit",
             "CUDA graphs over moe_router and moe_preprocess only: their kernels launch nothing, the rest is "
             "launched by the CPU"]
    base = {"role": "validate", "gpu": "NVIDIA H100 SXM5 80GB", "hf_config": hf, "cluster": cluster("h100-sxm.json", 2),
            "megatron_args": ""}
    canonical = dict(base, id="mbridge-qwen3-30b-a3b-h100-bf16-n16", source=f"{skill}:112-129; "
                     f"{BRIDGE}:docs/training/moe-optimization.md:313-318", layout=layout, time=time,
                     step_time_s=20.14729, memory_gib=62.166, notes=notes + ["measured: mean of steps 41-50"])
    ab_time = dict(time, overlap="dp")
    ab = dict(base, id="mbridge-qwen3-30b-a3b-h100-bf16-n16-no-ep-overlap", source=f"{skill}:129-131",
              layout=layout, time=ab_time, step_time_s=round(20.14729 * 299.352 / 244.039, 4), memory_gib=None,
              notes=notes + ["derived: 20.14729 s x 299.352 / 244.039 model TFLOP/s (the A/B without EP overlap of "
                             "an earlier recipe, 'Do not attribute the later 299.352 result entirely to overlap')"])
    return [canonical, ab]


GPU_NAMES = {"H100-SXM": "NVIDIA H100 SXM5 80GB", "B200": "NVIDIA B200", "GB200": "NVIDIA GB200",
             "B300": "NVIDIA B300", "GB300": "NVIDIA GB300"}


def moe_cluster(gpu, n):
    """The example cluster of the run's GPU (examples/clusters/), sized to the run: 8-GPU nodes, or
    NVL72 racks as trays of 4 (GB200, GB300)."""
    name, per_node = {"H100-SXM": ("h100-sxm.json", 8), "B200": ("b200.json", 8), "B300": ("b300.json", 8),
                      "GB200": ("gb200-nvl72.json", 4), "GB300": ("gb300-nvl72.json", 4)}[gpu]
    return cluster(name, max(1, (n + per_node - 1) // per_node))


def moe_hf_config(model):
    """The run's model as a Hugging Face config: the repository's copies of the released configs
    (tests/data/hf/qwen3-30b-a3b.json, examples/hf/mixtral-8x7b.json), Mixtral-8x22B from the
    released config's shape keys the run file lists (model.arch) on Mixtral-8x7B's other keys."""
    name = model["name"]
    if name == "Qwen3-30B-A3B":
        return load(os.path.join(REPO, "tests", "data", "hf", "qwen3-30b-a3b.json"))
    if name.startswith("Mixtral-8x"):
        hf = load(os.path.join(REPO, "examples", "hf", "mixtral-8x7b.json"))
        hf.update({k: v for k, v in model["arch"].items() if k in hf})
        return hf
    return None


def moe_role(r):
    """fit: the newest release's measurement of a configuration (superseded_by null), a performance
    run of quality ok; validate: every other Megatron-Core run (older releases of the same
    configurations, functional/resume/smoke runs, A/B studies of the skill documents)."""
    rec = r["recipe"]
    if rec["kind"] == "perf" and rec.get("superseded_by") is None and r["quality"] == "ok":
        return "fit"
    return "validate"


def moe_runs(data):
    """The runs of shared/data/measured_runs/megatron_moe_runs.json with a Megatron-Core recipe, as
    run lines priced from their exact Megatron-LM arguments (recipe.args; what no argument can say is
    in recipe.bridge_only and listed in the notes). Left out, with the reason on stderr: runs that are
    not Megatron-Core (recipe.kind "other": NeMo Automodel is PyTorch FSDP2), sanity checks, and
    models without a Hugging Face config here (the Megatron-LM CI GPT-7B)."""
    out = []
    for r in data["runs"]:
        rec = r.get("recipe")
        hf = moe_hf_config(r["model"])
        why = ("no recipe" if rec is None else "not Megatron-Core (recipe.kind other)" if rec["kind"] == "other"
               else "sanity check only" if r["quality"] == "sanity-check-only"
               else "no Hugging Face config of this model here" if hf is None else None)
        if why:
            print(f"left out {r['id']}: {why}", file=sys.stderr)
            continue
        m, derived = r["measured"], r.get("derived") or {}
        step = m.get("step_time_s", derived.get("step_time_s"))
        memory = m.get("memory_gib")  # "GB" of an unstated base is not compared (memory_gb)
        notes = list(r.get("notes", []))
        if rec.get("bridge_only"):
            notes.append("settings no Megatron-LM argument says (not read): " +
                         json.dumps(rec["bridge_only"], sort_keys=True))
        if rec.get("unknown"):
            notes.append("not resolved by the run file: " + "; ".join(rec["unknown"]))
        if m.get("memory_gb") is not None:
            notes.append(f"memory {m['memory_gb']} 'GB' of unstated base: not compared")
        out.append({
            "id": r["id"], "role": moe_role(r),
            "source": r["source"] + " (via shared/data/measured_runs/megatron_moe_runs.json)",
            "gpu": GPU_NAMES[r["gpu"]], "hf_config": hf, "cluster": moe_cluster(r["gpu"], r["num_gpus"]),
            "megatron_args": " ".join(rec["args"]), "step_time_s": step, "memory_gib": memory,
            "notes": notes + [f"recipe: {rec['recipe']} ({rec['kind']}, {rec['release']})"],
        })
    return out


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    runs = simumax_runs(load(os.path.join(argv[1], "simumax_b200_runs.json")))
    runs += bridge_runs(load(os.path.join(argv[1], "megatron_bridge_dense_llama3.json")))
    runs += published_moe_runs()
    write_runs(runs, argv[2])
    moe_path = os.path.join(os.path.dirname(argv[2]), "moe_runs.jsonl")
    write_runs(moe_runs(load(os.path.join(argv[1], "megatron_moe_runs.json"))), moe_path)
    return 0


def write_runs(runs, path):
    with open(path, "w", encoding="utf-8") as f:
        for r in runs:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"{len(runs)} runs written to {path}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
