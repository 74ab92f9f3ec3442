"""Batching of the elementwise family: `yax.vmap(f, in_axes, out_axes)` equals stacking `f` per
example, for every primitive, on hypothesis-drawn shapes, batch axes (None, negative ones) and
rank-0 operands; plus per-example gradients `vmap(grad(f))`."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import yax
from tests.harness import assert_close
from tests.test_ad_elementwise import UNARY_DOMAINS
from yax import lax

SETTINGS = settings(max_examples=5, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def _floats(low, high):
    def sample(rng, shape):
        return rng.uniform(low, high, size=shape).astype(np.float32)
    return sample


def _ints(low, high, dtype=np.int32):
    def sample(rng, shape):
        return rng.integers(low, high, size=shape).astype(dtype)
    return sample


def _bools(rng, shape):
    return rng.random(shape) < 0.5


ANY = _floats(-3, 3)
POS = _floats(0.3, 3)

# name -> (function, one sampler per operand, which operands may be rank 0 per example)
ALL = range(4)
CASES = {f"unary_{n}": (getattr(lax, n), [_floats(lo, hi)], ())
         for n, (lo, hi, _) in UNARY_DOMAINS.items()}
CASES.update({
    "round_even": (lambda x: lax.round(x, 1), [ANY], ()),
    "is_finite": (lax.is_finite, [ANY], ()),
    "not_int": (lax.bitwise_not, [_ints(-50, 50)], ()),
    "not_bool": (lax.bitwise_not, [_bools], ()),
    "population_count": (lax.population_count, [_ints(-50, 50)], ()),
    "real": (lax.real, [ANY], ()), "imag": (lax.imag, [ANY], ()),
    "conj": (lax.conj, [ANY], ()),
    "integer_pow_3": (lambda x: lax.integer_pow(x, 3), [ANY], ()),
    "integer_pow_-2": (lambda x: lax.integer_pow(x, -2), [POS], ()),
    "convert_f32_i32": (lambda x: lax.convert_element_type(x, np.int32), [ANY], ()),
    "convert_i32_f32": (lambda x: lax.convert_element_type(x, np.float32), [_ints(-9, 9)], ()),
    "convert_to_bool": (lambda x: lax.convert_element_type(x, np.bool_), [_ints(-2, 2)], ()),
    "bitcast_same_size": (lambda x: lax.bitcast_convert_type(x, np.int32), [ANY], ()),
    "bitcast_split": (lambda x: lax.bitcast_convert_type(x, np.int8), [ANY], ()),
    "clamp": (lax.clamp, [_floats(-2, -1), ANY, _floats(1, 2)], (0, 2)),  # bounds only
    "select_n_bool": (lax.select_n, [_bools, ANY, ANY], ALL),
    "select_n_int": (lax.select_n, [_ints(0, 3), ANY, ANY, ANY], ALL),
    "pow": (lax.pow, [POS, ANY], ALL),
    "pow_int_exponent": (lax.pow, [POS, _ints(-2, 3)], ALL),
})
for _name in ("add", "sub", "mul", "max", "min", "atan2", "nextafter"):
    CASES[_name] = (getattr(lax, _name), [ANY, ANY], ALL)
CASES["div"] = (lax.div, [ANY, POS], ALL)
CASES["rem"] = (lax.rem, [ANY, POS], ALL)
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    CASES[_name] = (getattr(lax, _name), [_ints(-2, 2), _ints(-2, 2)], ALL)
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    CASES[_name] = (getattr(lax, _name), [_ints(-50, 50), _ints(-50, 50)], ALL)
    CASES[_name + "_bool"] = (getattr(lax, _name), [_bools, _bools], ALL)
for _name in ("shift_left", "shift_right_logical", "shift_right_arithmetic"):
    CASES[_name] = (getattr(lax, _name), [_ints(-50, 50), _ints(0, 31)], ALL)


def _per_example(fn, args, in_axes, size) -> list:
    return [np.asarray(fn(*[a if ax is None else np.take(a, i, axis=ax)
                            for a, ax in zip(args, in_axes)])) for i in range(size)]


def _check_vmap(fn, args, in_axes, out_axes, per_example):
    got = yax.vmap(fn, in_axes=in_axes, out_axes=out_axes)(*args)
    assert_close(got, np.stack(per_example, axis=out_axes), rtol=1e-5, atol=1e-5)


@st.composite
def batching(draw, samplers, may_be_scalar, example_shapes):
    """(args, in_axes, out_axes, size): each operand batched at a drawn axis (possibly negative)
    or not at all, at least one batched; operands may be rank 0 per example where allowed."""
    size = draw(st.integers(1, 3))
    shape = draw(example_shapes)
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    n = len(samplers)
    batched = draw(st.lists(st.booleans(), min_size=n, max_size=n).filter(any))
    args, in_axes = [], []
    for i, (sampler, is_batched) in enumerate(zip(samplers, batched)):
        ex_shape = () if i in may_be_scalar and draw(st.booleans()) else shape
        if not is_batched:
            args.append(sampler(rng, ex_shape))
            in_axes.append(None)
            continue
        rank = len(ex_shape)
        axis = draw(st.integers(-(rank + 1), rank))
        value = sampler(rng, (size,) + ex_shape)
        args.append(np.moveaxis(value, 0, axis))
        in_axes.append(axis)
    return args, tuple(in_axes), size


@pytest.mark.parametrize("name", sorted(CASES))
@SETTINGS
@given(data=st.data())
def test_vmap_matches_loop(name, data):
    fn, samplers, may_be_scalar = CASES[name]
    shapes = st.sampled_from([(), (2,), (2, 3)])
    args, in_axes, size = data.draw(batching(samplers, may_be_scalar, shapes))
    per_example = _per_example(fn, args, in_axes, size)
    out_rank = per_example[0].ndim
    out_axes = data.draw(st.integers(-(out_rank + 1), out_rank))
    _check_vmap(fn, args, in_axes, out_axes, per_example)


@SETTINGS
@given(data=st.data())
def test_vmap_bitcast_join(data):
    """int8[..., 4] -> float32[...]: the last axis vanishes, whatever the batch axis."""
    lead = data.draw(st.sampled_from([(), (2,)]))
    sampler = _ints(-100, 100, np.int8)
    args, in_axes, size = data.draw(batching([sampler], (), st.just(lead + (4,))))
    out_axes = data.draw(st.integers(-(len(lead) + 1), len(lead)))
    fn = lambda x: lax.bitcast_convert_type(x, np.float32)  # noqa: E731
    _check_vmap(fn, args, in_axes, out_axes, _per_example(fn, args, in_axes, size))


def test_vmap_unbatched_scalar_meets_batched_scalar():
    """A batched rank-0 operand meeting an array per example, and an unbatched rank-0 one."""
    x = np.arange(3.0, dtype=np.float32)            # batched scalars
    y = np.ones((2,), np.float32)                    # unbatched array
    got = yax.vmap(lambda a, b: lax.clamp(0.5, lax.add(a, b), 2.0), in_axes=(0, None))(x, y)
    assert_close(got, np.clip(x[:, None] + y, 0.5, 2.0))


# --- per-example gradients ---

GRAD_UNARY = sorted(n for n in UNARY_DOMAINS)
GRAD_BINARY = {"add": (ANY, ANY), "sub": (ANY, ANY), "mul": (ANY, ANY), "div": (ANY, POS),
               "pow": (POS, ANY), "atan2": (POS, ANY), "max": (ANY, ANY), "min": (ANY, ANY),
               "rem": (ANY, POS)}


def _x64(sampler):
    return lambda rng, shape: sampler(rng, shape).astype(np.float64)


@pytest.mark.parametrize("name", GRAD_UNARY)
def test_vmap_of_grad_unary(x64, name):
    lo, hi, _ = UNARY_DOMAINS[name]
    x = np.linspace(lo, hi, 7)[1:-1] + 0.013  # off integers/halves and zero
    g = yax.grad(getattr(lax, name))
    got = yax.vmap(g)(x)
    want = np.stack([np.asarray(g(v)) for v in x])
    assert_close(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(GRAD_BINARY))
@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0)])
def test_vmap_of_grad_binary(x64, name, in_axes):
    rng = np.random.default_rng(1)
    sx, sy = (_x64(s) for s in GRAD_BINARY[name])
    x = sx(rng, (4,) if in_axes[0] == 0 else ())
    y = sy(rng, (4,) if in_axes[1] == 0 else ())
    g = yax.grad(getattr(lax, name), argnums=(0, 1))
    got = yax.vmap(g, in_axes=in_axes)(x, y)
    per = [g(x[i] if in_axes[0] == 0 else x, y[i] if in_axes[1] == 0 else y) for i in range(4)]
    for k in range(2):
        assert_close(got[k], np.stack([np.asarray(p[k]) for p in per]), rtol=1e-12, atol=1e-12)


def test_vmap_of_grad_select_clamp(x64):
    rng = np.random.default_rng(2)
    x = rng.uniform(-3, 3, (5, 3))
    which = rng.random((5, 3)) < 0.5

    def f(w, v):
        return lax.clamp(-1.0, lax.select(w, lax.sin(v), lax.mul(v, 2.0)), 1.0).sum()
    g = yax.grad(f, argnums=1)
    got = yax.vmap(g, in_axes=(0, 0))(which, x)
    assert_close(got, np.stack([np.asarray(g(which[i], x[i])) for i in range(5)]),
                 rtol=1e-12, atol=1e-12)
