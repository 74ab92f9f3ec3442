"""Which values `yax.checkpoint` may store for the backward pass (the rest is recomputed).

A policy is `policy(primitive, *input_avals, **params) -> bool`, asked about each equation of the
checkpointed function's forward computation: True means its outputs are saved. A policy that
needs the whole program to decide (`save_within_bytes`) also has a `choose_saved` method, which
the checkpoint's partial-evaluation rule calls instead with the forward program.
"""

from __future__ import annotations

import math

import numpy as np

from yax.core.ir import ClosedJaxpr, Var, subjaxprs

__all__ = ["everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots",
           "dots_with_no_batch_dims_saveable", "checkpoint_dots_with_no_batch_dims",
           "save_only_these_names", "save_any_names_but_these", "save_anything_except_these_names",
           "save_from_both_policies", "save_within_bytes"]


def everything_saveable(prim, *avals, **params) -> bool:
    """Store everything: checkpoint then changes nothing (useful to compare)."""
    return True


def nothing_saveable(prim, *avals, **params) -> bool:
    """Store only the checkpointed function's inputs (the default)."""
    return False


def dots_saveable(prim, *avals, **params) -> bool:
    """Store the results of matrix products (expensive to recompute), recompute the rest."""
    return prim.name == "dot_general"


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(prim, *avals, **params) -> bool:
    """Store products without batch dimensions (plain matmuls), recompute batched ones."""
    if prim.name != "dot_general":
        return False
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


class _NamePolicy:
    """Hashable by its names, so equal policies share cached rules."""

    def __init__(self, names, keep: bool, others: bool):
        self.names, self.keep, self.others = frozenset(names), keep, others

    def __call__(self, prim, *avals, **params) -> bool:
        if prim.name != "name":
            return self.others
        return (params["name"] in self.names) == self.keep

    def __eq__(self, other):
        return isinstance(other, _NamePolicy) and (self.names, self.keep, self.others) == (
            other.names, other.keep, other.others)

    def __hash__(self):
        return hash((self.names, self.keep, self.others))


def save_only_these_names(*names: str):
    """Store only values labelled with one of `names` by `checkpoint_name`."""
    return _NamePolicy(names, keep=True, others=False)


def save_any_names_but_these(*names: str):
    """Store labelled values except those with one of `names`."""
    return _NamePolicy(names, keep=False, others=False)


def save_anything_except_these_names(*names: str):
    """Store everything except values labelled with one of `names`."""
    return _NamePolicy(names, keep=False, others=True)


def save_from_both_policies(policy_1, policy_2):
    """Store what either policy stores."""
    return _Either(policy_1, policy_2)


class _Either:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __call__(self, prim, *avals, **params) -> bool:
        return self.a(prim, *avals, **params) or self.b(prim, *avals, **params)

    def __eq__(self, other):
        return isinstance(other, _Either) and (self.a, self.b) == (other.a, other.b)

    def __hash__(self):
        return hash((self.a, self.b))


# --- save_within_bytes: the most recomputation saved per byte, up to a budget -----------------

def save_within_bytes(budget: int):
    """Store what saves the most recomputation per byte, up to `budget` bytes; recompute the rest.

    Args:
      budget: how many bytes of the checkpointed function's intermediate values the backward
        pass may keep, on top of the function's inputs (which every checkpoint keeps). A budget
        too small for any value stores nothing (plain `checkpoint`); a budget that holds every
        value the backward pass reads stores them all (as `everything_saveable`: nothing is
        recomputed).
    Returns:
      A policy for `checkpoint(f, policy=...)`. The choice is greedy: at each step the value
      whose storing removes the most estimated work (FLOPs) from the recomputation, divided by
      its bytes, is added while it fits. Bytes are counted at the shapes the checkpoint has when
      reverse mode splits it (per example under `vmap(grad(f))`, for the batch under
      `grad(vmap(f))`; per step inside a scan body). Results of side effects are always stored
      and do not count.
    Example:
      >>> block = yax.checkpoint(layer, policy=save_within_bytes(4 * 2**20))
    """
    return _BytesBudget(budget)


class _BytesBudget:
    """Asked per equation it stores nothing; `choose_saved`, given the whole forward program,
    picks the set (yax.primitives.remat calls it when a policy has one)."""

    def __init__(self, budget):
        if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget < 0:
            raise ValueError(f"save_within_bytes: the budget must be a number of bytes >= 0, "
                             f"got {budget!r}")
        self.budget = int(budget)

    def __call__(self, prim, *avals, **params) -> bool:
        return False

    def __eq__(self, other):
        return isinstance(other, _BytesBudget) and self.budget == other.budget

    def __hash__(self):
        return hash(("save_within_bytes", self.budget))

    def __repr__(self):
        return f"save_within_bytes({self.budget})"

    def choose_saved(self, jaxpr, residual_vars, always_saved=frozenset()) -> set:
        """The Vars of `jaxpr` (equation outputs) to store so that the backward pass, which
        reads `residual_vars`, recomputes the least; `always_saved` are stored anyway."""
        return _BudgetPlan(jaxpr, residual_vars, always_saved).choose(self.budget)


_MAX_CANDIDATES = 256  # bounds the greedy search on very long segments (best single gains kept)


class _BudgetPlan:
    """The forward program seen from the residuals: which equations a walk back from them
    recomputes, given the values that are stored (the walk stops at those)."""

    def __init__(self, jaxpr, residual_vars, always_saved):
        self.producer = {v: e for e in jaxpr.eqns for v in e.outvars}
        self.roots = [v for v in residual_vars if v in self.producer]
        self.fixed = set(always_saved)
        self.cost = {id(e): _flops(e) for e in jaxpr.eqns}

    def walk(self, stored) -> tuple[int, set]:
        """(work recomputed, the stored values the walk reaches) with `stored` kept."""
        work, reached, seen, done, stack = 0, set(), set(), set(), list(self.roots)
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            eqn = self.producer.get(v)
            if eqn is None:  # an input of the checkpoint: kept anyway
                continue
            if v in stored or v in self.fixed:
                reached.add(v)
                continue
            if id(eqn) not in done:  # an equation with several outputs runs once
                done.add(id(eqn))
                work += self.cost[id(eqn)]
                stack.extend(a for a in eqn.inputs if isinstance(a, Var))
        return work, reached

    def choose(self, budget: int) -> set:
        everything = {v for v in self.roots if v not in self.fixed}
        if sum(_nbytes(v) for v in everything) <= budget:
            return everything  # the documented "save all": nothing is recomputed
        stored, used = set(), 0
        work, _ = self.walk(stored)
        candidates = self._candidates(budget)
        while candidates and work > 0:
            best = None
            for v in candidates - stored:
                size = _nbytes(v)
                if used + size > budget:
                    continue
                gain = work - self.walk(stored | {v})[0]
                score = gain / max(size, 1)
                if gain > 0 and (best is None or score > best[0]):
                    best = (score, v)
            if best is None:
                break
            stored.add(best[1])
            work, reached = self.walk(stored)
            stored &= reached  # a value shadowed by later choices is dropped, its bytes freed
            used = sum(_nbytes(v) for v in stored)
        return stored

    def _candidates(self, budget: int) -> set:
        fits = [v for v in self._reachable() if v not in self.fixed and _nbytes(v) <= budget]
        if len(fits) <= _MAX_CANDIDATES:
            return set(fits)
        work = self.walk(set())[0]
        ranked = sorted(fits, key=lambda v: -(work - self.walk({v})[0]) / max(_nbytes(v), 1))
        return set(ranked[:_MAX_CANDIDATES])

    def _reachable(self) -> list:
        seen, order, stack = set(), [], list(self.roots)
        while stack:
            v = stack.pop()
            if v in seen or v not in self.producer:
                continue
            seen.add(v)
            order.append(v)
            if v not in self.fixed:
                stack.extend(a for a in self.producer[v].inputs if isinstance(a, Var))
        return order


def _nbytes(var) -> int:
    aval = var.aval
    return math.prod(aval.shape) * np.dtype(aval.dtype).itemsize


def _flops(eqn) -> int:
    """A rough count of the work to recompute `eqn`: what makes a matmul worth storing and a
    reshape not. Loops count their body once per step."""
    out = sum(math.prod(v.aval.shape) for v in eqn.outvars)
    name = eqn.primitive.name
    if name == "dot_general":
        (lhs_contract, _), _ = eqn.params["dimension_numbers"]
        shape = eqn.inputs[0].aval.shape
        return 2 * out * math.prod(shape[d] for d in lhs_contract)
    if name == "conv_general_dilated":
        rhs = eqn.inputs[1].aval.shape
        out_features = rhs[eqn.params["dimension_numbers"][1][0]] or 1
        return 2 * out * math.prod(rhs) // out_features
    inner = sum(_flops(e) for sub in subjaxprs(eqn)
                for e in (sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub).eqns)
    if inner:
        return inner * int(eqn.params.get("length", 1))
    return max(out, 1)
