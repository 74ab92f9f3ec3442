"""Standard functions (of z = (x - loc) / scale) of the simple continuous families, shared by
their modules: each module is one `location_scale` call with these."""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax.scipy import special

LOG2 = float(np.log(2))
LOG_PI = float(np.log(np.pi))
PI = float(np.pi)


def log_or_neg_inf(x):
    """log(x) with log(0) = -inf and no NaN derivative there."""
    safe = jnp.where(x > 0, x, 1.0)
    return jnp.where(x > 0, jnp.log(safe), -jnp.inf)


def expon():
    pos = lambda z: jnp.where(z >= 0, z, 0.0)  # noqa: E731
    return dict(
        logpdf=lambda z: jnp.where(z >= 0, -pos(z), -jnp.inf),
        cdf=lambda z: jnp.where(z >= 0, -jnp.expm1(-pos(z)), 0.0),
        logcdf=lambda z: jnp.where(z > 0, jnp.log(-jnp.expm1(-jnp.where(z > 0, z, 1.0))),
                                   -jnp.inf),
        sf=lambda z: jnp.where(z >= 0, jnp.exp(-pos(z)), 1.0),
        logsf=lambda z: jnp.where(z >= 0, -pos(z), 0.0),
        ppf=lambda q: -jnp.log1p(-q))


def laplace():
    return dict(
        logpdf=lambda z: -jnp.abs(z) - LOG2,
        cdf=lambda z: jnp.where(z < 0, 0.5 * jnp.exp(jnp.minimum(z, 0.0)),
                                1 - 0.5 * jnp.exp(-jnp.maximum(z, 0.0))))


def logistic():
    return dict(
        logpdf=lambda z: -jnp.abs(z) - 2 * jnp.log1p(jnp.exp(-jnp.abs(z))),
        cdf=special.expit, sf=lambda z: special.expit(-z),
        ppf=special.logit, isf=lambda q: -special.logit(q))


def cauchy():
    return dict(
        logpdf=lambda z: -LOG_PI - jnp.log1p(z * z),
        cdf=lambda z: 0.5 + jnp.arctan(z) / PI,
        logcdf=lambda z: jnp.log(0.5 + jnp.arctan(z) / PI),
        sf=lambda z: 0.5 - jnp.arctan(z) / PI,
        logsf=lambda z: jnp.log(0.5 - jnp.arctan(z) / PI),
        ppf=lambda q: jnp.tan(PI * (q - 0.5)),
        isf=lambda q: jnp.tan(PI * (0.5 - q)))


def uniform():
    inside = lambda z: (z >= 0) & (z <= 1)  # noqa: E731
    return dict(
        logpdf=lambda z: jnp.where(inside(z), 0.0, -jnp.inf),
        cdf=lambda z: jnp.clip(z, 0.0, 1.0),
        ppf=lambda q: jnp.where((q >= 0) & (q <= 1), q, jnp.nan))


def gumbel_r():
    return dict(
        logpdf=lambda z: -z - jnp.exp(-z),
        cdf=lambda z: jnp.exp(-jnp.exp(-z)),
        logcdf=lambda z: -jnp.exp(-z),
        sf=lambda z: -jnp.expm1(-jnp.exp(-z)),
        logsf=lambda z: jnp.log(-jnp.expm1(-jnp.exp(-z))),
        ppf=lambda q: -jnp.log(-jnp.log(q)))


def gumbel_l():
    return dict(
        logpdf=lambda z: z - jnp.exp(z),
        cdf=lambda z: -jnp.expm1(-jnp.exp(z)),
        logcdf=lambda z: jnp.log(-jnp.expm1(-jnp.exp(z))),
        sf=lambda z: jnp.exp(-jnp.exp(z)),
        logsf=lambda z: -jnp.exp(z),
        ppf=lambda q: jnp.log(-jnp.log1p(-q)))


def pareto():
    def above(z):
        return jnp.where(z >= 1, z, 1.0)
    return dict(
        logpdf=lambda z, b: jnp.where(z >= 1, jnp.log(b) - (b + 1) * jnp.log(above(z)), -jnp.inf),
        cdf=lambda z, b: jnp.where(z >= 1, -jnp.expm1(-b * jnp.log(above(z))), 0.0),
        logcdf=lambda z, b: log_or_neg_inf(-jnp.expm1(-b * jnp.log(above(z)))),
        sf=lambda z, b: jnp.where(z >= 1, jnp.exp(-b * jnp.log(above(z))), 1.0),
        logsf=lambda z, b: -b * jnp.log(above(z)),
        ppf=lambda q, b: jnp.exp(-jnp.log1p(-q) / b))


def t():
    def logpdf(z, df):
        return (special.gammaln((df + 1) / 2) - special.gammaln(df / 2)
                - 0.5 * jnp.log(df * PI) - (df + 1) / 2 * jnp.log1p(z * z / df))
    return dict(logpdf=logpdf)


def gamma():
    def logpdf(z, a):
        pos = jnp.where(z >= 0, z, 1.0)
        return jnp.where(z >= 0, special.xlogy(a - 1, pos) - pos - special.gammaln(a), -jnp.inf)

    def cdf(z, a):
        return special.gammainc(a, jnp.maximum(z, 0.0))

    def sf(z, a):
        return special.gammaincc(a, jnp.maximum(z, 0.0))
    return dict(logpdf=logpdf, cdf=cdf, sf=sf,
                logcdf=lambda z, a: log_or_neg_inf(cdf(z, a)),
                logsf=lambda z, a: log_or_neg_inf(sf(z, a)))


def chi2():
    g = gamma()
    return dict(
        logpdf=lambda z, df: g["logpdf"](z / 2, df / 2) - LOG2,
        **{k: (lambda fn: lambda z, df: fn(z / 2, df / 2))(g[k])
           for k in ("cdf", "sf", "logcdf", "logsf")})


def beta():
    def logpdf(z, a, b):
        inside = (z >= 0) & (z <= 1)
        zs = jnp.where(inside, z, 0.5)
        value = special.xlogy(a - 1, zs) + special.xlog1py(b - 1, -zs) - special.betaln(a, b)
        return jnp.where(inside, value, -jnp.inf)

    def cdf(z, a, b):
        return special.betainc(a, b, jnp.clip(z, 0.0, 1.0))

    def sf(z, a, b):
        return special.betainc(b, a, jnp.clip(1 - z, 0.0, 1.0))
    return dict(logpdf=logpdf, cdf=cdf, sf=sf,
                logcdf=lambda z, a, b: log_or_neg_inf(cdf(z, a, b)),
                logsf=lambda z, a, b: log_or_neg_inf(sf(z, a, b)))
