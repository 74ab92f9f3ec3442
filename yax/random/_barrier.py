"""`optimization_barrier`: the identity, opaque to XLA's optimiser.

The samplers pass their float parameters through it so that XLA never constant-folds a
parameter-only subexpression (log(a - 1/3) of a gamma shape, erf(lower / sqrt 2) of a truncated
normal, log(p) of `choice`). Folding evaluates transcendental functions on the host, which can
differ from the compiled kernel by an ulp; with the barrier a draw under `jit` with a literal
parameter has the same bits as the eager draw (and as jax's eager draw).

Rules: identity everywhere (abstract eval, batching); linear, so its jvp applies it to the
tangent as well and its transpose is the identity on the cotangent.
"""

from __future__ import annotations

from yax import lax
from yax import numpy as jnp
from yax.core.primitive import Primitive
from yax.core.trace import bind
from yax.interpreters.ad_util import Zero
from yax.interpreters.mlir import hlo
from yax.lax._util import as_operand

optimization_barrier_p = Primitive("optimization_barrier")
optimization_barrier_p.abstract_eval = lambda x: x
optimization_barrier_p.lower = lambda ctx, x: list(hlo.OptimizationBarrierOp([x]).results)


def _barrier_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return [bind(optimization_barrier_p, x)], [t if type(t) is Zero
                                               else bind(optimization_barrier_p, t)]


optimization_barrier_p.jvp = _barrier_jvp
optimization_barrier_p.transpose = lambda cts, x: [cts[0]]
optimization_barrier_p.batch = lambda args, dims: ([bind(optimization_barrier_p, args[0])],
                                                   [dims[0]])


def optimization_barrier(x):
    """`x`, computed at run time: XLA does not fold or move computations across it."""
    return bind(optimization_barrier_p, as_operand(x))


def opaque(x, key):
    """`x`, in a form XLA cannot constant-fold even when `x` is a literal: a select on a
    predicate that is always true but depends on the run-time value of `key`.

    (XLA's CPU pipeline drops optimization barriers whose operand is a constant before folding,
    so the barrier alone does not stop `erf(2.0 / sqrt 2)` from being evaluated on the host.)
    """
    word = lax.squeeze(lax.slice(key, (0,), (1,)), (0,))
    always = lax.ne(word, lax.bitwise_xor(word, 1))
    x = jnp.asarray(x)
    return lax.select(jnp.broadcast_to(always, x.shape), x, jnp.zeros_like(x))
