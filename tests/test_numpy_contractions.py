"""einsum, matmul, dot, vdot, inner, outer and tensordot against NumPy and jax.numpy, eagerly and
under jit, plus the shape of the programs the contraction planner emits."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import yax
from tests.harness import assert_close, check_eager_and_jit
from yax import errors
from yax.numpy.contractions import dot, einsum, inner, matmul, outer, tensordot, vdot

RTOL = 1e-4


def _rand(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed + len(shape) * 7 + sum(shape))
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 5, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),  # matrix product
    ("ij,jk", [(3, 4), (4, 5)]),  # implicit output
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),  # batch matmul
    ("ii", [(4, 4)]),  # trace
    ("ii->i", [(4, 4)]),  # diagonal
    ("iij->ji", [(3, 3, 2)]),
    ("iji->j", [(3, 2, 3)]),
    ("i,j->ij", [(3,), (4,)]),  # outer
    ("ij->i", [(3, 4)]),  # sum over an axis
    ("ij->", [(3, 4)]),
    ("ij->ji", [(3, 4)]),  # transpose
    ("ji", [(3, 4)]),  # implicit: a transpose
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("bi,bi->b", [(3, 4), (3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),  # 3-operand chain
    ("ij,jk,kl,lm->im", [(2, 3), (3, 4), (4, 5), (5, 2)]),  # 4-operand chain
    ("ijk,ikl,jl->i", [(2, 3, 4), (2, 4, 5), (3, 5)]),
    ("i,i,i->i", [(3,), (3,), (3,)]),
    ("abc,cd,bd->a", [(2, 3, 4), (4, 5), (3, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),  # ellipsis broadcasting
    ("...ij,jk", [(2, 3, 4), (4, 5)]),
    ("i...->...", [(2, 3, 4)]),
    ("...", [(2, 3)]),
    ("i...i", [(3, 2, 3)]),
    ("ab,cd->abcd", [(2, 3), (1, 2)]),
    ("ij,jk->ki", [(3, 4), (4, 5)]),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUM, ids=[s for s, _ in EINSUM])
def test_einsum_vs_numpy_and_jax(subscripts, shapes):
    ops = [_rand(s, seed=i) for i, s in enumerate(shapes)]
    want = np.einsum(subscripts, *ops)
    assert_close(jnp.einsum(subscripts, *ops), want, rtol=RTOL, atol=RTOL)
    check_eager_and_jit(lambda *o: einsum(subscripts, *o), ops, want.astype(np.float32),
                        rtol=RTOL, atol=RTOL)


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.float16, np.bool_])
def test_einsum_dtypes(dtype):
    a, b = _rand((3, 4), dtype), _rand((4, 2), dtype)
    want = np.einsum("ij,jk->ik", a, b)
    check_eager_and_jit(lambda a, b: einsum("ij,jk->ik", a, b), [a, b], want.astype(dtype),
                        rtol=2e-2, atol=2e-2)
    if dtype != np.bool_:
        want = np.einsum("ii->i", _rand((3, 3), dtype))
        check_eager_and_jit(lambda a: einsum("ii->i", a), [_rand((3, 3), dtype)], want)


def test_einsum_mixed_dtypes_promote():
    a, b = _rand((3, 4), np.int32), _rand((4, 2), np.float32)
    out = einsum("ij,jk->ik", yax.device_put(a), yax.device_put(b))
    assert out.dtype == jnp.einsum("ij,jk->ik", a, b).dtype
    assert_close(out, (a @ b).astype(np.float32), rtol=RTOL)


def test_einsum_preferred_element_type_and_precision():
    a, b = _rand((3, 4), np.int8), _rand((4, 2), np.int8)
    out = einsum("ij,jk->ik", yax.device_put(a), yax.device_put(b),
                 preferred_element_type=np.int32, precision="highest")
    assert out.dtype == np.int32
    assert_close(out, a.astype(np.int32) @ b.astype(np.int32))


def test_einsum_interleaved_form():
    a, b = _rand((3, 4)), _rand((4, 5))
    check_eager_and_jit(lambda a, b: einsum(a, [0, 1], b, [1, 2], [0, 2]), [a, b], a @ b,
                        rtol=RTOL, atol=RTOL)
    check_eager_and_jit(lambda a: einsum(a, [Ellipsis, 0]), [_rand((2, 3))],
                        np.einsum(_rand((2, 3)), [Ellipsis, 0]), rtol=RTOL, atol=RTOL)


def test_einsum_optimize_accepted():
    a, b, c = _rand((2, 3)), _rand((3, 4)), _rand((4, 5))
    for opt in (True, False, "greedy", "optimal"):
        assert_close(einsum("ij,jk,kl->il", *map(yax.device_put, (a, b, c)), optimize=opt),
                     a @ b @ c, rtol=RTOL, atol=RTOL)


def _eqn_names(jaxpr):
    return [e.primitive.name for e in jaxpr.eqns]


def test_einsum_matmul_is_one_dot_general():
    jaxpr = yax.make_jaxpr(lambda a, b: einsum("ij,jk->ik", a, b))(_rand((3, 4)), _rand((4, 5)))
    assert _eqn_names(jaxpr) == ["dot_general"]
    jaxpr = yax.make_jaxpr(lambda a, b: einsum("bij,bjk->bik", a, b))(
        _rand((2, 3, 4)), _rand((2, 4, 5)))
    assert _eqn_names(jaxpr) == ["dot_general"]
    assert jaxpr.eqns[0].params["dimension_numbers"] == (((2,), (1,)), ((0,), (0,)))


def test_einsum_greedy_order_keeps_intermediates_small():
    # (a @ b) @ c makes a 2x40 intermediate; a @ (b @ c) a 30x5 one, and the outer pair 2x30x40x5
    a, b, c = _rand((2, 30)), _rand((30, 40)), _rand((40, 5))
    jaxpr = yax.make_jaxpr(lambda a, b, c: einsum("ij,jk,kl->il", a, b, c))(a, b, c)
    assert _eqn_names(jaxpr) == ["dot_general", "dot_general"]
    assert jaxpr.eqns[0].outvars[0].aval.shape == (2, 40)
    jaxpr = yax.make_jaxpr(lambda a, b, c: einsum("ij,jk,kl->il", a, b, c))(
        _rand((30, 40)), _rand((40, 5)), _rand((5, 2)))
    assert jaxpr.eqns[0].outvars[0].aval.shape == (40, 2)


def test_einsum_sums_unique_labels_first():
    jaxpr = yax.make_jaxpr(lambda a, b: einsum("ij,jk->k", a, b))(_rand((3, 4)), _rand((4, 5)))
    assert _eqn_names(jaxpr) == ["reduce_sum", "dot_general"]


def test_einsum_errors():
    a = yax.device_put(_rand((3, 4)))
    with pytest.raises(errors.ShapeError, match="sizes"):
        einsum("ij,jk->ik", a, yax.device_put(_rand((5, 2))))
    with pytest.raises(ValueError, match="operands"):
        einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="axes"):
        einsum("ijk->i", a)
    with pytest.raises(ValueError, match="output label"):
        einsum("ij->iz", a)
    with pytest.raises(ValueError, match="invalid"):
        einsum("i1->i", a)


MATMUL = [
    ((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)), ((7, 3, 4), (4,)), ((4,), (2, 4, 3)), ((1, 3, 4), (6, 4, 2)),
    ((2, 3, 4), (4, 5)),
]


@pytest.mark.parametrize("sa,sb", MATMUL)
def test_matmul_and_dot(sa, sb):
    a, b = _rand(sa), _rand(sb, seed=1)
    check_eager_and_jit(matmul, [a, b], np.matmul(a, b), rtol=RTOL, atol=RTOL)
    assert_close(jnp.matmul(a, b), np.matmul(a, b), rtol=RTOL, atol=RTOL)
    check_eager_and_jit(dot, [a, b], np.dot(a, b), rtol=RTOL, atol=RTOL)


def test_matmul_errors():
    with pytest.raises(errors.ShapeError, match="line up"):
        matmul(yax.device_put(_rand((3, 4))), yax.device_put(_rand((5, 2))))
    with pytest.raises(errors.ShapeError, match="broadcast"):
        matmul(yax.device_put(_rand((2, 3, 4))), yax.device_put(_rand((3, 4, 2))))
    with pytest.raises(ValueError, match="scalar"):
        matmul(yax.device_put(_rand((3,))), 2.0)


def test_matmul_one_dot_general_and_int():
    jaxpr = yax.make_jaxpr(matmul)(_rand((2, 3, 4)), _rand((2, 4, 5)))
    assert _eqn_names(jaxpr) == ["dot_general"]
    a, b = _rand((3, 4), np.int32), _rand((4, 2), np.int32)
    check_eager_and_jit(matmul, [a, b], a @ b)


def test_dot_scalars_inner_outer_vdot():
    a, b = _rand((2, 3)), _rand((4, 3), seed=2)
    check_eager_and_jit(lambda a: dot(a, 2.0), [a], a * 2)
    check_eager_and_jit(inner, [a, b], np.inner(a, b), rtol=RTOL, atol=RTOL)
    check_eager_and_jit(lambda a: inner(a, 3.0), [a], np.inner(a, 3.0).astype(np.float32))
    check_eager_and_jit(outer, [a, b], np.outer(a, b), rtol=RTOL, atol=RTOL)
    c = _rand((3, 2), seed=6)
    check_eager_and_jit(vdot, [a, c], np.vdot(a, c), rtol=RTOL, atol=RTOL)
    c = (_rand((3,)) + 1j * _rand((3,), seed=3)).astype(np.complex64)
    d = (_rand((3,), seed=4) + 1j * _rand((3,), seed=5)).astype(np.complex64)
    assert_close(vdot(yax.device_put(c), yax.device_put(d)), np.vdot(c, d), rtol=RTOL, atol=RTOL)


TENSORDOT = [
    ((3, 4, 5), (4, 5, 2), 2), ((3, 4), (4, 5), 1), ((2, 3), (4,), 0),
    ((3, 4, 5), (4, 3, 2), ([1, 0], [0, 1])), ((3, 4, 5), (5, 2), (-1, 0)),
    ((3, 4), (3, 4), ([0, 1], [0, 1])),
]


@pytest.mark.parametrize("sa,sb,axes", TENSORDOT)
def test_tensordot(sa, sb, axes):
    a, b = _rand(sa), _rand(sb, seed=1)
    want = np.tensordot(a, b, axes=axes)
    assert_close(jnp.tensordot(a, b, axes=axes), want, rtol=RTOL, atol=RTOL)
    check_eager_and_jit(lambda a, b: tensordot(a, b, axes=axes), [a, b],
                        np.asarray(want, np.float32), rtol=RTOL, atol=RTOL)


def test_tensordot_errors():
    a = yax.device_put(_rand((3, 4)))
    with pytest.raises(errors.ShapeError):
        tensordot(a, a, axes=([0], [1]))
    with pytest.raises(ValueError):
        tensordot(a, a, axes=3)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=0, max_size=2),
       st.lists(st.integers(1, 3), min_size=0, max_size=2),
       st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.booleans(), st.booleans())
def test_drawn_matmul_broadcasting(batch_a, batch_b, m, k, n, vec_a, vec_b):
    batch_b = [1 if i < len(batch_a) and d != batch_a[-1 - i] else d
               for i, d in enumerate(batch_b[::-1])][::-1]
    sa = (k,) if vec_a else tuple(batch_a) + (m, k)
    sb = (k,) if vec_b else tuple(batch_b) + (k, n)
    a, b = _rand(sa), _rand(sb, seed=1)
    assert_close(matmul(yax.device_put(a), yax.device_put(b)), np.matmul(a, b), rtol=RTOL,
                 atol=RTOL)


@settings(max_examples=15, deadline=None)
@given(st.integers(2, 4), st.randoms(use_true_random=False))
def test_drawn_einsum_chains(n_ops, rnd):
    letters = "abcdef"
    sizes = {c: rnd.randint(1, 3) for c in letters}
    specs = ["".join(rnd.sample(letters, rnd.randint(1, 3))) for _ in range(n_ops)]
    used = sorted(set("".join(specs)))
    out = "".join(c for c in used if rnd.random() < 0.4)
    subscripts = ",".join(specs) + "->" + out
    ops = [_rand(tuple(sizes[c] for c in s), seed=i) for i, s in enumerate(specs)]
    want = np.einsum(subscripts, *ops)
    got = einsum(subscripts, *map(yax.device_put, ops))
    assert_close(got, np.asarray(want, np.float32), rtol=1e-3, atol=1e-3)
