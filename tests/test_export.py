"""yax.export: export -> serialize -> deserialize -> call equals calling the function; pytrees,
dtypes, symbolic batch dims, calls under jit and grad (VJPs stored to second order), bad blobs
and wrong-shape calls. The blob format is yax's own (jax is no oracle for it); jax is the oracle
for the metadata an Exported shows (trees, avals, symbolic shapes)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import jax
import jax.export
import jax.numpy as jjnp
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import yax
import yax.numpy as jnp
from yax import errors
from yax import export as yexport
from yax.export import serialization
from yax.runtime import executable


def _round_trip(fun, *args, vjp_order=0):
    exp = yexport.export(yax.jit(fun))(*args)
    return yexport.deserialize(exp.serialize(vjp_order=vjp_order))


def _tree_allclose(got, want, **tol):
    got_leaves, got_tree = yax.tree_util.tree_flatten(got)
    want_leaves, want_tree = yax.tree_util.tree_flatten(want)
    assert got_tree == want_tree
    for g, w in zip(got_leaves, want_leaves, strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g).astype(np.complex128),
                                   np.asarray(w).astype(np.complex128), **tol)


def _mixed(x, pair):
    a, n = pair
    return {"y": jnp.sin(x) * a["scale"], "stats": (x.sum(), n * 2)}


def test_round_trip_pytrees_equal_the_function():
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    pair = ({"scale": np.float32(3.0)}, np.arange(4, dtype=np.int32))
    again = _round_trip(_mixed, x, pair)
    _tree_allclose(again.call(x, pair), _mixed(x, pair), rtol=1e-6)
    _tree_allclose(yax.jit(again.call)(x, pair), _mixed(x, pair), rtol=1e-6)


def test_metadata_matches_jax():
    structs = (jax.ShapeDtypeStruct((2, 3), np.float32),
               ({"scale": jax.ShapeDtypeStruct((), np.float32)},
                jax.ShapeDtypeStruct((4,), np.int32)))

    def jax_mixed(x, pair):
        a, n = pair
        return {"y": jjnp.sin(x) * a["scale"], "stats": (x.sum(), n * 2)}
    want = jax.export.export(jax.jit(jax_mixed))(*structs)
    ours = yexport.export(yax.jit(_mixed))(*yax.tree_util.tree_map(
        lambda s: yax.ShapeDtypeStruct(s.shape, s.dtype), structs))
    again = yexport.deserialize(ours.serialize())
    for exp in (ours, again):
        assert str(exp.in_tree) == str(want.in_tree)
        assert str(exp.out_tree) == str(want.out_tree)
        for mine, theirs in ((exp.in_avals, want.in_avals), (exp.out_avals, want.out_avals)):
            assert [(a.shape, a.dtype) for a in mine] == [(a.shape, a.dtype) for a in theirs]
        assert exp.platforms == want.platforms
        assert exp.nr_devices == want.nr_devices == 1
        assert exp.in_shardings_hlo == (None,) * 3
    assert "func.func public @main" in ours.mlir_module()
    assert again.mlir_module() == ours.mlir_module()


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int32,
                                   np.uint8, np.bool_, np.complex64])
def test_round_trip_dtypes(dtype):
    x = (np.arange(6) % 3).astype(dtype).reshape(3, 2)

    def fun(v):
        return v[::-1], v.T
    again = _round_trip(fun, x)
    assert [a.dtype for a in again.out_avals] == [np.dtype(dtype)] * 2
    _tree_allclose(again.call(x), fun(x))


def test_round_trip_float64(x64):
    x = np.linspace(0.1, 1, 5)
    again = _round_trip(lambda v: jnp.log(v) ** 2, x)
    assert again.in_avals[0].dtype == np.float64
    np.testing.assert_allclose(np.asarray(again.call(x)), np.log(x) ** 2, rtol=1e-14)


def test_captured_constants_are_embedded():
    table = np.arange(3, dtype=np.float32) + 0.5
    again = _round_trip(lambda v: v * table, np.ones(3, np.float32))
    np.testing.assert_allclose(np.asarray(again.call(np.full(3, 2.0, np.float32))), 2 * table)


def test_grad_first_order_from_the_blob():
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    again = _round_trip(lambda v: jnp.sin(v) * v, x, vjp_order=1)
    g = yax.grad(lambda v: again.call(v).sum())
    want = np.cos(x) * x + np.sin(x)
    np.testing.assert_allclose(np.asarray(g(x)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(yax.jit(g)(x)), want, rtol=1e-5)


def test_grad_second_order_against_finite_differences(x64):
    x = np.linspace(-1, 1, 3)

    def fun(v):
        return jnp.sum(jnp.exp(v) * jnp.sin(v))
    again = _round_trip(fun, x, vjp_order=2)
    grad = yax.grad(again.call)

    def second(v):  # d/dv of sum(grad)
        return yax.grad(lambda w: grad(w).sum())(v)
    eps = 1e-5
    fd = np.array([(np.sum(np.asarray(grad(x + eps * e))) - np.sum(np.asarray(grad(x - eps * e))))
                   / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(np.asarray(second(x)), fd, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(second(x)), 2 * np.exp(x) * np.cos(x), rtol=1e-10)
    with pytest.raises(errors.ExportError, match="vjp_order"):
        yax.grad(lambda v: yax.grad(lambda w: grad(w).sum())(v).sum())(x)  # third order


def test_grad_without_stored_vjp_is_a_clear_error():
    again = _round_trip(jnp.sin, np.ones(2, np.float32))
    with pytest.raises(errors.ExportError, match="vjp_order >= 1"):
        yax.grad(lambda v: again.call(v).sum())(np.ones(2, np.float32))


def test_grad_of_an_in_process_export_needs_no_serialization():
    exp = yexport.export(yax.jit(lambda v, n: jnp.tanh(v) * n))(
        np.ones(3, np.float32), np.ones(3, np.int32))
    x = np.array([0.1, 0.5, -2.0], np.float32)
    g = yax.grad(lambda v: exp.call(v, np.full(3, 2, np.int32)).sum())(x)
    np.testing.assert_allclose(np.asarray(g), 2 * (1 - np.tanh(x) ** 2), rtol=1e-5)


def test_symbolic_batch_dimension():
    b, four = yexport.symbolic_shape("b, 4")
    assert four == 4 and repr((b, four)) == repr(jax.export.symbolic_shape("b, 4"))
    w = np.arange(4, dtype=np.float32)
    exp = yexport.export(yax.jit(lambda x: (x * w).sum(axis=1)))(
        yax.ShapeDtypeStruct((b, 4), np.float32))
    jax_b, _ = jax.export.symbolic_shape("b, 4")
    want = jax.export.export(jax.jit(lambda x: (x * w).sum(axis=1)))(
        jax.ShapeDtypeStruct((jax_b, 4), np.float32))
    assert str(exp.in_avals[0].shape) == str(want.in_avals[0].shape) == "(b, 4)"
    assert str(exp.out_avals[0].shape) == str(want.out_avals[0].shape) == "(b,)"
    for n in (2, 5):
        x = np.ones((n, 4), np.float32)
        np.testing.assert_allclose(np.asarray(exp.call(x)), np.full(n, 6.0))
        np.testing.assert_allclose(np.asarray(yax.jit(exp.call)(x)), np.full(n, 6.0))
    assert "tensor<?x4xf32>" in exp.mlir_module()  # one module with a dynamic dimension
    with pytest.raises(errors.ExportError, match="shape"):
        exp.call(np.ones((3, 5), np.float32))


def test_symbolic_dimension_shared_between_arguments():
    b, = yexport.symbolic_shape("b")
    exp = yexport.export(yax.jit(lambda x, y: x + y))(
        yax.ShapeDtypeStruct((b,), np.float32), yax.ShapeDtypeStruct((b,), np.float32))
    np.testing.assert_allclose(np.asarray(exp.call(np.ones(3, np.float32),
                                                   np.ones(3, np.float32))), 2.0)
    with pytest.raises(errors.ExportError, match="inconsistent binding.*'b' should be 3"):
        exp.call(np.ones(3, np.float32), np.ones(4, np.float32))


def _window_sum(x):
    return yax.lax.reduce_window(x, 0.0, yax.lax.add, (1, 2), (1, 1), "VALID")


def test_unsupported_symbolic_forms_are_refused():
    with pytest.raises(errors.ExportError, match="equality constraints"):
        yexport.symbolic_shape("a, b", constraints=("a == b",))
    b, = yexport.symbolic_shape("b")
    with pytest.raises(errors.ExportError, match="'reduce_window_sum'"):
        yexport.export(yax.jit(_window_sum))(yax.ShapeDtypeStruct((b, 4), np.float32))


def test_wrong_shape_call_is_a_clear_error_before_xla():
    again = _round_trip(jnp.cos, np.ones((2, 3), np.float32))
    with pytest.raises(errors.ExportError, match=r"called with \(f32\[3,2\]\).*f32\[2,3\]"):
        again.call(np.ones((3, 2), np.float32))
    with pytest.raises(errors.ExportError, match="int32"):
        again.call(np.ones((2, 3), np.int32))
    with pytest.raises(errors.ExportError, match="structure"):
        again.call(np.ones((2, 3), np.float32), np.ones(1))
    with pytest.raises(errors.ExportError, match="called with"):
        yax.jit(again.call)(np.ones((3, 2), np.float32))


def _blob():
    return _round_trip(jnp.sin, np.ones(3, np.float32)).serialize()


def _corrupt_bytecode(blob):
    # a valid header and checksums around bytes that are not StableHLO
    meta, _ = serialization.unpack(blob)
    return serialization.pack(meta, [b"not bytecode at all"])


@pytest.mark.parametrize("make, message", [
    (lambda b: b[:5], "shorter than"),
    (lambda b: b[:40], "truncated"),
    (lambda b: b[:-10], "truncated"),
    (lambda b: b"GARBAGE!" + b[8:], "foreign"),
    (lambda b: b[:8] + b"\x07\x00" + b[10:], "version 7"),
    (lambda b: b[:-3] + bytes([b[-3] ^ 0xFF]) + b[-2:], "checksum"),
    (lambda b: b[:20] + b"}" + b[21:], "metadata is corrupt"),
    (lambda b: bytes(np.random.default_rng(0).integers(0, 256, 300, dtype=np.uint8)), "foreign"),
    (_corrupt_bytecode, "does not parse"),
])
def test_bad_blobs_raise_clear_errors(make, message):
    with pytest.raises(errors.ExportError, match=message):
        yexport.deserialize(make(bytes(_blob())))
    assert isinstance(errors.ExportError("x"), ValueError)


def test_blob_is_a_bytearray_and_not_a_jax_blob():
    blob = _blob()
    assert isinstance(blob, bytearray) and blob[:8] == b"YAXEXPRT"
    with pytest.raises(TypeError, match="bytes"):
        yexport.deserialize("a string")


def test_platforms():
    here = yexport.default_export_platform()
    exp = yexport.export(yax.jit(jnp.sin), platforms=[here])(np.ones(2, np.float32))
    assert exp.platforms == (here,)
    with pytest.raises(errors.ExportError, match="distinct names"):
        yexport.export(yax.jit(jnp.sin), platforms=["cpu", "quantum"])(np.ones(2, np.float32))


def test_multi_platform_export_keeps_one_module_per_platform():
    """cholesky lowers to a LAPACK custom call on CPU and to XLA ops elsewhere: a
    ("cpu", "cuda") export holds both modules; sin lowers the same everywhere: one module."""
    a = np.array([[4.0, 2.0], [2.0, 3.0]], np.float32)
    exp = yexport.export(yax.jit(jnp.linalg.cholesky), platforms=("cpu", "cuda"))(a)
    theirs = jax.export.export(jax.jit(jjnp.linalg.cholesky), platforms=("cpu", "cuda"))(a)
    assert exp.platforms == theirs.platforms == ("cpu", "cuda")
    assert exp.mlir_module("cpu") != exp.mlir_module("cuda")
    assert "lapack" in exp.mlir_module("cpu").lower()
    assert "lapack" not in exp.mlir_module("cuda").lower()
    again = yexport.deserialize(exp.serialize())
    assert again.platforms == ("cpu", "cuda")
    assert again.mlir_module("cuda") == exp.mlir_module("cuda")
    if yexport.default_export_platform() == "cpu":
        np.testing.assert_allclose(np.asarray(again.call(a)), np.linalg.cholesky(a), rtol=1e-6)
        gpu_only = yexport.deserialize(
            yexport.export(yax.jit(jnp.sin), platforms=("cuda",))(a).serialize())
        with pytest.raises(errors.ExportError, match="exported for cuda, but yax runs on cpu"):
            gpu_only.call(a)
    sin = yexport.export(yax.jit(jnp.sin), platforms=("cpu", "cuda", "rocm"))(a)
    assert len({id(sin.module_for(p)) for p in sin.platforms}) == 1
    assert len(serialization.unpack(sin.serialize())[1]) == 1  # stored once, not three times
    assert len(serialization.unpack(exp.serialize())[1]) == 2


def test_vmap_runs_the_module_per_element():
    w = np.arange(3, dtype=np.float32)
    again = _round_trip(lambda v, s: jnp.sin(v) * s + w, np.ones(3, np.float32), np.float32(1))
    xs = np.linspace(0, 1, 12, dtype=np.float32).reshape(4, 3)
    want = np.sin(xs) * 2 + w
    np.testing.assert_allclose(np.asarray(yax.vmap(again.call, (0, None))(xs, np.float32(2))),
                               want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(yax.jit(yax.vmap(again.call, (1, None)))(
        xs.T, np.float32(2))), want, rtol=1e-6)


def test_module_that_does_not_match_its_metadata_is_refused():
    meta, modules = serialization.unpack(_blob())
    other = yexport.export(yax.jit(jnp.sin))(np.ones(4, np.float32)).mlir_module_serialized
    with pytest.raises(errors.ExportError, match="metadata describes"):
        yexport.deserialize(serialization.pack(meta, [other]))


def test_symbolic_export_under_grad_and_kwargs():
    b, = yexport.symbolic_shape("b")
    exp = yexport.export(yax.jit(lambda x, *, k: jnp.sum(jnp.sin(x) * k)))(
        yax.ShapeDtypeStruct((b,), np.float32), k=yax.ShapeDtypeStruct((), np.float32))
    for n in (3, 6):
        x = np.linspace(0, 1, n, dtype=np.float32)
        g = yax.grad(lambda v: exp.call(v, k=np.float32(2)))(x)
        np.testing.assert_allclose(np.asarray(g), 2 * np.cos(x), rtol=1e-6)


def test_forward_mode_is_refused_clearly():
    exp = yexport.export(yax.jit(jnp.sin))(np.ones(2, np.float32))
    with pytest.raises(errors.NotImplementedRuleError, match="forward-mode.*use grad"):
        yax.jvp(exp.call, (np.ones(2, np.float32),), (np.ones(2, np.float32),))


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_damaged_blobs_never_crash(data):
    blob = bytearray(_BLOB)
    if data.draw(st.booleans()):
        del blob[data.draw(st.integers(0, len(blob) - 1)):]
    else:
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(blob) - 1))
            blob[i] ^= data.draw(st.integers(1, 255))
    try:
        again = yexport.deserialize(blob)
    except errors.ExportError:
        return
    # a flip that left a valid blob (in a name, say) still describes the same program
    assert again.in_avals == _EXPORTED.in_avals


_EXPORTED = _round_trip(jnp.sin, np.ones(3, np.float32))
_BLOB = bytes(_EXPORTED.serialize())


def test_repeated_calls_compile_once():
    again = _round_trip(lambda v: jnp.cos(v) * 3, np.ones(5, np.float32))
    x = np.linspace(0, 1, 5, dtype=np.float32)
    again.call(x)
    before = executable.stats["compiles"] + executable.stats["cache_loads"]
    for _ in range(3):
        again.call(x)
    assert executable.stats["compiles"] + executable.stats["cache_loads"] == before


_LOADER = """
import sys, numpy as np
from yax import export
exp = export.deserialize(open(sys.argv[1], "rb").read())
print(repr(np.asarray(exp.call(np.arange(3, dtype=np.float32))).tolist()))
"""


def test_deserialize_in_another_process(tmp_path):
    exp = yexport.export(yax.jit(lambda v: jnp.exp(v) - 1))(np.ones(3, np.float32))
    path = tmp_path / "f.yaxexport"
    path.write_bytes(exp.serialize())
    root = pathlib.Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root), YAX_PLATFORM="cpu")
    done = subprocess.run([sys.executable, "-c", _LOADER, str(path)], env=env, cwd=root,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    got = eval(done.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(got, np.expm1(np.arange(3, dtype=np.float32)), rtol=1e-6)


def _loop(x):
    def step(c, v):
        return yax.lax.cond(v > 0, lambda a: a + jnp.sin(v), lambda a: a * 0.5, c), c
    return yax.lax.scan(step, x[0], x)


def test_control_flow_and_several_exports_in_one_program():
    x = np.array([0.3, -1.0, 2.0, 0.5], np.float32)
    loop = _round_trip(_loop, x)
    other = _round_trip(lambda v: jnp.cumsum(v) * 2, x)

    @yax.jit
    def both(v):
        c, ys = loop.call(v)
        c2, _ = loop.call(v * 2)  # the same module twice: inlined once
        return c + c2, other.call(ys)
    c, ys = _loop(x)
    c2, _ = _loop(x * 2)
    got_c, got = both(x)
    np.testing.assert_allclose(np.asarray(got_c), np.asarray(c + c2), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got), np.cumsum(np.asarray(ys)) * 2, rtol=1e-6)
    assert yax.jit(both).lower(x).as_text().count("func.func private @loop_main(") == 1


def test_blobs_do_not_cross_between_yax_and_jax():
    """What holds between the two formats: neither reads the other's blob (each fails with an
    error, not a crash); the StableHLO inside both is the same dialect, and jax's payload
    parses with yax's MLIR and has the same `main` signature for a static program."""
    pytest.importorskip("flatbuffers")  # jax's serializer needs it (not a yax dependency)
    spec = jax.ShapeDtypeStruct((3,), np.float32)
    theirs = jax.export.export(jax.jit(jjnp.sin))(spec)
    with pytest.raises(errors.ExportError, match="foreign blob, e.g. one serialized by jax"):
        yexport.deserialize(theirs.serialize())
    ours = yexport.export(yax.jit(jnp.sin))(yax.ShapeDtypeStruct((3,), np.float32))
    script = ("import sys, jax.export\n"
              "try:\n    jax.export.deserialize(bytearray(sys.stdin.buffer.read()))\n"
              "except Exception as e:\n    print('refused', type(e).__name__)\n")
    out = subprocess.run([sys.executable, "-c", script], input=bytes(ours.serialize()),
                         capture_output=True, timeout=300)
    assert out.returncode == 0 and out.stdout.startswith(b"refused"), out
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo

    from yax.interpreters import mlir
    with mlir.make_context() as ctx:
        module = stablehlo.deserialize_portable_artifact(ctx, theirs.mlir_module_serialized)
        main = next(op for op in module.body.operations
                    if ir.StringAttr(op.attributes["sym_name"]).value == "main")
        assert str(main.type) == "(tensor<3xf32>) -> tensor<3xf32>"
    assert "(tensor<3xf32>) -> tensor<3xf32>" in ours.mlir_module()
