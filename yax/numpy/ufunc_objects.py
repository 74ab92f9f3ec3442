"""`jnp.ufunc` and `jnp.frompyfunc`: a scalar function made into a NumPy-style universal
function, with `reduce`, `accumulate`, `outer` and `at` for binary ones.

The scalar function must be written with yax operations (it is traced): calling the ufunc
broadcasts its arguments and maps the function over the elements (`vectorize`); `reduce` and
`accumulate` fold it along an axis with `lax.scan` (in order, so any binary function works, not
only associative ones); `at` applies it at indexed positions one index at a time, so repeated
indices accumulate as in NumPy.
"""

from __future__ import annotations

import numpy as np

from yax import lax
from yax.numpy.creation import asarray
from yax.numpy.functional import vectorize
from yax.numpy.manipulation import broadcast_to, concatenate

__all__ = ["frompyfunc", "ufunc"]


class ufunc:  # noqa: N801  (NumPy's and jax's name)
    """A universal function from the scalar function `func` of `nin` inputs and `nout`
    outputs; `identity` is the value `reduce` starts from for an empty axis."""

    def __init__(self, func, /, nin: int, nout: int, *, name: str | None = None,
                 nargs: int | None = None, identity=None, call=None, reduce=None,
                 accumulate=None, at=None, reduceat=None):
        self._func = func
        self.nin, self.nout = int(nin), int(nout)
        self.nargs = self.nin if nargs is None else int(nargs)
        self.identity = identity
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._call = call or vectorize(func)
        # specialised implementations a caller may supply (jax's hooks), else the generic ones
        self._reduce, self._accumulate, self._at = reduce, accumulate, at
        del reduceat

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        if out is not None or where is not None:
            raise NotImplementedError(f"{self.__name__}: out= and where= are not supported "
                                      "(yax arrays are immutable)")
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} positional arguments, got "
                            f"{len(args)}")
        return self._call(*args)

    def _binary(self, method: str) -> None:
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{method} only supported for binary ufuncs with a single output "
                             f"({self.__name__} has nin={self.nin}, nout={self.nout})")

    def reduce(self, a, axis: int | None = 0, dtype=None, out=None, keepdims: bool = False,
               initial=None, where=None):
        """Fold the function along `axis` (all axes with None): ((a0 op a1) op a2) ..."""
        self._binary("reduce")
        if out is not None or where is not None:
            raise NotImplementedError("reduce: out= and where= are not supported")
        if self._reduce is not None:
            return self._reduce(a, axis, dtype, out, keepdims, initial, where)
        a = asarray(a) if dtype is None else asarray(a).astype(dtype)
        if axis is None:
            flat = a.reshape(-1)
            result = self._fold(flat, initial)
            return result.reshape((1,) * a.ndim) if keepdims else result
        axis = axis % a.ndim
        perm = (axis, *[i for i in range(a.ndim) if i != axis])  # the folded axis first
        result = self._fold(a.transpose(perm), initial)
        return result.reshape(a.shape[:axis] + (1,) + a.shape[axis + 1:]) if keepdims \
            else result

    def _fold(self, xs, initial):
        start = initial if initial is not None else self.identity
        if start is None:
            if xs.shape[0] == 0:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 "which has no identity")
            carry, xs = xs[0], xs[1:]
        else:
            carry = broadcast_to(asarray(start).astype(xs.dtype), xs.shape[1:])
        carry, _ = lax.scan(lambda c, x: (self._call(c, x).astype(c.dtype), None), carry, xs)
        return carry

    def accumulate(self, a, axis: int = 0, dtype=None, out=None):
        """The running fold along `axis`: [a0, a0 op a1, (a0 op a1) op a2, ...]."""
        self._binary("accumulate")
        if out is not None:
            raise NotImplementedError("accumulate: out= is not supported")
        if self._accumulate is not None:
            return self._accumulate(a, axis, dtype, out)
        a = asarray(a) if dtype is None else asarray(a).astype(dtype)
        moved = a.swapaxes(0, axis)

        def step(c, x):
            c = self._call(c, x).astype(c.dtype)
            return c, c
        _, rest = lax.scan(step, moved[0], moved[1:])
        return concatenate([moved[:1], rest], axis=0).swapaxes(0, axis)

    def outer(self, A, B, /):
        """The function at every pair of an element of A and one of B (shape A.shape +
        B.shape)."""
        self._binary("outer")
        A, B = asarray(A), asarray(B)
        return self._call(A.reshape(A.shape + (1,) * B.ndim), B)

    def at(self, a, indices, b=None, /, *, inplace: bool = True):
        """`a` with the function applied at `indices` (with `b` for a binary ufunc), one index
        at a time, so a repeated index is applied repeatedly. Returns the new array."""
        if inplace:
            raise NotImplementedError("ufunc.at cannot modify arrays in place (yax arrays are "
                                      "immutable); pass inplace=False")
        if self._at is not None:
            return self._at(a, indices, b, inplace=inplace)
        a = asarray(a)
        idx = asarray(indices)
        if idx.ndim == 0:
            idx = idx.reshape(1)
        if b is None:
            vals = None
        else:
            vals = (asarray(b) + a[idx] * 0).astype(a.dtype)  # b broadcast to the picks

        def one(acc, k):
            i = idx[k]
            new = self._call(acc[i]) if vals is None else self._call(acc[i], vals[k])
            return acc.at[i].set(new.astype(acc.dtype)), None
        out, _ = lax.scan(one, a, np.arange(idx.shape[0]))
        return out


def frompyfunc(func, /, nin: int, nout: int, *, identity=None) -> ufunc:
    """`func` (a scalar function written with yax operations) as a `ufunc`."""
    return ufunc(func, nin, nout, identity=identity)
