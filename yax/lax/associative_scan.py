"""yax.lax.associative_scan: an inclusive prefix scan with an associative function, in parallel.

The meaning, as a loop over `axis` (for a single array; `elems` may be a pytree):

    out[0] = elems[0]
    out[i] = fn(out[i - 1], elems[i])           for i = 1 .. n - 1

but computed in O(log n) rounds of whole-array operations (the odd/even recursion of Blelloch's
and Ladner-Fischer's scans), so it vectorises where `lax.scan` runs n sequential steps. `fn` must
be associative and act elementwise along `axis` (it is called on slices of several elements at
once). It is built from slicing, padding and reshaping, so every transformation applies.
"""

from __future__ import annotations

from yax import errors, tree_util
from yax.lax import shape, slicing
from yax.runtime.values import as_operand, aval_of

__all__ = ["associative_scan"]


def _slice(leaves, start, stop, step, axis):
    return [slicing.slice_in_dim(x, start, stop, step, axis=axis) for x in leaves]


def _interleave(evens, odds, axis):
    """[e0, o0, e1, o1, ...] along `axis`; evens has as many elements as odds, or one more."""
    out = []
    for e, o in zip(evens, odds, strict=True):
        ne, no = aval_of(e).shape[axis], aval_of(o).shape[axis]
        if ne != no:  # pad odds to evens' length, interleave, then drop the padding
            config = [(0, 0, 0)] * aval_of(o).ndim
            config[axis] = (0, 1, 0)
            o = shape.pad(o, 0 if not aval_of(o).dtype.kind == "b" else False, config)
        s = aval_of(e).shape
        pair = shape.concatenate([shape.expand_dims(e, (axis + 1,)),
                                  shape.expand_dims(o, (axis + 1,))], axis + 1)
        merged = shape.reshape(pair, s[:axis] + (2 * s[axis],) + s[axis + 1:])
        out.append(slicing.slice_in_dim(merged, 0, ne + no, axis=axis))
    return out


def _scan(combine, leaves, axis):
    n = aval_of(leaves[0]).shape[axis]
    if n < 2:
        return leaves
    pairs = combine(_slice(leaves, 0, n - 1, 2, axis), _slice(leaves, 1, n, 2, axis))
    odds = _scan(combine, pairs, axis)  # the scan at positions 1, 3, 5, ...
    if n % 2 == 0:
        evens = combine(_slice(odds, 0, aval_of(odds[0]).shape[axis] - 1, 1, axis),
                        _slice(leaves, 2, n, 2, axis))
    else:
        evens = combine(odds, _slice(leaves, 2, n, 2, axis))
    evens = [shape.concatenate([slicing.slice_in_dim(x, 0, 1, axis=axis), e], axis)
             for x, e in zip(leaves, evens, strict=True)]
    return _interleave(evens, odds, axis)


def associative_scan(fn, elems, reverse: bool = False, axis: int = 0):
    """The inclusive scan of `elems` along `axis` with the associative binary function `fn`.

    Args:
      fn: an associative function of two pytrees shaped like `elems` (with `axis` of any size)
        returning one such pytree, elementwise along `axis`; e.g. `lax.add` or
        `lambda a, b: (a[0] * b[0], a[1] * b[0] + b[1])` for linear recurrences.
      elems: an array or pytree of arrays whose leaves share the size of `axis`.
      reverse: scan from the end: the scan of the flipped elems, flipped back (as JAX:
        out[i] = fn(out[i + 1], elems[i]); fn's operands keep their places).
      axis: the axis to scan along.
    Returns:
      a pytree like `elems`.

    Example: `associative_scan(lax.add, jnp.arange(5))` is `[0, 1, 3, 6, 10]`.
    """
    leaves, tree = tree_util.tree_flatten(elems)
    if not leaves:
        return elems
    leaves = [as_operand(x) for x in leaves]
    ndims = {aval_of(x).ndim for x in leaves}
    if len(ndims) != 1 or ndims == {0}:
        raise errors.ShapeError("associative_scan: elems must be arrays of rank >= 1 and one "
                                "rank, got shapes " + str([aval_of(x).shape for x in leaves]))
    ndim = ndims.pop()
    if not -ndim <= axis < ndim:
        raise errors.ShapeError(f"associative_scan: axis {axis} is out of range for rank {ndim}")
    axis %= ndim
    sizes = {aval_of(x).shape[axis] for x in leaves}
    if len(sizes) != 1:
        raise errors.ShapeError(f"associative_scan: the leaves of elems differ in the size of "
                                f"axis {axis}: {sorted(sizes)}")

    def combine(a, b):
        out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise errors.ShapeError(f"associative_scan: fn must return a pytree like elems "
                                    f"({tree}), got {out_tree}")
        return [as_operand(x) for x in out_leaves]

    if reverse:
        leaves = [shape.rev(x, (axis,)) for x in leaves]
    out = _scan(combine, leaves, axis)
    if reverse:
        out = [shape.rev(x, (axis,)) for x in out]
    return tree_util.tree_unflatten(tree, out)
