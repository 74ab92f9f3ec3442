"""Primitives: a name plus the rules that give it meaning under each transformation.

Rules (set in the primitive's family file, right where it is defined):
  abstract_eval(*avals, **params) -> list of output avals (checks shapes/dtypes, raises YaxError)
  lower(ctx, *operands, **params) -> list of StableHLO values
  jvp(primals, tangents, **params) -> (primals_out, tangents_out)
  transpose(cts, *operands, **params) -> cotangents for the operands (linear primitives only)
  batch(args, dims, **params) -> (outs, out_dims)
  impl(*arrays, **params) -> list of Arrays: optional custom eager evaluation
  partial_eval(trace, args, params) -> list of outputs: optional known/unknown split
A missing rule raises NotImplementedRuleError naming the primitive and the transformation.
"""

from __future__ import annotations

from yax import errors
from yax.core.trace import bind


def _missing(name: str, transformation: str, issue: str):
    def rule(*args, **params):
        raise errors.NotImplementedRuleError(
            f"{transformation} is not yet implemented for primitive `{name}`{issue}")
    rule.missing = True
    return rule


class Primitive:
    """A named operation of the IR. `multiple_results` primitives return lists from bind."""

    def __init__(self, name: str, *, multiple_results: bool = False):
        self.name = name
        self.multiple_results = multiple_results
        self.abstract_eval = _missing(name, "abstract evaluation (shape inference)", "")
        self.lower = _missing(name, "lowering to StableHLO", "")
        self.jvp = _missing(name, "forward-mode differentiation (jvp)", " (see the autodiff issue)")
        self.transpose = _missing(name, "transposition (reverse mode)", "; it is not linear")
        self.batch = _missing(name, "batching (vmap)", " (see the vmap issue)")
        self.impl = None
        # Optional: how partial evaluation splits an application with some unknown inputs
        # (used by primitives holding sub-programs, e.g. pjit). Default: stage it whole.
        self.partial_eval = None

    def bind(self, *args, **params):
        return bind(self, *args, **params)

    def out_avals(self, avals, params) -> list:
        """Run abstract_eval and normalise its result to a list."""
        out = self.abstract_eval(*avals, **params)
        if self.multiple_results:
            return list(out)
        return out if isinstance(out, list) else [out]

    def __repr__(self):
        return self.name


def has_rule(primitive: Primitive, rule: str) -> bool:
    return not getattr(getattr(primitive, rule), "missing", False)
