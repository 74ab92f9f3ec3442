"""Which values `yax.checkpoint` may store for the backward pass (the rest is recomputed).

A policy is `policy(primitive, *input_avals, **params) -> bool`, asked about each equation of the
checkpointed function's forward computation: True means its outputs are saved.
"""

from __future__ import annotations

__all__ = ["everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots",
           "dots_with_no_batch_dims_saveable", "checkpoint_dots_with_no_batch_dims",
           "save_only_these_names", "save_any_names_but_these", "save_anything_except_these_names",
           "save_from_both_policies"]


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
