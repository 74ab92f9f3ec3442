"""yax.lax.optimization_barrier and reduce_precision: the wrappers of the compiler barrier
primitives (yax/primitives/barriers.py).
"""

from __future__ import annotations

from yax import tree_util
from yax.core.trace import bind
from yax.primitives.barriers import optimization_barrier_p, reduce_precision_p
from yax.runtime.values import as_operand

__all__ = ["optimization_barrier", "reduce_precision"]


def optimization_barrier(operand, /):
    """`operand` (a pytree) unchanged, behind a barrier XLA does not move computation across."""
    leaves, tree = tree_util.tree_flatten(operand)
    outs = bind(optimization_barrier_p, *(as_operand(x) for x in leaves))
    return tree_util.tree_unflatten(tree, list(outs))


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """Round floats to `exponent_bits`/`mantissa_bits` (keeping the dtype): e.g. (8, 7) gives
    bfloat16's values in a float32 array."""
    return bind(reduce_precision_p, as_operand(operand), exponent_bits=int(exponent_bits),
                mantissa_bits=int(mantissa_bits))
