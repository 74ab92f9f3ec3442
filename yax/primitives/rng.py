"""XLA's own random-number ops: `rng_bit_generator` (stateless, keyed) and `rng_uniform`
(stateful), with all their rules.

rng_bit_generator(key; shape, dtype, algorithm) -> [new_key, bits]: key is uint32[4], the
generator state XLA reads as uint64[2] (the lowering bitcasts it there and back); bits has
`shape` and an unsigned `dtype`, uniformly distributed, from the algorithm (RNG_DEFAULT: the
backend's choice, RNG_THREE_FRY, RNG_PHILOX). Same key, shape, dtype and algorithm, same bits
on one backend: they are jax's bits, since the op is the same StableHLO. vmap draws each
lane from its own key (a map over the lanes); outputs are integers, so tangents are zeros.

rng_uniform(a, b; shape): numbers uniform in [a, b) from XLA's stateful generator (a new draw
per execution; the result is unspecified for b <= a). As in jax: no derivative and no vmap.
"""

from __future__ import annotations

import enum

import numpy as np

from yax import errors
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters import mlir
from yax.interpreters.ad_util import Zero
from yax.interpreters.batching import move_batch_axis
from yax.interpreters.mlir import hlo
from yax.primitives._lax import lax

ir = mlir.ir


class RandomAlgorithm(enum.IntEnum):
    """The algorithm of `rng_bit_generator`: the backend's default, Threefry or Philox."""
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return self.name


_HLO_NAME = {RandomAlgorithm.RNG_DEFAULT: "DEFAULT", RandomAlgorithm.RNG_THREE_FRY: "THREE_FRY",
             RandomAlgorithm.RNG_PHILOX: "PHILOX"}
BIT_DTYPES = tuple(np.dtype(d) for d in (np.uint8, np.uint16, np.uint32, np.uint64))


# --- rng_bit_generator ---------------------------------------------------------------------------

def _rbg_abstract_eval(key, *, shape, dtype, algorithm, out_sharding=None):
    if key.shape != (4,) or key.dtype != np.uint32:
        raise errors.ShapeError(
            f"rng_bit_generator needs a uint32[4] key (the generator state), got "
            f"{key.str_short()}; make one with e.g. np.array([0, 0, 0, seed], np.uint32)")
    if np.dtype(dtype) not in BIT_DTYPES:
        raise errors.DTypeError(f"rng_bit_generator: unsupported dtype {np.dtype(dtype)}; bits "
                                f"come as uint8, uint16, uint32 or uint64 (bitcast them after)")
    return [ShapedArray((4,), np.dtype(np.uint32)), ShapedArray(tuple(shape), np.dtype(dtype))]


def _rbg_lower(ctx, key, *, shape, dtype, algorithm, out_sharding=None):
    _, bits_aval = ctx.avals_out
    u32x2 = mlir.tensor_type((2, 2), np.uint32)
    state = hlo.bitcast_convert(mlir.tensor_type((2,), np.uint64), hlo.reshape(u32x2, key))
    new_state, bits = hlo.rng_bit_generator(
        mlir.tensor_type((2,), np.uint64), mlir.aval_type(bits_aval),
        hlo.RngAlgorithmAttr.get(_HLO_NAME[RandomAlgorithm(algorithm)]), state)
    new_key = hlo.reshape(mlir.tensor_type((4,), np.uint32), hlo.bitcast_convert(u32x2, new_state))
    return [new_key, bits]


def _rbg_jvp(primals, tangents, **params):
    outs = rng_bit_generator_p.bind(*primals, **params)
    return outs, [Zero(o.aval) for o in outs]


def _rbg_batch(args, dims, **params):
    key, = args
    d, = dims
    keys = move_batch_axis(key, d, 0, key.shape[d])
    new_keys, bits = lax.map(lambda k: tuple(rng_bit_generator_p.bind(k, **params)), keys)
    return [new_keys, bits], [0, 0]


rng_bit_generator_p = Primitive("rng_bit_generator", multiple_results=True,
                                abstract_eval=_rbg_abstract_eval, lower=_rbg_lower,
                                jvp=_rbg_jvp, batch=_rbg_batch)


# --- rng_uniform ---------------------------------------------------------------------------------

def _rng_uniform_abstract_eval(a, b, *, shape):
    if a.dtype != b.dtype:
        raise errors.DTypeError(f"Arguments to rng_uniform must have identical dtypes, got "
                                f"{a.dtype} and {b.dtype}.")
    if a.shape != () or b.shape != ():
        raise errors.ShapeError(f"Arguments to rng_uniform must be scalars; got shapes "
                                f"{a.shape} and {b.shape}.")
    if a.dtype.kind not in "fiu":
        raise errors.DTypeError(f"rng_uniform draws floats or integers, got {a.dtype}")
    return ShapedArray(tuple(shape), a.dtype)


def _rng_uniform_lower(ctx, a, b, *, shape):
    out, = ctx.avals_out
    dims = mlir.constant(np.asarray(shape, np.int64).reshape(len(shape)))
    return [hlo.rng(a, b, dims, hlo.RngDistributionAttr.get("UNIFORM"),
                    results=[mlir.aval_type(out)])]


def _rng_uniform_jvp(primals, tangents, **params):
    raise errors.NotImplementedRuleError(
        "rng_uniform has no derivative (as in jax): it is a stateful draw; differentiate "
        "a + (b - a) * u with u from yax.random.uniform instead")


def _rng_uniform_batch(args, dims, **params):
    raise errors.NotImplementedRuleError(
        "rng_uniform cannot be vmapped (as in jax): its bounds must be scalars; draw with "
        "yax.random.uniform(key, shape, minval=a, maxval=b), which broadcasts")


rng_uniform_p = Primitive("rng_uniform", abstract_eval=_rng_uniform_abstract_eval,
                          lower=_rng_uniform_lower, jvp=_rng_uniform_jvp,
                          batch=_rng_uniform_batch)
