"""Special-function primitives, declared as table rows: incomplete gamma and beta functions and
their parameter derivatives, polygamma, Hurwitz zeta and exponentially scaled Bessel functions.

Operands share one shape (rank-0 operands broadcast implicitly) and one float dtype, as for the
elementwise family. Each row names its lowering: a CHLO op where StableHLO has one (polygamma,
zeta, bessel_i1e), otherwise an *implementation function* written with yax.lax (a series or a
continued fraction in a `while_loop`), which the lowering traces on the operands' avals and emits
inline. Eager and jit therefore share one lowering, as for every primitive.

The iterative functions compute the value and, where wanted, the derivative with respect to the
shape parameter in the same loop (forward-mode by hand, carrying d/da of every recurrence
variable), so `igamma_grad_a` and `random_gamma_grad` cost one loop each. `random_gamma_grad`
divides the derivative of the CDF by the density *inside* the series (their common prefactor
x^a e^-x / Gamma(a) cancels), so it does not underflow where both are tiny.

JVP rules are those JAX defines; where JAX defines none (derivatives with respect to the order
of polygamma, a and b of betainc; any derivative of igamma_grad_a and
random_gamma_grad), a nonzero tangent raises a clear error.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core.avals import ShapedArray
from yax.interpreters import lowering
from yax.interpreters.mlir import chlo
from yax.interpreters.staging import trace_to_jaxpr
from yax.primitives._elementwise_family import (
    broadcast_operands,
    elementwise_primitive,
    nary_abstract_eval,
    op_lower,
)
from yax.primitives._lax import lax

# =================================================================================================
# Implementation functions (yax.lax, traced by the lowering rule on full-shape operands)
# =================================================================================================

# enough for the incomplete gamma series at a ~ 1e6 near x = a (it needs ~ 8 sqrt(a) terms)
_MAX_ITERATIONS = 10000


def _eps(x) -> float:
    return float(np.finfo(x.dtype).eps)


def _any(pred):
    return lax.reduce_or(pred, tuple(range(len(pred.shape))))


def iterate_while_active(body, carry, active_index: int):
    """Run `body(carry) -> carry` while any element is active (carry[active_index]) and fewer
    than _MAX_ITERATIONS steps ran. Inactive elements keep their carry unchanged."""
    def cond(state):
        n, c = state
        return lax.bitwise_and(lax.lt(n, _MAX_ITERATIONS), _any(c[active_index]))

    def step(state):
        n, c = state
        new = body(c)
        active = c[active_index]
        kept = tuple(lax.select(active, nv, ov) for nv, ov in zip(new, c, strict=True))
        return lax.add(n, 1), kept
    _, out = lax.while_loop(cond, step, (np.int32(0), tuple(carry)))
    return out


def _igamma_series(a, x, mode: str):
    """P(a, x) = exp(L) * S by the power series S = sum_n x^n / ((a+1)...(a+n)),
    L = a log x - x - lgamma(a + 1); with derivatives carried for `mode` != "value"."""
    eps = _eps(x)

    def body(c):
        r, term, dterm, s, ds, active = c
        r = lax.add(r, 1.0)
        ratio = lax.div(x, r)
        dterm = lax.mul(ratio, lax.sub(dterm, lax.div(term, r)))
        term = lax.mul(term, ratio)
        s, ds = lax.add(s, term), lax.add(ds, dterm)
        small = lax.le(lax.abs(term), lax.mul(lax.abs(s), eps))
        dsmall = lax.le(lax.abs(dterm), lax.mul(lax.abs(ds), eps))
        done = small if mode == "value" else lax.bitwise_and(small, dsmall)
        return r, term, dterm, s, ds, lax.bitwise_and(active, lax.bitwise_not(done))
    one, zero = lax.add(lax.mul(x, 0.0), 1.0), lax.mul(x, 0.0)
    active = lax.ne(x, 0.0)
    _, _, _, s, ds, _ = iterate_while_active(body, (a, one, zero, one, zero, active), 5)
    log_x = lax.log(x)
    log_pref = lax.sub(lax.sub(lax.mul(a, log_x), x), lax.lgamma(lax.add(a, 1.0)))
    if mode == "value":
        return lax.mul(lax.exp(log_pref), s)
    dlog_pref = lax.sub(log_x, lax.digamma(lax.add(a, 1.0)))
    d_inner = lax.add(lax.mul(dlog_pref, s), ds)
    if mode == "derivative":
        return lax.mul(lax.exp(log_pref), d_inner)
    # sample derivative: -dP/da / density, density = exp(L) a / x
    return lax.neg(lax.mul(lax.div(x, a), d_inner))


def _igammac_fraction(a, x, mode: str):
    """Q(a, x) = exp(L) * F by the continued fraction of the upper incomplete gamma function
    (its convergents p_k / q_k by the three-term recurrence, rescaled against overflow),
    L = a log x - x - lgamma(a); derivatives d/da carried for `mode` != "value"."""
    eps = _eps(x)
    big = float(2.0 ** 60 if x.dtype == np.float64 else 2.0 ** 30)
    zero = lax.mul(x, 0.0)
    y = lax.sub(1.0, a)
    z = lax.add(lax.add(x, y), 1.0)
    p2, q2, p1, q1 = lax.add(zero, 1.0), x, lax.add(x, 1.0), lax.mul(z, x)
    dp2, dq2, dp1, dq1 = zero, zero, zero, lax.neg(x)
    ans = lax.div(p1, q1)
    dans = lax.div(lax.neg(lax.mul(ans, dq1)), q1)

    def body(c):
        k, y, z, p2, q2, p1, q1, dp2, dq2, dp1, dq1, ans, dans, active = c
        k, y, z = lax.add(k, 1.0), lax.add(y, 1.0), lax.add(z, 2.0)
        yk = lax.mul(y, k)
        p = lax.sub(lax.mul(p1, z), lax.mul(p2, yk))
        q = lax.sub(lax.mul(q1, z), lax.mul(q2, yk))
        # d/da: dz = -1, d(yk) = -k
        dp = lax.add(lax.sub(lax.sub(lax.mul(dp1, z), p1), lax.mul(dp2, yk)), lax.mul(p2, k))
        dq = lax.add(lax.sub(lax.sub(lax.mul(dq1, z), q1), lax.mul(dq2, yk)), lax.mul(q2, k))
        q_ok = lax.ne(q, 0.0)
        safe_q = lax.select(q_ok, q, lax.add(zero, 1.0))
        r = lax.select(q_ok, lax.div(p, safe_q), ans)
        dr = lax.select(q_ok, lax.div(lax.sub(dp, lax.mul(r, dq)), safe_q), dans)
        change = lax.abs(lax.sub(ans, r))
        done = lax.bitwise_and(q_ok, lax.le(change, lax.mul(lax.abs(r), eps)))
        if mode != "value":
            dchange = lax.abs(lax.sub(dans, dr))
            done = lax.bitwise_and(done, lax.le(dchange, lax.mul(lax.abs(dr), eps)))
        scale = lax.select(lax.gt(lax.abs(p), big), lax.add(zero, 1.0 / big), lax.add(zero, 1.0))
        p2, q2, p1, q1 = (lax.mul(v, scale) for v in (p1, q1, p, q))
        dp2, dq2, dp1, dq1 = (lax.mul(v, scale) for v in (dp1, dq1, dp, dq))
        return (k, y, z, p2, q2, p1, q1, dp2, dq2, dp1, dq1, r, dr,
                lax.bitwise_and(active, lax.bitwise_not(done)))
    init = (zero, y, z, p2, q2, p1, q1, dp2, dq2, dp1, dq1, ans, dans, lax.eq(zero, 0.0))
    out = iterate_while_active(body, init, 13)
    ans, dans = out[11], out[12]
    log_x = lax.log(x)
    log_pref = lax.sub(lax.sub(lax.mul(a, log_x), x), lax.lgamma(a))
    if mode == "value":
        return lax.mul(lax.exp(log_pref), ans)
    d_inner = lax.add(lax.mul(lax.sub(log_x, lax.digamma(a)), ans), dans)
    if mode == "derivative":  # of Q
        return lax.mul(lax.exp(log_pref), d_inner)
    # sample derivative: -dP/da / density = dQ/da / density, density = exp(L) / x
    return lax.mul(x, d_inner)


def _use_series(a, x):
    """The power series converges fast for x < a + 1 (and x <= 1); the fraction elsewhere."""
    return lax.bitwise_or(lax.le(x, 1.0), lax.le(x, a))


def _split(a, x):
    """Safe operands for the two branches: each branch sees harmless values where unused."""
    series = _use_series(a, x)
    xs = lax.select(series, x, lax.mul(a, 0.5))
    xf = lax.select(series, lax.add(a, 2.0), x)
    return series, xs, xf


def _incomplete_gamma(a, x, *, upper: bool, mode: str):
    # edge cases are set at the end; the loops see harmless operands there (a NaN would keep
    # its element iterating to the step limit)
    edge = lax.bitwise_or(lax.bitwise_or(lax.le(x, 0.0), lax.le(a, 0.0)),
                          lax.bitwise_or(lax.ne(x, x), lax.eq(x, float("inf"))))
    edge = lax.bitwise_or(edge, lax.ne(a, a))
    a_in, x_in = a, x
    a = lax.select(edge, lax.add(lax.mul(a, 0.0), 1.0), a)
    x = lax.select(edge, lax.add(lax.mul(a, 0.0), 1.0), x)
    series, xs, xf = _split(a, x)
    low = _igamma_series(a, xs, mode)
    up = _igammac_fraction(a, xf, mode)
    if mode == "value":
        direct, complement = (up, low) if upper else (low, up)
        value = lax.select(series if not upper else lax.bitwise_not(series), direct,
                           lax.sub(1.0, complement))
    elif mode == "derivative":  # dP/da; dQ/da = -dP/da
        value = lax.select(series, low, lax.neg(up))
    else:
        value = lax.select(series, low, up)
    return _edge_cases(a_in, x_in, value, upper=upper, mode=mode)


def _edge_cases(a, x, value, *, upper: bool, mode: str):
    nan = lax.add(lax.mul(x, 0.0), float("nan"))
    bad = lax.bitwise_or(lax.bitwise_or(lax.lt(x, 0.0), lax.le(a, 0.0)),
                         lax.bitwise_or(lax.ne(x, x), lax.ne(a, a)))
    at_zero = lax.eq(x, 0.0)
    at_inf = lax.eq(x, float("inf"))
    if mode == "value":
        value = lax.select(at_zero, lax.add(lax.mul(a, 0.0), 1.0 if upper else 0.0), value)
        value = lax.select(at_inf, lax.add(lax.mul(a, 0.0), 0.0 if upper else 1.0), value)
    else:
        value = lax.select(lax.bitwise_or(at_zero, at_inf), lax.mul(a, 0.0), value)
    return lax.select(bad, nan, value)


def _igamma_impl(a, x):
    return _incomplete_gamma(a, x, upper=False, mode="value")


def _igammac_impl(a, x):
    return _incomplete_gamma(a, x, upper=True, mode="value")


def _igamma_grad_a_impl(a, x):
    return _incomplete_gamma(a, x, upper=False, mode="derivative")


def _random_gamma_grad_impl(a, x):
    return _incomplete_gamma(a, x, upper=False, mode="sample")


def _betainc_fraction(a, b, x):
    """The continued fraction of I_x(a, b) (modified Lentz), for x < (a + 1) / (a + b + 2)."""
    eps = _eps(x)
    tiny = float(np.finfo(x.dtype).tiny * 1e3)
    zero = lax.mul(x, 0.0)

    def guard(v):
        return lax.select(lax.lt(lax.abs(v), tiny), lax.add(zero, tiny), v)

    def body(state):
        m, c, d, h, active = state
        m = lax.add(m, 1.0)
        m2 = lax.mul(m, 2.0)
        even = lax.div(lax.mul(lax.mul(m, lax.sub(b, m)), x),
                       lax.mul(lax.add(lax.sub(a, 1.0), m2), lax.add(a, m2)))
        d = lax.reciprocal(guard(lax.add(1.0, lax.mul(even, d))))
        c = guard(lax.add(1.0, lax.div(even, c)))
        h = lax.mul(h, lax.mul(d, c))
        odd = lax.neg(lax.div(lax.mul(lax.mul(lax.add(a, m), lax.add(lax.add(a, b), m)), x),
                              lax.mul(lax.add(a, m2), lax.add(lax.add(a, 1.0), m2))))
        d = lax.reciprocal(guard(lax.add(1.0, lax.mul(odd, d))))
        c = guard(lax.add(1.0, lax.div(odd, c)))
        delta = lax.mul(d, c)
        h = lax.mul(h, delta)
        done = lax.le(lax.abs(lax.sub(delta, 1.0)), eps)
        return m, c, d, h, lax.bitwise_and(active, lax.bitwise_not(done))
    d0 = lax.reciprocal(guard(lax.sub(1.0, lax.div(lax.mul(lax.add(a, b), x), lax.add(a, 1.0)))))
    out = iterate_while_active(body, (zero, lax.add(zero, 1.0), d0, d0, lax.eq(zero, 0.0)), 4)
    h = out[3]
    log_front = lax.sub(lax.add(lax.mul(a, lax.log(x)), lax.mul(b, lax.log1p(lax.neg(x)))),
                        _lbeta(a, b))
    return lax.div(lax.mul(lax.exp(log_front), h), a)


def _lbeta(a, b):
    return lax.sub(lax.add(lax.lgamma(a), lax.lgamma(b)), lax.lgamma(lax.add(a, b)))


def _betainc_impl(a, b, x):
    inner = lax.bitwise_and(lax.gt(x, 0.0), lax.lt(x, 1.0))
    safe_x = lax.select(inner, x, lax.add(lax.mul(x, 0.0), 0.5))
    bad = lax.bitwise_or(lax.bitwise_or(lax.le(a, 0.0), lax.le(b, 0.0)),
                         lax.bitwise_or(lax.ne(a, a), lax.ne(b, b)))
    a = lax.select(bad, lax.add(lax.mul(x, 0.0), 1.0), a)
    b = lax.select(bad, lax.add(lax.mul(x, 0.0), 1.0), b)
    flip = lax.gt(safe_x, lax.div(lax.add(a, 1.0), lax.add(lax.add(a, b), 2.0)))
    pa, pb = lax.select(flip, b, a), lax.select(flip, a, b)
    px = lax.select(flip, lax.sub(1.0, safe_x), safe_x)
    frac = _betainc_fraction(pa, pb, px)
    value = lax.select(flip, lax.sub(1.0, frac), frac)
    zero, one = lax.mul(x, 0.0), lax.add(lax.mul(x, 0.0), 1.0)
    value = lax.select(lax.le(x, 0.0), zero, lax.select(lax.ge(x, 1.0), one, value))
    bad = lax.bitwise_or(bad, lax.bitwise_or(lax.lt(x, 0.0), lax.gt(x, 1.0)))
    return lax.select(bad, lax.add(zero, float("nan")), value)


def _bessel_i0e_impl(x):
    """exp(-|x|) I0(x): the power series sum ((x/2)^k / k!)^2 for |x| < 30, the asymptotic
    expansion (1 / sqrt(2 pi |x|)) sum_k prod_j (2j-1)^2 / (8 j |x|) beyond."""
    ax = lax.abs(x)
    near = lax.lt(ax, 30.0)
    xs = lax.select(near, ax, lax.mul(ax, 0.0))
    quarter_sq = lax.mul(lax.mul(xs, xs), 0.25)
    eps = _eps(x)

    def body(c):
        k, term, s, active = c
        k = lax.add(k, 1.0)
        term = lax.div(lax.mul(term, quarter_sq), lax.mul(k, k))
        s = lax.add(s, term)
        return k, term, s, lax.bitwise_and(active, lax.gt(term, lax.mul(s, eps)))
    one = lax.add(lax.mul(xs, 0.0), 1.0)
    out = iterate_while_active(body, (lax.mul(xs, 0.0), one, one, lax.eq(one, 1.0)), 3)
    series = lax.mul(out[2], lax.exp(lax.neg(xs)))
    xf = lax.select(near, lax.add(lax.mul(ax, 0.0), 30.0), ax)
    term, total = lax.add(lax.mul(xf, 0.0), 1.0), lax.add(lax.mul(xf, 0.0), 1.0)
    for j in range(1, 25):
        term = lax.div(lax.mul(term, float((2 * j - 1) ** 2)), lax.mul(xf, 8.0 * j))
        total = lax.add(total, term)
    asymptotic = lax.mul(total, lax.rsqrt(lax.mul(xf, float(2 * np.pi))))
    return lax.select(near, series, asymptotic)


# =================================================================================================
# Lowerings
# =================================================================================================

def _impl_lower(impl, name):
    """A lowering rule that traces `impl` (written with yax.lax) on the operands' full-shape avals
    and emits its equations inline."""
    def rule(ctx, *xs):
        xs = broadcast_operands(ctx, xs)
        out = ctx.avals_out[0]
        in_avals = [ShapedArray(out.shape, a.dtype) for a in ctx.avals_in]
        closed = trace_to_jaxpr(lambda *args: [impl(*args)], in_avals, name=name)
        consts = lowering._const_values(closed.consts)
        return lowering.lower_jaxpr_body(ctx.module_ctx, closed.jaxpr, consts, xs)
    return rule


# =================================================================================================
# Differentiation rules: rule(t, out, *primals) is the output tangent for input tangent t
# =================================================================================================

def _unsupported(prim_name: str, operand: str):
    def rule(t, out, *primals):
        raise errors.YaxError(
            f"{prim_name}: the derivative with respect to {operand} is not defined (as in JAX); "
            f"stop the gradient of that operand (lax.stop_gradient) or differentiate only the "
            f"others")
    return rule


def _igamma_dx(a, x):
    """d/dx P(a, x): the gamma density exp(-x + (a - 1) log x - lgamma(a))."""
    log_density = lax.sub(lax.sub(lax.mul(lax.sub(a, 1.0), lax.log(x)), x), lax.lgamma(a))
    return lax.exp(log_density)


def _betainc_dx(a, b, x):
    log_density = lax.sub(lax.add(lax.mul(lax.sub(a, 1.0), lax.log(x)),
                                  lax.mul(lax.sub(b, 1.0), lax.log1p(lax.neg(x)))), _lbeta(a, b))
    return lax.exp(log_density)


# Euler-Maclaurin for zeta(s, q): sum_{n<N} (q + n)^-s + A^(1-s)/(s-1) + A^-s/2
#   + sum_k B_2k/(2k)! s(s+1)...(s+2k-2) A^(-s-2k+1), with A = q + N. With N = 9 and six
# Bernoulli terms the remainder is below float64 rounding for the s > 1, q > 0 where zeta is finite.
_ZETA_TERMS = 9
_BERNOULLI_OVER_FACTORIAL = [1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160,
                             -691 / 1307674368000]


def _zeta_dx(s, q):
    """d/ds zeta(s, q) = -sum_n log(q + n) (q + n)^-s, each term of the expansion above
    differentiated in s by hand (built from primitives, so it differentiates again)."""
    def power(a, e):  # a^e and its log for a > 0
        log_a = lax.log(a)
        return lax.exp(lax.mul(e, log_a)), log_a
    total = lax.mul(s, 0.0)
    for n in range(_ZETA_TERMS):
        p, log_a = power(lax.add(q, float(n)), lax.neg(s))
        total = lax.sub(total, lax.mul(log_a, p))
    big = lax.add(q, float(_ZETA_TERMS))
    p, log_a = power(big, lax.sub(1.0, s))
    inv = lax.reciprocal(lax.sub(s, 1.0))
    total = lax.sub(total, lax.mul(p, lax.add(lax.mul(log_a, inv), lax.mul(inv, inv))))
    p = lax.div(p, big)  # A^-s
    total = lax.sub(total, lax.mul(lax.mul(log_a, p), 0.5))
    rising, d_rising = lax.add(lax.mul(s, 0.0), 1.0), lax.mul(s, 0.0)  # s(s+1)..., d/ds of it
    for k, coefficient in enumerate(_BERNOULLI_OVER_FACTORIAL, start=1):
        for j in ((0,) if k == 1 else (2 * k - 3, 2 * k - 2)):
            factor = lax.add(s, float(j))
            rising, d_rising = lax.mul(rising, factor), lax.add(lax.mul(d_rising, factor), rising)
        p = lax.div(p, big) if k == 1 else lax.div(p, lax.mul(big, big))  # A^(-s-2k+1)
        term = lax.mul(p, lax.sub(d_rising, lax.mul(log_a, rising)))
        total = lax.add(total, lax.mul(term, coefficient))
    return total


def _i1e_dx(x):
    """d/dx i1e(x) = i0e(x) - i1e(x) (sign(x) + 1/x), which tends to 1/2 at x = 0."""
    is_zero = lax.eq(x, 0.0)
    safe = lax.select(is_zero, lax.add(lax.mul(x, 0.0), 1.0), x)
    i1 = lax.bessel_i1e(safe)
    general = lax.sub(lax.bessel_i0e(safe), lax.mul(i1, lax.add(lax.sign(safe),
                                                                 lax.reciprocal(safe))))
    return lax.select(is_zero, lax.add(lax.mul(x, 0.0), 0.5), general)


# =================================================================================================
# The family: one row per primitive, with its lowering and the JVP rule of each operand
# =================================================================================================

SPECIAL_TABLE = [
    # name, lowering, (jvp rule of each operand)
    ("igamma", _impl_lower(_igamma_impl, "igamma"),
     (lambda t, out, a, x: lax.mul(t, lax.igamma_grad_a(a, x)),
      lambda t, out, a, x: lax.mul(t, _igamma_dx(a, x)))),
    ("igammac", _impl_lower(_igammac_impl, "igammac"),
     (lambda t, out, a, x: lax.neg(lax.mul(t, lax.igamma_grad_a(a, x))),
      lambda t, out, a, x: lax.neg(lax.mul(t, _igamma_dx(a, x))))),
    ("igamma_grad_a", _impl_lower(_igamma_grad_a_impl, "igamma_grad_a"),
     (_unsupported("igamma_grad_a", "a"), _unsupported("igamma_grad_a", "x"))),
    ("random_gamma_grad", _impl_lower(_random_gamma_grad_impl, "random_gamma_grad"),
     (_unsupported("random_gamma_grad", "a"), _unsupported("random_gamma_grad", "x"))),
    ("polygamma", op_lower(chlo.polygamma),
     (_unsupported("polygamma", "the order m"),
      lambda t, out, m, x: lax.mul(t, lax.polygamma(lax.add(m, 1.0), x)))),
    ("zeta", op_lower(chlo.zeta),
     (lambda t, out, s, q: lax.mul(t, _zeta_dx(s, q)),
      lambda t, out, s, q: lax.mul(t, lax.neg(lax.mul(s, lax.zeta(lax.add(s, 1.0), q)))))),
    ("regularized_incomplete_beta", _impl_lower(_betainc_impl, "betainc"),
     (_unsupported("betainc", "a"), _unsupported("betainc", "b"),
      lambda t, out, a, b, x: lax.mul(t, _betainc_dx(a, b, x)))),
    ("bessel_i0e", _impl_lower(_bessel_i0e_impl, "bessel_i0e"),
     (lambda t, out, x: lax.mul(t, lax.sub(lax.bessel_i1e(x), lax.mul(lax.sign(x), out))),)),
    ("bessel_i1e", op_lower(chlo.bessel_i1e), (lambda t, out, x: lax.mul(t, _i1e_dx(x)),)),
]
special_primitives = {
    name: elementwise_primitive(name, nary_abstract_eval(name, "float"), lower, *jvps)
    for name, lower, jvps in SPECIAL_TABLE
}
globals().update({f"{name}_p": prim for name, prim in special_primitives.items()})
