"""The pipeline executor's plan, without torch: chunks of the executed layers, their placement on
pipeline ranks, and the order of forward and backward steps of Megatron-Core's 1F1B schedules.

Conventions (Megatron-Core at d98e8a64, megatron/core/pipeline_parallel/schedules.py):

- P pipeline ranks, V model chunks a rank, K = P·V global chunks. Global chunk c = v·P + s is local
  chunk v of rank s (c mod P = s: the layer offset of virtual stage v on rank s is
  v·L/V + s·L/(P·V) = (v·P + s)·L/(P·V), megatron/core/transformer/transformer_layer.py:199-202);
  the executed layers run through chunks 0, 1, ..., K − 1 in order (chunk c's output is chunk c + 1's
  input).
- V ≥ 2: the interleaved schedule (forward_backward_pipelining_with_interleaving), with the default
  microbatch_group_size_per_vp_stage = P (model_parallel_config.py:567-568). m must be a multiple of
  P (schedules.py:1160-1180: the group size lies in [P, m] and the last group is full or ≥ P).
- V = 1: the non-interleaved 1F1B schedule (forward_backward_pipelining_without_interleaving, the
  one get_forward_backward_func returns without a virtual pipeline size, schedules.py:157-166).

Loop placements (issue 41): the loop block (physical layers first..last, run r times in a row)
- ``in_chunk``: all r passes inside one chunk;
- ``wrap``: each pass split into q chunks, q a multiple of P, the same split every pass; then chunk
  j of pass k + 1 is c + q ≡ c (mod P): on the rank of chunk j of pass k, which stores that share once;
  the layers before and after the loop fill chunks of their own;
- ``replicated``: any contiguous split; a rank stores a copy of every layer it executes.
"""

PLACEMENTS = ("in_chunk", "wrap", "replicated")


class PlanError(ValueError):
    """Bad arguments for the executor: (argument, message); budget.torch.pipeline raises a budget.Error."""

    def __init__(self, argument, message):
        super().__init__(f"{argument}: {message}")
        self.argument = argument
        self.message = message


class Loop:
    """The executed order of a stack of `layers` physical layers with the loop (first, last, repeats),
    1-based inclusive, or None: `before` executions, `repeats` passes of `length`, `after`."""

    def __init__(self, layers, loop):
        if loop is None or loop[2] <= 1:
            self.first, self.last, self.repeats = 1, 0, 1
        else:
            self.first, self.last, self.repeats = loop
        self.layers = layers
        self.length = self.last - self.first + 1 if self.repeats > 1 else 0
        self.before = self.first - 1 if self.repeats > 1 else layers
        self.after = layers - self.last if self.repeats > 1 else 0
        self.executed = self.before + self.repeats * self.length + self.after

    @property
    def looped(self):
        return self.repeats > 1


def balanced_split(units, groups):
    """Sizes of the split of the list `units` (sizes of indivisible pieces) into `groups` contiguous
    nonempty groups whose largest total is the smallest possible; among those, the lexicographically
    smallest list of group totals (the first groups as small as they can be). None if groups exceed
    the pieces."""
    if groups < 1 or groups > len(units):
        return None if units or groups else []

    def fewest_groups(start, cap):
        count, total = 0, None
        for size in units[start:]:
            if size > cap:
                return None
            if total is None or total + size > cap:
                count, total = count + 1, size
            else:
                total += size
        return count

    def feasible(start, count, cap):
        if len(units) - start < count:
            return False
        fewest = fewest_groups(start, cap)
        return fewest is not None and fewest <= count

    cap = max(units)
    while not feasible(0, groups, cap):
        cap += 1
    sizes, start = [], 0
    for remaining in range(groups, 0, -1):
        end, total = start + 1, units[start]
        if remaining == 1:
            total, end = sum(units[start:]), len(units)
        else:
            while not feasible(end, remaining - 1, cap):
                total += units[end]
                end += 1
        sizes.append(total)
        start = end
    return sizes


def default_split(loop, pp, vp, placement):
    """Executed layers of each global chunk under `placement`, or a PlanError saying why none exists."""
    chunks = pp * vp
    if placement == "replicated" or not loop.looped:
        split = balanced_split([1] * loop.executed, chunks)
        if split is None:
            raise PlanError("--vp", f"{vp} chunks a rank on {pp} ranks is {chunks} chunks for {loop.executed} executed "
                                    f"layers; allowed: at most {loop.executed} chunks (each runs at least one layer)")
        return split
    if placement == "in_chunk":
        units = [1] * loop.before + [loop.repeats * loop.length] + [1] * loop.after
        split = balanced_split(units, chunks)
        if split is None:
            raise PlanError("--vp", f"in_chunk keeps the loop's {loop.repeats} passes in one chunk: {len(units)} pieces "
                                    f"({loop.before} layers before, the loop, {loop.after} after) cannot fill {chunks} "
                                    f"chunks ({pp} ranks x {vp}); allowed: pp x vp <= {len(units)}")
        return split
    return _wrap_split(loop, pp, vp)


def _wrap_split(loop, pp, vp):
    """wrap: a chunks before the loop, q per pass (q a multiple of P), b after, a + r·q + b = P·V,
    each part split evenly; the smallest largest chunk, then the lexicographically smallest."""
    chunks, best = pp * vp, None
    for q in range(pp, loop.length + 1, pp):
        for a in range(1 if loop.before else 0, loop.before + 1):
            b = chunks - a - loop.repeats * q
            if b < (1 if loop.after else 0) or b > loop.after:
                continue
            split = ((balanced_split([1] * loop.before, a) if a else [])
                     + balanced_split([1] * loop.length, q) * loop.repeats
                     + (balanced_split([1] * loop.after, b) if b else []))
            key = (max(split), split)
            if best is None or key < best:
                best = key
    if best is None:
        counts = sorted({a + loop.repeats * q + b for q in range(pp, loop.length + 1, pp)
                         for a in range(1 if loop.before else 0, loop.before + 1)
                         for b in range(1 if loop.after else 0, loop.after + 1)})
        allowed = sorted({n // pp for n in counts if n % pp == 0})
        raise PlanError("--vp", f"wrap splits each of the loop's {loop.repeats} passes of {loop.length} layers into a "
                                f"multiple of pp = {pp} chunks, with {loop.before} layers before and {loop.after} "
                                f"after in chunks of their own: {pp} x {vp} = {chunks} chunks cannot be filled; "
                                f"allowed vp: {', '.join(map(str, allowed)) or 'none at this pp'}")
    return best[1]


def chunk_bounds(split):
    """[start, end) positions in the executed order of each chunk."""
    bounds, start = [], 0
    for size in split:
        bounds.append((start, start + size))
        start += size
    return bounds


def check_split(loop, pp, vp, placement, split):
    """Raise a PlanError when `split` (executed layers per global chunk) is not a split of this
    placement: K = P·V positive entries summing to the executed layers, and the placement's rule."""
    where = "--chunk-layers"
    if len(split) != pp * vp:
        raise PlanError(where, f"{len(split)} entries; allowed: pp x vp = {pp * vp}")
    if any(size < 1 for size in split):
        raise PlanError(where, f"{split} has an entry below 1; allowed: every chunk runs at least one layer")
    if sum(split) != loop.executed:
        raise PlanError(where, f"the entries sum to {sum(split)}; allowed: the {loop.executed} executed layers")
    if not loop.looped or placement == "replicated":
        return
    bounds = chunk_bounds(split)
    loop_start, loop_end = loop.before, loop.before + loop.repeats * loop.length
    if placement == "in_chunk":
        if not any(start <= loop_start and loop_end <= end for start, end in bounds):
            raise PlanError(where, f"{split} splits the loop (executed positions {loop_start + 1}..{loop_end}); "
                                   f"in_chunk keeps all {loop.repeats} passes in one chunk")
        return
    edges = {loop_start + k * loop.length for k in range(loop.repeats + 1)}
    starts = {start for start, _ in bounds}
    if not edges <= starts | {loop.executed}:
        raise PlanError(where, f"{split}: a chunk spans a pass boundary of the loop; wrap starts a chunk at each pass "
                               f"(executed positions {', '.join(str(e + 1) for e in sorted(edges - {loop_end}))}) "
                               "and after the loop")
    passes = [[end - start for start, end in bounds if first <= start < first + loop.length]
              for first in sorted(edges - {loop_end})]
    if any(p != passes[0] for p in passes) or len(passes[0]) % pp != 0:
        raise PlanError(where, f"{split}: the passes are split as {passes}; wrap splits every pass the same way into "
                               f"a multiple of pp = {pp} chunks")


def chunk_layers(schedule, split):
    """The executed layers of each global chunk: lists of (0-based physical layer, residual scale)."""
    return [schedule[start:end] for start, end in chunk_bounds(split)]


def check_micro_batches(pp, vp, micro_batches):
    """Megatron's conditions on m (the module docstring)."""
    if micro_batches < 1:
        raise PlanError("--micro-batches", f"{micro_batches}; allowed: at least 1")
    if vp > 1 and micro_batches % pp != 0:
        raise PlanError("--micro-batches", f"{micro_batches} with pp = {pp} and vp = {vp}; allowed: a multiple of pp "
                                           "(Megatron-Core's interleaved schedule runs micro-batches in groups of pp, "
                                           "schedules.py:1160-1180 at d98e8a64)")


def warmup_forwards(pp, vp, rank, micro_batches):
    """Warm-up forward steps of `rank` (get_pp_rank_microbatches, schedules.py:955-977; without
    interleaving, schedules.py:2277-2278): V ≥ 2: 2(P − s − 1) + (V − 1)·P, at most m·V; V = 1:
    P − s − 1, at most m."""
    warmup = pp - rank - 1 if vp == 1 else 2 * (pp - rank - 1) + (vp - 1) * pp
    return min(warmup, micro_batches * vp)


def schedule_table(micro_batches, vp, group):
    """(micro-batch, local chunk) of each forward step (get_schedule_table, schedules.py:989-1016):
    groups of `group` micro-batches run through chunk 0, then chunk 1, ..., then the next group."""
    table = []
    for low in range(0, micro_batches, group):
        high = micro_batches if low + group >= micro_batches else low + group
        table += [(mb, v) for v in range(vp) for mb in range(low, high)]
    return table


def rank_steps(pp, vp, rank, micro_batches):
    """The steps of `rank` in order: ("F" or "B", local chunk, micro-batch). Warm-up forwards
    0..W−1, then (forward W + k, backward k) for k < m·V − W, then the remaining backwards
    (schedules.py:1573, 1733-1746, 1971). Forward k runs the table's (micro-batch, chunk) k;
    backward k the chunk V − 1 − chunk_k (get_model_chunk_id, schedules.py:1244-1249) and, as the
    oldest forward of that chunk not yet run backward (input_tensors[chunk].pop(0), schedules.py:1432), micro-batch_k."""
    table = schedule_table(micro_batches, vp, pp)
    total = micro_batches * vp
    warmup = warmup_forwards(pp, vp, rank, micro_batches)

    def forward(k):
        mb, v = table[k]
        return ("F", v, mb)

    def backward(k):
        mb, v = table[k]
        return ("B", vp - 1 - v, mb)

    steps = [forward(k) for k in range(warmup)]
    for k in range(total - warmup):
        steps += [forward(warmup + k), backward(k)]
    steps += [backward(k) for k in range(total - warmup, total)]
    return steps
