"""yax.lax.scan: a loop staged as one `scan` primitive (lax.map, a scan without carry, is in
mapped.py)."""

from __future__ import annotations

import inspect

import numpy as np

from yax import tree_util
from yax.core import dtypes
from yax.core.ir import ClosedJaxpr, Jaxpr
from yax.core.trace import current_trace
from yax.errors import LoopBoundsError, ScanCarryError, ScanLengthError  # noqa: F401  (re-exported)
from yax.interpreters import ref_state
from yax.interpreters.staging import trace_to_jaxpr
from yax.interpreters.traced_cache import trace_cached
from yax.lax._refs import ref_operands, stale, write_back, written_ids
from yax.lax._util import describe_function as _describe
from yax.lax._util import python_scalar_as
from yax.lax.collectives import check_carry_vma
from yax.lax.elementwise import _convert_keep_weak
from yax.lax.scan_checkpoint import segment_length, segmented_scan
from yax.primitives.control_flow.scan import scan_p
from yax.primitives.mesh_axes import plain
from yax.runtime.named_sharding import without_leading_dim
from yax.runtime.values import as_operand
from yax.runtime.values import aval_of as _aval

__all__ = ["scan"]  # fori_loop is in while_loop.py: it is a scan or a while_loop



def scan(f, init, xs=None, length=None, reverse=False, unroll=1, *, checkpoint=None):
    """Loop `f` over the leading axis of `xs`, carrying state; as jax.lax.scan.

    `f(carry, x) -> (carry, y)`; `init` and `xs` are pytrees (`xs` may be None when `length` is
    given). Returns the final carry and the stacked ys. Meaning (but staged as one loop, not
    unrolled, so derivatives and vmap stay loops):

        carry, ys = init, []
        for i in (reversed(range(length)) if reverse else range(length)):
            carry, y = f(carry, tree_map(lambda x: x[i], xs))
            ys.append(y)
        return carry, tree_map(stack, *ys)   # ys in index order, also when reverse

    `checkpoint` (yax only): None for the plain loop; "sqrt" (or an int k) runs it as
    checkpointed segments of ceil(sqrt(length)) (or k) steps, so that reverse mode stores
    O(sqrt(length)) carries instead of every step's residuals, for one more forward pass
    (see yax/lax/scan_checkpoint.py). Values and derivatives are the plain loop's.
    """
    carry_leaves, carry_tree = tree_util.tree_flatten(init)
    x_leaves, x_tree = tree_util.tree_flatten(xs)
    carry_ops = [as_operand(c) for c in carry_leaves]
    x_ops = [as_operand(x) for x in x_leaves]
    length = _scan_length(x_ops, x_tree, length)
    x_avals = [without_leading_dim(_aval(x)) for x in x_ops]  # typed as the slices are
    body, consts, y_tree, carry_ops = _settled_body(f, carry_tree, x_tree, carry_ops, x_avals)
    body, refs, written = body
    n = len(carry_ops)
    if refs:  # closed-over Refs: extra carries, written back after the loop
        carry_ops = carry_ops + ref_operands(refs)
    check_carry_vma(body, [*consts, *carry_ops, *x_ops], len(consts), len(carry_ops),
                    _carry_name(f),
                    _leaf_paths(carry_tree) + [f" (closed-over Ref {i})" for i in range(len(refs))])
    k = segment_length(checkpoint, length)
    if k is not None:
        outs = segmented_scan(consts, carry_ops, x_ops, body=body, length=length,
                              reverse=bool(reverse), unroll=int(unroll), k=k)
    else:
        outs = scan_p.bind(*consts, *carry_ops, *x_ops, jaxpr=body, length=length,
                           reverse=bool(reverse), num_consts=len(consts),
                           num_carry=len(carry_ops),
                           linear=(False,) * (len(consts) + len(carry_ops) + len(x_ops)),
                           unroll=int(unroll))
    write_back(refs, outs[n:n + len(refs)], written)
    return (tree_util.tree_unflatten(carry_tree, outs[:n]),
            tree_util.tree_unflatten(y_tree, outs[n + len(refs):]))


def _settled_body(f, carry_tree, x_tree, carry_ops, x_avals):
    """Trace the body with the init's types. As in JAX, the carry keeps one type through the
    loop and a weakly typed init stays weak, unless the body turns it strong (a Python float
    init updated with an f32 array): then the init is promoted to the body's type and the body
    traced again. Returns (body, consts, y_tree, carry operands)."""
    for _ in range(3):
        carry_avals = [_aval(c) for c in carry_ops]
        body, consts, (y_tree, refs, written) = _traced_body(f, carry_tree, x_tree,
                                                             carry_avals, x_avals)
        out_avals = body.out_avals[:len(carry_avals)]
        # (the varying mesh axes of a shard_map value are checked after: jax's own error)
        if all(plain(a.strip_weak_type()) == plain(o.strip_weak_type())
               for a, o in zip(carry_avals, out_avals)):
            # only weak types differ (a weak init the body makes strong): as JAX, keep this
            # body, traced with the weak carry (JAX's types match ignoring weak types)
            return (_refs_as_carry(body, len(consts), len(carry_avals), refs), refs,
                    written), consts, \
                y_tree, carry_ops
        carry_ops = [c if plain(a) == plain(o) else _convert_keep_weak(c, o.dtype, o.weak_type)
                     for c, a, o in zip(carry_ops, carry_avals, out_avals)]
    raise AssertionError("scan: carry types did not settle")  # promotion is monotone


def _scan_length(x_ops, x_tree, length) -> int:
    sizes = []
    for path_x in zip(_leaf_paths(x_tree), x_ops):
        shape = _aval(path_x[1]).shape
        if not shape:
            raise ScanLengthError(f"scan: xs leaf {path_x[0]} is a scalar; every xs leaf needs "
                                  f"a leading axis to scan over")
        sizes.append((path_x[0], shape[0]))
    distinct = {s for _, s in sizes}
    if length is not None:
        length = _as_int(length, "scan: length")
        distinct.add(length)
    if len(distinct) > 1:
        listed = ", ".join(f"xs{p}: {s}" for p, s in sizes)
        given = f" and length={length}" if length is not None else ""
        raise ScanLengthError(f"scan: the xs leading sizes must all agree{given}; got {listed}")
    if not distinct:
        raise ScanLengthError("scan: with xs=None (no arrays to scan over) pass length=")
    return distinct.pop()


def _carry_name(f):
    try:
        return next(iter(inspect.signature(f).parameters), None)
    except (TypeError, ValueError):
        return None


def _leaf_paths(tree) -> list[str]:
    """Printable paths of a treedef's leaves (for error messages)."""
    leaves = tree_util.tree_unflatten(tree, [object() for _ in range(tree.num_leaves)])
    return [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(leaves)[0]]


def _as_int(x, what: str) -> int:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise LoopBoundsError(f"{what} must be a Python int, got {x!r}")
    return int(x)


# --- tracing the body, once per (function, types) so eager loops do not retrace -------------

def _traced_body(f, carry_tree, x_tree, carry_avals, x_avals):
    def trace():
        box = []
        flat = _flat_body(f, carry_tree, x_tree, carry_avals, box)
        return trace_to_jaxpr(flat, carry_avals + x_avals, name="scan_body"), box[0]
    key = (carry_tree, x_tree, tuple(carry_avals), tuple(x_avals))
    closed, consts, box = trace_cached("scan body", f, key, trace, closure_converted=True)
    if stale(box[1]):  # it closed over a Ref of a transformation that has finished
        closed, consts, box = trace_cached("scan body", f, key, trace, closure_converted=True,
                                           cacheable=False)
    return closed, consts, box


def _refs_as_carry(body: ClosedJaxpr, n_consts: int, n_carry: int, refs) -> ClosedJaxpr:
    """The body traced with closed-over Refs as trailing inputs and outputs (consts, carry, xs,
    refs -> carry, ys, refs) rearranged so that the Refs are carried (consts, carry, refs, xs
    -> carry, refs, ys)."""
    if not refs:
        return body
    j, k = body.jaxpr, len(refs)
    ins, outs = list(j.invars), list(j.outvars)
    c = n_consts + n_carry
    ins = ins[:c] + ins[len(ins) - k:] + ins[c:len(ins) - k]
    outs = outs[:n_carry] + outs[len(outs) - k:] + outs[n_carry:len(outs) - k]
    return ClosedJaxpr(Jaxpr(j.constvars, ins, j.eqns, outs), body.consts)


def _flat_body(f, carry_tree, x_tree, carry_avals, box):
    n = len(carry_avals)

    def flat(*args):
        ref_state.enter_body()
        carry = tree_util.tree_unflatten(carry_tree, args[:n])
        x = tree_util.tree_unflatten(x_tree, args[n:])
        out = f(carry, x)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise ScanCarryError(f"scan: the body {_describe(f)} must return a pair "
                                 f"(carry, y), got {type(out).__name__}")
        leaves, out_tree = tree_util.tree_flatten(out[0])
        if out_tree != carry_tree:
            raise ScanCarryError(
                f"scan: the body {_describe(f)} must return the carry's structure {carry_tree} "
                f"but returned {out_tree}")
        new_carry = [_fit_carry(o, a, f, i) for i, (o, a) in enumerate(zip(leaves, carry_avals))]
        y_leaves, y_tree = tree_util.tree_flatten(out[1])
        refs, ref_values = ref_state.captured_values(current_trace())
        box.append((y_tree, refs, written_ids()))
        return new_carry + [as_operand(y) for y in y_leaves] + ref_values
    return flat


def _fit_carry(out, carry_aval, f, i: int):
    if dtypes.is_python_scalar(out):  # a Python number takes the carry's dtype
        out = python_scalar_as(out, carry_aval.dtype, "scan")
    out = as_operand(out)
    got = _aval(out)
    if got.shape == carry_aval.shape:
        if got.dtype == carry_aval.dtype and got.weak_type == carry_aval.weak_type:
            return out
        mine, theirs = (carry_aval.dtype, carry_aval.weak_type), (got.dtype, got.weak_type)
        joined = dtypes.result_type(mine, theirs)
        if got.weak_type and joined == mine:  # weakly typed output: takes the carry's type
            return _convert_keep_weak(out, carry_aval.dtype, carry_aval.weak_type)
        if carry_aval.weak_type and joined == theirs:
            return out  # weak init turned strong by the body: scan promotes the init
    raise ScanCarryError(
        f"scan: the body {_describe(f)} returned {got.str_short()} for carry leaf {i}, "
        f"which enters the loop as {carry_aval.str_short()} (dtype {got.dtype.name} vs "
        f"{carry_aval.dtype.name}, shape {got.shape} vs {carry_aval.shape}); the carry must "
        f"keep its exact shape and dtype (cast with lax.convert_element_type, or give init that "
        f"type)")
