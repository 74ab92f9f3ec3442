"""Jacobians and Hessians, built from jvp/vjp and vmap (one batched pass, not a Python loop)."""

from __future__ import annotations

import functools

import numpy as np

from yax import errors, tree_util
from yax.core.avals import aval_of_value
from yax.interpreters.ad_util import zeros_like_aval
from yax.lax import shape as lax_shape
from yax.lax import slicing as lax_slicing
from yax.runtime import values
from yax.runtime.values import canonical_leaf
from yax.transforms._args import normalize_argnums
from yax.transforms.ad import _check_grad_inputs, check_output_dtype, jvp, vjp
from yax.transforms.vmap import vmap


def _basis(aval):
    """The standard basis of `aval`'s space, stacked: shape (size, *shape)."""
    n = int(np.prod(aval.shape, dtype=int))
    return values.array_from_numpy(np.eye(n, dtype=aval.dtype).reshape((n,) + aval.shape))


def _partial(fun, args, nums):
    def f(*diff):
        full = list(args)
        for i, d in zip(nums, diff):
            full[i] = d
        return fun(*full)
    return f


def _reshape_jac(flat_jac, out_shape, in_shape, *, out_first: bool):
    """(n_in, *out) or (n_out, *in) stacks to (*out, *in)."""
    if out_first:  # rows are outputs: (n_out, *in) -> (*out, *in)
        return lax_shape.reshape(flat_jac, tuple(out_shape) + tuple(in_shape))
    ndim = len(aval_of_value(flat_jac).shape)
    moved = lax_shape.transpose(flat_jac, (*range(1, ndim), 0))  # (*out, n_in)
    return lax_shape.reshape(moved, tuple(out_shape) + tuple(in_shape))


def jacfwd(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Jacobian by forward mode: one batched jvp over the basis of all the inputs, so the
    function's Python runs once (its primal output comes from the same batched jvp).

    With `has_aux`, `fun` returns `(out, aux)` and the result is `(jacobian, aux)`. Inputs must
    be real, or complex with `holomorphic=True` (then the result is the complex Jacobian)."""
    single = isinstance(argnums, int)
    nums = normalize_argnums(argnums)

    @functools.wraps(fun)
    def jac(*args):
        _check_grad_inputs(args, nums, False, "jacfwd", holomorphic, real_only=True)
        diff = tuple(args[i] for i in nums)
        leaves, in_tree = tree_util.tree_flatten(diff)
        leaves = [canonical_leaf(x) for x in leaves]
        f_full = _partial(fun, args, nums)
        in_avals = [aval_of_value(x) for x in leaves]
        bases = _joint_basis(in_avals)
        if bases is None:  # no input has an element: nothing to batch over
            out = f_full(*diff)
            out, aux = _aux_pair(out, "jacfwd") if has_aux else (out, None)
            cols = [[_zeros_jac(o, a) for a in in_avals] for o in tree_util.tree_leaves(out)]
        else:
            out, cols, aux = _pushforward_columns(f_full, leaves, in_tree, bases, has_aux)
        out_tree = tree_util.tree_structure(out)
        per_input = [[c[i] for c in cols] for i in range(len(leaves))]
        result = _assemble(per_input, in_tree, out_tree, single)
        return (result, aux) if has_aux else result
    return jac


def _joint_basis(in_avals):
    """One basis over all the inputs together: for each input, its (n_total, *shape) slice of
    the identity (in its own dtype); None when the inputs have no element at all."""
    sizes = [int(np.prod(a.shape, dtype=int)) for a in in_avals]
    total = sum(sizes)
    if total == 0:
        return None
    eye = np.eye(total)
    bases, start = [], 0
    for aval, size in zip(in_avals, sizes, strict=True):
        block = eye[:, start:start + size].reshape((total,) + tuple(aval.shape))
        bases.append(values.array_from_numpy(block.astype(aval.dtype)))
        start += size
    return bases


def _pushforward_columns(f_full, leaves, in_tree, bases, has_aux: bool):
    """(output, per output leaf the Jacobian block of each input, aux) from one vmapped jvp."""
    def f(*ls):
        out = f_full(*tree_util.tree_unflatten(in_tree, ls))
        return _aux_pair(out, "jacfwd") if has_aux else (out, None)

    def push(*tangents):
        out, tangent, aux = jvp(f, tuple(leaves), tuple(tangents), has_aux=True)
        return out, tangent, aux
    out, tangent, aux = vmap(push, out_axes=(None, 0, None))(*bases)
    sizes = [int(np.prod(aval_of_value(x).shape, dtype=int)) for x in leaves]
    cols = []
    for o, t in zip(tree_util.tree_leaves(out), tree_util.tree_leaves(tangent), strict=True):
        out_shape, blocks, start = aval_of_value(o).shape, [], 0
        for x, size in zip(leaves, sizes, strict=True):
            part = lax_slicing.slice_in_dim(t, start, start + size, axis=0)
            blocks.append(_reshape_jac(part, out_shape, aval_of_value(x).shape, out_first=False))
            start += size
        cols.append(blocks)
    return out, cols, aux


def _zeros_jac(o, in_aval):
    return zeros_like_aval(aval_of_value(o).update(
        shape=tuple(aval_of_value(o).shape) + tuple(in_aval.shape)))


def _aux_pair(value, who: str):
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        raise errors.YaxError(f"{who}(has_aux=True): the function must return a pair (output, "
                              f"aux), got {type(value).__name__}")
    return value


def jacrev(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
           allow_int: bool = False):
    """The Jacobian by reverse mode: one batched vjp over the output basis.

    With `has_aux`, `fun` returns `(out, aux)` and the result is `(jacobian, aux)`. Outputs must
    be real (complex inputs then follow JAX's conjugate convention, as `grad`), or inputs and
    outputs complex with `holomorphic=True`."""
    single = isinstance(argnums, int)
    nums = normalize_argnums(argnums)

    @functools.wraps(fun)
    def jac(*args):
        _check_grad_inputs(args, nums, allow_int, "jacrev", holomorphic)
        diff = tuple(args[i] for i in nums)
        leaves, in_tree = tree_util.tree_flatten(diff)
        leaves = [canonical_leaf(x) for x in leaves]
        if has_aux:
            out, f_vjp, aux = vjp(_partial(fun, args, nums), *diff, has_aux=True)
        else:
            (out, f_vjp), aux = vjp(_partial(fun, args, nums), *diff), None
        out_leaves, out_tree = tree_util.tree_flatten(out)
        for o in out_leaves:
            check_output_dtype(aval_of_value(o), "jacrev", holomorphic)
        rows_per_output = []
        for k, o in enumerate(out_leaves):
            aval = aval_of_value(o)

            def row(b, k=k):
                cts = [b if j == k else _zeros(y) for j, y in enumerate(out_leaves)]
                return tree_util.tree_leaves(f_vjp(tree_util.tree_unflatten(out_tree, cts)))
            rows = vmap(row)(_basis(aval))
            rows_per_output.append([_reshape_jac(r, aval.shape, aval_of_value(x).shape,
                                                 out_first=True)
                                    for r, x in zip(rows, leaves)])
        per_input = [[rows_per_output[k][i] for k in range(len(out_leaves))]
                     for i in range(len(leaves))]
        result = _assemble(per_input, in_tree, out_tree, single)
        return (result, aux) if has_aux else result
    return jac


def _zeros(x):
    return zeros_like_aval(aval_of_value(x))


def _assemble(per_input, in_tree, out_tree, single: bool):
    """Nest as JAX does: output structure outside, input structure inside."""
    by_output = []
    for k in range(out_tree.num_leaves):
        inner = tree_util.tree_unflatten(in_tree, [per_input[i][k] for i in range(len(per_input))])
        by_output.append(inner[0] if single else inner)
    return tree_util.tree_unflatten(out_tree, by_output)


def hessian(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Hessian: forward-over-reverse, `jacfwd(jacrev(fun))` (`(hessian, aux)` with
    `has_aux`; complex with `holomorphic=True`)."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)
