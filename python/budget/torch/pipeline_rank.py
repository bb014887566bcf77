"""One pipeline rank of budget.torch.pipeline: its share of the module, its steps in Megatron-Core's
order with point-to-point activations and gradients (gloo), the all-reduce of stored copies, and the
count of saved layer executions (docs/torch.md, "Pipeline executor")."""

import collections
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F

from . import pipeline_schedule as plan_mod
from .model import attention_mask, build_model


class _Packed:
    """A tensor autograd saved during one layer execution; its release is that execution's."""

    __slots__ = ("tensor", "tracker", "execution")

    def __init__(self, tensor, tracker, execution):
        self.tensor, self.tracker, self.execution = tensor, tracker, execution
        tracker.saved(execution)

    def __del__(self):
        self.tracker.released(self.execution)


class SavedExecutions:
    """Counts the layer executions that hold saved tensors in autograd (torch's saved-tensor hooks:
    pack at forward, released when backward frees the graph), and their peak."""

    def __init__(self):
        self.tensors = collections.Counter()
        self.peak = 0

    def execution(self, execution):
        return torch.autograd.graph.saved_tensors_hooks(lambda t: _Packed(t, self, execution), lambda p: p.tensor)

    def saved(self, execution):
        self.tensors[execution] += 1
        self.peak = max(self.peak, len(self.tensors))

    def released(self, execution):
        self.tensors[execution] -= 1
        if self.tensors[execution] == 0:
            del self.tensors[execution]


def batch_tokens(plan):
    """Token ids [m·b, T + 1] (inputs [:, :-1], labels [:, 1:]), the same on every rank and the reference."""
    generator = torch.Generator().manual_seed(plan["seed"] + 1)
    rows = plan["micro_batches"] * plan["micro_batch_size"]
    return torch.randint(0, plan["config"]["vocab_size"], (rows, plan["seq_len"] + 1), generator=generator)


def build_reference_weights(plan):
    """The module with the run's weights: built after torch.manual_seed(seed), on every rank and for the reference."""
    torch.manual_seed(plan["seed"])
    return build_model(plan["config"], dtype=torch.float32)


def _rank_chunks(plan, rank):
    return list(range(rank, plan["pp"] * plan["vp"], plan["pp"]))


def used_parameters(model, plan, rank):
    """Names of the trainable parameters `rank` stores: those of every layer its chunks run, the
    embedding with chunk 0, the final norm and LM head (tied: the embedding) with the last chunk."""
    last = plan["pp"] * plan["vp"] - 1
    prefixes = set()
    for c in _rank_chunks(plan, rank):
        prefixes |= {f"layers.{index}." for index, _ in plan["chunks"][c]}
        if c == 0:
            prefixes.add("embedding.")
        if c == last:
            prefixes |= {"final_norm.", "lm_head.", "lm_head_bias"}
            if model.lm_head is None:
                prefixes.add("embedding.")
    return [name for name, p in model.named_parameters()
            if p.requires_grad and any(name.startswith(prefix) for prefix in prefixes)]


def _chunk_forward(model, plan, c, x, tokens, mb, tracker):
    """Chunk c on micro-batch mb: the embedding first (c = 0), its layers, then (last chunk) the
    final norm, LM head and the loss / m."""
    b, tokens_per_row = plan["micro_batch_size"], plan["seq_len"]
    rows = tokens[mb * b:(mb + 1) * b]
    h = model.embedding(rows[:, :-1]) if c == 0 else x
    positions = torch.arange(tokens_per_row)
    windows = {model.layers[index].window for index, _ in plan["chunks"][c]} | {0}
    masks = {w: attention_mask(tokens_per_row, w, None, h.device) for w in windows}
    for j, (index, scale) in enumerate(plan["chunks"][c]):
        with tracker.execution((c, mb, j)):
            h = model.layers[index](h, masks, positions, scale)
    if c < plan["pp"] * plan["vp"] - 1:
        return h
    logits = model.logits(model.final_norm(h))
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), rows[:, 1:].reshape(-1))
    return loss / plan["micro_batches"]


def _run_steps(model, plan, rank, tokens, tracker):
    """This rank's steps in Megatron's order, with activations and gradients sent point to point
    (isend; recv blocks until the peer's send: tag = (direction·K + receiving chunk)·m + micro-batch).
    Returns the rank's loss (the last chunk's sum, else 0)."""
    pp, m = plan["pp"], plan["micro_batches"]
    chunks = pp * plan["vp"]
    shape = (plan["micro_batch_size"], plan["seq_len"], plan["config"]["hidden_size"])
    pending = collections.defaultdict(collections.deque)
    sends, loss = [], 0.0

    def tag(direction, chunk, mb):
        return (direction * chunks + chunk) * m + mb

    for kind, v, mb in plan_mod.rank_steps(pp, plan["vp"], rank, m):
        c = v * pp + rank
        if kind == "F":
            x = None
            if c > 0:
                x = torch.empty(shape)
                dist.recv(x, (c - 1) % pp, tag=tag(0, c, mb))
                x.requires_grad_()
            out = _chunk_forward(model, plan, c, x, tokens, mb, tracker)
            pending[v].append((x, out))
            if c < chunks - 1:
                sent = out.detach()
                sends.append((dist.isend(sent, (c + 1) % pp, tag=tag(0, c + 1, mb)), sent))
            else:
                loss += out.item()
        else:
            x, out = pending[v].popleft()
            if c == chunks - 1:
                torch.autograd.backward(out)
            else:
                grad = torch.empty(shape)
                dist.recv(grad, (c + 1) % pp, tag=tag(1, c, mb))
                torch.autograd.backward(out, grad)
            if c > 0:
                sends.append((dist.isend(x.grad, (c - 1) % pp, tag=tag(1, c - 1, mb)), x.grad))
    for work, _ in sends:
        work.wait()
    return loss


def _all_reduce_copies(model, plan, rank, groups, holders):
    """Sums the gradients of every parameter stored on several ranks (holders: name → ranks) among
    those ranks, as Megatron sums a tied embedding's two copies (megatron/core/distributed/
    finalize_model_grads.py:164-258 at d98e8a64): one flat buffer per set of ranks, the sets in one
    global order (so that overlapping groups cannot deadlock). Returns the sets."""
    buckets = collections.defaultdict(list)
    for name, ranks in holders.items():
        if len(ranks) > 1:
            buckets[tuple(ranks)].append(name)
    parameters = dict(model.named_parameters())
    for ranks in sorted(buckets):
        if ranks not in groups:
            groups[ranks] = dist.new_group(list(ranks))  # every rank creates every group, in this order
        if rank not in ranks:
            continue
        tensors = [parameters[name] for name in buckets[ranks]]
        for p in tensors:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        flat = torch.cat([p.grad.reshape(-1) for p in tensors])
        dist.all_reduce(flat, group=groups[ranks])
        offset = 0
        for p in tensors:
            p.grad.copy_(flat[offset:offset + p.numel()].view_as(p))
            offset += p.numel()
    return [list(ranks) for ranks in sorted(buckets)]


def _drop_unused(model, plan, rank):
    """Keeps only what `rank` stores: the layers its chunks run (each module once, however many of
    its chunks run it), the embedding with chunk 0, the final norm and LM head with the last chunk."""
    stored = {index for c in _rank_chunks(plan, rank) for index, _ in plan["chunks"][c]}
    for index in range(len(model.layers)):
        if index not in stored:
            model.layers[index] = torch.nn.Identity()
    chunks = _rank_chunks(plan, rank)
    last = plan["pp"] * plan["vp"] - 1 in chunks
    if 0 not in chunks and not (last and model.lm_head is None):
        model.embedding = None
    if not last:
        model.final_norm = model.lm_head = model.lm_head_bias = None
    return sorted(index + 1 for index in stored)


def _run_rank(plan, rank, groups):
    model = build_reference_weights(plan)
    holders = collections.defaultdict(list)
    for r in range(plan["pp"]):
        for name in used_parameters(model, plan, r):
            holders[name].append(r)
    names = used_parameters(model, plan, rank)
    stored = _drop_unused(model, plan, rank)
    tokens = batch_tokens(plan)
    tracker = SavedExecutions()
    loss = _run_steps(model, plan, rank, tokens, tracker)
    if tracker.tensors:
        raise RuntimeError(f"rank {rank}: layer executions {sorted(tracker.tensors)} still hold saved tensors "
                           "after every backward step")
    shared = _all_reduce_copies(model, plan, rank, groups, holders) if plan["all_reduce_copies"] else []
    dist.barrier()
    parameters = dict(model.named_parameters())
    # numpy arrays travel by value: a shared-memory tensor would need this process alive to be read
    grads = {name: (parameters[name].grad if parameters[name].grad is not None
                    else torch.zeros_like(parameters[name])).detach().numpy().copy() for name in names}
    return {"rank": rank, "loss": loss, "grads": grads, "peak": tracker.peak, "shared": shared,
            "chunks": _rank_chunks(plan, rank), "stored_layers": stored,
            "executed_layers": sum(len(plan["chunks"][c]) for c in _rank_chunks(plan, rank)),
            "stored_parameters": sum(p.numel() for p in model.parameters())}


def worker(rank, plans, store, timeout_s, results):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=plans[0]["pp"],
                            timeout=timedelta(seconds=timeout_s))
    try:
        groups = {}
        for index, plan in enumerate(plans):
            results.put(("result", index, rank, _run_rank(plan, rank, groups)))
    except Exception:
        results.put(("error", None, rank, traceback.format_exc()))
        raise
    finally:
        dist.destroy_process_group()
