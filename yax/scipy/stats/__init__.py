"""yax.scipy.stats: statistical distributions as jax.scipy.stats has them, each a submodule
with its functions (`yax.scipy.stats.norm.logpdf`, `...gamma.cdf`, ...), plus gaussian_kde,
mode, rankdata and sem."""

from yax._missing import module_getattr as _module_getattr  # noqa: E402
from yax.scipy.stats import (  # noqa: F401
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multinomial,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
from yax.scipy.stats._kde import gaussian_kde  # noqa: F401
from yax.scipy.stats._summary import ModeResult, mode, rankdata, sem  # noqa: F401

__getattr__ = _module_getattr(__name__, "jax.scipy.stats")  # JAX names yax lacks
