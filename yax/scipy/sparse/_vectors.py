"""The vector space of an iterative solver: a pytree `b` seen as one flat 1-D vector.

The solvers (`_cg`, `_bicgstab`, `_gmres`) work on flat vectors only, so a Krylov basis is one
(k, n) array whatever the structure of `b`; `FlatSpace` moves between the user's pytree and that
vector (leaves concatenated in tree order, in their common dtype), and wraps the user's operator
A and preconditioner M (matrices or functions of pytrees) as maps of flat vectors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import yax.numpy as jnp
from yax import errors, lax, tree_util


@dataclass(frozen=True)
class FlatSpace:
    """The pytree structure, shapes and dtypes of `b`, and the dtype of its flat form."""

    tree: object
    shapes: tuple
    dtypes: tuple
    dtype: np.dtype

    @staticmethod
    def of(b) -> FlatSpace:
        leaves, tree = tree_util.tree_flatten(b)
        return FlatSpace(tree, tuple(tuple(x.shape) for x in leaves),
                         tuple(np.dtype(x.dtype) for x in leaves),
                         np.dtype(jnp.result_type(*leaves)))

    @property
    def size(self) -> int:
        return int(sum(int(np.prod(s)) for s in self.shapes))

    def ravel(self, v):
        leaves = [jnp.reshape(x, (-1,)).astype(self.dtype) for x in tree_util.tree_leaves(v)]
        return leaves[0] if len(leaves) == 1 else jnp.concatenate(leaves)

    def unravel(self, flat):
        if len(self.shapes) == 1:
            leaves = [jnp.reshape(flat, self.shapes[0]).astype(self.dtypes[0])]
        else:
            leaves, start = [], 0
            for shape, dtype in zip(self.shapes, self.dtypes, strict=True):
                n = int(np.prod(shape))
                leaves.append(jnp.reshape(flat[start:start + n], shape).astype(dtype))
                start += n
        return tree_util.tree_unflatten(self.tree, leaves)

    def flat_map(self, fun):
        """`fun` (a map of pytrees shaped like b) as a map of flat vectors."""
        return lambda v: self.ravel(fun(self.unravel(v)))


def dot(x, y):
    """<x, y> = sum(conj(x) * y), elementwise (exact on every backend, whatever the matmul
    precision)."""
    if jnp.iscomplexobj(x):
        x = jnp.conj(x)
    return jnp.sum(x * y)


def norm2(x):
    """|x|^2, real."""
    return jnp.real(dot(x, x))


def norm(x):
    return jnp.sqrt(norm2(x))


def as_operator(name: str, what: str, op, b):
    """A matrix or a function as a function of pytrees shaped like b (None: the identity)."""
    if op is None:
        return lambda v: v
    if callable(op) and not hasattr(op, "shape"):
        return op if what == "A" else _checked(name, what, op)
    op = jnp.asarray(op)
    if op.ndim != 2 or op.shape[0] != op.shape[1]:
        raise errors.ShapeError(f"{name}: {what} must be a square matrix or a function, got "
                                f"shape {tuple(op.shape)}")
    leaves = tree_util.tree_leaves(b)
    if len(leaves) != 1 or leaves[0].ndim not in (1, 2) or leaves[0].shape[0] != op.shape[1]:
        got = ", ".join(str(tuple(x.shape)) for x in leaves)
        raise errors.ShapeError(f"{name}: {what} of shape {tuple(op.shape)} needs b to be one "
                                f"array with {op.shape[1]} rows, got b of shape(s) {got}; pass "
                                f"{what} as a function to act on other shapes or pytrees")
    return lambda v: jnp.matmul(op, v, precision=lax.Precision.HIGHEST)


def _checked(name: str, what: str, fun):
    """`fun`, failing at trace time when its result is not shaped like its argument."""
    def checked(v):
        out = fun(v)
        want = [(tuple(x.shape), x.dtype) for x in tree_util.tree_leaves(v)]
        got_leaves, got_tree = tree_util.tree_flatten(out)
        got = [(tuple(jnp.shape(x)), jnp.result_type(x)) for x in got_leaves]
        if got_tree != tree_util.tree_structure(v) or [g[0] for g in got] != [w[0] for w in want]:
            raise errors.ShapeError(
                f"{name}: {what} ({getattr(fun, '__qualname__', repr(fun))}) returned "
                f"{got_tree} with shapes {[g[0] for g in got]}; it must return a value "
                f"structured and shaped like its argument: {[w[0] for w in want]}")
        return out
    return checked


def checked_inputs(name: str, A, b, x0):
    """b and x0 as pytrees of inexact arrays of one structure and shapes (x0 defaults to 0).
    A matrix A promotes b's dtype (a complex A with a real b gives a complex solution)."""
    b = tree_util.tree_map(jnp.asarray, b)
    if not callable(A) or hasattr(A, "shape"):
        b = tree_util.tree_map(lambda x: x.astype(jnp.result_type(x, jnp.asarray(A), 1.0)), b)
    else:
        b = tree_util.tree_map(lambda x: x.astype(jnp.result_type(x, 1.0)), b)
    if x0 is None:
        return b, tree_util.tree_map(jnp.zeros_like, b)
    x0 = tree_util.tree_map(jnp.asarray, x0)
    b_tree, x0_tree = tree_util.tree_structure(b), tree_util.tree_structure(x0)
    if b_tree != x0_tree:
        raise errors.ShapeError(f"{name}: x0 and b must have the same tree structure, got "
                                f"{x0_tree} and {b_tree}")
    b_leaves, x0_leaves = tree_util.tree_leaves(b), tree_util.tree_leaves(x0)
    if any(x.shape != y.shape for x, y in zip(b_leaves, x0_leaves, strict=True)):
        raise errors.ShapeError(f"{name}: the arrays of x0 and b must have the same shapes, got "
                                f"{[tuple(x.shape) for x in x0_leaves]} and "
                                f"{[tuple(x.shape) for x in b_leaves]}")
    x0 = tree_util.tree_unflatten(
        b_tree, [x.astype(y.dtype) for x, y in zip(x0_leaves, b_leaves, strict=True)])
    return b, x0
