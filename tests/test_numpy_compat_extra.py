"""jax.numpy edge names (save/load, bit packing, print options, einsum_path, from*), yax.dtypes,
and saved_residuals' JAX-style (aval, description) pairs."""

from __future__ import annotations

import io

import numpy as np
import pytest

import yax
import yax.numpy as jnp


def test_save_load_roundtrip(tmp_path):
    x = jnp.arange(6.0).reshape(2, 3)
    path = tmp_path / "x.npy"
    jnp.save(path, x)
    back = jnp.load(path)
    assert isinstance(back, yax.Array)
    np.testing.assert_array_equal(back, np.arange(6.0).reshape(2, 3))
    buf = io.BytesIO()
    jnp.savez(buf, a=x, b=jnp.ones(2))
    buf.seek(0)
    archive = jnp.load(buf)
    np.testing.assert_array_equal(archive["b"], np.ones(2))


def test_packbits_unpackbits_against_numpy():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2, size=(3, 11)).astype(np.int32)
    for axis, order in ((None, "big"), (1, "little"), (0, "big")):
        packed = np.packbits(bits, axis=axis, bitorder=order)
        np.testing.assert_array_equal(jnp.packbits(bits, axis=axis, bitorder=order), packed)
        np.testing.assert_array_equal(
            jnp.unpackbits(packed, axis=axis, bitorder=order),
            np.unpackbits(packed, axis=axis, bitorder=order))
    np.testing.assert_array_equal(yax.jit(lambda b: jnp.packbits(b, axis=1))(bits),
                                  np.packbits(bits, axis=1))
    np.testing.assert_array_equal(jnp.unpackbits(np.uint8([200, 7]), count=-3),
                                  np.unpackbits(np.uint8([200, 7]), count=-3))


def test_constructors_printing_einsum_path():
    np.testing.assert_array_equal(jnp.frombuffer(np.arange(4, dtype=np.int32).tobytes(),
                                                 dtype=np.int32), np.arange(4))
    np.testing.assert_array_equal(jnp.fromiter(range(5), dtype=np.float32), np.arange(5.0))
    np.testing.assert_array_equal(jnp.fromstring("1 2 3", dtype=np.int32, sep=" "), [1, 2, 3])
    with pytest.raises(NotImplementedError):
        jnp.fromfile("x")
    with jnp.printoptions(precision=2):
        assert "3.14" in str(jnp.array([3.14159])) and jnp.get_printoptions()["precision"] == 2
    assert "3.14159" in jnp.array_str(jnp.array([3.14159]))
    ops = [np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))]
    assert jnp.einsum_path("ij,jk,kl->il", *ops)[0] == np.einsum_path("ij,jk,kl->il", *ops)[0]
    assert jnp.bool is jnp.bool_


def test_dtypes_module():
    import jax
    for name in ("canonicalize_dtype", "issubdtype", "result_type", "finfo", "iinfo", "float0",
                 "bfloat16", "scalar_type_of", "itemsize_bits", "TypePromotionError"):
        assert hasattr(yax.dtypes, name), name
    assert yax.dtypes.canonicalize_dtype(np.float64) == np.float32  # x64 off
    assert yax.dtypes.issubdtype(yax.dtypes.bfloat16, np.floating)
    assert yax.dtypes.result_type(1, np.float32(2)) == jax.dtypes.result_type(1, np.float32(2))
    assert yax.dtypes.finfo(np.float32).eps == jax.dtypes.finfo(np.float32).eps
    assert yax.dtypes.scalar_type_of(jnp.ones(2, jnp.int32)) is int
    assert yax.dtypes.itemsize_bits(np.int16) == 16
    assert not yax.dtypes.issubdtype(np.uint32, yax.dtypes.prng_key)


def test_saved_residuals_pairs_like_jax():
    import jax.numpy as jjnp
    from jax._src.ad_checkpoint import saved_residuals as jax_saved_residuals

    def f(x, np_=jnp):
        return np_.sum(np_.sin(x) * x)
    report = yax.saved_residuals(f, jnp.ones(3))
    want = jax_saved_residuals(lambda x: f(x, jjnp), jjnp.ones(3))
    got_pairs = [(aval.shape, aval.dtype) for aval, _ in report]
    assert sorted(got_pairs, key=str) == sorted(((a.shape, a.dtype) for a, _ in want), key=str)
    aval, desc = report[0]
    assert aval.shape == (3,) and isinstance(desc, str)
    assert any(d.startswith("from the argument") for _, d in report)
    assert "residuals" in str(report)  # the report keeps its text form
