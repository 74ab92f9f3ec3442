"""Whole programs (run with jax and with yax, see test_programs.py) that nest transformations in
the ways real code does: vmapped ensembles of training steps, forward mode through reverse scans,
linearize reused for many tangents, embedding gradients with repeated indices, batched linear
algebra, reparameterised sampling, remat inside scan, cond inside scan under vmap, stop_gradient
targets, eigh gradients, second derivatives through scan, mixed precision and integer code."""

from __future__ import annotations

import pytest

from tests.test_programs import Api, needs, rng_data, run_program


def program_ensemble_training(m: Api, data):
    """Five small regressors trained at once: vmap over a jitted step whose loss scans over
    minibatches; each member has its own init and learning rate."""
    jnp, tu = m.jnp, m.tree_util
    x, y = jnp.asarray(data["x"]), jnp.asarray(data["y"])
    params = {"w": jnp.asarray(data["w0"]), "b": jnp.zeros((5,))}  # leading axis: member
    lrs = jnp.linspace(0.01, 0.2, 5)

    def member_step(p, lr):
        def batch_loss(total, batch):
            xb, yb = batch
            return total + jnp.mean((xb @ p["w"] + p["b"] - yb) ** 2), None

        def loss(p):
            total, _ = m.lax.scan(batch_loss, 0.0, (x.reshape(3, -1, 4), y.reshape(3, -1)))
            return total / 3
        val, g = m.jax.value_and_grad(loss)(p)
        return tu.tree_map(lambda w, gi: w - lr * gi, p, g), val

    step = m.jax.jit(m.jax.vmap(member_step))
    losses = []
    for _ in range(4):
        params, val = step(params, lrs)
        losses.append(val)
    return params, jnp.stack(losses)


def program_bidirectional_rnn(m: Api, data):
    """A bidirectional RNN (a forward scan and a reverse=True scan); forward-mode derivative
    by jvp, and linearize evaluated on several tangents (one linear function, reused)."""
    jnp = m.jnp
    xs = jnp.asarray(data["xs"])
    w = jnp.asarray(data["w"]) * 0.4

    def birnn(w):
        def cell(h, x):
            h = jnp.tanh(h @ w[:3] + x @ w[3:])
            return h, h
        _, fwd = m.lax.scan(cell, jnp.zeros(3), xs)
        _, bwd = m.lax.scan(cell, jnp.zeros(3), xs, reverse=True)
        return jnp.sum(fwd * bwd, axis=1)

    tangents = jnp.asarray(data["t"])
    out, dout = m.jax.jit(lambda w, t: m.jax.jvp(birnn, (w,), (t,)))(w, tangents[0])
    _, f_lin = m.jax.linearize(birnn, w)
    return out, dout, m.jax.jit(m.jax.vmap(f_lin))(tangents), m.jax.jit(m.jax.grad(
        lambda w: jnp.sum(birnn(w) ** 2)))(w)


def program_embedding_bag(m: Api, data):
    """Token embeddings looked up with repeated ids (gather), mean-pooled per bag, a linear
    head; the embedding gradient accumulates the repeats (scatter-add); an `.at[].add`
    count of token frequencies."""
    jnp = m.jnp
    table = jnp.asarray(data["table"])
    head = jnp.asarray(data["head"])
    ids = jnp.asarray([[1, 3, 3, 0], [2, 2, 2, 5], [7, 1, 0, 0]])
    target = jnp.asarray([0.5, -1.0, 2.0])

    def loss(table, head):
        pooled = jnp.mean(table[ids], axis=1)
        return jnp.mean((pooled @ head - target) ** 2)

    grads = m.jax.jit(m.jax.grad(loss, argnums=(0, 1)))(table, head)
    counts = jnp.zeros(table.shape[0], jnp.int32).at[ids.ravel()].add(1)
    rows = jnp.take(table, ids[:, 0], axis=0).at[:, 0].set(-1.0)
    return grads, counts, rows


def program_batched_linalg(m: Api, data):
    """vmap of Cholesky solves over a batch of SPD systems, and the gradient of the batch's
    summed log-determinants w.r.t. the matrices."""
    jnp = m.jnp
    a = jnp.asarray(data["a"])
    spd = jnp.einsum("bij,bkj->bik", a, a) + 3 * jnp.eye(a.shape[1])
    rhs = jnp.asarray(data["rhs"])

    def solve_one(s, r):
        chol = jnp.linalg.cholesky(s)
        z = m.scipy.linalg.solve_triangular(chol, r, lower=True)
        return m.scipy.linalg.solve_triangular(chol.T, z, lower=False)

    def logdet_sum(spd):
        return jnp.sum(m.jax.vmap(lambda s: jnp.linalg.slogdet(s)[1])(spd))

    return (m.jax.jit(m.jax.vmap(solve_one))(spd, rhs),
            m.jax.jit(m.jax.vmap(jnp.linalg.solve))(spd, rhs),
            m.jax.jit(m.jax.grad(logdet_sum))(spd))


def program_reparameterised_elbo(m: Api, data):
    """A Gaussian variational posterior fitted by the reparameterisation trick: samples from
    random.normal with a key split per step, grad of the Monte-Carlo ELBO, jitted."""
    rnd, jnp = m.random, m.jnp
    obs = jnp.asarray(data["obs"])

    def neg_elbo(params, key):
        mu, log_sigma = params
        eps = rnd.normal(key, (16,) + mu.shape)
        z = mu + jnp.exp(log_sigma) * eps
        log_lik = -0.5 * jnp.sum((obs[None, :] - z) ** 2, axis=1)
        log_prior = -0.5 * jnp.sum(z ** 2, axis=1)
        entropy = jnp.sum(log_sigma)
        return -(jnp.mean(log_lik + log_prior) + entropy)

    @m.jax.jit
    def step(params, key):
        key, sub = rnd.split(key)
        val, g = m.jax.value_and_grad(neg_elbo)(params, sub)
        return m.tree_util.tree_map(lambda p, gi: p - 0.05 * gi, params, g), key, val

    params, key = (jnp.zeros(3), jnp.zeros(3)), rnd.PRNGKey(11)
    vals = []
    for _ in range(5):
        params, key, val = step(params, key)
        vals.append(val)
    return params, key, jnp.stack(vals)


def program_remat_scan(m: Api, data):
    """A scan whose body is wrapped in jax.checkpoint (recomputed in the backward pass); grad
    and a jitted hessian through it."""
    jnp = m.jnp
    xs, w = jnp.asarray(data["xs"]), jnp.asarray(data["w"]) * 0.5

    def loss(w):
        body = m.jax.checkpoint(lambda h, x: (jnp.sin(h @ w + x), jnp.sum(h)))
        h, ys = m.lax.scan(body, jnp.zeros(3), xs)
        return jnp.sum(h) + jnp.sum(ys)

    return m.jax.grad(loss)(w), m.jax.jit(m.jax.hessian(loss))(w)


def program_cond_in_scan(m: Api, data):
    """A data-dependent lax.cond inside a scan body, differentiated per example under vmap
    (batched parameters, unbatched predicate) and summed over a vmap (batched carry)."""
    jnp = m.jnp
    xs = jnp.asarray(data["xs"])

    def f(a):
        def body(c, x):
            c = m.lax.cond(x[0] > 0, lambda c: c * a + x[1], lambda c: c - a * x[2], c)
            return c, c
        return jnp.sum(m.lax.scan(body, 1.0, xs)[1])

    a = jnp.asarray(data["a"])
    return m.jax.vmap(m.jax.grad(f))(a), m.jax.grad(lambda a: jnp.sum(m.jax.vmap(f)(a)))(a)


def program_td_target(m: Api, data):
    """A Q-learning TD loss whose target network is held fixed by lax.stop_gradient; grad with
    separate and shared target weights."""
    jnp = m.jnp
    w, x = jnp.asarray(data["w"]), jnp.asarray(data["x"])

    def td_loss(w, w_target):
        target = 1.0 + 0.9 * jnp.max(x @ m.lax.stop_gradient(w_target), axis=1)
        return jnp.mean(((x @ w)[:, 0] - target) ** 2)

    return m.jax.grad(td_loss)(w, w * 1.1), m.jax.grad(lambda w: td_loss(w, w))(w)


def program_eigh_objective(m: Api, data):
    """Gradient of a function of eigenvalues and an eigenvector (sign-invariant) of a
    symmetric matrix with well-separated eigenvalues."""
    jnp = m.jnp
    a = jnp.asarray(data["a3"])
    s = a + a.T + jnp.eye(3) * jnp.asarray([0.0, 4.0, 9.0])

    def f(s):
        vals, vecs = jnp.linalg.eigh(s)
        return jnp.sum(vals ** 2) + jnp.sum(jnp.abs(vecs[:, 0]))

    return m.jax.grad(f)(s), jnp.linalg.eigvalsh(s)


def program_nested_vmap_axes(m: Api, data):
    """vmap of vmap with pytree in_axes (a dict prefix) and per-leaf out_axes."""
    jnp = m.jnp
    x, w = jnp.asarray(data["x"]), jnp.asarray(data["w"])

    def f(p, v):
        return {"out": jnp.tanh(p["w"] @ v), "norm": jnp.sum(v ** 2)}

    g = m.jax.vmap(m.jax.vmap(f, in_axes=(None, 0)), in_axes=({"w": 0}, None),
                   out_axes={"out": 1, "norm": 0})
    return g({"w": jnp.stack([w, 2 * w])}, x)


def program_hessian_scan(m: Api, data):
    """Second derivatives through a scan: hessian (forward-over-reverse) and jacfwd(jacrev)."""
    jnp = m.jnp
    x0 = jnp.asarray(data["x"])[0]

    def f(x):
        c, _ = m.lax.scan(lambda c, _: (c * jnp.cos(c) + x, None), x, None, length=5)
        return jnp.sum(c ** 2)

    return m.jax.hessian(f)(x0), m.jax.jacfwd(m.jax.jacrev(f))(x0)


def program_mixed_precision(m: Api, data):
    """bfloat16 and float16 compute with float32 master weights: casts in the forward pass,
    gradients cast back to float32."""
    jnp = m.jnp
    x, w = jnp.asarray(data["x"]), jnp.asarray(data["w"])

    def loss_bf16(w):
        h = m.nn.relu(x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)).astype(jnp.float32)
        return jnp.mean(h ** 2)

    def loss_f16(w):
        return jnp.sum(jnp.tanh(x.astype(jnp.float16) @ w.astype(jnp.float16))).astype(
            jnp.float32)

    return (m.jax.grad(loss_bf16)(w), m.jax.jit(m.jax.grad(loss_f16))(w),
            x.astype(jnp.bfloat16) * 2.5)


def program_integer_preprocessing(m: Api, data):
    """Integer feature engineering before a float model: quantisation, floor division and
    modulo, cumulative sums, sorting, shifts, clipping, weak-typed scalar arithmetic."""
    jnp = m.jnp
    x = jnp.asarray(data["x"])
    i = (x * 10).astype(jnp.int32)
    return (i // 3, i % 3, jnp.cumsum(i, axis=0), jnp.argsort(x, axis=0), jnp.sort(i, axis=1),
            i >> 1, jnp.where(i > 0, i, -i), jnp.clip(i, -2, 2), (x > 0).sum(),
            jnp.round(x, 1), x.astype(jnp.int8), jnp.floor_divide(x, 0.3),
            jnp.remainder(x, 0.3), i * 2.5, jnp.arange(3) + True, jnp.asarray(3) / 2)


def program_jacrev_with_aux(m: Api, data):
    """jacrev/jacfwd with has_aux=True and argnums=(0, 1) (a residual function returning
    diagnostics as aux)."""
    jnp = m.jnp
    x = jnp.asarray(data["x"])[0]

    def f(x, y):
        return jnp.sin(x) * y, jnp.sum(x)

    return (m.jax.jacrev(f, argnums=(0, 1), has_aux=True)(x, 2.0),
            m.jax.jacfwd(f, has_aux=True)(x, 2.0))


def program_batchnorm_axis_name(m: Api, data):
    """Batch normalisation written per example and vmapped with axis_name: pmean for the batch
    statistics, psum and axis_index; grad w.r.t. the scale through the collectives."""
    jnp = m.jnp
    x = jnp.asarray(data["x"])

    def bn(v, gamma):
        mu = m.lax.pmean(v, "batch")
        var = m.lax.pmean((v - mu) ** 2, "batch")
        return (gamma * (v - mu) / jnp.sqrt(var + 1e-5), m.lax.psum(1, "batch"),
                m.lax.axis_index("batch"))

    batched = m.jax.vmap(bn, in_axes=(0, None), axis_name="batch")
    grad = m.jax.grad(lambda g: jnp.sum(batched(x, g)[0] ** 3))(2.0)
    return batched(x, 2.0), grad


CASES = [
    pytest.param(program_ensemble_training, {"x": (12, 4), "y": (12,), "w0": (5, 4)}, 2e-5,
                 id="ensemble_training"),
    pytest.param(program_bidirectional_rnn, {"xs": (6, 2), "w": (5, 3), "t": (3, 5, 3)}, 2e-5,
                 id="bidirectional_rnn"),
    pytest.param(program_embedding_bag, {"table": (8, 4), "head": (4,)}, 1e-5,
                 id="embedding_bag"),
    pytest.param(program_batched_linalg, {"a": (4, 3, 3), "rhs": (4, 3)}, 2e-4,
                 marks=needs("scipy.linalg.solve_triangular"), id="batched_linalg"),
    pytest.param(program_reparameterised_elbo, {"obs": (3,)}, 2e-5,
                 marks=needs("random.normal"), id="reparameterised_elbo"),
    pytest.param(program_remat_scan, {"xs": (5, 3), "w": (3, 3)}, 2e-5,
                 marks=needs("checkpoint"), id="remat_scan"),
    pytest.param(program_cond_in_scan, {"xs": (5, 3), "a": (4,)}, 2e-5, id="cond_in_scan"),
    pytest.param(program_batchnorm_axis_name, {"x": (6, 3)}, 2e-5, id="batchnorm_axis_name"),
    pytest.param(program_td_target, {"w": (3, 3), "x": (4, 3)}, 1e-5, id="td_target"),
    pytest.param(program_eigh_objective, {"a3": (3, 3)}, 1e-4,
                 marks=needs("numpy.linalg.eigh"), id="eigh_objective"),
    pytest.param(program_nested_vmap_axes, {"x": (4, 3), "w": (3, 3)}, 1e-5,
                 id="nested_vmap_axes"),
    pytest.param(program_hessian_scan, {"x": (4, 3)}, 2e-5, id="hessian_scan"),
    pytest.param(program_mixed_precision, {"x": (4, 3), "w": (3, 5)}, 1e-2,
                 id="mixed_precision"),
    pytest.param(program_integer_preprocessing, {"x": (4, 3)}, 1e-6,
                 id="integer_preprocessing"),
    pytest.param(program_jacrev_with_aux, {"x": (4, 3)}, 1e-5, id="jacrev_with_aux"),
]


@pytest.mark.parametrize("program,shapes,tol", CASES)
def test_composition_programs(program, shapes, tol):
    run_program(program, rng_data(5, **shapes), rtol=tol, atol=tol)
