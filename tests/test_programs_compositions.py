"""Whole programs (run with jax and with yax, see test_programs.py) that nest transformations in
the ways real code does: vmapped ensembles of training steps, forward mode through reverse scans,
linearize reused for many tangents, embedding gradients with repeated indices, batched linear
algebra, and reparameterised sampling."""

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
    out, dout = m.jax.jvp(birnn, (w,), (tangents[0],))
    _, f_lin = m.jax.linearize(birnn, w)
    return out, dout, m.jax.vmap(f_lin)(tangents), m.jax.jit(m.jax.grad(
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

    return (m.jax.jit(m.jax.vmap(solve_one))(spd, rhs), m.jax.vmap(jnp.linalg.solve)(spd, rhs),
            m.jax.grad(logdet_sum)(spd))


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
]


@pytest.mark.parametrize("program,shapes,tol", CASES)
def test_composition_programs(program, shapes, tol):
    run_program(program, rng_data(5, **shapes), rtol=tol, atol=tol)
