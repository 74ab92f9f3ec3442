"""yax.export with symbolic shapes, as jax.export: dimension expressions (polynomials over
dimension variables), one StableHLO module with dynamic (`?`) dimensions refined per call shape,
serialization of that module, calls under jit, grad and vmap. jax.export is the oracle for the
values, the output shapes and the dimension arithmetic; NumPy for a few values directly."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import jax
import jax.export
import jax.numpy as jjnp
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax import errors
from yax import export as yexport
from yax.export import binding, symbolic

W = (np.arange(12, dtype=np.float32).reshape(4, 3) / 10 - 0.5)
_V = np.arange(4, dtype=np.float32)


def _nn(m):
    return yax.nn if m is jnp else jax.nn


def _lax(m):
    return yax.lax if m is jnp else jax.lax


def _scan_rows(m):
    def step(c, r):
        return c + r, c * r
    return lambda x: _lax(m).scan(step, m.zeros(4, np.float32), x)


def _scan_reverse_b_carry(m):
    def step(c, r):
        return c * 0.5 + r, c.sum(axis=1)
    return lambda x: _lax(m).scan(step, x, m.arange(3, dtype=np.float32), reverse=True)


def _while_b(m):
    def body(c):
        return c[0] * 1.5 + 1, c[1] + 1
    return lambda x: _lax(m).while_loop(lambda c: c[1] < 3, body, (x, 0))[0]


def _cond_b(m):
    return lambda x: _lax(m).cond(x.sum() > 0, lambda v: v[1:] * 2,
                                  lambda v: -v[:-1] - v[1:].sum(), m.concatenate([x, x[:1]]))


# name -> (shape spec, program written against a numpy module `m` (yax.numpy or jax.numpy))
PROGRAMS = {
    "mul_sum": ("b, 4", lambda m: lambda x: (x * _V).sum(axis=1)),
    "concat_self": ("b, 4", lambda m: lambda x: m.concatenate([x, x])),
    "broadcast_ones": ("b, 4", lambda m: lambda x: x + m.ones((x.shape[0], 1), np.float32)),
    "matmul_gram": ("b, 4", lambda m: lambda x: x @ x.T),
    "reshape_flat": ("b, 4", lambda m: lambda x: x.reshape(-1)),
    "reshape_split": ("b, 4", lambda m: lambda x: x.reshape((x.shape[0], 2, 2))),
    "transpose": ("b, 4", lambda m: lambda x: x.T),
    "slice_rows": ("b, 4", lambda m: lambda x: x[1:]),
    "slice_cols": ("b, 4", lambda m: lambda x: x[:, 1:3]),
    "slice_neg": ("b, 4", lambda m: lambda x: x[:-1] * 2),
    "arange_b": ("b, 4", lambda m: lambda x: x * m.arange(x.shape[0])[:, None]),
    "where": ("b, 4", lambda m: lambda x: m.where(x > 1.0, x, 0.0)),
    "cumsum": ("b, 4", lambda m: lambda x: m.cumsum(x, axis=0)),
    "zeros_like_shape": ("b, 4", lambda m: lambda x: m.zeros(x.shape, np.float32) + x),
    "full": ("b, 4", lambda m: lambda x: m.full((x.shape[0], 4), 3.0, np.float32) * x),
    "mlp": ("b, 4", lambda m: lambda x: m.tanh(x @ W)),
    "softmax": ("b, 4", lambda m: lambda x: _nn(m).softmax(x, axis=-1)),
    "max_axis0": ("b, 4", lambda m: lambda x: m.max(x, axis=0)),
    "sum_all": ("b, 4", lambda m: lambda x: m.sum(x)),
    "scalars": ("b, 4", lambda m: lambda x: m.exp(x) * 2.0 + 1.0),
    "even_input": ("2*b, 4", lambda m: lambda x: x.reshape((2, -1, 4)).sum(0)),
    "plus_one_input": ("b + 1", lambda m: lambda x: x[1:] - x[:-1]),
    "two_vars": ("b, c", lambda m: lambda x: m.concatenate([x, x.T.reshape(x.shape)], 1)),
    "mean_var": ("b, 4", lambda m: lambda x: (m.mean(x, axis=0), m.var(x), m.std(x, axis=1))),
    "layernorm": ("b, 4", lambda m: lambda x: (x - x.mean(-1, keepdims=True))
                  / m.sqrt(x.var(-1, keepdims=True) + 1e-5)),
    "argmax_onehot": ("b, 4", lambda m: lambda x: (m.argmax(x, axis=0), m.argmin(x, axis=1),
                                                   _nn(m).one_hot(m.argmax(x, axis=1), 4) * x)),
    "sort_rows": ("b, 4", lambda m: lambda x: m.sort(x * m.array([1, -1, 1, -1.0]), axis=1)),
    "traced_index": ("b, 4", lambda m: lambda x: x[m.argmax(x[:, 0])] + x[-1]),
    "broadcast_to": ("b, 4", lambda m: lambda x: m.broadcast_to(x[:, :1], x.shape) * x),
    "stack_newaxis": ("b, 4", lambda m: lambda x: m.stack([x, x[:, None, :].sum(1)], axis=1)),
    "einsum": ("b, 4", lambda m: lambda x: m.einsum("bi,bj->ij", x, x)),
    "dims_as_values": ("b, 4", lambda m: lambda x: (x / x.shape[0] + x.shape[0] * 2.0,
                                                    x.sum() / (x.shape[0] * x.shape[1]),
                                                    x * m.asarray(x.shape[0], np.float32))),
    "gather_rows_of_x": ("b, 4", lambda m: lambda x: m.take(x, m.array([3, 0, 1]), axis=1)),
    "cumulative": ("b, c", lambda m: lambda x: (m.cumprod(x, axis=0), m.cumprod(x, axis=1),
                                                _lax(m).cummax(x, axis=0, reverse=True),
                                                _lax(m).cummin(x, axis=1))),
    "scan_rows": ("b, 4", _scan_rows),
    "scan_reverse_b_carry": ("b, 4", _scan_reverse_b_carry),
    "fori_b": ("b, 4", lambda m: lambda x: _lax(m).fori_loop(0, 3, lambda i, c: c * 2 - i, x)),
    "while_b": ("b, 4", _while_b),
    "cond_b": ("b, 4", _cond_b),
    "scan_of_b_rows": ("b, c", lambda m: lambda x: _lax(m).scan(
        lambda c, r: (c + r.sum(), r * c), np.float32(0), x.T)),
}
SIZES = ({"b": 2, "c": 3}, {"b": 5, "c": 1})


def _ours(name):
    spec, make = PROGRAMS[name]
    shape = yexport.symbolic_shape(spec)
    return shape, yexport.export(yax.jit(make(jnp)))(yax.ShapeDtypeStruct(shape, np.float32))


def _theirs(name):
    spec, make = PROGRAMS[name]
    return jax.export.export(jax.jit(make(jjnp)))(
        jax.ShapeDtypeStruct(jax.export.symbolic_shape(spec), np.float32))


def _arg(shape, env):
    concrete = binding.refine(shape, env)
    return (np.arange(int(np.prod(concrete)), dtype=np.float32).reshape(concrete) / 7 - 1)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_avals_as_jax_export(name):
    shape, ours = _ours(name)
    theirs = _theirs(name)
    assert [str(a.shape) for a in ours.in_avals] == [str(a.shape) for a in theirs.in_avals]
    assert [str(a.shape) for a in ours.out_avals] == [str(a.shape) for a in theirs.out_avals]
    again = yexport.deserialize(ours.serialize())
    assert [str(a.shape) for a in again.out_avals] == [str(a.shape) for a in theirs.out_avals]
    for env in SIZES:
        x = _arg(shape, env)
        wants = jax.tree_util.tree_leaves(theirs.call(x))
        for got in (ours.call(x), again.call(x), yax.jit(again.call)(x)):
            gots = yax.tree_util.tree_leaves(got)
            assert len(gots) == len(wants)
            for g, w in zip(gots, wants, strict=True):
                assert np.asarray(g).shape == np.asarray(w).shape
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)


_GRAD_PROGRAMS = ["dims_as_values", "gather_rows_of_x", "mean_var", "layernorm",
                  "traced_index", "broadcast_to", "scan_rows",
                  "scan_reverse_b_carry", "fori_b", "cond_b", "scan_of_b_rows", "mlp", "cumsum",
                  "concat_self", "slice_rows", "slice_neg", "reshape_split", "two_vars",
                  "even_input", "softmax", "plus_one_input"]


@pytest.mark.parametrize("name", _GRAD_PROGRAMS)
def test_grad_of_a_deserialized_symbolic_export_as_jax(name):
    """The stored VJP is itself a symbolic module (transposes of slices pad, of concatenates
    slice, of scans scan backwards, all at symbolic sizes)."""
    shape, ours = _ours(name)
    theirs = _theirs(name)
    again = yexport.deserialize(ours.serialize(vjp_order=1))
    assert [str(a.shape) for a in again.vjp().out_avals] == [str(a.shape) for a in ours.in_avals]

    def loss_ours(v):
        return sum((y ** 2).sum() for y in yax.tree_util.tree_leaves(again.call(v)))

    def loss_theirs(v):
        return sum((y ** 2).sum() for y in jax.tree_util.tree_leaves(theirs.call(v)))
    grad_theirs = jax.jit(jax.grad(loss_theirs))  # one compile per shape, not one per op
    for env in SIZES:
        x = _arg(shape, env)
        np.testing.assert_allclose(np.asarray(yax.grad(loss_ours)(x)),
                                   np.asarray(grad_theirs(x)), rtol=1e-4, atol=1e-4)


def test_grad_of_symbolic_cumulative_ops_against_jax_on_concrete_shapes():
    """jax.export cannot differentiate cumprod/cummax over a symbolic axis (its associative
    scan needs a constant size); yax's VJP is a symbolic module too, checked here against
    jax.grad of the same function at each concrete shape."""
    shape, ours = _ours("cumulative")
    again = yexport.deserialize(ours.serialize(vjp_order=1))
    f = PROGRAMS["cumulative"][1](jjnp)

    def loss_theirs(v):
        return sum((y ** 2).sum() for y in jax.tree_util.tree_leaves(f(v)))
    grad_theirs = jax.jit(jax.grad(loss_theirs))  # one compile per shape, not one per op
    for env in SIZES:
        x = _arg(shape, env) + 2  # away from ties: cummax/cummin derivatives are then unique
        got = yax.grad(lambda v: sum((y ** 2).sum()
                                     for y in yax.tree_util.tree_leaves(again.call(v))))(x)
        np.testing.assert_allclose(np.asarray(got), np.asarray(grad_theirs(x)),
                                   rtol=1e-4, atol=1e-4)


def test_embedding_lookup_and_its_gradient_as_jax():
    """gather with symbolic indices (the clamp and fill-mode bounds are broadcast to their
    symbolic shape); its gradient is a scatter-add of symbolic updates."""
    table = np.arange(40, dtype=np.float32).reshape(10, 4) / 10
    b, = yexport.symbolic_shape("b")
    jb, = jax.export.symbolic_shape("b")

    def prog(m, mode):
        return lambda t, i: (m.take(t, i, axis=0, mode=mode) ** 2).sum(1)
    for mode in ("clip", "fill"):
        ours = yexport.export(yax.jit(prog(jnp, mode)))(
            yax.ShapeDtypeStruct((10, 4), np.float32), yax.ShapeDtypeStruct((b,), np.int32))
        theirs = jax.export.export(jax.jit(prog(jjnp, mode)))(
            jax.ShapeDtypeStruct((10, 4), np.float32), jax.ShapeDtypeStruct((jb,), np.int32))
        assert [str(a.shape) for a in ours.out_avals] == [str(a.shape) for a in theirs.out_avals]
        again = yexport.deserialize(ours.serialize(vjp_order=1))
        for ids in (np.array([3, 1, 3], np.int32), np.array([0, 9, 12, -1, 5], np.int32)):
            np.testing.assert_allclose(np.asarray(again.call(table, ids)),
                                       np.asarray(theirs.call(table, ids)), rtol=1e-6)
            got = yax.grad(lambda t: again.call(t, ids).sum())(table)
            # jitted: one compile per shape, not one per op of eager jax
            want = jax.jit(jax.grad(lambda t: theirs.call(t, ids).sum()))(table)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_values_against_numpy():
    b, four = yexport.symbolic_shape("b, 4")
    exp = yexport.export(yax.jit(lambda x: jnp.cumsum(jnp.concatenate([x, 2 * x]), axis=0)))(
        yax.ShapeDtypeStruct((b, four), np.float32))
    for n in (1, 3, 6):
        x = np.random.default_rng(n).normal(size=(n, 4)).astype(np.float32)
        np.testing.assert_allclose(np.asarray(exp.call(x)),
                                   np.cumsum(np.concatenate([x, 2 * x]), axis=0), rtol=1e-5,
                                   atol=1e-5)


def test_output_dimension_expressions_print_as_jax():
    b, = yexport.symbolic_shape("b")
    jb, = jax.export.symbolic_shape("b")

    def prog(m):
        return lambda x: (m.concatenate([x, x]), x[1:], m.concatenate([x, x, x[:1]]))
    ours = yexport.export(yax.jit(prog(jnp)))(yax.ShapeDtypeStruct((b, 4), np.float32))
    theirs = jax.export.export(jax.jit(prog(jjnp)))(jax.ShapeDtypeStruct((jb, 4), np.float32))
    assert [a.str_short() for a in ours.out_avals] == ["f32[2*b,4]", "f32[b - 1,4]",
                                                      "f32[2*b + 1,4]"]
    assert [str(a.shape) for a in ours.out_avals] == [str(a.shape) for a in theirs.out_avals]
    outs = ours.call(np.ones((3, 4), np.float32))
    assert [o.shape for o in outs] == [(6, 4), (2, 4), (7, 4)]


def test_module_has_dynamic_dimensions_and_refines_per_shape():
    _, exp = _ours("mlp")
    text = exp.mlir_module()
    assert "tensor<?x4xf32>" in text and "tensor<?x3xf32>" in text
    assert "stablehlo.get_dimension_size" in text
    _, bcast = _ours("broadcast_ones")
    assert "stablehlo.dynamic_broadcast_in_dim" in bcast.mlir_module()
    _, flat = _ours("reshape_flat")
    assert "stablehlo.dynamic_reshape" in flat.mlir_module()
    _, rows = _ours("slice_rows")
    assert "stablehlo.real_dynamic_slice" in rows.mlir_module()
    _, ar = _ours("arange_b")
    assert "stablehlo.dynamic_iota" in ar.mlir_module()
    for n in (2, 2, 3):
        exp.call(np.ones((n, 4), np.float32))
    assert sorted(exp._refined) == [(("b", 2),), (("b", 3),)]  # one refined module per shape
    refined = exp._refined[(("b", 3),)].mlir_module()
    assert "?" not in refined and "tensor<3x4xf32>" in refined


def test_concrete_exports_stay_static():
    exp = yexport.export(yax.jit(lambda x: jnp.tanh(x @ W)))(np.ones((2, 4), np.float32))
    text = exp.mlir_module()
    assert "?" not in text and "get_dimension_size" not in text


def test_dimension_arithmetic_as_jax():
    a, b = yexport.symbolic_shape("a, b")
    ja, jb = jax.export.symbolic_shape("a, b")
    exprs = [lambda a, b: 2 * b, lambda a, b: b + 1, lambda a, b: b - 1, lambda a, b: a * b,
             lambda a, b: (2 * b) // 2, lambda a, b: b // 2, lambda a, b: b % 3,
             lambda a, b: b * b, lambda a, b: 2 * a * b + 3]
    for e in exprs:
        assert str(e(a, b)) == str(e(ja, jb))
    assert yexport.symbolic_shape("2*b, b + 1") == (2 * b, b + 1)
    assert str(yexport.symbolic_shape("2*b, b + 1")) == str(jax.export.symbolic_shape("2*b, b + 1"))
    assert (b + b == 2 * b) and (b != a) and not (b == 4)
    assert b >= 1 and b >= 0 and b > 0 and not (b < 1) and 2 * a + b >= 3
    for inconclusive in (lambda: b >= 2, lambda: a >= b, lambda: a - b >= 0, lambda: b < 3):
        with pytest.raises(symbolic.InconclusiveDimensionOperation, match="inconclusive"):
            inconclusive()
    for inconclusive in (lambda: ja >= 2, lambda: ja >= jb):  # jax agrees these are undecidable
        with pytest.raises(Exception, match="inconclusive"):
            inconclusive()
    assert isinstance(symbolic.InconclusiveDimensionOperation("x"), errors.ExportError)
    assert symbolic.evaluate(2 * a * b + b // 2, {"a": 3, "b": 5}) == 32
    with pytest.raises(errors.ExportError, match="parse"):
        yexport.symbolic_shape("b, sin(b)")


def test_symbolic_args_specs():
    x = np.ones((3, 4), np.float32)
    (spec_x, spec_y), = [yexport.symbolic_args_specs((x, x), "b, _")]
    assert str(spec_x.shape) == "(b, 4)" and spec_y.shape == spec_x.shape
    jx = jax.export.symbolic_args_specs((x,), "b, _")[0]
    assert str(jx.shape) == str(spec_x.shape)


def test_grad_and_vjp_order_of_a_symbolic_export():
    shape, exp = _ours("mlp")

    def f(v):
        return jnp.tanh(v @ W)
    again = yexport.deserialize(exp.serialize(vjp_order=2))
    assert [str(a.shape) for a in again.vjp().in_avals] == ["(b, 4)", "(b, 3)"]
    for n in (2, 5):
        x = np.linspace(-1, 1, 4 * n, dtype=np.float32).reshape(n, 4)
        want = np.asarray(yax.grad(lambda v: f(v).sum())(x))
        for e in (exp, again):
            np.testing.assert_allclose(np.asarray(yax.grad(lambda v, e=e: e.call(v).sum())(x)),
                                       want, rtol=1e-5)
        np.testing.assert_allclose(
            np.asarray(yax.jit(yax.grad(lambda v: again.call(v).sum()))(x)), want, rtol=1e-5)
        second = yax.grad(lambda v: yax.grad(lambda u: again.call(u).sum())(v).sum())(x)
        want2 = yax.grad(lambda v: yax.grad(lambda u: f(u).sum())(v).sum())(x)
        np.testing.assert_allclose(np.asarray(second), np.asarray(want2), rtol=1e-4, atol=1e-6)
    once = yexport.deserialize(exp.serialize(vjp_order=1))
    x = np.ones((2, 4), np.float32)
    with pytest.raises(errors.ExportError, match="vjp_order"):
        yax.grad(lambda v: yax.grad(lambda u: once.call(u).sum())(v).sum())(x)


def test_vmap_of_a_symbolic_export():
    _, exp = _ours("mul_sum")
    xs = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_allclose(np.asarray(yax.vmap(exp.call)(xs)), (xs * _V).sum(-1))


def test_call_errors_are_checked_against_the_symbolic_avals():
    b, = yexport.symbolic_shape("b")
    exp = yexport.export(yax.jit(lambda x, y: (x[:, :1] * y.sum(), x.sum(0))))(
        yax.ShapeDtypeStruct((b, 4), np.float32), yax.ShapeDtypeStruct((2 * b,), np.float32))
    x = np.ones((3, 4), np.float32)
    outs = exp.call(x, np.ones(6, np.float32))
    assert outs[0].shape == (3, 1)
    with pytest.raises(errors.ExportError, match="inconsistent binding.*'2\\*b' should be 6"):
        exp.call(x, np.ones(5, np.float32))
    with pytest.raises(errors.ExportError, match="inconsistent binding"):
        yax.jit(exp.call)(x, np.ones(8, np.float32))
    with pytest.raises(errors.ExportError, match="f32\\[b,4\\]"):
        exp.call(np.ones((3, 5), np.float32), np.ones(6, np.float32))
    with pytest.raises(errors.ExportError, match="dtypes"):
        exp.call(x.astype(np.int32), np.ones(6, np.float32))
    with pytest.raises(errors.ExportError, match="2\\*b"):  # 2*b cannot be odd
        yexport.export(yax.jit(lambda y: y))(
            yax.ShapeDtypeStruct((2 * b,), np.float32)).call(np.ones(5, np.float32))


def test_unsupported_primitive_is_named():
    b, = yexport.symbolic_shape("b")
    with pytest.raises(errors.ExportError, match="'reduce_window_sum'.*f32\\[b,4\\]"):
        yexport.export(yax.jit(lambda x: yax.lax.reduce_window(x, 0.0, yax.lax.add, (1, 2),
                                                               (1, 1), "VALID")))(
            yax.ShapeDtypeStruct((b, 4), np.float32))
    with pytest.raises(errors.ExportError, match="equality constraints"):
        yexport.symbolic_shape("a, b", constraints=("a == 2*b",))
    with pytest.raises(errors.ExportError, match="expected 'e1 >= e2'"):
        yexport.symbolic_shape("a, b", constraints=("a + b",))


def test_constraints_as_jax():
    cons = ("a >= b", "b >= 2")
    a, b = yexport.symbolic_shape("a, b", constraints=cons)
    ja, jb = jax.export.symbolic_shape("a, b", constraints=cons)
    decided = [lambda a, b: a >= b, lambda a, b: a - b >= 0, lambda a, b: a + 1 > b,
               lambda a, b: b >= 2, lambda a, b: b > 1, lambda a, b: a >= 2, lambda a, b: b < 2,
               lambda a, b: a + b >= 4]
    for e in decided:
        assert e(a, b) == e(ja, jb)
    for e in (lambda a, b: a >= b + 1, lambda a, b: b >= 3):  # still undecidable in both
        with pytest.raises(symbolic.InconclusiveDimensionOperation):
            e(a, b)
        with pytest.raises(Exception, match="inconclusive"):
            e(ja, jb)
    free_a, free_b = yexport.symbolic_shape("a, b")
    with pytest.raises(symbolic.InconclusiveDimensionOperation):
        free_a >= free_b  # noqa: B015  (without the constraint it cannot be decided)
    with pytest.raises(errors.ExportError, match="mixing of symbolic scopes"):
        a + yexport.symbolic_shape("c", constraints=("c >= 2",))[0]

    def prog(m):
        return lambda x, y: x[:y.shape[0]] * y  # needs a >= b to type-check the slice
    ours = yexport.export(yax.jit(prog(jnp)))(yax.ShapeDtypeStruct((a,), np.float32),
                                              yax.ShapeDtypeStruct((b,), np.float32))
    theirs = jax.export.export(jax.jit(prog(jjnp)))(jax.ShapeDtypeStruct((ja,), np.float32),
                                                    jax.ShapeDtypeStruct((jb,), np.float32))
    assert [str(o.shape) for o in ours.out_avals] == [str(o.shape) for o in theirs.out_avals]
    again = yexport.deserialize(ours.serialize())
    x, y = np.arange(5, dtype=np.float32), np.arange(3, dtype=np.float32) + 1
    for e in (ours, again):
        np.testing.assert_allclose(np.asarray(e.call(x, y)), np.asarray(theirs.call(x, y)))
        with pytest.raises(errors.ExportError, match="violates the constraint 'a >= b'"):
            e.call(y, x)
        with pytest.raises(errors.ExportError, match="violates the constraint 'b >= 2'"):
            e.call(x, y[:1])
    with pytest.raises(ValueError, match="constraint"):  # jax refuses the same calls
        theirs.call(y, x)


def test_corrupt_symbolic_blob_is_a_clear_error():
    _, exp = _ours("concat_self")
    blob = exp.serialize()
    bad = bytearray(blob)
    bad[-10] ^= 0xFF
    with pytest.raises(errors.ExportError, match="checksum"):
        yexport.deserialize(bad)
    with pytest.raises(errors.ExportError):
        yexport.deserialize(blob[: len(blob) - 5])
    text = bytes(blob).replace(b'"2*b"', b'"2*b+"')
    with pytest.raises(errors.ExportError, match="cannot parse|corrupt"):
        yexport.deserialize(text)


def test_round_trip_in_a_fresh_process(tmp_path):
    b, = yexport.symbolic_shape("b")
    exp = yexport.export(yax.jit(lambda x: (jnp.concatenate([x, x]) @ W, x.sum())))(
        yax.ShapeDtypeStruct((b, 4), np.float32))
    path = tmp_path / "poly.bin"
    path.write_bytes(bytes(exp.serialize(vjp_order=1)))
    script = f"""
import numpy as np, yax, yax.numpy as jnp
from yax import export
e = export.deserialize(open({str(path)!r}, "rb").read())
print([a.str_short() for a in e.out_avals])
for n in (1, 4):
    x = np.arange(4 * n, dtype=np.float32).reshape(n, 4)
    y, s = e.call(x)
    print(y.shape, float(np.asarray(s)), float(np.asarray(y).sum()))
g = yax.grad(lambda v: e.call(v)[1])(np.ones((3, 4), np.float32))
print(np.asarray(g).tolist() == np.ones((3, 4)).tolist())
"""
    root = pathlib.Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, timeout=300, cwd=root)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0] == "['f32[2*b,3]', 'f32[]']"
    for line, n in zip(lines[1:3], (1, 4), strict=True):
        x = np.arange(4 * n, dtype=np.float32).reshape(n, 4)
        y = np.concatenate([x, x]) @ W
        assert line.startswith(f"({2 * n}, 3) {float(x.sum())}")
        np.testing.assert_allclose(float(line.split()[-1]), float(y.sum()), rtol=1e-5)
    assert lines[3] == "True"
