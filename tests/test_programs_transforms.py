"""Whole programs (run with jax and with yax, see test_programs.py) built on composed
transformations and control flow: HVPs and Newton-CG, scan RNNs, loops, cond/switch, Jacobians,
a vmapped ODE integrator, attention and a conv layer."""

from __future__ import annotations

import numpy as np
import pytest

from tests.test_programs import Api, needs, rng_data, run_program


def _dtype(m: Api):
    """float64 when the x64 fixture is on (both implementations follow it), else float32."""
    return m.jnp.asarray(1.0).dtype


def program_newton_cg(m: Api, data):
    """Logistic regression by Newton's method: HVP = jvp of grad, CG in a fori_loop."""
    jnp, lax = m.jnp, m.lax
    dt = _dtype(m)
    x = jnp.asarray(data["x"], dt)
    y = (jnp.asarray(data["y"], dt) > 0).astype(dt)

    def loss(w):
        z = x @ w
        return jnp.mean(jnp.logaddexp(0.0, z) - y * z) + 0.05 * jnp.sum(w * w)

    def hvp(w, v):
        return m.jax.jvp(m.jax.grad(loss), (w,), (v,))[1]

    def cg(w, b, iters=3):  # truncated CG (inexact Newton)
        def body(_, state):
            xk, r, p, rs = state
            ap = hvp(w, p)
            alpha = rs / jnp.dot(p, ap)
            xk, r = xk + alpha * p, r - alpha * ap
            rs_new = jnp.dot(r, r)
            return xk, r, r + (rs_new / rs) * p, rs_new
        init = (jnp.zeros_like(b), b, b, jnp.dot(b, b))
        return lax.fori_loop(0, iters, body, init)[0]

    @m.jax.jit
    def newton_step(w):
        g = m.jax.grad(loss)(w)
        return w - cg(w, g), jnp.sqrt(g @ g)

    w = jnp.zeros(x.shape[1], dt)
    norms = []
    for _ in range(4):
        w, gnorm = newton_step(w)
        norms.append(gnorm)
    return w, jnp.stack(norms), loss(w)


def program_rnn_scan(m: Api, data):
    """An Elman RNN over a sequence with lax.scan; value and grad w.r.t. all weights."""
    jnp = m.jnp
    xs = jnp.asarray(data["xs"])
    params = {"wx": jnp.asarray(data["wx"]) * 0.5, "wh": jnp.asarray(data["wh"]) * 0.3,
              "wo": jnp.asarray(data["wo"])}

    def run(p, h0):
        def cell(h, x):
            h = jnp.tanh(x @ p["wx"] + h @ p["wh"])
            return h, h @ p["wo"]
        return m.lax.scan(cell, h0, xs)

    def loss(p, h0):
        h_last, ys = run(p, h0)
        return jnp.mean(ys ** 2) + 0.1 * jnp.sum(h_last)

    h0 = jnp.zeros(xs.shape[1:-1] + (6,))
    val, grads = m.jax.jit(m.jax.value_and_grad(loss, argnums=(0, 1)))(params, h0)
    return val, m.jax.jit(run)(params, h0), grads


def program_grad_with_aux(m: Api, data):
    """The common `value_and_grad(loss, has_aux=True)` pattern: the aux output (predictions)
    depends on the differentiated parameters."""
    jnp = m.jnp
    x, y = jnp.asarray(data["x"]), jnp.asarray(data["y"])

    def loss(w):
        pred = jnp.tanh(x @ w)
        return jnp.mean((pred - y) ** 2), pred

    w = jnp.asarray(data["w"])
    eager = m.jax.value_and_grad(loss, has_aux=True)(w)
    return eager, m.jax.jit(m.jax.value_and_grad(loss, has_aux=True))(w)


def program_power_iteration(m: Api, data):
    """Dominant eigenpair of a symmetric matrix by a fori_loop power iteration, plus its
    derivative w.r.t. the matrix (reverse mode through the static-trip-count loop)."""
    jnp = m.jnp
    dt = _dtype(m)
    a = jnp.asarray(data["a"], dt)
    a = a @ a.T + jnp.eye(a.shape[0], dtype=dt) * jnp.arange(a.shape[0], dtype=dt)

    def top_eig(a):
        def body(_, v):
            v = a @ v
            return v / jnp.sqrt(jnp.sum(v * v))
        v = m.lax.fori_loop(0, 60, body, jnp.ones(a.shape[0], dt) / a.shape[0] ** 0.5)
        return v @ a @ v, v

    lam, v = m.jax.jit(top_eig)(a)
    dlam = m.jax.grad(lambda a: top_eig(a)[0])(a)
    return lam, jnp.abs(v), dlam


def program_newton_root(m: Api, data):
    """Cube roots by Newton's method in a while_loop with a tolerance test; vmapped over inputs
    and differentiated in forward mode (jvp through the loop)."""
    jnp = m.jnp
    dt = _dtype(m)
    c = jnp.abs(jnp.asarray(data["c"], dt)) + 0.5

    def cbrt(c):
        def cond(state):
            x, i = state
            return jnp.any(jnp.abs(x ** 3 - c) > 1e-5 * c) & (i < 50)

        def body(state):
            x, i = state
            return x - (x ** 3 - c) / (3 * x ** 2), i + 1
        return m.lax.while_loop(cond, body, (c, 0))

    roots, iters = m.jax.vmap(cbrt)(c)
    vector_roots = cbrt(c)[0]  # one loop over the whole vector (stops when all converge)
    tangent = m.jax.jvp(lambda c: cbrt(c)[0], (c,), (jnp.ones_like(c),))[1]
    return roots, iters, vector_roots, tangent


def program_piecewise(m: Api, data):
    """Piecewise functions via lax.cond and lax.switch; vmap(grad) so predicates are batched,
    and a scalar grad through a jitted switch."""
    jnp, lax = m.jnp, m.lax
    xs = jnp.asarray(data["x"]) * 2

    def f(x):
        branch = jnp.clip(jnp.floor(x + 2).astype(jnp.int32), 0, 3)
        y = lax.switch(branch, [lambda x: x ** 2, jnp.sin, lambda x: 2 * x + 1,
                                lambda x: jnp.exp(-x)], x)
        return lax.cond(y > 0.5, lambda y: jnp.log1p(y), lambda y: y ** 3, y)

    vals = m.jax.vmap(f)(xs)
    grads = m.jax.vmap(m.jax.grad(f))(xs)
    g_jit = m.jax.jit(m.jax.grad(lambda x: f(x) * jnp.cos(x)))(jnp.asarray(0.3))
    return vals, grads, g_jit


def program_jacobians(m: Api, data):
    """jacfwd, jacrev and hessian of a small vector function, and a jitted Gauss-Newton matrix."""
    jnp = m.jnp
    dt = _dtype(m)
    x = jnp.asarray(data["x"], dt)

    def f(x):
        return jnp.stack([jnp.sum(jnp.sin(x) * x), jnp.prod(1 + x ** 2), x[0] * x[-1] ** 3,
                          jnp.sum(jnp.tanh(jnp.cumsum(x)))])

    def scalar(x):
        return jnp.sum(f(x) ** 2) / 10

    @m.jax.jit
    def all_derivatives(x):
        jf, jr = m.jax.jacfwd(f)(x), m.jax.jacrev(f)(x)
        return jf, jr, m.jax.hessian(scalar)(x), jr.T @ jf  # the last: Gauss-Newton matrix

    return all_derivatives(x), m.jax.jacrev(m.jax.jacfwd(jnp.sin))(x[:2])


def program_ode_euler(m: Api, data):
    """A damped pendulum integrated by explicit Euler in lax.scan, vmapped over initial states,
    with the gradient of the final energy w.r.t. the damping coefficient."""
    jnp = m.jnp
    y0 = jnp.asarray(data["y0"])

    def simulate(y0, damping, dt=0.05, steps=40):
        def step(y, _):
            theta, omega = y
            dy = jnp.stack([omega, -jnp.sin(theta) - damping * omega])
            y = y + dt * dy
            return y, y[0]
        return m.lax.scan(step, y0, None, length=steps)

    final, traj = m.jax.vmap(simulate, in_axes=(0, None))(y0, 0.3)

    def energy(damping):
        yf, _ = m.jax.vmap(simulate, in_axes=(0, None))(y0, damping)
        return jnp.sum(0.5 * yf[:, 1] ** 2 + 1 - jnp.cos(yf[:, 0]))

    return final, traj, m.jax.jit(m.jax.value_and_grad(energy))(0.3)


def program_logsumexp_loss(m: Api, data):
    """A log-partition (logsumexp) loss with its gradient (softmax), stable at large logits."""
    jnp = m.jnp
    x = jnp.asarray(data["x"])
    w = jnp.asarray(data["w"])

    def loss(w, scale):
        logits = scale * (x @ w)
        return jnp.mean(m.scipy.special.logsumexp(logits, axis=1) - logits[:, 0]) + \
            m.nn.logsumexp(logits[0])

    grad_fn = m.jax.jit(m.jax.grad(loss, argnums=(0, 1)))
    return [grad_fn(w, s) for s in (1.0, 300.0)], m.jax.jit(loss)(w, 300.0), \
        m.jax.grad(m.nn.logsumexp)(jnp.asarray([1.0, 1e4, -jnp.inf]))


def program_attention(m: Api, data):
    """A single-head self-attention block with a causal mask (einsum, softmax, layer norm);
    forward and grad w.r.t. the projections."""
    jnp = m.jnp
    x = jnp.asarray(data["x"])
    params = {k: jnp.asarray(data[k]) * 0.3 for k in ("wq", "wk", "wv", "wo")}

    def block(p, x):
        q, k, v = (jnp.einsum("btd,de->bte", x, p[n]) for n in ("wq", "wk", "wv"))
        scores = jnp.einsum("bqe,bke->bqk", q, k) / jnp.sqrt(q.shape[-1] * 1.0)
        t = x.shape[1]
        mask = jnp.arange(t)[:, None] >= jnp.arange(t)[None, :]
        scores = jnp.where(mask, scores, -1e9)
        out = jnp.einsum("bqk,bke->bqe", m.nn.softmax(scores, axis=-1), v)
        h = x + jnp.einsum("bte,ed->btd", out, p["wo"])
        mu = jnp.mean(h, axis=-1, keepdims=True)
        return (h - mu) / jnp.sqrt(jnp.var(h, axis=-1, keepdims=True) + 1e-5)

    out = m.jax.jit(block)(params, x)
    grads = m.jax.jit(m.jax.grad(lambda p: jnp.sum(block(p, x) ** 3)))(params)
    return out, grads


def _max_pool_reshape(m: Api, y):
    """2x2 max pooling (NCHW) without reduce_window: reshape and max over the window axes."""
    n, c, h, w = y.shape
    return m.jnp.max(y.reshape(n, c, h // 2, 2, w // 2, 2), axis=(3, 5))


def program_conv_net(m: Api, data):
    """A conv layer (lax.conv_general_dilated, NCHW/OIHW, SAME padding) + relu + 2x2 max pool +
    dense head; cross-entropy loss, forward and grads."""
    jnp = m.jnp
    x = jnp.asarray(data["img"])
    params = {"k": jnp.asarray(data["k"]) * 0.3, "w": jnp.asarray(data["w"]) * 0.1}
    labels = jnp.asarray([0, 1, 2, 1])

    def forward(p, x):
        y = m.lax.conv_general_dilated(x, p["k"], window_strides=(1, 1), padding="SAME",
                                       dimension_numbers=("NCHW", "OIHW", "NCHW"))
        y = _max_pool_reshape(m, m.nn.relu(y))
        return y.reshape(y.shape[0], -1) @ p["w"]

    def loss(p):
        logp = m.nn.log_softmax(forward(p, x))
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

    return m.jax.jit(forward)(params, x), m.jax.jit(m.jax.value_and_grad(loss))(params)


def program_conv_reduce_window(m: Api, data):
    """The conv layer again, pooled with lax.reduce_window (max, strided) and an average pool
    (reduce_window add); NHWC/HWIO layout with a strided, dilated convolution."""
    jnp, lax = m.jnp, m.lax
    x = jnp.transpose(jnp.asarray(data["img"]), (0, 2, 3, 1))
    k = jnp.transpose(jnp.asarray(data["k"]), (2, 3, 1, 0)) * 0.3

    def forward(k, x):
        y = lax.conv_general_dilated(x, k, (1, 1), "SAME", rhs_dilation=(2, 1),
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        y = m.nn.relu(y)
        mx = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        avg = lax.reduce_window(y, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME") / 9
        return mx, avg

    out = m.jax.jit(forward)(k, x)
    grads = m.jax.jit(m.jax.grad(lambda k: sum(jnp.sum(o ** 2) for o in forward(k, x))))(k)
    return out, grads


def program_conv_variants(m: Api, data):
    """Convolution variants of modern CNNs: depthwise (feature_group_count), a transposed
    convolution written with lhs_dilation, strided and dilated kernels, padded sum pooling,
    batch_group_count, and a per-image conv under vmap; grads w.r.t. both kernels."""
    jnp, lax = m.jnp, m.lax
    x = jnp.asarray(data["img"])
    k_dw, k_up = jnp.asarray(data["kdw"]), jnp.asarray(data["kup"])

    def f(k_dw, k_up):
        y = jnp.tanh(lax.conv_general_dilated(x, k_dw, (1, 1), ((1, 1), (1, 1)),
                                              feature_group_count=x.shape[1]))
        z = lax.conv_general_dilated(y, k_up, (1, 1), ((2, 2), (2, 2)), lhs_dilation=(2, 2))
        s = lax.conv_general_dilated(y, k_up, (2, 2), "VALID", rhs_dilation=(1, 2))
        pooled = lax.reduce_window(z, 0.0, lax.add, (1, 1, 2, 2), (1, 1, 2, 2),
                                   ((0, 0), (0, 0), (1, 0), (0, 1)))
        return jnp.sum(pooled ** 2) + jnp.sum(jnp.sin(s))

    grads = m.jax.jit(m.jax.grad(f, argnums=(0, 1)))(k_dw, k_up)
    per_img = m.jax.vmap(lambda im: lax.conv_general_dilated(im[None], k_up, (1, 1),
                                                              "SAME")[0])(x)
    grouped = lax.conv_general_dilated(jnp.concatenate([x, x]), jnp.ones((4, 4, 1, 1)), (1, 1),
                                       "VALID", batch_group_count=2)
    return m.jax.jit(f)(k_dw, k_up), grads, per_img, grouped


CASES = [
    (program_rnn_scan, {"xs": (12, 2, 3), "wx": (3, 6), "wh": (6, 6), "wo": (6, 2)}, 2e-5),
    (program_grad_with_aux, {"x": (6, 3), "y": (6,), "w": (3,)}, 1e-5),
    (program_piecewise, {"x": (16,)}, 1e-5),
    (program_ode_euler, {"y0": (5, 2)}, 1e-5),
    (program_logsumexp_loss, {"x": (8, 4), "w": (4, 5)}, 1e-5),
    (program_attention, {"x": (2, 5, 8), "wq": (8, 4), "wk": (8, 4), "wv": (8, 4),
                         "wo": (4, 8)}, 5e-5),
    (program_conv_net, {"img": (4, 2, 8, 8), "k": (3, 2, 3, 3), "w": (48, 3)}, 2e-5),
    pytest.param(program_conv_reduce_window, {"img": (4, 2, 8, 8), "k": (3, 2, 3, 3)}, 2e-5,
                 marks=needs("lax.reduce_window")),
    pytest.param(program_conv_variants, {"img": (2, 4, 7, 7), "kdw": (4, 1, 3, 3),
                                         "kup": (3, 4, 3, 3)}, 3e-5,
                 marks=needs("lax.reduce_window")),
]
F32_CASES = [
    (program_newton_cg, {"x": (30, 4), "y": (30,)}),
    (program_power_iteration, {"a": (6, 6)}),
    (program_newton_root, {"c": (7,)}),
]
X64_CASES = F32_CASES + [(program_jacobians, {"x": (4,)})]


def _ids(v):
    return v.__name__.replace("program_", "") if callable(v) else ""


@pytest.mark.parametrize("program,shapes,tol", CASES, ids=_ids)
def test_transform_programs(program, shapes, tol):
    run_program(program, rng_data(1, **shapes), rtol=tol, atol=tol)


@pytest.mark.parametrize("program,shapes", F32_CASES, ids=_ids)
def test_transform_programs_f32(program, shapes):
    run_program(program, rng_data(2, **shapes), rtol=5e-5, atol=5e-5)


@pytest.mark.parametrize("program,shapes", X64_CASES, ids=_ids)
def test_transform_programs_f64(program, shapes, x64):
    out = run_program(program, rng_data(2, **shapes), rtol=1e-10, atol=1e-10)
    assert np.asarray(out[0]).dtype == np.float64


def program_logaddexp_ties(m: Api, data):
    """The logistic loss `logaddexp(0, z)` at z == 0 (every Newton method started from zero
    weights hits it): first and second derivatives are smooth there (1/2 and 1/4)."""
    jnp = m.jnp
    z = jnp.asarray([0.0, 1.5, -2.0, 0.0])
    f = lambda z: jnp.sum(jnp.logaddexp(0.0, z) + jnp.logaddexp(z, z) + jnp.logaddexp2(z, 0.0))
    return m.jax.jit(m.jax.grad(f))(z), m.jax.jit(m.jax.hessian(f))(z)


def test_logaddexp_ties_match_jax():
    """Regression: yax's logaddexp gave gradient 1 (not 1/2) and curvature 0 at x1 == x2."""
    out = run_program(program_logaddexp_ties, {}, rtol=1e-6, atol=1e-6)
    assert abs(float(out[0][0]) - (0.5 + 1.0 + 0.5)) < 1e-6
