"""experimental.multihost_utils in one process, compared with jax's (also one process here)."""

from __future__ import annotations

import jax
import jax.experimental.multihost_utils as jmu
import numpy as np
import pytest

import yax
import yax.experimental.multihost_utils as ymu
import yax.numpy as jnp

TREE = {"a": np.arange(6.0).reshape(2, 3), "b": np.float32(2.5)}


def _same(ours, theirs):
    ol, jl = yax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(ol) == len(jl)
    for o, t in zip(ol, jl):
        assert isinstance(o, np.ndarray) and o.shape == t.shape and o.dtype == t.dtype
        np.testing.assert_array_equal(o, t)


def test_broadcast_and_allgather_as_jax():
    _same(ymu.broadcast_one_to_all(TREE), jmu.broadcast_one_to_all(TREE))
    for tiled in (False, True):
        _same(ymu.process_allgather(TREE, tiled=tiled), jmu.process_allgather(TREE, tiled=tiled))
    _same(ymu.process_allgather(jnp.ones(3)), jmu.process_allgather(jax.numpy.ones(3)))


def test_assert_equal_and_barrier():
    ymu.assert_equal(TREE)
    with pytest.raises(AssertionError, match="differ"):
        ymu.assert_equal({"a": np.array([np.nan])}, "differ")  # NaN != NaN, as jax
    ymu.sync_global_devices("step")


def test_local_and_global_arrays():
    mesh = yax.make_mesh((1,), ("x",))
    x = np.arange(8.0).reshape(4, 2)
    g = ymu.host_local_array_to_global_array({"w": x}, mesh, yax.sharding.PartitionSpec("x"))
    assert isinstance(g["w"], yax.Array)
    assert g["w"].sharding.spec == yax.sharding.PartitionSpec("x")
    np.testing.assert_array_equal(g["w"], x)
    back = ymu.global_array_to_host_local_array(g, mesh, yax.sharding.PartitionSpec("x"))
    np.testing.assert_array_equal(back["w"], x)


def test_more_processes_are_refused(monkeypatch):
    from yax.runtime import backend
    monkeypatch.setattr(backend, "process_count", lambda name=None: 2)
    with pytest.raises(NotImplementedError, match="2 processes"):
        ymu.process_allgather(TREE)
