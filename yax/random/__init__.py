"""yax.random: counter-based pseudo-random numbers, bit-identical to jax.random.

Keys are uint32 arrays of shape (2,) (jax's raw key format); see docs/random.md.
"""

from yax._missing import module_getattr as _module_getattr  # noqa: E402
from yax.random._checks import RandomArgumentError  # noqa: F401
from yax.random.binomial import binomial, multinomial  # noqa: F401
from yax.random.continuous import (  # noqa: F401
    cauchy,
    exponential,
    gumbel,
    laplace,
    logistic,
    lognormal,
    normal,
    truncated_normal,
    uniform,
)
from yax.random.discrete import (  # noqa: F401
    bernoulli,
    bits,
    categorical,
    choice,
    permutation,
    randint,
    shuffle,
)
from yax.random.gamma import beta, dirichlet, gamma, loggamma  # noqa: F401
from yax.random.keys import (  # noqa: F401
    PRNGKey,
    clone,
    fold_in,
    key,
    key_data,
    key_dtype,
    key_impl,
    split,
    wrap_key_data,
)
from yax.random.multivariate import multivariate_normal  # noqa: F401
from yax.random.poisson import poisson  # noqa: F401
from yax.random.transformed import (  # noqa: F401
    ball,
    chisquare,
    double_sided_maxwell,
    f,
    generalized_normal,
    geometric,
    maxwell,
    orthogonal,
    pareto,
    rademacher,
    rayleigh,
    t,
    triangular,
    wald,
    weibull_min,
)
from yax.random.typed_keys import KeyDType, PRNGKeyArray, prng_key  # noqa: F401

__getattr__ = _module_getattr(__name__, "jax.random")  # JAX names yax lacks
