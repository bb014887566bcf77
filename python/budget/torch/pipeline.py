"""python3 -m budget.torch.pipeline CFG --pp P --vp V --micro-batches M --loop-placement wrap --check

A reference run that proves the pipeline schedule of a looped model (issue 41, docs/torch.md
"Pipeline executor"): P CPU processes (torch.multiprocessing) joined by torch.distributed's gloo
backend run budget.torch's module of CFG split into P·V chunks through Megatron-Core's 1F1B
schedule (interleaved when V ≥ 2; pipeline_schedule.py), sending activations forward and their
gradients backward point to point, under one loop placement (in_chunk, wrap or replicated). Then:

- the loss and every parameter's gradient are compared with the single-process module's on the
  same batch (fp32; per tensor max|g − g_ref| / max|g_ref|, at most 1e-5); under `replicated` every
  copy is compared, after the all-reduce among the ranks that hold it;
- each rank's peak number of saved layer executions (layer executions whose autograd graphs are
  alive: forward done, backward not yet, measured from autograd's saved tensors) is compared with
  the planner's figure, budget.peak_saved_layer_executions(chunk_layers, pp, micro_batches).

Loss: next-token cross-entropy on random tokens, each micro-batch's mean divided by m (Megatron's
loss / num_microbatches, schedules.py:340, 346 at d98e8a64), so the sum over micro-batches is the
full batch's mean, the reference's loss.
"""

import argparse
import collections
import json
import os
import queue as queue_module
import sys
import tempfile
import time

import torch
import torch.multiprocessing as mp
import torch.nn.functional as F

import budget

from . import pipeline_schedule as plan_mod
from .model import _error, build_model, native_config
from .pipeline_rank import batch_tokens, build_reference_weights, worker

SCHEMA_VERSION = 1
TOLERANCE = 1e-5
MAX_RANKS = 32
# Every rank builds the whole module in fp32 on the CPU before keeping its share: a bound that keeps
# P processes of weights and gradients within a few GB (the executor is for small configs).
MAX_PARAMETERS = 20_000_000
PROG = "python3 -m budget.torch.pipeline"


def _argument_error(argument, message):
    """A budget.Error about a command-line argument or keyword, or a whole config (source = its name)."""
    error = budget.Error(f"{argument}: {message}")
    error.source = error.file = argument
    error.path = ""
    error.message = message
    error.value = None
    return error


def make_plan(config, pp, vp=1, micro_batches=None, loop_placement="in_chunk", chunk_layers=None, micro_batch_size=1,
              seq_len=8, seed=0, all_reduce_copies=True):
    """The run's plan as a plain dict (what every rank gets), after checking every argument;
    budget.Error names the argument (or the config's field), the value and what is allowed.
    all_reduce_copies=False leaves the gradients of parameters stored on several ranks unsummed
    (each copy holds its own rank's share): a run whose gradient check must fail, for the tests."""
    native = native_config(config)
    model = build_model(native, device="meta")  # refuses what budget.torch does not build
    source = config if isinstance(config, (str, os.PathLike)) else "config"
    if native.get("mtp_layers", 0):
        raise _error("/mtp_layers", "MTP modules are not run by the pipeline executor; allowed: 0", source=source)
    if native.get("vocab_size", 0) < 1:
        raise _error("/vocab_size", "the pipeline executor's loss needs token ids; allowed: vocab_size > 0",
                     source=source)
    parameters = sum(p.numel() for p in model.parameters())
    if parameters > MAX_PARAMETERS:
        raise _argument_error(source, f"{parameters:,} parameters; allowed: at most {MAX_PARAMETERS:,} (every CPU "
                                      "process of the pipeline executor builds the whole module)")
    if micro_batches is None:
        micro_batches = pp
    for name, value, low, high in (("--pp", pp, 2, MAX_RANKS), ("--vp", vp, 1, None),
                                   ("--micro-batches", micro_batches, 1, None),
                                   ("--micro-batch-size", micro_batch_size, 1, None), ("--seq-len", seq_len, 1, None)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
            allowed = f"{low}..{high}" if high is not None else f"at least {low}"
            raise _argument_error(name, f"{value!r}; allowed: an integer, {allowed}")
    if loop_placement not in plan_mod.PLACEMENTS:
        raise _argument_error("--loop-placement", f"{loop_placement!r}; allowed: {', '.join(plan_mod.PLACEMENTS)}")
    loop = plan_mod.Loop(model.spec.layers, model.spec.loop)
    if not loop.looped and loop_placement != "in_chunk":
        raise _argument_error("--loop-placement", f"{loop_placement} places a loop's passes, and {source} has no loop; "
                                                  "allowed: in_chunk")
    try:
        plan_mod.check_micro_batches(pp, vp, micro_batches)
        if chunk_layers is None:
            chunk_layers = plan_mod.default_split(loop, pp, vp, loop_placement)
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in chunk_layers):
            raise plan_mod.PlanError("--chunk-layers", f"{chunk_layers!r}; allowed: integers, one a chunk")
        chunk_layers = list(chunk_layers)
        plan_mod.check_split(loop, pp, vp, loop_placement, chunk_layers)
    except plan_mod.PlanError as refusal:
        raise _argument_error(refusal.argument, refusal.message) from None
    return {"config": native, "name": native.get("name", ""), "pp": pp, "vp": vp, "micro_batches": micro_batches,
            "loop_placement": loop_placement, "chunk_layers": chunk_layers,
            "chunks": plan_mod.chunk_layers(model.schedule, chunk_layers), "micro_batch_size": micro_batch_size,
            "seq_len": seq_len, "seed": seed, "all_reduce_copies": bool(all_reduce_copies)}


# ---- the run and its checks ------------------------------------------------------------------

def _reference(plan):
    """The single-process module's loss and gradients on the whole batch (fp32)."""
    model = build_reference_weights(plan)
    tokens = batch_tokens(plan)
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
    loss.backward()
    return loss.item(), {name: (p.grad if p.grad is not None else torch.zeros_like(p))
                         for name, p in model.named_parameters() if p.requires_grad}


def _relative_difference(grad, reference):
    scale = reference.abs().max().item()
    diff = (grad - reference).abs().max().item()
    if scale == 0.0:
        return 0.0 if diff == 0.0 else float("inf")
    return diff / scale


def _planner_figures(plan):
    """budget.peak_saved_layer_executions(chunk_layers, pp, micro_batches), or why there is none."""
    planner = getattr(budget, "peak_saved_layer_executions", None)
    if planner is None:
        return None, "planner figure unavailable: this build of budget has no peak_saved_layer_executions"
    return list(planner(plan["chunk_layers"], plan["pp"], plan["micro_batches"])), None


def _collect(processes, results, expected, timeout_s):
    """The workers' results; a worker's failure (its traceback) or silence past timeout_s raises."""
    received, waited = {}, 0.0
    while len(received) < expected:
        try:
            kind, index, rank, payload = results.get(timeout=0.5)
        except queue_module.Empty:
            waited += 0.5
            try:
                processes.join(timeout=0)  # raises when a worker died
            except mp.ProcessException as death:
                raise RuntimeError(str(death)) from None
            if waited > timeout_s:
                raise RuntimeError(f"no result from the workers in {timeout_s} s") from None
            continue
        if kind == "error":
            raise RuntimeError(f"rank {rank} failed:\n{payload}")
        received[(index, rank)] = payload
        waited = 0.0
    deadline = time.monotonic() + timeout_s
    while not processes.join(timeout=max(deadline - time.monotonic(), 0.0)):  # True once all have exited
        if time.monotonic() >= deadline:
            raise RuntimeError(f"the workers did not exit in {timeout_s} s after their results")
    return received


def run_plans(plans, timeout_s=120.0, start_method=None):
    """Runs plans of one pp (from make_plan) in one set of worker processes; one result dict each.
    RuntimeError when a rank fails (its traceback) or waits on a peer longer than timeout_s."""
    if not timeout_s > 0:
        raise _argument_error("--timeout", f"{timeout_s!r}; allowed: seconds > 0")
    pp = plans[0]["pp"]
    if any(plan["pp"] != pp for plan in plans):
        raise _argument_error("--pp", "plans run together share one pp")
    if start_method is None:  # fork starts in milliseconds; spawn where CUDA is initialised or fork is absent
        fork_ok = "fork" in mp.get_all_start_methods() and not torch.cuda.is_initialized()
        start_method = "fork" if fork_ok else "spawn"
    context = mp.get_context(start_method)
    results = context.Queue()
    with tempfile.TemporaryDirectory(prefix="budget-pipeline-") as directory:
        processes = mp.start_processes(worker, args=(plans, os.path.join(directory, "store"), timeout_s, results),
                                       nprocs=pp, join=False, start_method=start_method)
        try:
            received = _collect(processes, results, len(plans) * pp, timeout_s)
        finally:
            for process in processes.processes:
                if process.is_alive():
                    process.terminate()
    return [_report(plan, [received[(index, rank)] for rank in range(pp)]) for index, plan in enumerate(plans)]


def _report(plan, ranks):
    """The result document of one plan: measured figures, reference differences and the checks."""
    reference_loss, reference = _reference(plan)
    loss = sum(r["loss"] for r in ranks)
    worst, worst_name, checked, copies = 0.0, None, 0, collections.Counter()
    for r in ranks:
        for name, grad in r["grads"].items():
            difference = _relative_difference(torch.from_numpy(grad), reference[name])
            checked += 1
            copies[name] += 1
            if difference > worst or worst_name is None:
                worst, worst_name = difference, f"rank {r['rank']}: {name}"
    missing = sorted(set(reference) - set(copies))
    planner, unavailable = _planner_figures(plan)
    loss_diff = abs(loss - reference_loss) / abs(reference_loss)
    rank_rows = []
    for r in ranks:
        rank_rows.append({"rank": r["rank"], "chunks": r["chunks"], "stored_layers": r["stored_layers"],
                          "executed_layers": r["executed_layers"], "stored_parameters": r["stored_parameters"],
                          "peak_saved_layer_executions": r["peak"],
                          "planner_saved_layer_executions": None if planner is None else planner[r["rank"]]})
    checks = {"gradients": worst <= TOLERANCE and not missing, "loss": loss_diff <= TOLERANCE,
              "saved_layer_executions": (None if planner is None
                                         else all(row["peak_saved_layer_executions"] == row["planner_saved_layer_executions"]
                                                  for row in rank_rows))}
    return {"schema_version": SCHEMA_VERSION, "config": plan["name"], "pp": plan["pp"], "vp": plan["vp"],
            "micro_batches": plan["micro_batches"], "micro_batch_size": plan["micro_batch_size"],
            "seq_len": plan["seq_len"], "loop_placement": plan["loop_placement"],
            "schedule": "interleaved 1F1B" if plan["vp"] > 1 else "1F1B",
            "chunk_layers": plan["chunk_layers"],
            "chunks": [[index + 1 for index, _ in chunk] for chunk in plan["chunks"]],
            "loss": loss, "reference_loss": reference_loss, "loss_rel_diff": loss_diff,
            "max_rel_grad_diff": worst, "worst_parameter": worst_name, "parameters_checked": checked,
            "replicated_layers": sorted({int(name.split(".")[1]) + 1 for name, n in copies.items()
                                         if n > 1 and name.startswith("layers.")}),
            "replicated_other_parameters": sorted(name for name, n in copies.items()
                                                  if n > 1 and not name.startswith("layers.")),
            "missing_parameters": missing, "all_reduce_groups": ranks[0]["shared"],
            "all_reduce_copies": plan["all_reduce_copies"],
            "tolerance": TOLERANCE, "ranks": rank_rows,
            "planner": unavailable or "budget.peak_saved_layer_executions",
            "checks": checks, "passed": all(value is True for value in checks.values())}


def run(config, pp, vp=1, micro_batches=None, loop_placement="in_chunk", chunk_layers=None, micro_batch_size=1,
        seq_len=8, seed=0, timeout_s=120.0, start_method=None):
    """One pipeline run and its checks (the command's JSON document as a dict)."""
    plan = make_plan(config, pp, vp, micro_batches, loop_placement, chunk_layers, micro_batch_size, seq_len, seed)
    return run_plans([plan], timeout_s, start_method)[0]


def parse_args(argv):
    parser = argparse.ArgumentParser(prog=PROG, description="Run a looped model through Megatron-Core's 1F1B pipeline "
                                     "schedule on CPU processes (gloo) and check it against the single-process module.")
    parser.add_argument("config", metavar="CFG", help="native or Hugging Face config file")
    parser.add_argument("--pp", type=int, required=True, help=f"pipeline ranks (processes), 2..{MAX_RANKS}")
    parser.add_argument("--vp", type=int, default=1, help="model chunks a rank (default 1: the non-interleaved schedule)")
    parser.add_argument("--micro-batches", type=int, default=None, help="m (default pp)")
    parser.add_argument("--loop-placement", default="in_chunk", help="in_chunk (default), wrap or replicated")
    parser.add_argument("--chunk-layers", default=None,
                        help="executed layers of each global chunk c = v*pp + s, comma-separated (default: balanced)")
    parser.add_argument("--micro-batch-size", type=int, default=1, help="sequences a micro-batch (default 1)")
    parser.add_argument("--seq-len", type=int, default=8, help="tokens a sequence (default 8)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a rank may wait for a peer (default 120)")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 unless the gradients, the loss and the saved-activation peaks all match")
    return parser.parse_args(argv)


def _parse_chunk_layers(text):
    if text is None:
        return None
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise _argument_error("--chunk-layers", f"{text!r}; allowed: comma-separated integers, e.g. 2,4,4,2") from None


def format_json(value, depth=0):
    """JSON with objects and lists of objects one entry a line, other lists on one line."""
    pad = "  " * depth
    if isinstance(value, dict) and value:
        entries = [f'{pad}  {json.dumps(key)}: {format_json(item, depth + 1)}' for key, item in value.items()]
        return "{\n" + ",\n".join(entries) + f"\n{pad}}}"
    if isinstance(value, list) and any(isinstance(item, dict) for item in value):
        entries = [f"{pad}  {format_json(item, depth + 1)}" for item in value]
        return "[\n" + ",\n".join(entries) + f"\n{pad}]"
    return json.dumps(value)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        result = run(args.config, args.pp, args.vp, args.micro_batches, args.loop_placement,
                     _parse_chunk_layers(args.chunk_layers), args.micro_batch_size, args.seq_len, args.seed,
                     args.timeout)
    except budget.Error as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    except RuntimeError as failure:  # a rank failed or fell silent: no result to check
        print(f"{PROG}: error: {failure}", file=sys.stderr)
        return 1
    print(format_json(result))
    if args.check and not result["passed"]:
        failed = [name for name, ok in result["checks"].items() if ok is not True]
        print(f"{PROG}: check failed: {', '.join(failed)}"
              + (f" ({result['planner']})" if result["checks"]["saved_layer_executions"] is None else ""),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
