"""`opaque(x, key)`: a sampler parameter in a form XLA cannot constant-fold.

The samplers pass their float parameters through it so that XLA never constant-folds a
parameter-only subexpression (log(a - 1/3) of a gamma shape, erf(lower / sqrt 2) of a truncated
normal, log(p) of `choice`). Folding evaluates transcendental functions on the host, which can
differ from the compiled kernel by an ulp; made opaque, a draw under `jit` with a literal
parameter has the same bits as the eager draw (and as jax's eager draw).
"""

from __future__ import annotations

from yax import lax
from yax import numpy as jnp


def opaque(x, key):
    """`x`, in a form XLA cannot constant-fold even when `x` is a literal: a select on a
    predicate that is always true but depends on the run-time value of `key`.

    (XLA's CPU pipeline drops optimization barriers whose operand is a constant before folding,
    so `lax.optimization_barrier` alone does not stop `erf(2.0 / sqrt 2)` from being evaluated
    on the host.)
    """
    word = lax.squeeze(lax.slice(key, (0,), (1,)), (0,))
    always = lax.ne(word, lax.bitwise_xor(word, 1))
    x = jnp.asarray(x)
    return lax.select(jnp.broadcast_to(always, x.shape), x, jnp.zeros_like(x))
