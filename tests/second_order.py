"""Second-order checks of a table of scalar functions, each written once against a namespace `L`
(yax's modules or jax's), so the same text runs in both.

For every case the yax side computes, in one jitted program per case: `hessian`, `jvp(grad)`,
`jacfwd(jacrev)`, `jacrev(jacrev)`, `grad` of <grad, v>, `linearize(grad)` applied to v, and
grad at x +- eps v (jax's Hessians: one jitted program per table). These are compared with the
Hessian jax computes (H, and H v) and with the central finite difference of yax's own gradient
along v.
A case whose function jax can only differentiate in one direction says so with `jax_hessian`:
"rev" (custom_vjp: reverse over reverse) or "fwd" (a while_loop: forward over forward); yax then
computes only what jax allows for custom_vjp (reverse over reverse), and everything for loops.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Callable

import jax
import jax.numpy as jjnp
import jax.scipy.linalg
import jax.scipy.special
import numpy as np
from jax.experimental import io_callback as jax_io_callback
from jax.sharding import NamedSharding as JaxNamedSharding
from jax.sharding import PartitionSpec as JaxP

import yax
import yax.numpy as ynp
import yax.scipy.linalg
import yax.scipy.special
from yax.experimental import io_callback as yax_io_callback
from yax.sharding import NamedSharding as YaxNamedSharding
from yax.sharding import P as YaxP

EPS = 1e-5  # central differences of a float64 gradient: error ~ eps^2 |f'''| + 1e-16 / eps
FD_TOL = 1e-6
ORACLE_TOL = 1e-8


def yax_namespace():
    return types.SimpleNamespace(
        name="yax", jnp=ynp, lax=yax.lax, ad=yax, sla=yax.scipy.linalg, sp=yax.scipy.special,
        io_callback=yax_io_callback, pure_callback=yax.pure_callback, P=YaxP,
        NamedSharding=YaxNamedSharding,
        mesh=yax.make_mesh((1,), ("i",), axis_types=(yax.sharding.AxisType.Auto,)),  # as jax's
        checkpoint_name=yax.ad_checkpoint.checkpoint_name, policies=yax.checkpoint_policies,
        while_loop_bounded=lambda cond, body, init, n: yax.lax.while_loop(cond, body, init,
                                                                          max_steps=n))


def jax_namespace():
    import jax.ad_checkpoint
    return types.SimpleNamespace(
        name="jax", jnp=jjnp, lax=jax.lax, ad=jax, sla=jax.scipy.linalg, sp=jax.scipy.special,
        io_callback=jax_io_callback, pure_callback=jax.pure_callback, P=JaxP,
        NamedSharding=JaxNamedSharding,
        mesh=jax.sharding.Mesh(np.array(jax.devices()[:1]), ("i",)),
        checkpoint_name=jax.ad_checkpoint.checkpoint_name, policies=jax.checkpoint_policies,
        # jax has no bounded while: the plain loop, differentiated forward over forward
        while_loop_bounded=lambda cond, body, init, n: jax.lax.while_loop(cond, body, init))


@dataclasses.dataclass(frozen=True)
class Case:
    """`make(L)` returns a function of one float64 array to a scalar; `x` is where to look."""
    make: Callable
    x: np.ndarray
    jax_hessian: str = "hessian"  # or "rev" (custom_vjp), "fwd" (while_loop), "none"
    # False where grad is not the derivative of f (a stop_gradient), so FD of grad is no oracle
    finite_differences: bool = True


def _direction(x):
    return np.linspace(0.3, -0.7, x.size).reshape(x.shape)


def _yax_quantities(L, f, rev_only: bool):
    g = L.ad.grad(f)

    def run(x, v):
        out = {"jacrev_jacrev": L.ad.jacrev(L.ad.jacrev(f))(x),
               "grad_grad": L.ad.grad(lambda y: L.jnp.vdot(g(y), v))(x),
               "fd": (g(x + EPS * v) - g(x - EPS * v)) / (2 * EPS)}
        if not rev_only:
            out.update(hessian=L.ad.hessian(f)(x), jvp_grad=L.ad.jvp(g, (x,), (v,))[1],
                       jacfwd_jacrev=L.ad.jacfwd(L.ad.jacrev(f))(x),
                       linearize_grad=L.ad.linearize(g, x)[1](v))
        return out
    return run


def _jax_hessian(L, f, kind: str):
    if kind == "rev":
        return L.ad.jacrev(L.ad.jacrev(f))
    if kind == "fwd":
        return L.ad.jacfwd(L.ad.jacfwd(f))
    return L.ad.hessian(f)


def _as_matrix(h, x):
    return np.asarray(h).reshape(x.size, x.size)


def check_table(cases: dict, *, jit: bool = True) -> list[str]:
    """All cases of the table, yax vs jax and vs finite differences; returns the mismatches."""
    Y, J = yax_namespace(), jax_namespace()
    xs = {name: np.asarray(c.x, np.float64) for name, c in cases.items()}
    vs = {name: _direction(x) for name, x in xs.items()}

    def jax_all(xs):
        return {name: _jax_hessian(J, c.make(J), c.jax_hessian)(xs[name])
                for name, c in cases.items() if c.jax_hessian != "none"}

    # yax: one program per case. The same tracing, but compiling a whole table as one program
    # cost more than compiling its cases one by one: the library's linalg table took 15.4 s of
    # CPU in all as one program, 12.5 s as 16 (special functions 7.3 s vs 5.1 s). jax's single
    # Hessian per case cost the same either way (3.7 s vs 4.0 s for linalg).
    got = {}
    for name, c in cases.items():
        quantities = _yax_quantities(Y, c.make(Y), c.jax_hessian == "rev")
        got[name] = (yax.jit(quantities) if jit else quantities)(xs[name], vs[name])
    want = jax.jit(jax_all)(xs)
    bad = []
    for name, case in cases.items():
        x, v = xs[name], vs[name].reshape(-1)
        mine = {k: np.asarray(val).reshape((x.size, x.size) if k in MATRICES else (-1,))
                for k, val in got[name].items()}
        # where jax cannot say, yax's own Hessian (checked below against FD) is the reference
        H = _as_matrix(want[name], x) if name in want else mine["jacrev_jacrev"]
        if not case.finite_differences:
            del mine["fd"]
        for what, value in mine.items():
            ref = H if what in MATRICES else H @ v
            tol = FD_TOL if what == "fd" else ORACLE_TOL
            if not np.allclose(value, ref, rtol=tol, atol=tol):
                bad.append(f"{name}: {what} differs from jax's Hessian by "
                           f"{np.max(np.abs(value - ref)):.3g}")
        # and independently of jax: yax's own Hessian-vector product vs its gradient's FD
        if case.finite_differences and not np.allclose(mine["grad_grad"], mine["fd"],
                                                       rtol=FD_TOL, atol=FD_TOL):
            bad.append(f"{name}: grad(grad) differs from the finite differences of grad by "
                       f"{np.max(np.abs(mine['grad_grad'] - mine['fd'])):.3g}")
    return bad


MATRICES = ("hessian", "jacfwd_jacrev", "jacrev_jacrev")
