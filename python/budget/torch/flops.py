"""Matmul-FLOP instrumentation of budget.torch modules.

Every weight matmul of the reference module (budget.torch.model) reports 2·m·k·n FLOPs for an
m×k by k×n product (one multiply-add = 2 FLOPs, docs/accounting.md "Conventions") under the name
of the op of the planner's list (``budget::OpKind``: ``qkv_projection``, ``routed_experts``, ...),
from the shapes it actually ran: a routed expert reports the rows routed to it, so the total is
what the routing did, not what the config predicts. Attention reports
2·(qk_dim + v_dim) FLOPs per head and attended (query, key) pair: QKᵀ and PV counted over the
pairs the mask keeps, which is the accounting's A (the mean keys a query attends to), not the
masked-out half of the square a dense implementation also multiplies.

Usage::

    with budget.torch.FlopCounter() as counter:
        model(tokens)
    counter.by_op["routed_experts"]   # FLOPs of the whole batch

Counters nest (every active counter sees every matmul); not thread-safe (one module-level
stack, as torch's own profiler hooks are per process).
"""

import collections
import contextlib

_active_counters = []


class FlopCounter:
    """Collects the matmul FLOPs of every budget.torch module run while it is active, by op name
    (``by_op``, exact Python integers) and in total (``total``)."""

    def __init__(self):
        self.by_op = collections.Counter()
        self._scopes = []

    @property
    def total(self):
        return sum(self.by_op.values())

    def add(self, op, flops):
        self.by_op[self._scopes[-1] if self._scopes else op] += int(flops)

    def __enter__(self):
        _active_counters.append(self)
        return self

    def __exit__(self, *exc):
        _active_counters.remove(self)
        return False


def record(op, flops):
    """Adds `flops` under `op` to every active counter (a no-op when none is active)."""
    for counter in _active_counters:
        counter.add(op, flops)


@contextlib.contextmanager
def scope(op):
    """Inside the block every matmul is counted under `op` (the MTP modules: ``mtp_module``, which
    the planner reports as one op, apart from the stack)."""
    counters = list(_active_counters)
    for counter in counters:
        counter._scopes.append(op)
    try:
        yield
    finally:
        for counter in counters:
            counter._scopes.pop()
