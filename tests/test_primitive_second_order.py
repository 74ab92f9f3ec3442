"""Every registered primitive at second order, from the table in tests/primitive_cases*.py.

For each smooth case, in float64: jvp(jvp), jvp(vjp) and vjp(vjp) against central finite
differences of the first derivative, the transposition identity of linearize, and vmap of the
first derivatives (tests/second_order_checks.py), all the checks of a case expected to pass
in one jitted program; a sample also runs eagerly against the jitted result. Primitives
without a derivative assert jax's convention. The coverage test fails, listing them, when a
registered primitive has no case; the count is printed in the terminal summary
(tests/conftest.py).
"""

from __future__ import annotations

import importlib
import pkgutil

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from tests import second_order_checks as checks
from tests.primitive_cases import ELEMENTWISE, REDUCTIONS
from tests.primitive_cases_arrays import (
    CONTRACTIONS,
    FFT,
    LINALG,
    SHAPE,
    SLICING,
    SORTING,
    WINDOWED,
    XLA_RNG,
)
from tests.primitive_cases_calls import CALLS, COLLECTIVES
from yax import errors, lax
from yax.core.ir import subjaxprs
from yax.core.primitive import all_primitives
from yax.interpreters.ad_util import float0

CASES = {**ELEMENTWISE, **REDUCTIONS, **SHAPE, **SLICING, **WINDOWED, **CONTRACTIONS,
         **SORTING, **FFT, **LINALG, **XLA_RNG, **COLLECTIVES, **CALLS}
JIT_VS_EAGER_SAMPLE = ("sin", "div", "cumprod", "gather", "cholesky", "scan", "psum", "fft")


def primitive_of(case_name: str) -> str:
    return case_name.split(":")[0]


def yax_primitives() -> dict:
    """yax's own primitives: every module imported (so none is missed), minus the throwaway
    ones tests construct (their rules are not yax's)."""
    for info in pkgutil.walk_packages(yax.__path__, "yax."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    return {name: p for name, p in all_primitives().items()
            if getattr(p.abstract_eval, "__module__", "").startswith("yax.")
            and p.abstract_eval.__module__ != "yax.core.primitive"}


# Primitives no case here can bind: `dim_as_value` has no operands (no tangent or cotangent
# reaches it) and exists only while yax.export traces with symbolic shapes; only the symbolic
# lowering can lower it. tests/test_export_symbolic.py differentiates programs binding it (mean
# over a symbolic axis) against jax.export.
ONLY_IN_SYMBOLIC_EXPORT = {"dim_as_value"}


def test_symbolic_only_primitives_cannot_run_outside_export():
    from yax.primitives.dim_as_value import dim_as_value_p
    with pytest.raises(errors.ExportError, match="only be lowered by yax.export"):
        yax.jit(lambda: dim_as_value_p.bind(dim="b", dtype=np.int32))()


def coverage() -> tuple[int, int, list[str]]:
    registered = yax_primitives()
    covered = {primitive_of(n) for n in CASES} | ONLY_IN_SYMBOLIC_EXPORT
    missing = sorted(set(registered) - covered)
    return len(registered) - len(missing), len(registered), missing


def test_table_covers_every_registered_primitive():
    covered, total, missing = coverage()
    assert not missing, (f"second-order table: {covered}/{total} primitives; add a case to "
                         f"tests/primitive_cases*.py for: {', '.join(missing)}")
    stale = sorted({primitive_of(n) for n in CASES} - set(yax_primitives()))
    assert not stale, f"cases for primitives that are not registered: {stale}"


def _names_in(jaxpr, found: set) -> set:
    for eqn in jaxpr.eqns:
        found.add(eqn.primitive.name)
        for sub in subjaxprs(eqn):
            _names_in(getattr(sub, "jaxpr", sub), found)
    return found


def _bound(case) -> set:
    """The primitives the case's function binds, and those of its linearization (where
    custom_vjp_lin appears)."""
    if case.kind == "zero":
        fn = lambda *xs: case.fn(lax, jnp, *xs)  # noqa: E731
    else:
        fn = case.fn
    linear = lambda *xs: yax.linearize(fn, *xs)[1](*xs)  # noqa: E731
    programs = [fn, linear] if "linearize" in case.checks() else [fn]
    names = set()
    for program in programs:
        if case.named:  # a collective: traced per lane, inside the vmap naming the axis "i"
            box = []
            yax.vmap(lambda *xs, p=program: box.append(yax.make_jaxpr(p)(*xs)),
                     axis_name="i")(*case.args)
            _names_in(box[0].jaxpr, names)
        else:
            _names_in(yax.make_jaxpr(program)(*case.args).jaxpr, names)
    return names


def test_every_case_binds_its_primitive(x64):
    wrong = [n for n, c in CASES.items() if primitive_of(n) not in _bound(c)]
    assert not wrong, f"cases whose function does not bind their primitive: {wrong}"


SMOOTH = [pytest.param(name, check, id=f"{name}-{check}",
                       marks=[pytest.mark.xfail(strict=True, reason=case.xfail[check])]
                       if check in case.xfail else [])
          for name, case in CASES.items() for check in case.checks()]


# name -> (directions, {check: result}) of the case's expected-to-pass checks, computed by the
# first of its tests in one jitted program (the cases' tests run one after another); None for
# the results when that program fails, so that each check then runs alone and fails alone.
_SHARED: dict = {}


def _shared_run(name, case) -> tuple:
    if name not in _SHARED:
        d = checks.directions(name, case)
        passing = [check for check in case.checks() if check not in case.xfail]
        try:
            results = checks.run_together(case, passing, d)
        except Exception:
            results = None
        _SHARED.clear()  # only the current case is needed: keep memory flat
        _SHARED[name] = (d, results)
    return _SHARED[name]


@pytest.mark.parametrize("name,check", SMOOTH)
def test_second_order(x64, name, check):
    case = CASES[name]
    if check in case.xfail:  # alone, so that its expected failure is its own
        d = checks.directions(name, case)
        checks.verify(case, check, checks.run(case, check, d), d)
        return
    d, results = _shared_run(name, case)
    result = results[check] if results is not None else checks.run(case, check, d)
    checks.verify(case, check, result, d)


@pytest.mark.parametrize("name", JIT_VS_EAGER_SAMPLE)
def test_jit_matches_eager(x64, name):
    case = CASES[name]
    d = checks.directions(name, case)
    jitted = checks.run(case, "jvp_vjp", d)
    eager = checks.run(case, "jvp_vjp", d, jit=False)
    for a, b in zip(checks._leaves(jitted), checks._leaves(eager), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _tangent_like(x, rng):
    x = np.asarray(x)
    if np.issubdtype(x.dtype, np.inexact):
        return rng.standard_normal(x.shape)
    return np.zeros(x.shape, float0)


def _convention(tangent) -> tuple:
    t = np.asarray(tangent)
    return ("float0", t.shape) if t.dtype == float0 else ("zeros", t.shape, bool(np.all(t == 0)))


ZERO = [name for name, case in CASES.items() if case.kind == "zero"]


@pytest.mark.parametrize("name", ZERO)
def test_no_derivative_convention(x64, name):
    """Zero tangents for float outputs, float0 for integer/bool ones; float0 cotangents for
    integer inputs and zero ones for float inputs: the same as jax, forward and reverse."""
    case = CASES[name]
    rng = np.random.default_rng(0)
    ts = tuple(_tangent_like(a, rng) for a in case.args)
    got = {}
    systems = (("yax", lax, jnp, yax.jvp, yax.vjp), ("jax", jax.lax, jjnp, jax.jvp, jax.vjp))
    for who, L, N, jvp, vjp in systems[:2 if case.oracle else 1]:
        fn = lambda *xs: case.fn(L, N, *xs)  # noqa: E731,B023
        out, t_out = jvp(fn, case.args, ts)
        _, pullback = vjp(fn, *case.args)
        cts = pullback(_tangent_like(out, rng))
        got[who] = (_convention(t_out), [_convention(c) for c in cts])
    if case.oracle:
        assert got["yax"] == got["jax"]
    assert got["yax"][0][0] == "float0" or got["yax"][0][2], got["yax"]


NO_RULE = [name for name, case in CASES.items() if case.kind == "no_rule"]


@pytest.mark.parametrize("name", NO_RULE)
def test_no_rule_is_a_clear_error(x64, name):
    case = CASES[name]
    with pytest.raises(errors.YaxError, match=primitive_of(name)):
        yax.jvp(case.fn, case.args, case.args)
