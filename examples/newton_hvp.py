"""Newton's method without forming the Hessian: Hessian-vector products (`jvp` of `grad`,
forward-over-reverse) feed a conjugate-gradient solve in a `lax.while_loop`.

Two problems: L2-regularised logistic regression in 50 dimensions (quadratic convergence of the
gradient norm in a handful of steps, compared with gradient descent) and the 10-dimensional
Rosenbrock function (Newton-CG with a backtracking line search).

Run with `python examples/newton_hvp.py`.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import yax  # noqa: E402
import yax.numpy as jnp  # noqa: E402
from yax import lax  # noqa: E402

# Newton's method converges quadratically down to rounding error; float64 lets that show.
yax.config.update("enable_x64", True)


def hvp(f, x, v):
    """H(x) @ v for a scalar f, by forward-mode differentiation of the gradient."""
    return yax.jvp(yax.grad(f), (x,), (v,))[1]


def conjugate_gradient(matvec, b, tol=1e-6, max_iters=100):
    """Solve A x = b for symmetric positive-definite A given only x -> A x. A negative-curvature
    direction stops the iteration early (truncated Newton)."""
    def cond(state):
        _, r, _, rs, i, stop = state
        return (jnp.sqrt(rs) > tol * jnp.linalg.norm(b)) & (i < max_iters) & ~stop

    def body(state):
        x, r, p, rs, i, _ = state
        ap = matvec(p)
        curv = jnp.dot(p, ap)
        alpha = rs / curv
        x_new, r_new = x + alpha * p, r - alpha * ap
        rs_new = jnp.dot(r_new, r_new)
        bad = curv <= 0
        x_new = jnp.where(bad, jnp.where(i == 0, b, x), x_new)
        return x_new, r_new, r_new + (rs_new / rs) * p, rs_new, i + 1, bad

    init = (jnp.zeros_like(b), b, b, jnp.dot(b, b), 0, False)
    x, _, _, _, iters, _ = lax.while_loop(cond, body, init)
    return x, iters


def newton_cg(f, x0, steps=20, tol=1e-6, verbose=True, name=""):
    """Newton-CG with a backtracking (Armijo) line search; returns the iterate and the gradient
    norms seen."""
    @yax.jit
    def direction(x):
        g = yax.grad(f)(x)
        d, iters = conjugate_gradient(lambda v: hvp(f, x, v), g)
        return g, d, iters

    f_jit = yax.jit(f)
    x, norms = x0, []
    for k in range(steps):
        g, d, iters = direction(x)
        norms.append(float(jnp.linalg.norm(g)))
        if verbose:
            print(f"  {name} newton step {k:2d}  f = {float(f_jit(x)):.10f}  "
                  f"|grad| = {norms[-1]:.3e}  cg iterations = {int(iters)}")
        if norms[-1] < tol:
            break
        t, fx, slope = 1.0, f_jit(x), jnp.dot(g, d)
        while float(f_jit(x - t * d)) > float(fx) - 1e-4 * t * float(slope) and t > 1e-8:
            t *= 0.5
        x = x - t * d
    return x, norms


def logistic_problem(n=400, d=50, seed=0):
    rng = np.random.default_rng(seed)
    x = jnp.asarray(rng.normal(size=(n, d)))
    w_true = rng.normal(size=d)
    y = jnp.asarray((rng.random(n) < 1 / (1 + np.exp(-np.asarray(x) @ w_true))) * 1.0)

    def loss(w):
        z = x @ w
        return jnp.mean(jnp.logaddexp(0.0, z) - y * z) + 0.01 * jnp.sum(w * w)
    return loss, jnp.zeros(d)


def rosenbrock(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def gradient_descent(f, x0, steps, lr):
    step = yax.jit(lambda x: x - lr * yax.grad(f)(x))
    for _ in range(steps):
        x0 = step(x0)
    return float(jnp.linalg.norm(yax.grad(f)(x0)))


def main(verbose: bool = True) -> dict:
    """Run both problems; return the final gradient norms and iterates."""
    loss, w0 = logistic_problem()
    if verbose:
        print("logistic regression (d=50):")
    w, norms = newton_cg(loss, w0, tol=1e-10, verbose=verbose, name="logreg")
    gd_norm = gradient_descent(loss, w0, steps=100, lr=1.0)
    if verbose:
        print(f"  gradient descent, 100 steps (lr 1.0): |grad| = {gd_norm:.3e}")
        print("rosenbrock (d=10), x0 = 0:")
    xr, rnorms = newton_cg(rosenbrock, jnp.zeros(10), steps=100, tol=1e-8, verbose=False)
    err = float(jnp.max(jnp.abs(xr - 1.0)))
    if verbose:
        print(f"  Newton-CG: {len(rnorms)} steps, |grad| {rnorms[0]:.2e} -> {rnorms[-1]:.2e}, "
              f"max |x - 1| = {err:.2e} (the minimum is at x = 1)")
    return {"logreg_norms": norms, "gd_norm": gd_norm, "rosenbrock_steps": len(rnorms),
            "rosenbrock_error": err}


if __name__ == "__main__":
    main()
