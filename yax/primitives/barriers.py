"""Two identity-like primitives that exist for the compiler: optimization_barrier and
reduce_precision.

- `optimization_barrier(*xs)` returns its operands unchanged, but XLA may not move computation
  across it (e.g. to keep a rematerialised value from being merged with the original). Its JVP
  puts the primals behind one barrier and the tangents behind another (JAX uses one for both;
  two keep the primal computable without the tangents when linearizing); its transpose and
  batching apply the barrier to the cotangents / batched values.
- `reduce_precision(x; exponent_bits, mantissa_bits)` rounds floats to a narrower format while
  keeping the dtype (bfloat16 is exponent_bits=8, mantissa_bits=7). It is linear in the sense
  JAX gives it: the tangent and the cotangent are rounded the same way.
"""

from __future__ import annotations

from yax import errors
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters.ad_util import Zero, instantiate
from yax.interpreters.mlir import hlo
from yax.primitives._ad_rules import linear_jvp
from yax.primitives._checks import dtype_kind_check

# --- optimization_barrier -------------------------------------------------------------------------

def _barrier_abstract_eval(*xs):
    return [ShapedArray(x.shape, x.dtype, x.weak_type) for x in xs]


def _barrier_lower(ctx, *xs):
    if not xs:
        return []
    return list(hlo.OptimizationBarrierOp(list(xs)).results)


# --- reduce_precision -----------------------------------------------------------------------------

def _reduce_precision_abstract_eval(x, *, exponent_bits, mantissa_bits):
    dtype_kind_check("reduce_precision", x, "float")
    if not (isinstance(exponent_bits, int) and exponent_bits >= 1
            and isinstance(mantissa_bits, int) and mantissa_bits >= 0):
        raise errors.InvalidArgumentError(
            f"reduce_precision: exponent_bits must be an int >= 1 and mantissa_bits an int >= 0, "
            f"got {exponent_bits!r} and {mantissa_bits!r}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _reduce_precision_lower(ctx, x, *, exponent_bits, mantissa_bits):
    return [hlo.reduce_precision(x, exponent_bits, mantissa_bits)]


def _barrier_jvp(primals, tangents):
    # Two barriers, not one over primals and tangents together: partial evaluation must be able
    # to compute the primal outputs without the tangents (linearize, then transpose).
    outs = list(optimization_barrier_p.bind(*primals))
    nonzero = [i for i, t in enumerate(tangents) if type(t) is not Zero]
    tangents_out = [Zero(p.aval.strip_weak_type()) for p in outs]
    if nonzero:
        moved = optimization_barrier_p.bind(*(instantiate(tangents[i]) for i in nonzero))
        for i, t in zip(nonzero, moved, strict=True):
            tangents_out[i] = t
    return outs, tangents_out


def _barrier_transpose(cts, *xs):
    return list(optimization_barrier_p.bind(*cts))


def _barrier_batch(args, dims):
    return list(optimization_barrier_p.bind(*args)), list(dims)


optimization_barrier_p = Primitive(
    "optimization_barrier", multiple_results=True, abstract_eval=_barrier_abstract_eval,
    lower=_barrier_lower, jvp=_barrier_jvp, transpose=_barrier_transpose, batch=_barrier_batch)


def _reduce_precision_transpose(cts, x, **params):
    return [reduce_precision_p.bind(cts[0], **params)]


def _reduce_precision_batch(args, dims, **params):
    return [reduce_precision_p.bind(args[0], **params)], [dims[0]]


reduce_precision_p = Primitive(
    "reduce_precision", abstract_eval=_reduce_precision_abstract_eval,
    lower=_reduce_precision_lower, transpose=_reduce_precision_transpose,
    batch=_reduce_precision_batch)
linear_jvp(reduce_precision_p)
