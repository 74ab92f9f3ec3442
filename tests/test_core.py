"""Core: dtype promotion lattice vs jax, avals, jaxpr printing and type checking, layering."""

from __future__ import annotations

import itertools
import pathlib
import re

import ml_dtypes
import numpy as np
import pytest

import yax
from yax import lax
from yax.core import dtypes

TYPES = [np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32,
         np.float16, ml_dtypes.bfloat16, np.float32]
WEAK = [("int", 1), ("float", 1.0), ("complex", 1j)]


@pytest.mark.parametrize("a,b", list(itertools.combinations_with_replacement(TYPES, 2)))
def test_promotion_matches_jax(a, b):
    from jax import dtypes as jdt
    want = jdt.result_type(a, b, return_weak_type_flag=True)
    got = dtypes.result_type((np.dtype(a), False), (np.dtype(b), False))
    assert (got[0], got[1]) == (np.dtype(want[0]), want[1])


@pytest.mark.parametrize("a", TYPES)
@pytest.mark.parametrize("name,scalar", WEAK)
def test_weak_promotion_matches_jax(a, name, scalar):
    from jax import dtypes as jdt
    want = jdt.result_type(a, scalar, return_weak_type_flag=True)
    got = dtypes.result_type((np.dtype(a), False), dtypes.scalar_type_of(scalar))
    assert (got[0], got[1]) == (np.dtype(want[0]), want[1])


def test_promotion_64bit_matches_jax(x64):
    from jax import dtypes as jdt
    for a, b in itertools.product([np.int64, np.uint64, np.float64, np.uint32], repeat=2):
        want = jdt.result_type(a, b, return_weak_type_flag=True)
        got = dtypes.result_type((np.dtype(a), False), (np.dtype(b), False))
        assert (got[0], got[1]) == (np.dtype(want[0]), want[1])


def test_jaxpr_pretty_print():
    jaxpr = yax.make_jaxpr(lambda x: lax.mul(lax.sin(x), 2.0))(np.ones(3, np.float32))
    # jax's layout: a jaxpr that fits in 80 columns is one line, equations split by "; "
    assert str(jaxpr) == ("{ lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = mul b 2.0:f32[] "
                          "in (c,) }")


def test_jaxpr_records_user_source_lines():
    jaxpr = yax.make_jaxpr(lambda x: lax.cos(x))(np.ones(2, np.float32))
    src = jaxpr.eqns[0].source
    assert src.filename.endswith("test_core.py")


def test_typecheck_runs_under_checks_flag():
    from yax.core.typecheck import JaxprTypeError, check_jaxpr
    yax.config.update("enable_checks", True)
    try:
        yax.jit(lambda x: lax.exp(x))(np.ones(2, np.float32))
    finally:
        yax.config.update("enable_checks", False)
    jaxpr = yax.make_jaxpr(lambda x: lax.exp(x))(np.ones(2, np.float32)).jaxpr
    jaxpr.eqns[0].outvars[0].aval = jaxpr.eqns[0].outvars[0].aval.update(shape=(3,))
    with pytest.raises(JaxprTypeError):
        check_jaxpr(jaxpr)


def test_typecheck_checks_every_cond_branch():
    """Branches sit in a tuple param: a malformed one must still be caught."""
    from yax.core.ir import subjaxprs
    from yax.core.typecheck import JaxprTypeError, check_jaxpr
    jaxpr = yax.make_jaxpr(lambda p, x: lax.cond(p, lax.exp, lambda y: lax.sin(lax.cos(y)), x))(
        True, np.ones(2, np.float32)).jaxpr
    cond_eqn = next(e for e in jaxpr.eqns if e.primitive.name == "cond")
    branches = list(subjaxprs(cond_eqn))
    assert len(branches) == 2
    check_jaxpr(jaxpr)
    inner = branches[0].jaxpr.eqns[0].outvars[0]  # an intermediate: the cond's own type holds
    inner.aval = inner.aval.update(shape=(3,))
    with pytest.raises(JaxprTypeError):
        check_jaxpr(jaxpr)


def test_missing_rule_names_primitive_and_transformation():
    from yax.core.primitive import Primitive
    fake = Primitive("fake_op")
    with pytest.raises(NotImplementedError, match="jvp.*`fake_op`"):
        fake.jvp((), ())
    with pytest.raises(NotImplementedError, match="batching.*`fake_op`"):
        fake.batch((), ())


def test_define_rejects_unknown_rule_names():
    from yax.core.primitive import Primitive
    prim = Primitive("fake_define_op")
    with pytest.raises(TypeError, match=r"`fake_define_op`.*jvpp.*not a rule name"):
        prim.define(jvpp=lambda primals, tangents: ((), ()))
    with pytest.raises(TypeError, match=r"`fake_define_op`.*batching, lowering"):
        prim.define(lowering=None, batching=None)


def test_unset_rule_raises_naming_primitive_and_transformation():
    from yax.core.primitive import Primitive, has_rule
    from yax.errors import NotImplementedRuleError

    def lower(ctx, x):
        return [x]
    prim = Primitive("fake_unset_op", lower=lower)
    prim.define(jvp=None)  # None leaves a rule as it is: still unset
    assert prim.lower is lower and has_rule(prim, "lower") and not has_rule(prim, "jvp")
    expected = {"abstract_eval": "abstract evaluation", "jvp": "differentiation",
                "transpose": "transposition", "batch": "batching"}
    for rule, transformation in expected.items():
        with pytest.raises(NotImplementedRuleError,
                           match=rf"{transformation}.*`fake_unset_op`"):
            getattr(prim, rule)()
    assert prim.impl is None and prim.partial_eval is None and prim.checkify is None


def test_only_runtime_imports_jax():
    root = pathlib.Path(yax.__file__).parent
    pattern = re.compile(r"^\s*(import jax\b|from jax(\.| import))", re.M)
    offenders = [str(p.relative_to(root)) for p in root.rglob("*.py")
                 if "runtime" not in p.parts and pattern.search(p.read_text())]
    assert offenders == []


def test_array_basics():
    x = yax.device_put(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert x.shape == (2, 3) and x.dtype == np.int32 and x.ndim == 2 and x.size == 6
    assert "Array([[0, 1, 2]" in repr(x) and "dtype=int32" in repr(x)
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(TypeError):
        hash(x)
    view = np.asarray(x)
    with pytest.raises(ValueError):
        view[0, 0] = 7  # host views of device data are read-only


def test_platform_is_cpu_here():
    assert yax.default_backend() == "cpu"
    assert len(yax.devices()) >= 1
