"""Builder for the discrete distributions' modules: a log-pmf of (k, *params) with k shifted by
`loc`, -inf off the support (negative or non-integer k); `pmf` is its exponential."""

from __future__ import annotations

import yax.numpy as jnp
from yax.scipy.stats._dist import promote


def discrete(namespace: dict, dist: str, n_params: int, log_pmf) -> None:
    """Define `logpmf(k, *params, loc=0)` and `pmf` in `namespace`."""
    def logpmf(k, *params, loc=0):
        if len(params) == n_params + 1:
            *params, loc = params
        if len(params) != n_params:
            raise TypeError(f"{dist}.logpmf takes {n_params} parameter(s) and loc")
        k, loc, *params = promote(f"{dist}.logpmf", k, loc, *params)
        k = k - loc
        integral = jnp.equal(k, jnp.floor(k)) & (k >= 0)
        safe_k = jnp.where(integral, k, 0.0)
        return jnp.where(integral, log_pmf(safe_k, *params), -jnp.inf)

    def pmf(k, *params, loc=0):
        return jnp.exp(logpmf(k, *params, loc=loc))
    for fn, kind in ((logpmf, "logpmf"), (pmf, "pmf")):
        fn.__name__ = fn.__qualname__ = kind
        fn.__doc__ = f"scipy.stats.{dist}.{kind} (k shifted by `loc`; 0 mass off the support)."
        namespace[kind] = fn
    namespace["__all__"] = ["logpmf", "pmf"]
