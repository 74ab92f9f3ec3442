"""Primitives: a name plus the rules that give it meaning under each transformation.

A primitive is declared with its rules in one call, at the bottom of its section of the family
file (after the rule functions it names):

    cumsum_p = Primitive("cumsum", abstract_eval=_cumsum_abstract_eval, lower=_cumsum_lower,
                         jvp=..., transpose=..., batch=...)

A rule that can only be set later (it needs a primitive declared further down, or it is made by a
shared builder) is added with `p.define(jvp=...)`, which rejects names that are not rules.
Plain attribute assignment (`p.jvp = f`) keeps working.

Every constructed primitive is recorded by name (`all_primitives()`), so that tests can hold a
table with one entry per primitive and fail when a new primitive has none.

Rules:
  abstract_eval(*avals, **params) -> list of output avals (checks shapes/dtypes, raises YaxError)
  lower(ctx, *operands, **params) -> list of StableHLO values
  jvp(primals, tangents, **params) -> (primals_out, tangents_out)
  transpose(cts, *operands, **params) -> cotangents for the operands (linear primitives only)
  batch(args, dims, **params) -> (outs, out_dims)
  impl(*arrays, **params) -> list of Arrays: optional custom eager evaluation
  partial_eval(trace, args, params) -> list of outputs: optional known/unknown split
  checkify(...) -> optional rule of the checkify interpreter (yax.interpreters.checkify)
  fold(atoms, out_avals, **params) -> list of atoms or None: optional, while staging: results
    known without an equation (a constant folded into a Literal, or an input passed through
    when the operation does nothing), as jax's staging folds and forwards
  sharding(avals_in, avals_out, **params) -> avals_out typed with their shardings over Explicit
    mesh axes (yax.primitives.sharding_rules); used only when an operand's aval has a sharding
A missing required rule raises NotImplementedRuleError naming the primitive and the
transformation; the optional ones (impl, partial_eval, checkify, fold, sharding) are None when
absent.
"""

from __future__ import annotations

from collections.abc import Callable

from yax import errors
from yax.core.trace import bind

# rule -> (what the transformation is called, a hint for the error); None: optional rule
_REQUIRED_RULES = {
    "abstract_eval": ("abstract evaluation (shape inference)", ""),
    "lower": ("lowering to StableHLO", ""),
    "jvp": ("forward-mode differentiation (jvp)", " (see the autodiff issue)"),
    "transpose": ("transposition (reverse mode)", "; it is not linear"),
    "batch": ("batching (vmap)", " (see the vmap issue)"),
}
_OPTIONAL_RULES = ("impl", "partial_eval", "checkify", "fold", "sharding")
RULE_NAMES = (*_REQUIRED_RULES, *_OPTIONAL_RULES)


def _missing(name: str, transformation: str, issue: str):
    def rule(*args, **params):
        raise errors.NotImplementedRuleError(
            f"{transformation} is not yet implemented for primitive `{name}`{issue}")
    rule.missing = True
    return rule


# name -> the primitive constructed last under that name (a test's throwaway primitive reusing a
# name replaces the earlier one; yax's own names are unique, which the second-order table checks)
_REGISTRY: dict[str, Primitive] = {}


def all_primitives() -> dict[str, Primitive]:
    """Every primitive constructed so far, by name (a copy; for tests and tools)."""
    return dict(_REGISTRY)


class Primitive:
    """A named operation of the IR. `multiple_results` primitives return lists from bind."""

    # whether the transpose rule takes the cotangents of unused outputs as Zero objects (a
    # symbolic-zeros custom_vjp bwd tells them apart) instead of materialised zeros
    takes_zero_cotangents = False

    def __init__(self, name: str, *, multiple_results: bool = False,
                 abstract_eval: Callable | None = None, lower: Callable | None = None,
                 jvp: Callable | None = None, transpose: Callable | None = None,
                 batch: Callable | None = None, impl: Callable | None = None,
                 partial_eval: Callable | None = None, checkify: Callable | None = None,
                 fold: Callable | None = None, sharding: Callable | None = None):
        self.name = name
        self.multiple_results = multiple_results
        for rule in RULE_NAMES:
            self._clear(rule)
        self.define(abstract_eval=abstract_eval, lower=lower, jvp=jvp, transpose=transpose,
                    batch=batch, impl=impl, partial_eval=partial_eval, checkify=checkify,
                    fold=fold, sharding=sharding)
        _REGISTRY[name] = self

    def define(self, **rules: Callable | None) -> Primitive:
        """Set rules by name (None leaves a rule as it is); unknown names are an error."""
        unknown = sorted(set(rules) - set(RULE_NAMES))
        if unknown:
            raise TypeError(f"primitive `{self.name}`: {', '.join(unknown)} "
                            f"{'is' if len(unknown) == 1 else 'are'} not a rule name; the rules "
                            f"are {', '.join(RULE_NAMES)}")
        for rule, fn in rules.items():
            if fn is not None:
                setattr(self, rule, fn)
        return self

    def _clear(self, rule: str) -> None:
        if rule in _REQUIRED_RULES:
            setattr(self, rule, _missing(self.name, *_REQUIRED_RULES[rule]))
        else:
            setattr(self, rule, None)

    def bind(self, *args, **params):
        return bind(self, *args, **params)

    # jax's way of defining a primitive's rules (`p.def_impl(f)`, usable as decorators); the
    # other transformations' rules go through yax._jax_names.interpreters' registries

    def def_impl(self, impl: Callable) -> Callable:
        """Eager evaluation: `impl(*arrays, **params)` returns the result (a sequence of
        them for a `multiple_results` primitive), written with yax operations."""
        def rule(*args, **params):
            out = impl(*args, **params)
            return list(out) if self.multiple_results else [out]
        self.impl = rule
        return impl

    def def_abstract_eval(self, abstract_eval: Callable) -> Callable:
        """Shape inference: `abstract_eval(*avals, **params)` returns the output aval(s)."""
        self.abstract_eval = abstract_eval
        return abstract_eval

    def def_effectful_abstract_eval(self, abstract_eval: Callable) -> Callable:
        """As def_abstract_eval, for a rule that returns `(avals, effects)`; yax tracks effects
        through its own rules, so the effects are not kept."""
        self.abstract_eval = lambda *avals, **params: abstract_eval(*avals, **params)[0]
        return abstract_eval

    def out_avals(self, avals, params) -> list:
        """Run abstract_eval and normalise its result to a list."""
        out = self.abstract_eval(*avals, **params)
        if self.multiple_results:
            out = list(out)
        elif not isinstance(out, list):
            out = [out]
        if vma_typing is not None:  # inside shard_map bodies: the varying mesh axes
            out = vma_typing(self, avals, out, params)
        for a in avals:  # only arrays sharded over Explicit mesh axes carry a sharding
            if getattr(a, "sharding", None) is not None:
                return self._typed_out_avals(avals, out, params)
        return out

    def _typed_out_avals(self, avals, out, params) -> list:
        if self.sharding is None:
            ins = ", ".join(a.str_short() for a in avals)
            raise errors.NotImplementedRuleError(
                f"primitive `{self.name}` has no sharding rule, and its operands ({ins}) are "
                f"sharded over Explicit mesh axes; reshard them unsharded first "
                f"(yax.reshard(x, P())), or run it under yax.sharding.auto_axes")
        return self.sharding(avals, out, **params)

    def __repr__(self):
        return self.name


# `vma_typing(primitive, in_avals, out_avals, params) -> out_avals`: types the outputs with the
# mesh axes they vary along when an input does (or the primitive makes a value vary, as
# axis_index); installed by yax.primitives.mesh_axes, which owns that rule.
vma_typing = None


def has_rule(primitive: Primitive, rule: str) -> bool:
    fn = getattr(primitive, rule)
    return fn is not None and not getattr(fn, "missing", False)
