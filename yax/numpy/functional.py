"""yax.numpy function transformations and index tricks: vectorize, apply_along_axis,
apply_over_axes, fromfunction, and the `mgrid`, `ogrid`, `r_`, `c_`, `s_`, `index_exp` helpers.

`vectorize` and `apply_along_axis` are `yax.vmap` applied once per loop dimension, so the
function is traced once however large the arrays are (and works under jit and grad).
"""

from __future__ import annotations

import re

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.numpy import creation, manipulation
from yax.numpy._arguments import arr, canon_axis
from yax.numpy._promote import promote_dtypes
from yax.numpy.construction import indices, linspace, meshgrid
from yax.transforms.vmap import vmap

__all__ = ["vectorize", "apply_along_axis", "apply_over_axes", "fromfunction", "mgrid",
           "ogrid", "r_", "c_", "s_", "index_exp"]

_DIMS = r"\w+"
_CORE = rf"\((?:{_DIMS}(?:,{_DIMS})*)?\)"
_ARGS = rf"{_CORE}(?:,{_CORE})*"
_SIGNATURE = rf"^{_ARGS}->{_ARGS}$"


def _parse_signature(signature: str):
    sig = signature.replace(" ", "")
    if not re.match(_SIGNATURE, sig):
        raise ValueError(f"jnp.vectorize: not a valid gufunc signature: {signature!r}")
    ins, outs = sig.split("->")

    def groups(s):
        return [tuple(d for d in g.split(",") if d) for g in re.findall(r"\((.*?)\)", s)]
    return groups(ins), groups(outs), outs.count("(") > 1 or outs.startswith("((")


def _vmap_n(fun, n: int):
    for _ in range(n):
        fun = vmap(fun)
    return fun


class vectorize:  # noqa: N801  (NumPy's class name)
    """Turn a function of scalars (or of core arrays, with a gufunc `signature` such as
    "(n),(n)->()") into one that broadcasts over leading dimensions, by vmap.

    Example:
      >>> dot = jnp.vectorize(lambda a, b: jnp.sum(a * b), signature="(n),(n)->()")
      >>> dot(jnp.ones((4, 3)), jnp.arange(3.0)).shape
      (4,)
    """

    def __init__(self, pyfunc, *, excluded=frozenset(), signature: str | None = None):
        self.pyfunc = pyfunc
        self.excluded = frozenset(excluded)
        self.signature = signature
        self.__doc__ = getattr(pyfunc, "__doc__", None)
        self.__name__ = getattr(pyfunc, "__name__", "vectorized")

    def __call__(self, *args, **kwargs):
        static_kw = {k: v for k, v in kwargs.items() if k in self.excluded}
        dyn_kw = {k: v for k, v in kwargs.items() if k not in self.excluded}
        names = list(dyn_kw)
        positions = [i for i in range(len(args)) if i not in self.excluded]
        dyn = [arr("vectorize", args[i]) for i in positions] + \
            [arr("vectorize", dyn_kw[k]) for k in names]
        if self.signature is None:
            cores = [()] * len(dyn)
        else:
            cores, _, _ = _parse_signature(self.signature)
            if len(cores) != len(dyn):
                raise TypeError(f"jnp.vectorize: signature {self.signature!r} has "
                                f"{len(cores)} inputs, got {len(dyn)} array arguments")
        loops = []
        for a, core in zip(dyn, cores, strict=True):
            if a.ndim < len(core):
                raise errors.ShapeError(f"jnp.vectorize: an input of shape {a.shape} has fewer "
                                        f"dimensions than its core signature {core}")
            loops.append(a.shape[:a.ndim - len(core)])
        loop_shape = np.broadcast_shapes(*loops) if loops else ()
        dyn = [manipulation.broadcast_to(a, loop_shape + a.shape[a.ndim - len(c):])
               for a, c in zip(dyn, cores, strict=True)]

        def inner(*values):
            call = list(args)
            for i, v in zip(positions, values, strict=False):
                call[i] = v
            kw = dict(static_kw)
            kw.update(zip(names, values[len(positions):], strict=True))
            return self.pyfunc(*call, **kw)

        if not dyn:
            return self.pyfunc(*args, **kwargs)
        return _vmap_n(inner, len(loop_shape))(*dyn)


def apply_along_axis(func1d, axis: int, arr_, *args, **kwargs):
    """`func1d` applied to every 1-D slice along `axis`; its output dimensions replace `axis`."""
    a = arr("apply_along_axis", arr_)
    axis = canon_axis("apply_along_axis", axis, a.ndim)
    moved = manipulation.moveaxis(a, axis, -1)
    out = _vmap_n(lambda x: func1d(x, *args, **kwargs), a.ndim - 1)(moved)
    out = arr("apply_along_axis", out)
    extra = out.ndim - (a.ndim - 1)
    src = tuple(range(a.ndim - 1, a.ndim - 1 + extra))
    return manipulation.moveaxis(out, src, tuple(range(axis, axis + extra)))


def apply_over_axes(func, a, axes):
    """Apply `func(a, axis)` for each axis in turn, keeping reduced axes as size 1."""
    a = arr("apply_over_axes", a)
    for ax in ((axes,) if np.ndim(axes) == 0 else tuple(axes)):
        res = arr("apply_over_axes", func(a, ax))
        if res.ndim == a.ndim - 1:
            res = manipulation.expand_dims(res, ax)
        elif res.ndim != a.ndim:
            raise ValueError("jnp.apply_over_axes: func must keep or reduce the rank by one")
        a = res
    return a


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """`function(*index_grids)`: an array whose value at (i, j, ...) is function(i, j, ...)."""
    dt = dtypes.canonicalize(dtypes.dtype(dtype))
    grids = indices(tuple(int(s) for s in shape), dtype=dt)
    return function(*[grids[i] for i in range(len(shape))], **kwargs)


# --- index tricks -------------------------------------------------------------------------

def _range_from_slice(s: slice):
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):  # a complex step is a number of points, endpoint included
        return linspace(start, s.stop, int(abs(step)))
    return creation.arange(start, s.stop, step)


class _Grid:
    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, key):
        single = isinstance(key, slice)
        keys = (key,) if single else tuple(key)
        axes = [_range_from_slice(k) for k in keys]
        if single:
            return axes[0]
        axes = [arr("mgrid", a) for a in promote_dtypes(*axes)]
        grids = meshgrid(*axes, indexing="ij", sparse=self.sparse)
        return grids if self.sparse else manipulation.stack(grids)


mgrid = _Grid(sparse=False)
mgrid.__doc__ = "`jnp.mgrid[0:3, 0:4]`: a dense (ndim, ...) stack of coordinate grids."
ogrid = _Grid(sparse=True)
ogrid.__doc__ = "`jnp.ogrid[0:3, 0:4]`: open (broadcastable) coordinate grids."


class _Concat:
    """`r_[...]` and `c_[...]`: concatenate slices, scalars and arrays along an axis."""

    def __init__(self, axis: int, ndmin: int, trans1d: int):
        self.defaults = (axis, ndmin, trans1d)

    def __getitem__(self, key):
        items = list(key) if isinstance(key, tuple) else [key]
        axis, ndmin, trans1d = self.defaults
        if items and isinstance(items[0], str):
            directive = items.pop(0)
            try:
                spec = [int(v) for v in directive.split(",")]  # "axis[,ndmin[,trans1d]]"
            except ValueError:
                raise NotImplementedError(
                    f"jnp.r_/c_: only 'axis[,ndmin[,trans1d]]' directives are supported (NumPy "
                    f"matrix directives like 'r' and 'c' are not), got {directive!r}") from None
            axis = spec[0]
            ndmin = spec[1] if len(spec) > 1 else ndmin
            trans1d = spec[2] if len(spec) > 2 else trans1d
        parts = []
        for item in items:
            if isinstance(item, slice):
                a = _range_from_slice(item)
            else:
                a = manipulation.atleast_1d(arr("r_", item)) if np.ndim(item) == 0 else \
                    arr("r_", item)
            parts.append(_promote_rank(a, ndmin, trans1d))
        parts = [arr("r_", p) for p in promote_dtypes(*parts)] if len(parts) > 1 else parts
        return manipulation.concatenate(parts, axis=axis)


def _promote_rank(a, ndmin: int, trans1d: int):
    """NumPy's r_ rule: raise to `ndmin` dims, placing the old dims where `trans1d` says."""
    if a.ndim >= ndmin:
        return a
    k2 = ndmin - a.ndim
    a = manipulation.reshape(a, (1,) * k2 + a.shape)
    if trans1d == -1:
        return a
    k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
    axes = list(range(ndmin))
    perm = axes[:k1] + axes[k2:] + axes[k1:k2]
    return manipulation.transpose(a, tuple(perm))


r_ = _Concat(axis=0, ndmin=1, trans1d=-1)
c_ = _Concat(axis=-1, ndmin=2, trans1d=0)


class _IndexExpression:
    def __init__(self, always_tuple: bool):
        self.always_tuple = always_tuple

    def __getitem__(self, key):
        if self.always_tuple and not isinstance(key, tuple):
            return (key,)
        return key


s_ = _IndexExpression(always_tuple=False)
index_exp = _IndexExpression(always_tuple=True)
