"""yax.tree against jax.tree on the same pytrees; yax.device_get / block_until_ready on pytrees."""

from __future__ import annotations

import collections
import operator

import jax
import numpy as np
import pytest

import yax
import yax.numpy as jnp

Point = collections.namedtuple("Point", ["x", "y"])


def _tree():
    return {"b": [1, (2, 3)], "a": Point(4, None), "c": {"z": 5, "y": [6]}}


def test_names_mirror_jax_tree():
    public = {n for n in dir(jax.tree) if not n.startswith("_")}
    ours = set(yax.tree.__all__)
    assert ours <= public
    missing = public - ours
    assert missing <= {"broadcast", "reduce_associative", "static"}, missing


def test_leaves_flatten_unflatten_structure():
    tree = _tree()
    assert yax.tree.leaves(tree) == jax.tree.leaves(tree)
    leaves, treedef = yax.tree.flatten(tree)
    assert leaves == jax.tree.flatten(tree)[0]
    assert yax.tree.unflatten(treedef, [v * 10 for v in leaves]) == \
        jax.tree.unflatten(jax.tree.structure(tree), [v * 10 for v in leaves])
    assert yax.tree.structure(tree) == treedef
    assert yax.tree.structure(tree).num_leaves == jax.tree.structure(tree).num_leaves
    assert yax.tree.leaves([1, None, 2]) == [1, 2]
    assert yax.tree.leaves((1, [2]), is_leaf=lambda x: isinstance(x, list)) == [1, [2]]


def test_map_reduce_all():
    tree = _tree()
    assert yax.tree.map(lambda v: v + 1, tree) == jax.tree.map(lambda v: v + 1, tree)
    assert yax.tree.map(operator.add, tree, tree) == jax.tree.map(operator.add, tree, tree)
    assert yax.tree.reduce(operator.add, tree) == jax.tree.reduce(operator.add, tree) == 21
    assert yax.tree.reduce(operator.add, tree, 100) == 121
    assert yax.tree.all({"a": True, "b": [1, 2]}) and not yax.tree.all([True, 0])
    with pytest.raises(ValueError):
        yax.tree.map(operator.add, {"a": 1}, {"b": 1})


def test_transpose():
    outer = yax.tree.structure([0, 0])
    inner = yax.tree.structure({"p": 0, "q": 0})
    tree = [{"p": 1, "q": 2}, {"p": 3, "q": 4}]
    got = yax.tree.transpose(outer, inner, tree)
    want = jax.tree.transpose(jax.tree.structure([0, 0]), jax.tree.structure({"p": 0, "q": 0}),
                              tree)
    assert got == want == {"p": [1, 3], "q": [2, 4]}


def test_paths_match_jax():
    tree = _tree()
    ours = yax.tree.leaves_with_path(tree)
    theirs = jax.tree.leaves_with_path(tree)
    assert [v for _, v in ours] == [v for _, v in theirs]
    assert [yax.tree_util.keystr(p) for p, _ in ours] == \
        [jax.tree_util.keystr(p) for p, _ in theirs]
    flat, treedef = yax.tree.flatten_with_path(tree)
    assert flat == ours and treedef == yax.tree.structure(tree)
    mapped = yax.tree.map_with_path(lambda p, v: (yax.tree_util.keystr(p), v), tree)
    want = jax.tree.map_with_path(lambda p, v: (jax.tree_util.keystr(p), v), tree)
    assert yax.tree.leaves(mapped) == jax.tree.leaves(want)


def test_tree_functions_work_on_arrays_inside_transformations():
    params = {"w": np.ones((2, 3), np.float32), "b": np.zeros(3, np.float32)}

    def loss(p):
        total = yax.tree.reduce(operator.add, yax.tree.map(lambda v: (v ** 2).sum(), p))
        return total + yax.tree.leaves(p)[0].sum()
    grads = yax.jit(yax.grad(loss))(params)
    assert yax.tree.structure(grads) == yax.tree.structure(params)
    np.testing.assert_allclose(np.asarray(grads["w"]), 2 * params["w"])
    np.testing.assert_allclose(np.asarray(grads["b"]), 2 * params["b"] + 1)


def test_device_get_and_block_until_ready_on_pytrees():
    tree = {"a": jnp.arange(3), "b": (jnp.ones((2,)), 7, None), "c": [np.float32(2.0)]}
    assert yax.block_until_ready(tree) is tree
    host = yax.device_get(tree)
    assert yax.tree.structure(host) == yax.tree.structure(tree)
    assert isinstance(host["a"], np.ndarray) and isinstance(host["b"][0], np.ndarray)
    np.testing.assert_array_equal(host["a"], np.arange(3))
    assert host["b"][1] == 7 and host["c"][0] == np.float32(2.0)
    doubled = yax.jit(lambda t: yax.tree.map(lambda v: v * 2, t))
    out = doubled({"x": jnp.ones(2), "y": [jnp.ones(1)]})
    assert yax.block_until_ready(out) is out
    np.testing.assert_array_equal(yax.device_get(out)["y"][0], [2.0])
