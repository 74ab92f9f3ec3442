"""Which values `yax.checkpoint` may store for the backward pass (the rest is recomputed).

A policy is `policy(primitive, *input_avals, **params) -> bool`, asked about each equation of the
checkpointed function's forward computation: True means its outputs are saved. A policy that
needs the whole program to decide (`save_within_bytes`) also has a `choose_saved` method, which
the checkpoint's partial-evaluation rule also calls with the whole forward program.
"""

from __future__ import annotations

import math
import numbers

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

    def choose_saved(self, jaxpr, residual_vars, always_saved=frozenset()) -> set:
        """A whole-program side (save_within_bytes) plans around what the other side stores:
        those values are kept anyway and cost it nothing."""
        chosen = set()
        for mine, other in ((self.a, self.b), (self.b, self.a)):
            choose = getattr(mine, "choose_saved", None)
            if choose is not None:
                kept = set(always_saved) | _saved_per_equation(other, jaxpr)
                chosen |= set(choose(jaxpr, residual_vars, kept))
        return chosen


def _saved_per_equation(policy, jaxpr) -> set:
    """The outputs of the equations a per-equation policy calls saveable."""
    return {v for e in jaxpr.eqns
            if policy(e.primitive, *[a.aval for a in e.inputs], **e.params) for v in e.outvars}


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
        if isinstance(budget, (bool, np.bool_)) or not isinstance(budget, numbers.Real) \
                or not budget >= 0:
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


class _BudgetPlan:
    """The forward program seen from the residuals, as a graph walked backwards: from the
    residuals to the values they are computed from, through the equations that compute them,
    stopping at stored values and at the checkpoint's inputs.

    Storing value v removes from the recomputation exactly the equations that every path from
    the residuals to them passes through v: those v dominates. One dominator tree per step of
    the greedy therefore gives every candidate's gain at once (the work in its subtree)."""

    def __init__(self, jaxpr, residual_vars, always_saved):
        self.producer = {v: e for e in jaxpr.eqns for v in e.outvars}
        self.position = {id(e): i for i, e in enumerate(jaxpr.eqns)}
        self.roots = list(dict.fromkeys(v for v in residual_vars if v in self.producer))
        self.fixed = set(always_saved)
        self.cost = {id(e): _flops(e) for e in jaxpr.eqns}

    def choose(self, budget: int) -> set:
        everything = {v for v in self.roots if v not in self.fixed}
        if sum(_nbytes(v) for v in everything) <= budget:
            return everything  # the documented "save all": nothing is recomputed
        stored: set = set()
        while True:
            gains, reached = self.gains(stored)
            stored &= reached  # a value shadowed by later choices is dropped, its bytes freed
            room = budget - sum(_nbytes(v) for v in stored)
            best, best_score = None, 0.0
            for v, gain in gains.items():
                size = _nbytes(v)
                if gain > 0 and size <= room and gain / max(size, 1) > best_score:
                    best, best_score = v, gain / max(size, 1)
            if best is None:
                return stored
            stored.add(best)

    def gains(self, stored) -> tuple[dict, set]:
        """({recomputed value: work its storing removes}, the stored values still reached)."""
        preds, reached_stops = self._graph(stored)
        order = sorted(preds, key=self._topological_key)
        idom, depth = {_ROOT: _ROOT}, {_ROOT: 0}
        for node in order:
            dom = preds[node][0]
            for p in preds[node][1:]:
                dom = _common_dominator(dom, p, idom, depth)
            idom[node], depth[node] = dom, depth[dom] + 1
        work = dict.fromkeys(order, 0)
        work[_ROOT] = 0
        for node in reversed(order):  # subtree sums, leaves first
            if isinstance(node, tuple):
                work[node] += self.cost[node[1]]
            work[idom[node]] += work[node]
        return {n: w for n, w in work.items() if isinstance(n, Var)}, reached_stops

    def _graph(self, stored):
        """Predecessors of each node the backward walk reaches: a value (Var) leads to its
        equation (("eqn", id)), an equation to the values it reads."""
        preds: dict = {}
        reached_stops, stack = set(), [(_ROOT, v) for v in self.roots]
        while stack:
            src, v = stack.pop()
            if v in stored or v in self.fixed:
                reached_stops.add(v)
                continue
            eqn = self.producer.get(v)
            if eqn is None:  # an input of the checkpoint: kept anyway
                continue
            if v in preds:
                preds[v].append(src)
                continue
            preds[v] = [src]
            node = ("eqn", id(eqn))
            if node in preds:
                preds[node].append(v)
                continue
            preds[node] = [v]
            stack.extend((node, a) for a in eqn.inputs if isinstance(a, Var))
        return preds, reached_stops

    def _topological_key(self, node):
        # an equation's outputs come before it, and it before the (earlier) equations it reads
        if isinstance(node, tuple):
            return (-self.position[node[1]], 1)
        return (-self.position[id(self.producer[node])], 0)


_ROOT = ("root", -1)  # the residuals' common source in the dominator tree


def _common_dominator(a, b, idom, depth):
    while a != b:
        if depth[a] >= depth[b]:
            a = idom[a]
        else:
            b = idom[b]
    return a


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
