"""`check_grads`: check a function's derivatives numerically, for users' own rules too.

Forward mode is compared with central finite differences along random directions; reverse mode
is checked through the transposition identity <u, J v> = <J^T u, v> against forward mode.
With `order > 1` the same checks run recursively on the derivative functions themselves.
Use float64 inputs (`yax.config.update("enable_x64", True)`) for tight tolerances.
"""

from __future__ import annotations

import numpy as np

from yax import tree_util
from yax.transforms.ad import jvp, vjp

_DEFAULT_EPS = {np.dtype(np.float64): 1e-4, np.dtype(np.float32): 1e-2,
                np.dtype(np.float16): 1e-1}
_DEFAULT_TOL = {np.dtype(np.float64): 1e-5, np.dtype(np.float32): 2e-2,
                np.dtype(np.float16): 1e-1}


def _np(x) -> np.ndarray:
    return np.asarray(x)


def _random_like(rng, x):
    x = _np(x)
    if np.issubdtype(x.dtype, np.complexfloating):
        return (rng.normal(size=x.shape) + 1j * rng.normal(size=x.shape)).astype(x.dtype)
    return rng.normal(size=x.shape).astype(x.dtype)


def _inner(xs, ys) -> float:
    """The real part of the plain (unconjugated) sum of products: the pairing under which yax's
    (and JAX's) transposes are adjoint, for complex values too."""
    return float(sum(np.real(np.sum(_np(a).astype(np.complex128) * _np(b).astype(np.complex128)))
                     for a, b in zip(xs, ys)))


def _dtype_of(args):
    leaves = [_np(x) for x in tree_util.tree_leaves(args)]
    widths = [x.dtype for x in leaves if np.issubdtype(x.dtype, np.inexact)]
    if not widths:
        return np.dtype(np.float64)
    return min(widths, key=lambda d: d.itemsize)


def _assert_close(got, want, atol, rtol, what: str) -> None:
    got_l, want_l = tree_util.tree_leaves(got), tree_util.tree_leaves(want)
    assert len(got_l) == len(want_l), f"{what}: output structures differ"
    for g, w in zip(got_l, want_l):
        np.testing.assert_allclose(_np(g).astype(np.complex128), _np(w).astype(np.complex128),
                                   atol=atol, rtol=rtol, err_msg=what)


def check_jvp(f, args, *, eps, atol, rtol, rng) -> None:
    """Check `jvp(f)` at `args` along a random direction against central finite differences
    (step `eps`), within `atol`/`rtol`; raises AssertionError naming the mismatch."""
    tangents = tree_util.tree_map(lambda x: _random_like(rng, x), args)
    _, t_out = jvp(f, args, tangents)
    plus = tree_util.tree_map(lambda x, t: _np(x) + eps * t, args, tangents)
    minus = tree_util.tree_map(lambda x, t: _np(x) - eps * t, args, tangents)
    f_plus, f_minus = f(*plus), f(*minus)
    numeric = tree_util.tree_map(lambda a, b: (_np(a) - _np(b)) / (2 * eps), f_plus, f_minus)
    _assert_close(t_out, numeric, atol, rtol, "JVP does not match central finite differences")


def check_vjp(f, args, *, atol, rtol, rng) -> None:
    """Check `vjp(f)` at `args` against `jvp(f)` by the transposition identity
    <u, J v> = <J^T u, v> for random u and v; raises AssertionError naming the mismatch."""
    tangents = tree_util.tree_map(lambda x: _random_like(rng, x), args)
    out, t_out = jvp(f, args, tangents)
    _, f_vjp = vjp(f, *args)
    cts = tree_util.tree_map(lambda y: _random_like(rng, y), out)
    ct_in = f_vjp(cts)
    lhs = _inner(tree_util.tree_leaves(cts), tree_util.tree_leaves(t_out))
    rhs = _inner(tree_util.tree_leaves(ct_in), tree_util.tree_leaves(tangents))
    scale = max(1.0, abs(lhs), abs(rhs))
    assert abs(lhs - rhs) <= atol * scale + rtol * scale, (
        f"VJP is not the transpose of the JVP: <u, J v> = {lhs} but <J^T u, v> = {rhs}")


def check_grads(f, args, order: int, modes=("fwd", "rev"), eps=None, atol=None, rtol=None,
                seed: int = 0) -> None:
    """Check derivatives of `f` at `args` (a tuple) up to `order`, in the given modes.

    Raises AssertionError naming the failed identity. Example:
      >>> yax.config.update("enable_x64", True)
      >>> check_grads(jnp.sin, (np.array([0.3, 1.2]),), order=2)
    """
    args = tuple(args)
    dtype = _dtype_of(args)
    eps = eps or _DEFAULT_EPS.get(dtype, 1e-4)
    atol = atol if atol is not None else _DEFAULT_TOL.get(dtype, 1e-5)
    rtol = rtol if rtol is not None else _DEFAULT_TOL.get(dtype, 1e-5)
    rng = np.random.default_rng(seed)

    def check(fun, fargs, k):
        if "fwd" in modes:
            check_jvp(fun, fargs, eps=eps, atol=atol, rtol=rtol, rng=rng)
        if "rev" in modes:
            check_vjp(fun, fargs, atol=atol, rtol=rtol, rng=rng)
        if k > 1:
            # the next order: derivatives of the JVP (forward) and of the VJP (reverse)
            v = tree_util.tree_map(lambda x: _random_like(rng, x), fargs)
            if "fwd" in modes:
                check(lambda *xs: jvp(fun, xs, v)[1], fargs, k - 1)
            if "rev" in modes:
                out = fun(*fargs)
                u = tree_util.tree_map(lambda y: _random_like(rng, y), out)
                check(lambda *xs: vjp(fun, *xs)[1](u), fargs, k - 1)

    check(f, args, order)
