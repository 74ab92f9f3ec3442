"""Regression: the derivatives of svd and eigh are the same compiled as eager.

Their JVP rules divide by eigenvalue gaps w[j] - w[i], with 0 on the diagonal. Compiled, XLA may
contract the subtraction with the product that made w (an FMA), so the diagonal "gap" was a
rounding error and its reciprocal ~1e17: jit(jvp(svd)) was wrong while eager was right.
"""

from __future__ import annotations

import jax
import numpy as np

import yax
import yax.numpy as jnp


def test_svd_and_eigh_jvp_compiled_equal_eager_and_jax(x64):
    rng = np.random.default_rng(0)
    a, v = rng.normal(size=(4, 4)), rng.normal(size=(4, 4))
    sym, vsym = a + a.T, v + v.T

    def fns(np_mod):
        return [lambda a: np_mod.linalg.svd(a)[0].sum(), lambda a: np_mod.linalg.svd(a)[2].sum(),
                lambda a: (np_mod.linalg.eigh(a)[1] ** 3).sum()]

    for i, (yf, jf) in enumerate(zip(fns(jnp), fns(jax.numpy), strict=True)):
        x, t = (sym, vsym) if i == 2 else (a, v)
        eager = float(yax.jvp(yf, (x,), (t,))[1])
        staged = float(yax.jit(lambda x, t, f=yf: yax.jvp(f, (x,), (t,))[1])(x, t))
        want = float(jax.jvp(jf, (x,), (t,))[1])
        np.testing.assert_allclose([eager, staged], [want, want], rtol=1e-8, err_msg=str(i))
