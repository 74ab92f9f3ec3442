"""Eager reverse mode beside the libraries built for it: PyTorch and HIPS autograd.

The same 3-layer MLP loss as bench_eager's grad rows (float32, batch 64, sizes 16-32-32-4),
differentiated eagerly (no `jit`, no `torch.compile`) in yax, jax, PyTorch and HIPS autograd,
interleaved in one process. Each row keeps the yax/jax ratio and adds each peer's time over
jax's, so every figure reads on one scale (jax = 1). A peer that is not installed is left out
(`pip install torch==2.13.0 autograd`; neither is a dependency of yax).
"""

from __future__ import annotations

import importlib.util
import statistics

import numpy as np

from benchmarks.common import time_call

SIZES = (16, 32, 32, 4)


def _data():
    rng = np.random.default_rng(0)
    params = [(rng.normal(size=(m, n)).astype(np.float32) * 0.3, np.zeros(n, np.float32))
              for m, n in zip(SIZES[:-1], SIZES[1:])]
    x = rng.normal(size=(64, SIZES[0])).astype(np.float32)
    y = rng.normal(size=(64, SIZES[-1])).astype(np.float32)
    return params, x, y


def _loss(np_mod):
    def loss(params, x, y):
        for w, b in params[:-1]:
            x = np_mod.tanh(x @ w + b)
        w, b = params[-1]
        return np_mod.mean((x @ w + b - y) ** 2)
    return loss


def _functional_grad(grad, np_mod, put):
    params, x, y = _data()
    params = [(put(w), put(b)) for w, b in params]
    x, y = put(x), put(y)
    g = grad(_loss(np_mod))
    return lambda: g(params, x, y)


def _torch_grad():
    import torch
    params, x, y = _data()
    params = [(torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True))
              for w, b in params]
    x, y = torch.tensor(x), torch.tensor(y)
    leaves = [t for pair in params for t in pair]
    loss = _loss(torch)

    def step():
        return torch.autograd.grad(loss(params, x, y), leaves)
    return step


def _autograd_grad():
    import autograd
    import autograd.numpy as anp
    return _functional_grad(autograd.grad, anp, lambda a: a)


def _peers() -> dict:
    peers = {}
    if importlib.util.find_spec("torch") is not None:
        peers["torch"] = _torch_grad()
    if importlib.util.find_spec("autograd") is not None:
        peers["autograd"] = _autograd_grad()
    return peers


def run(number: int = 10, rounds: int = 7) -> list:
    import jax
    import jax.numpy as jnp

    import yax
    import yax.numpy as ynp

    fns = {"yax": _functional_grad(yax.grad, ynp, yax.device_put),
           "jax": _functional_grad(jax.grad, jnp, jax.device_put), **_peers()}
    for fn in fns.values():
        fn(), fn()  # warm up: compile, fill caches (yax's second call is the one measured)
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            times[name].append(time_call(fn, number))
    us = {name: statistics.median(ts) * 1e6 for name, ts in times.items()}
    row = {"name": "eager grad(3-layer MLP), beside PyTorch/autograd", "yax_us": us["yax"],
           "jax_us": us["jax"], "ratio": us["yax"] / us["jax"]}
    for peer in ("torch", "autograd"):
        if peer in us:
            row[f"{peer}_us"] = us[peer]
            row[f"{peer}_ratio"] = us[peer] / us["jax"]
    return [row]


if __name__ == "__main__":  # python -m benchmarks.bench_peers (from the repository root)
    for r in run():
        print(", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                        for k, v in r.items()))
