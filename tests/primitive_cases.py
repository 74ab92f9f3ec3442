"""The per-primitive second-order table: one entry (at least) for every registered primitive.

`CASES` maps a primitive's name (or `name:variant` for a second case of the same primitive) to
a `Case`: a float64 function that binds the primitive, example inputs in a domain where it is
smooth, and which checks apply (tests/second_order_checks.py). Adding a primitive means adding
one entry here; tests/test_primitive_second_order.py fails listing every registered primitive
without one. The entries live in three modules by family (this one: elementwise, special
functions, conversions, reductions); `CASES` joins them.

Kinds:
  smooth   all of jvp(jvp), jvp(vjp), vjp(vjp), linearize+transpose and vmap (minus `skip`)
  zero     no meaningful derivative: the tangent is exactly zero (float outputs) or float0
           (integer/bool outputs), and the cotangent of integer inputs float0, as jax has it;
           `fn` takes the lax and numpy modules first so the same code runs on jax too
  no_rule  jax defines no derivative: differentiating raises an error naming the primitive
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

import numpy as np

import yax.numpy as jnp
from tests.second_order_checks import CHECKS, TOL
from yax import lax


@dataclasses.dataclass(frozen=True)
class Case:
    fn: Callable
    args: tuple
    kind: str = "smooth"
    named: bool = False                 # a collective: checked per lane of an axis named "i"
    skip: Mapping[str, str] = dataclasses.field(default_factory=dict)   # check -> why not
    xfail: Mapping[str, str] = dataclasses.field(default_factory=dict)  # check -> known bug
    tol: float = TOL
    oracle: bool = True                 # zero cases: jax has the same convention

    def reverse(self) -> bool:
        """Whether reverse mode applies (the vmap check then batches the vjp too)."""
        return "jvp_vjp" not in self.skip

    def checks(self) -> tuple[str, ...]:
        return tuple(c for c in CHECKS if c not in self.skip) if self.kind == "smooth" else ()


def smooth(fn, *args, **kw) -> Case:
    return Case(fn, tuple(np.asarray(a, np.float64) for a in args), **kw)


def zero(fn, *args, **kw) -> Case:
    """`fn(lax, jnp, *args)`: run on yax and on jax, which must agree on the convention."""
    return Case(fn, tuple(np.asarray(a) for a in args), kind="zero", **kw)


def pts(lo, hi, shape=(3,)) -> np.ndarray:
    """Points spread over [lo, hi] (irregularly, so no two entries tie)."""
    n = int(np.prod(shape))
    t = (np.arange(n) + 0.5) / n
    return (lo + (hi - lo) * (t + 0.1 * np.sin(7.0 * t) / n)).reshape(shape)


X = pts(-1.7, 1.9)
Y = pts(0.6, 2.3)[::-1].copy()
M = pts(-1.5, 1.6, (2, 3))
INTS = np.array([3, 12, -7], np.int32)
sin, cos = jnp.sin, jnp.cos


SECOND_IN_A = dict.fromkeys(("jvp_jvp", "jvp_vjp", "vjp_vjp", "linearize"),
                           "igamma_grad_a has no derivative, as in jax")


def unary(name, lo, hi):
    return smooth(getattr(lax, name), pts(lo, hi))


UNARY_DOMAINS = {
    "abs": (0.3, 2.0), "acos": (-0.8, 0.8), "acosh": (1.2, 3.0), "asin": (-0.8, 0.8),
    "asinh": (-2.0, 2.0), "atan": (-2.0, 2.0), "atanh": (-0.8, 0.8), "cbrt": (0.3, 2.0),
    "cos": (-2.0, 2.0), "cosh": (-2.0, 2.0), "digamma": (0.4, 3.0), "erf": (-1.5, 1.5),
    "erf_inv": (-0.8, 0.8), "erfc": (-1.5, 1.5), "exp": (-2.0, 2.0), "exp2": (-2.0, 2.0),
    "expm1": (-2.0, 2.0), "lgamma": (0.4, 3.0), "log": (0.3, 3.0), "log1p": (-0.7, 3.0),
    "logistic": (-3.0, 3.0), "neg": (-2.0, 2.0), "rsqrt": (0.3, 3.0), "sin": (-2.0, 2.0),
    "sinh": (-2.0, 2.0), "sqrt": (0.3, 3.0), "tan": (-1.2, 1.2), "tanh": (-2.0, 2.0),
    "bessel_i0e": (-2.0, 2.0), "bessel_i1e": (-2.0, 2.0),
    # piecewise constant: zero derivatives, checked away from the jumps
    "ceil": (0.2, 2.7), "floor": (0.2, 2.7), "round": (0.6, 1.4), "sign": (0.3, 2.0),
}

ELEMENTWISE = {name: unary(name, lo, hi) for name, (lo, hi) in UNARY_DOMAINS.items()}
ELEMENTWISE.update({
    "abs:negative": smooth(lax.abs, -Y),
    "sign:negative": smooth(lambda x: lax.sign(x) * x * x, -Y),
    "add": smooth(lambda x, y: sin(lax.add(x, y)), X, Y),
    "sub": smooth(lambda x, y: sin(lax.sub(x, y)), X, Y),
    "mul": smooth(lax.mul, X, Y),
    "div": smooth(lax.div, X, Y),
    "max": smooth(lambda x, y: lax.max(x * x, y), X, Y),
    "min": smooth(lambda x, y: lax.min(x * x, y), X, Y),
    "pow": smooth(lax.pow, Y, X),
    "integer_pow": smooth(lambda x: lax.integer_pow(x, 3) + lax.integer_pow(x, -2), Y),
    "atan2": smooth(lax.atan2, X, Y),
    "rem": smooth(lax.rem, np.array([2.3, -3.1, 5.2]), np.array([1.5, 1.3, -1.9])),
    # jax defines no rule (an error); yax's documented convention is a zero tangent
    "nextafter": zero(lambda lax, jnp, x: lax.nextafter(x, x + 1.0), X, oracle=False),
    # in x only: as in jax, igamma_grad_a (igamma's derivative in a) has no derivative, so
    # igamma has no second derivative in a
    "igamma": smooth(lambda x: lax.igamma(Y, x), pts(0.5, 2.5)),
    "igamma:first_order_in_a": smooth(lambda a: lax.igamma(a, Y), Y, skip=SECOND_IN_A),
    "igammac": smooth(lambda x: lax.igammac(Y, x), pts(0.5, 2.5)),
    "igamma_grad_a": Case(lax.igamma_grad_a, (Y, pts(0.5, 2.5)), kind="no_rule"),
    "random_gamma_grad": Case(lax.random_gamma_grad, (Y, pts(0.5, 2.5)), kind="no_rule"),
    "polygamma": smooth(lambda x: lax.polygamma(np.float64(1.0), x), Y),
    "zeta": smooth(lambda q: lax.zeta(np.float64(3.0), q), Y),
    "regularized_incomplete_beta": smooth(
        lambda x: lax.betainc(np.float64(1.5), np.float64(2.5), x), pts(0.2, 0.8)),
    "real": smooth(lambda x, y: lax.real(lax.complex(x, y) * lax.complex(y, x)), X, Y),
    "imag": smooth(lambda x, y: lax.imag(lax.complex(x, y) * lax.complex(x, y)), X, Y),
    "conj": smooth(lambda x, y: lax.real(lax.conj(lax.complex(x, y)) * lax.complex(y, x * x)),
                   X, Y),
    "select_n": smooth(lambda x, y: lax.select_n(np.array([True, False, True]), x * y, sin(x)),
                       X, Y),
    "clamp": smooth(lambda lo, x, hi: lax.clamp(lo, x * x, hi), -Y, np.array([-0.9, 1.2, 2.0]),
                    np.array([0.5, 1.9, 2.5])),
    "convert_element_type": smooth(
        lambda x: lax.real(lax.convert_element_type(x, np.complex128) ** 3), X),
    "convert_element_type:to_int": zero(
        lambda lax, jnp, x: lax.convert_element_type(x, np.int32), X * 3),
    "bitcast_convert_type": zero(lambda lax, jnp, x: lax.bitcast_convert_type(x, np.int64), X),
    "reduce_precision": smooth(
        lambda x: sin(lax.reduce_precision(x, exponent_bits=11, mantissa_bits=52)), X),
    "is_finite": zero(lambda lax, jnp, x: lax.is_finite(x), X),
    "stop_gradient": zero(lambda lax, jnp, x: lax.stop_gradient(x * x), X),
})

for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    ELEMENTWISE[_name] = zero(lambda lax, jnp, x, y, op=_name: getattr(lax, op)(x, y), X, Y)

_INT_OPS = {
    "and": lambda lax, jnp, a, b: lax.bitwise_and(a, b),
    "or": lambda lax, jnp, a, b: lax.bitwise_or(a, b),
    "xor": lambda lax, jnp, a, b: lax.bitwise_xor(a, b),
    "not": lambda lax, jnp, a, b: lax.bitwise_not(a),
    "shift_left": lambda lax, jnp, a, b: lax.shift_left(a, np.int32(2)),
    "shift_right_arithmetic": lambda lax, jnp, a, b: lax.shift_right_arithmetic(a, np.int32(1)),
    "shift_right_logical": lambda lax, jnp, a, b: lax.shift_right_logical(a, np.int32(1)),
    "population_count": lambda lax, jnp, a, b: lax.population_count(a),
    "clz": lambda lax, jnp, a, b: lax.clz(a),
}
for _name, _fn in _INT_OPS.items():
    ELEMENTWISE[_name] = zero(_fn, INTS, INTS[::-1].copy())
ELEMENTWISE["and:bool"] = zero(lambda lax, jnp, p, q: lax.bitwise_and(p, q),
                               np.array([True, False, True]), np.array([True, True, False]))

REDUCTIONS = {
    "reduce_sum": smooth(lambda x: sin(jnp.sum(x * x, axis=1)), M),
    "reduce_prod": smooth(lambda x: jnp.prod(x, axis=0), M),
    "reduce_max": smooth(lambda x: jnp.max(x * x, axis=1), M),
    "reduce_min": smooth(lambda x: jnp.min(sin(x), axis=0), M),
    "argmax": zero(lambda lax, jnp, x: jnp.argmax(x, axis=1), M),
    "argmin": zero(lambda lax, jnp, x: jnp.argmin(x, axis=0), M),
    "reduce_and": zero(lambda lax, jnp, x: jnp.all(x > 0, axis=1), M),
    "reduce_or": zero(lambda lax, jnp, x: jnp.any(x > 0, axis=0), M),
    "cumsum": smooth(lambda x: sin(lax.cumsum(x, axis=1)), M),
    "cumprod": smooth(lambda x: lax.cumprod(x, axis=1), M),
    "cummax": smooth(lambda x: lax.cummax(x * x, axis=1), M),
    "cummin": smooth(lambda x: lax.cummin(sin(x), axis=0), M),
}
