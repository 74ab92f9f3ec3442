"""`yax.flatten_util` (as `jax.flatten_util`): a pytree of arrays as one flat vector.

    flat, unravel = ravel_pytree({"w": jnp.ones((2, 3)), "b": jnp.zeros(3)})
    flat.shape          # (9,)
    unravel(flat)       # the dict again, same shapes and dtypes

Leaves are raveled in tree order and concatenated in their promoted dtype; `unravel` splits a
vector of that length and dtype back, casting each piece to its leaf's dtype. Both work under
every transformation (they are ordinary yax.numpy operations).
"""

from __future__ import annotations

import numpy as np

from yax import numpy as jnp
from yax import tree_util

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree):
    """Ravel every leaf of `pytree` into one 1-D array; returns `(flat, unravel)`."""
    leaves, treedef = tree_util.tree_flatten(pytree)
    flat, unravel_leaves = _ravel_leaves(leaves)
    return flat, lambda vector: tree_util.tree_unflatten(treedef, unravel_leaves(vector))


def _ravel_leaves(leaves):
    if not leaves:
        return jnp.zeros((0,), jnp.float32), lambda vector: []
    dtypes = [jnp.result_type(x) for x in leaves]
    shapes = [np.shape(x) for x in leaves]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    to_dtype = jnp.result_type(*dtypes)
    flat = jnp.concatenate([jnp.ravel(jnp.asarray(x, dtype=to_dtype)) for x in leaves])
    total = sum(sizes)

    def unravel(vector):
        if np.shape(vector) != (total,):
            raise ValueError(f"the unravel function of ravel_pytree expects an array of shape "
                             f"({total},), got shape {np.shape(vector)}")
        if jnp.result_type(vector) != to_dtype:
            raise TypeError(f"the unravel function of ravel_pytree expects dtype {to_dtype}, "
                            f"got {jnp.result_type(vector)}")
        pieces = jnp.split(vector, np.cumsum(sizes)[:-1].tolist())
        return [_cast_back(p.reshape(s), d) for p, s, d in zip(pieces, shapes, dtypes,
                                                                    strict=True)]
    return flat, unravel


def _cast_back(piece, dtype):
    if jnp.issubdtype(piece.dtype, jnp.complexfloating) and not jnp.issubdtype(
            dtype, jnp.complexfloating):
        piece = jnp.real(piece)  # a real leaf raveled with complex ones: its real part
    return piece.astype(dtype)
