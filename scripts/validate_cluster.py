#!/usr/bin/env python3
"""Compare the cluster step-time model with measured Megatron-Core runs (docs/cluster.md,
"Checked against measured Megatron-Core runs").

Reads tests/data/megatron_measured.json (schema budget.megatron_measured, version 1), predicts each
comparable run with `budget-match layout CFG --cluster C --gpus N <its layout> --format json` at the
run's exact layout, batch and sequence length, and prints per run the predicted and measured step
seconds and tokens/s/GPU and the error, and per model whether the order across layouts is kept.
Runs marked "comparable": false are listed with their reason and never scored.

  error = predicted seconds per step / measured seconds per step − 1
  measured seconds per step = GBS · seq_len / (tokens/s/GPU · GPUs)

With --max-abs-error X the script fails (exit 1) when a compared run's |error| exceeds X; with
--expect-compared N when the number of compared runs is not N; with --require-order when a model
with two or more distinct compared layouts has them in another order than measured; with
--require-fit when the planner says a compared run (which did run) does not fit memory. Exit 2 for a
data file it does not understand.
"""
import argparse
import json
import os
import subprocess
import sys

SCHEMA = "budget.megatron_measured"


class DataError(Exception):
    pass


def megatron_core_09_flops_per_token(hf, seq_len, padded_vocab):
    """Model FLOPs per token as Megatron-LM counts them (num_floating_point_operations,
    megatron/training/training.py at core_r0.9.0, the same at core_r0.8.0, for a GQA model with SwiGLU experts and no MLA):

      12 · L · H² · [ (1 + g/a + s/H) · (d·a/H) + (F/H) · k · 3/2 + V/(2·L·H) ]

    L layers, H hidden, a heads, g query groups, d kv_channels (head_dim), s sequence length
    (the full s × s attention, not the causal half), F ffn_hidden_size, k top-k (1 for dense),
    V the padded vocabulary. The 12 = 3 passes × 2 GEMMs a block × 2 FLOPs a multiply-add."""
    for key in ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size"):
        if key not in hf:
            raise DataError(f"the Megatron FLOPs formula needs '{key}' in the config")
    if hf.get("hidden_act", "silu") != "silu":
        raise DataError("the Megatron FLOPs formula here covers SwiGLU (hidden_act silu) only")
    H = hf["hidden_size"]
    L = hf["num_hidden_layers"]
    a = hf["num_attention_heads"]
    g = hf.get("num_key_value_heads", a)
    d = hf.get("head_dim", H // a)
    F = hf["intermediate_size"]
    k = hf.get("num_experts_per_tok", 1) if hf.get("num_local_experts") else 1
    per_layer = (1 + g / a + seq_len / H) * (d * a / H) + (F / H) * k * 1.5 + padded_vocab / (2 * L * H)
    return 12.0 * L * H * H * per_layer


def padded_vocab(vocab, divisible_by, tp):
    if not divisible_by:
        return vocab
    multiple = divisible_by * tp
    return (vocab + multiple - 1) // multiple * multiple


def layout_args(run):
    lay = run["layout"]
    known = {"tp", "sequence_parallel", "pp", "vp", "ep", "etp", "cp", "recompute", "distributed_optimizer", "fsdp"}
    unknown = set(lay) - known
    if unknown:
        raise DataError(f"run {run['id']}: layout keys {sorted(unknown)} are not understood")
    if lay.get("fsdp"):
        raise DataError(f"run {run['id']}: FSDP is not modelled; mark the run not comparable")
    dp = run["gpus"] // (lay.get("tp", 1) * lay.get("cp", 1) * lay.get("pp", 1))
    mbs = run["micro_batch_size"]
    if run["global_batch_size"] % (mbs * dp) != 0:
        raise DataError(f"run {run['id']}: GBS {run['global_batch_size']} is not a multiple of MBS·DP = {mbs * dp}")
    micro_batches = run["global_batch_size"] // (mbs * dp)
    args = ["--gpus", str(run["gpus"]), "--nodes", str(run["nodes"]), "--tp", str(lay.get("tp", 1)),
            "--pp", str(lay.get("pp", 1)), "--vp", str(lay.get("vp", 1)), "--ep", str(lay.get("ep", 1)),
            "--cp", str(lay.get("cp", 1)), "--micro-batch-size", str(mbs), "--micro-batches", str(micro_batches),
            "--seq-len", str(run["seq_len"]), "--recompute", lay.get("recompute", "none"),
            "--attended-keys", "0"]  # causal sequences, as Megatron's pretraining runs them (layout's default is the workload's)
    if "etp" in lay:
        args += ["--etp", str(lay["etp"])]
    if lay.get("sequence_parallel"):
        args.append("--sequence-parallel")
    if lay.get("distributed_optimizer"):
        args.append("--distributed-optimizer")
    if run.get("vocab_divisible_by"):
        args += ["--vocab-divisible-by", str(run["vocab_divisible_by"])]
    return args, micro_batches


def measured_tokens_per_second(run, root):
    m = run["measured"]
    if "tokens_per_second_per_gpu" in m:
        return float(m["tokens_per_second_per_gpu"]), "measured"
    if m.get("flops_formula") != "megatron_core_0.9" or "model_tflops_per_gpu" not in m:
        raise DataError(f"run {run['id']}: needs tokens_per_second_per_gpu, or model_tflops_per_gpu with "
                        "flops_formula 'megatron_core_0.9'")
    with open(os.path.join(root, run["config"]), encoding="utf-8") as f:
        hf = json.load(f)
    vocab = padded_vocab(hf["vocab_size"], run.get("vocab_divisible_by", 0), run["layout"].get("tp", 1))
    flops = megatron_core_09_flops_per_token(hf, run["seq_len"], vocab)
    return m["model_tflops_per_gpu"] * 1e12 / flops, f"from {m['model_tflops_per_gpu']} TFLOP/s at {flops:.4g} FLOPs/token"


def predict(exe, root, data, run):
    args, micro_batches = layout_args(run)
    cmd = [exe, "layout", run["config"], "--cluster", data["cluster"], "--profile", data["profile"]] + args + [
        "--format", "json"]
    p = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if p.returncode not in (0, 3):
        raise DataError(f"run {run['id']}: budget-match layout failed ({p.returncode}): {p.stderr.strip()}")
    out = json.loads(p.stdout)
    if out.get("time") is None:
        raise DataError(f"run {run['id']}: no step time in the layout output ({out.get('time_missing')})")
    return out, micro_batches, cmd


def layout_key(run):
    lay = run["layout"]
    return json.dumps([lay, run["micro_batch_size"], run["global_batch_size"], run["seq_len"], run["gpus"]],
                      sort_keys=True)


def order_checks(rows):
    """Per model: with two or more distinct layouts, whether the predicted order of step time per
    token equals the measured one (every pair). Repeated measurements of one layout are averaged."""
    by_model = {}
    for r in rows:
        by_model.setdefault(r["model"], {}).setdefault(r["layout_key"], []).append(r)
    out = []
    for model, layouts in by_model.items():
        if len(layouts) < 2:
            out.append({"model": model, "layouts": len(layouts), "order_kept": None,
                        "note": "one layout only: no order to check"})
            continue
        pts = [(sum(x["measured_tokens_per_second_per_gpu"] for x in v) / len(v),
                v[0]["predicted_tokens_per_second_per_gpu"], v[0]["id"]) for v in layouts.values()]
        kept = all((a[0] - b[0]) * (a[1] - b[1]) > 0 for i, a in enumerate(pts) for b in pts[i + 1:])
        out.append({"model": model, "layouts": len(layouts), "order_kept": kept, "note": ""})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--exe", required=True, help="budget-match")
    ap.add_argument("--data", default="tests/data/megatron_measured.json")
    ap.add_argument("--root", default=".", help="repository root (paths in the data file are relative to it)")
    ap.add_argument("--format", choices=["table", "json"], default="table")
    ap.add_argument("--max-abs-error", type=float)
    ap.add_argument("--expect-compared", type=int)
    ap.add_argument("--require-order", action="store_true")
    ap.add_argument("--require-fit", action="store_true")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    exe = os.path.abspath(a.exe)
    try:
        with open(os.path.join(root, a.data), encoding="utf-8") as f:
            data = json.load(f)
        if data.get("schema") != SCHEMA or data.get("schema_version") != 1:
            raise DataError(f"{a.data}: schema must be '{SCHEMA}' version 1")
        compared, skipped = [], []
        for run in data["runs"]:
            if not run.get("comparable"):
                if not run.get("reason"):
                    raise DataError(f"run {run['id']}: not comparable without a reason")
                skipped.append(run)
                continue
            if run.get("precision") != "bf16":
                raise DataError(f"run {run['id']}: precision {run.get('precision')} is marked comparable; only bf16 is")
            out, m, cmd = predict(exe, root, data, run)
            t = out["time"]
            measured_tps, how = measured_tokens_per_second(run, root)
            tokens_per_step = run["global_batch_size"] * run["seq_len"]
            if t["tokens_per_step"] != tokens_per_step:
                raise DataError(f"run {run['id']}: the layout's step has {t['tokens_per_step']} tokens, "
                                f"the run {tokens_per_step}")
            measured_step = tokens_per_step / (measured_tps * run["gpus"])
            comps = {k: v["seconds"] for k, v in t["by_component"].items() if not v["overlapped"]}
            compared.append({
                "id": run["id"], "model": run["model"], "layout_key": layout_key(run),
                "layout": run["layout"], "micro_batches": m,
                "predicted_seconds_per_step": t["seconds_per_step"], "measured_seconds_per_step": measured_step,
                "predicted_tokens_per_second_per_gpu": t["tokens_per_second_per_gpu"],
                "measured_tokens_per_second_per_gpu": measured_tps, "measured_how": how,
                "error": t["seconds_per_step"] / measured_step - 1.0,
                "fits_memory": out["memory"]["fits"], "components_seconds": comps,
                "notes": t.get("notes", []), "command": " ".join(cmd[1:]),
            })
    except (DataError, KeyError, json.JSONDecodeError, OSError) as e:
        print(f"validate_cluster: {e}", file=sys.stderr)
        return 2
    orders = order_checks(compared)
    worst = max((abs(r["error"]) for r in compared), default=0.0)
    if a.format == "json":
        print(json.dumps({"schema": "budget.validate_cluster", "schema_version": 1, "cluster": data["cluster"],
                          "profile": data["profile"], "compared": compared, "order": orders,
                          "worst_abs_error": worst,
                          "not_compared": [{"id": r["id"], "model": r["model"], "precision": r["precision"],
                                            "reason": r["reason"]} for r in skipped]}, indent=2))
    else:
        print(f"cluster {data['cluster']}, time profile {data['profile']}")
        print(f"{'run':38} {'layout':26} {'pred s/step':>11} {'meas s/step':>11} {'pred tok/s/GPU':>14} "
              f"{'meas tok/s/GPU':>14} {'error':>7}")
        for r in compared:
            lay = r["layout"]
            shape = f"TP{lay.get('tp', 1)} PP{lay.get('pp', 1)} VP{lay.get('vp', 1)} EP{lay.get('ep', 1)} m{r['micro_batches']}"
            print(f"{r['id']:38} {shape:26} {r['predicted_seconds_per_step']:11.3f} {r['measured_seconds_per_step']:11.3f} "
                  f"{r['predicted_tokens_per_second_per_gpu']:14.0f} {r['measured_tokens_per_second_per_gpu']:14.0f} "
                  f"{r['error']:+7.1%}")
            parts = ", ".join(f"{k} {v:.3f}" for k, v in r["components_seconds"].items() if v > 0)
            fits = "fits memory" if r["fits_memory"] else "DOES NOT FIT memory"
            print(f"  {'':36} exposed parts (s): {parts}; {fits}; measured: {r['measured_how']}")
        print(f"worst |error| {worst:.1%} over {len(compared)} compared runs")
        for o in orders:
            verdict = {True: "order kept", False: "order NOT kept", None: o["note"]}[o["order_kept"]]
            print(f"order, {o['model']}: {o['layouts']} layout(s): {verdict}")
        for r in skipped:
            print(f"not compared: {r['id']} ({r['model']}, {r['precision']}): {r['reason']}")
    failed = []
    if a.max_abs_error is not None and worst > a.max_abs_error:
        failed.append(f"worst |error| {worst:.4f} exceeds {a.max_abs_error}")
    if a.expect_compared is not None and len(compared) != a.expect_compared:
        failed.append(f"{len(compared)} runs compared, expected {a.expect_compared}")
    if a.require_order and any(o["order_kept"] is False for o in orders):
        failed.append("the order across layouts is not kept for " +
                      ", ".join(o["model"] for o in orders if o["order_kept"] is False))
    if a.require_fit and not all(r["fits_memory"] for r in compared):
        failed.append("the planner says a measured run does not fit memory: " +
                      ", ".join(r["id"] for r in compared if not r["fits_memory"]))
    for f in failed:
        print(f"validate_cluster: FAILED: {f}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
