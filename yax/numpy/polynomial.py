"""yax.numpy polynomials (coefficients highest power first, as NumPy's poly* functions) and 1-D
convolution/correlation.

polyval is Horner's rule unrolled over the (static) number of coefficients; convolve and
correlate are one `conv_general_dilated` each; polyfit solves the Vandermonde least-squares
problem with yax.numpy.linalg.lstsq.
"""

from __future__ import annotations

import numpy as np

from yax import errors, lax
from yax.numpy import creation, manipulation, reductions, ufuncs
from yax.numpy._arguments import arr, concrete
from yax.numpy._promote import promote_dtypes, promote_dtypes_inexact
from yax.numpy.construction import vander
from yax.numpy.dtypes_api import result_type
from yax.numpy.linalg import inv, lstsq
from yax.numpy.linalg._eig import eigvals

__all__ = ["roots", "polyval", "polyadd", "polysub", "polymul", "polyder", "polyint", "polyfit",
           "convolve", "correlate", "poly", "trim_zeros", "polydiv"]


def _coeffs(name, p):
    p = arr(name, p)
    if p.ndim != 1:
        raise errors.ShapeError(f"jnp.{name}: coefficients must be 1-D, got shape {p.shape}")
    return p


def polyval(p, x, *, unroll: int = 16):
    """The polynomial with coefficients `p` (highest power first) evaluated at `x`.

    Example:
      >>> jnp.polyval(jnp.array([1., 0., -1.]), 3.0)   # x**2 - 1
      Array(8., dtype=float32)
    """
    p, x = promote_dtypes(_coeffs("polyval", p), arr("polyval", x))
    p, x = arr("polyval", p), arr("polyval", x)
    y = creation.zeros(x.shape, x.dtype)
    for i in range(p.shape[0]):
        y = y * x + p[i]
    return y


def _align(a1, a2):
    n = max(a1.shape[0], a2.shape[0])

    def grow(a):
        if a.shape[0] == n:
            return a
        return manipulation.concatenate([creation.zeros((n - a.shape[0],), a.dtype), a])
    return grow(a1), grow(a2)


def polyadd(a1, a2):
    """The sum of two polynomials (the shorter one is padded at the high end)."""
    a, b = promote_dtypes(_coeffs("polyadd", a1), _coeffs("polyadd", a2))
    a, b = _align(arr("polyadd", a), arr("polyadd", b))
    return a + b


def polysub(a1, a2):
    """The difference of two polynomials."""
    a, b = promote_dtypes(_coeffs("polysub", a1), _coeffs("polysub", a2))
    a, b = _align(arr("polysub", a), arr("polysub", b))
    return a - b


def polymul(a1, a2, *, trim_leading_zeros: bool = False):
    """The product of two polynomials (a full convolution of the coefficients)."""
    a, b = _coeffs("polymul", a1), _coeffs("polymul", a2)
    if trim_leading_zeros:
        a, b = trim_zeros(a, "f"), trim_zeros(b, "f")
    if a.shape[0] == 0 or b.shape[0] == 0:
        a, b = promote_dtypes(a, b)
        return creation.zeros((1,), arr("polymul", a).dtype)
    return convolve(a, b, mode="full")


def polyder(p, m: int = 1):
    """The m-th derivative of a polynomial."""
    p = _coeffs("polyder", p)
    m = int(m)
    if m < 0:
        raise ValueError("jnp.polyder: the order of derivative must be non-negative")
    p, = promote_dtypes_inexact(p)  # JAX returns floats even for integer coefficients
    p = arr("polyder", p)
    for _ in range(m):
        n = p.shape[0] - 1
        if n <= 0:
            return creation.zeros((0,), p.dtype)
        powers = creation.asarray(np.arange(n, 0, -1).astype(p.dtype), p.dtype)
        p = p[:-1] * powers
    return p


def polyint(p, m: int = 1, k=None):
    """The m-th antiderivative of a polynomial; `k` gives the integration constants."""
    p, = promote_dtypes_inexact(_coeffs("polyint", p))
    p = arr("polyint", p)
    m = int(m)
    if m < 0:
        raise ValueError("jnp.polyint: the order of integral must be non-negative")
    ks = manipulation.ravel(arr("polyint", 0 if k is None else k))
    ks = manipulation.broadcast_to(manipulation.astype(ks, p.dtype), (m,)) if m else ks
    for i in range(m):
        n = p.shape[0]
        div = creation.asarray(np.arange(n, 0, -1).astype(np.float64), p.dtype)
        p = manipulation.concatenate([p / div, manipulation.reshape(ks[i], (1,))])
    return p


def poly(seq_of_zeros):
    """Coefficients of the monic polynomial with the given roots (1-D input)."""
    z = arr("poly", seq_of_zeros)
    if z.ndim != 1:
        raise NotImplementedError("jnp.poly: only 1-D sequences of roots are supported")
    z, = promote_dtypes_inexact(z)
    out = creation.ones((1,), z.dtype)
    for i in range(z.shape[0]):
        out = convolve(out, manipulation.stack([creation.ones((), z.dtype), -z[i]]))
    return out


def trim_zeros(filt, trim: str = "fb"):
    """Strip leading ('f') and/or trailing ('b') zeros (needs a concrete array)."""
    f = arr("trim_zeros", filt)
    v = concrete("trim_zeros", f, "the array")
    nz = np.nonzero(v != 0)[0]
    if nz.size == 0:
        return f[:0]
    lo = nz[0] if "f" in trim.lower() else 0
    hi = nz[-1] + 1 if "b" in trim.lower() else v.shape[0]
    return f[int(lo):int(hi)]


def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov=False):
    """Least-squares polynomial fit of degree `deg` (coefficients highest power first).

    `y` may be 2-D (one fit per column). full=True also returns residuals, rank, singular
    values and rcond; cov=True (or "unscaled") also returns the covariance of the coefficients.
    """
    x, y = promote_dtypes_inexact(arr("polyfit", x), arr("polyfit", y))
    x, y = arr("polyfit", x), arr("polyfit", y)
    deg = int(deg)
    if deg < 0 or x.ndim != 1 or y.ndim not in (1, 2) or x.shape[0] != y.shape[0]:
        raise errors.ShapeError(f"jnp.polyfit: need 1-D x and 1-D/2-D y of one length and "
                                f"deg >= 0, got {x.shape}, {y.shape}, deg={deg}")
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(np.float32 if x.dtype != np.float64
                                            else np.float64).eps)
    lhs = vander(x, deg + 1)
    rhs = y
    if w is not None:
        w = arr("polyfit", w)
        lhs = lhs * w[:, None]
        rhs = rhs * (w if y.ndim == 1 else w[:, None])
    # scale the columns for conditioning, as NumPy does
    scale = ufuncs.sqrt(reductions.sum(lhs * lhs, axis=0))
    scale = ufuncs.where(scale == 0, creation.ones((), scale.dtype), scale)
    lhs = lhs / scale
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, creation.asarray(rcond, x.dtype)
    if cov:
        return c, _polyfit_cov(lhs, scale, resids, x.shape[0], deg + 1, y.ndim, cov)
    return c


def _polyfit_cov(lhs, scale, resids, n: int, order: int, y_ndim: int, cov):
    """inv(A^T A) of the scaled Vandermonde matrix, unscaled, times residual / (n - order)."""
    base = inv(lhs.T @ lhs) / (scale[:, None] * scale[None, :])
    if cov == "unscaled":
        fac = creation.ones((1,), base.dtype)
    else:
        if n <= order:
            raise ValueError("jnp.polyfit: the number of data points must exceed order to "
                             "scale the covariance matrix")
        fac = manipulation.atleast_1d(resids) / (n - order)
    if y_ndim == 1:
        return base * fac[0]
    return base[:, :, None] * fac[None, None, :]


def _conv(name, x, y, mode, precision, preferred_element_type):
    x, y = arr(name, x), arr(name, y)
    if x.ndim != 1 or y.ndim != 1:
        raise errors.ShapeError(f"jnp.{name} needs 1-D inputs, got shapes {x.shape} and "
                                f"{y.shape}")
    if preferred_element_type is None:
        x, y = promote_dtypes_inexact(x, y)
    else:
        x, y = promote_dtypes(x, y)
    x, y = arr(name, x), arr(name, y)
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f"jnp.{name}: inputs cannot be empty, got shapes {x.shape} and "
                         f"{y.shape}")
    reverse_out = False
    if name == "correlate":
        y = ufuncs.conjugate(y)
        if x.shape[0] < y.shape[0]:
            x, y, reverse_out = y, x, True
    else:
        if x.shape[0] < y.shape[0]:
            x, y = y, x
        y = manipulation.flip(y)
    m = y.shape[0]
    pads = {"valid": (0, 0), "same": (m // 2, m - m // 2 - 1), "full": (m - 1, m - 1)}
    if mode not in pads:
        raise ValueError(f"jnp.{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    out = lax.conv_general_dilated(x[None, None, :], y[None, None, :], (1,), [pads[mode]],
                                   precision=precision or "highest",
                                   preferred_element_type=preferred_element_type)[0, 0]
    return manipulation.flip(out) if reverse_out else out


def convolve(a, v, mode: str = "full", *, precision=None, preferred_element_type=None):
    """The discrete linear convolution of two 1-D arrays (modes 'full', 'same', 'valid')."""
    return _conv("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a, v, mode: str = "valid", *, precision=None, preferred_element_type=None):
    """The cross-correlation of two 1-D arrays: c[k] = sum_n a[n + k] * conj(v[n])."""
    return _conv("correlate", a, v, mode, precision, preferred_element_type)


def polydiv(u, v, *, trim_leading_zeros: bool = False):
    """Quotient and remainder of polynomial division u / v (long division, static lengths)."""
    u, v = promote_dtypes_inexact(_coeffs("polydiv", u), _coeffs("polydiv", v))
    u, v = arr("polydiv", u), arr("polydiv", v)
    if trim_leading_zeros:
        v = trim_zeros(v, "f")
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = creation.zeros((max(m - n + 1, 1),), u.dtype)
    r = u
    for k in range(m - n + 1):
        d = scale * r[k]
        q = q.at[k].set(d)
        r = r.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        r = trim_zeros(r, "f")
    return q, r


def roots(p, *, strip_zeros: bool = True):
    """The roots of the polynomial with coefficients `p` (highest power first), as the
    eigenvalues of its companion matrix; complex, in no particular order (CPU only).

    Args:
      p: 1-D coefficients.
      strip_zeros: drop leading zeros first (needs concrete p, as in JAX); with False, leading
        zeros give NaN roots and the function works under jit.
    Differs from NumPy: trailing zeros are kept as (computed) zero roots under strip_zeros=False.
    """
    p = creation.asarray(p)
    if p.ndim != 1:
        raise errors.ShapeError(f"roots needs 1-D coefficients, got shape {p.shape}")
    if strip_zeros:
        values = np.asarray(p)  # concrete: strip as NumPy does
        nonzero = np.flatnonzero(values)
        if nonzero.size == 0:
            return creation.zeros((0,), dtype=result_type(p.dtype, np.complex64))
        trailing = len(values) - 1 - nonzero[-1]
        p = p[nonzero[0]:nonzero[-1] + 1]
        found = _companion_roots(p)
        zeros = creation.zeros((int(trailing),), dtype=found.dtype)
        return manipulation.concatenate([found, zeros])
    return _companion_roots(p)


def _companion_roots(p):
    n = p.shape[0] - 1
    (p,) = promote_dtypes_inexact(p)
    if n < 1:
        return creation.zeros((0,), dtype=result_type(p.dtype, np.complex64))
    top = -p[1:] / p[0]
    shift = creation.eye(n - 1, n, dtype=p.dtype)
    companion = manipulation.concatenate([top[None, :], shift], axis=0)
    return eigvals(companion)
