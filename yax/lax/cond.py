"""yax.lax.cond and yax.lax.switch: choose a branch at run time (both are the `cond` primitive).

Branches are traced to jaxprs over the operands' avals and checked to return the same pytree
structure, shapes and dtypes. Traced branches are cached per (function, input types) (see
interpreters/traced_cache.py), and joined branch tuples per traced tuple, so an eager loop calling
`lax.cond` with the same functions reuses one compiled executable. The caches are safe from
threads without a lock: entries are computed first and inserted whole.
"""

from __future__ import annotations

import collections

import numpy as np

from yax import errors, tree_util
from yax.core import dtypes
from yax.core.avals import TypedScalar, aval_of_value
from yax.core.trace import Tracer, bind, current_trace
from yax.errors import BranchOutputMismatchError, CondPredicateError  # noqa: F401  (re-exported)
from yax.interpreters import ref_state
from yax.interpreters.staging import trace_to_jaxpr
from yax.interpreters.traced_cache import captures_tracer, trace_cached
from yax.lax._refs import ref_operands, stale, write_back, written_ids
from yax.lax.elementwise import clamp, convert_element_type
from yax.primitives.control_flow.cond import cond_p, join_branch_consts
from yax.runtime.values import as_operand

__all__ = ["cond", "switch"]

_NO_OPERAND = object()  # `operand=` absent (None is a valid operand)


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`, decided at run time.

    `pred` is a boolean scalar; both functions take the same operands (pytrees) and return the
    same structure, shapes and dtypes. `operand=x` is JAX's older spelling of one positional
    operand (then no positional ones may be given). Example:
      >>> lax.cond(x > 0, lambda x: x * 2, lambda x: -x, x)
    """
    operands = _with_operand_keyword("lax.cond", operands, operand)
    aval = aval_of_value(pred)
    if aval.dtype != dtypes.bool_ or aval.shape != ():
        raise CondPredicateError(
            f"lax.cond: the predicate must be a boolean scalar (bool[]), got "
            f"{aval.str_short()}. Compare it explicitly (e.g. `pred > 0`) or reduce it to one "
            f"value (e.g. `jnp.all(pred)` / `jnp.any(pred)`); to choose elementwise between two "
            f"arrays use `jnp.where(pred, x, y)` or `lax.select(pred, x, y)` instead of cond.")
    index = _to_int32(as_operand(pred))
    leaves, traced = _trace_all("lax.cond", (true_fun, false_fun), operands,
                                ("true_fun", "false_fun"))
    return _bind(index, leaves, traced[::-1])  # index 0 is false_fun


def switch(index, branches, *operands, operand=_NO_OPERAND):
    """`branches[index](*operands)`, decided at run time; `index` is clamped to the branches.
    `operand=x` is the older spelling of one positional operand, as in `cond`.

    Example:
      >>> lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x)
    """
    operands = _with_operand_keyword("lax.switch", operands, operand)
    branches = tuple(branches)
    if not branches or not all(callable(b) for b in branches):
        raise errors.YaxError("lax.switch: `branches` must be a non-empty sequence of functions")
    aval = aval_of_value(index)
    if aval.shape != () or not dtypes.is_int(aval.dtype):
        raise CondPredicateError(
            f"lax.switch: the index must be an integer scalar, got {aval.str_short()}. "
            f"Convert it (e.g. `idx.astype(jnp.int32)`) or reduce it to one value.")
    names = tuple(f"branch {i}" for i in range(len(branches)))
    leaves, traced = _trace_all("lax.switch", branches, operands, names)
    index = _to_int32(as_operand(index))
    if isinstance(index, Tracer):
        # the lowering clamps anyway; a traced program shows JAX's `clamp` equation too
        index = clamp(TypedScalar(0, _I32, False), index,
                      TypedScalar(len(branches) - 1, _I32, False))
    return _bind(index, leaves, traced)


def _with_operand_keyword(name: str, operands: tuple, operand) -> tuple:
    """The operands, `operand=` (JAX's deprecated keyword, still accepted) taken as the only
    one; giving both forms is an error there and here."""
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError(f"{name}: operand= was passed together with positional operands "
                        f"{operands!r}; pass the operands one way only (positionally)")
    return (operand,)


_I32 = np.dtype(np.int32)


def _to_int32(x):
    return convert_element_type(x, dtypes.int32)  # JAX too narrows before clamping


def _trace_all(what, funs, operands, names):
    leaves, in_tree = tree_util.tree_flatten(operands)
    leaves = [as_operand(x) for x in leaves]
    avals = tuple(aval_of_value(x) for x in leaves)
    traced = [_trace_branch(f, in_tree, avals) for f in funs]
    refs = ref_state.union_of(t[2] for t in traced)
    if refs:  # Refs closed over: every branch takes and returns all of them, in one order
        traced = [t if t[2] == refs else _trace_branch(f, in_tree, avals, refs)
                  for f, t in zip(funs, traced, strict=True)]
    _check_outputs(what, traced, names)
    return leaves + ref_operands(refs), traced


def _bind(index, leaves, traced):
    branches, consts = _joined(tuple(t[0] for t in traced))
    outs = bind(cond_p, index, *consts, *leaves, branches=branches)
    refs = traced[0][2]
    n = len(outs) - len(refs)
    write_back(refs, outs[n:], frozenset().union(*(t[3] for t in traced)))
    return tree_util.tree_unflatten(traced[0][1], outs[:n])


# --- tracing branches, with a cache so eager loops do not retrace and recompile -----------------

_joined_cache: collections.OrderedDict = collections.OrderedDict()
_JOINED_CACHE_SIZE = 128


def _trace_branch(fun, in_tree, avals, refs=()):
    """(closed jaxpr over the flat operands, output treedef, Refs it closes over) of `fun`,
    traced once per types. The Refs' values are trailing inputs and outputs; `refs`: take
    these, in this order (others it uses follow)."""
    def trace():
        box = []

        def flat_fun(*xs):
            ref_state.enter_body(refs)
            out = fun(*tree_util.tree_unflatten(in_tree, list(xs)))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            captured, values = ref_state.captured_values(current_trace())
            box.append((out_tree, captured, written_ids()))
            return [as_operand(o) for o in out_leaves] + values
        closed = trace_to_jaxpr(flat_fun, list(avals), name=getattr(fun, "__name__", "branch"))
        return (closed, *box[0])
    key = (in_tree, avals, tuple(id(r) for r in refs))
    hit = trace_cached("cond branch", fun, key, trace)
    return trace_cached("cond branch", fun, key, trace, cacheable=False) if stale(hit[2]) else hit


def _check_outputs(what, traced, names) -> None:
    (first, tree0, *_), name0 = traced[0], names[0]
    for (closed, tree, *_), name in zip(traced[1:], names[1:]):
        same = tree == tree0 and [(a.shape, a.dtype) for a in closed.out_avals] == [
            (a.shape, a.dtype) for a in first.out_avals]
        if not same:
            raise BranchOutputMismatchError(
                f"{what}: the branches must return the same pytree structure, shapes and dtypes:\n"
                f"  {name0} returns {_describe(first, tree0)}\n"
                f"  {name} returns {_describe(closed, tree)}"
                f"{_leaf_differences(first, closed, tree0 == tree)}")
        _check_varying_axes(what, first, closed, name0, name)


def _check_varying_axes(what, first, other, name0, name) -> None:
    """Inside a shard_map body (check_vma), jax's types: an output varies along the same mesh
    axes in every branch (else the cond's result type, and its derivative, would depend on the
    branch taken)."""
    for k, (a, b) in enumerate(zip(first.out_avals, other.out_avals)):
        va, vb = getattr(a, "vma", frozenset()), getattr(b, "vma", frozenset())
        if va == vb:
            continue
        fix, fixed = (tuple(sorted(va - vb)), name) if va - vb else (tuple(sorted(vb - va)), name0)
        raise BranchOutputMismatchError(
            f"{what} branches must have equal output types but they differ: output {k} of "
            f"{name0} has type {a.str_short()} but that of {name} has type {b.str_short()}, so "
            f"the manual axis types do not match. This might be fixed by applying "
            f"`lax.pcast(..., {fix}, to='varying')` to the output of {fixed}.")


def _leaf_differences(a, b, same_tree: bool) -> str:
    """Per differing leaf: both dtypes by name and both shapes (float32 vs int32, (3,) vs ())."""
    if not same_tree or len(a.out_avals) != len(b.out_avals):
        return ""
    lines = [f"\n  output {i}: dtype {x.dtype.name} vs {y.dtype.name}, shape {x.shape} vs {y.shape}"
             for i, (x, y) in enumerate(zip(a.out_avals, b.out_avals))
             if (x.dtype, x.shape) != (y.dtype, y.shape)]
    return "".join(lines)


def _describe(closed, tree) -> str:
    leaves = [a.str_short() for a in closed.out_avals[:tree.num_leaves]]
    return str(tree_util.tree_unflatten(tree, leaves)).replace("'", "")


def _joined(traced: tuple):
    """Branches with one shared signature (cached per traced tuple; the
    cached cond params are then identical objects, so the eager executable cache hits)."""
    key = tuple(id(c) for c in traced)
    hit = _joined_cache.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], traced)):
        try:
            _joined_cache.move_to_end(key)
        except KeyError:  # another thread evicted it meanwhile: the hit is still valid
            pass
        return hit[1], hit[2]
    branches, consts = join_branch_consts(traced)
    if not captures_tracer(consts):
        _joined_cache[key] = (traced, branches, consts)
        while len(_joined_cache) > _JOINED_CACHE_SIZE:
            try:
                _joined_cache.popitem(last=False)
            except KeyError:  # emptied by another thread
                break
    return branches, consts
