"""tree_util's smaller helpers (flatten_one_level, is_tree_node, tree_broadcast,
tree_reduce_associative, default_registry, tree.static), compared with jax's."""

from __future__ import annotations

import collections
import dataclasses

import jax
import numpy as np
import pytest

import yax
from yax import tree_util as ytu

Point = collections.namedtuple("Point", "x y")
TREES = [{"a": [1, 2], "b": {"c": 3}}, (1, (2, 3)), [4, None], Point(1, [2]),
         collections.OrderedDict(z=1, a=2)]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_flatten_one_level_as_jax(tree):
    ours, theirs = ytu.flatten_one_level(tree), jax.tree_util.flatten_one_level(tree)
    assert list(ours[0]) == list(theirs[0]) and ours[1] == theirs[1]
    ours_k, theirs_k = (ytu.flatten_one_level_with_keys(tree),
                        jax.tree_util.flatten_one_level_with_keys(tree))
    if not isinstance(tree, Point):  # jax 0.10.2 names both namedtuple fields `.x`
        assert [str(k) for k, _ in ours_k[0]] == [str(k) for k, _ in theirs_k[0]]
    else:
        assert [str(k) for k, _ in ours_k[0]] == [".x", ".y"]
    assert ours_k[1] == theirs_k[1]
    assert [v for _, v in ours_k[0]] == [v for _, v in theirs_k[0]]


def test_leaf_and_node_queries():
    with pytest.raises(ValueError, match="can't tree-flatten"):
        ytu.flatten_one_level(1.0)
    for typ in (tuple, list, dict, type(None), Point, float, np.ndarray, yax.Array):
        assert ytu.is_tree_node(typ) == jax.tree_util.is_tree_node(typ), typ
    assert ytu.default_registry.flatten_one_level(3) is None
    assert ytu.default_registry.is_node(dict)


def test_tree_broadcast():
    prefix, full = (1, {"a": 2}), ((7, 8), {"a": [9, 9, 9]})
    assert yax.tree.broadcast(prefix, full) == jax.tree.broadcast(prefix, full)
    for bad_prefix, full in [(None, {"a": 1}), ((1, 2, 3), (4, 5))]:
        with pytest.raises(ValueError):
            jax.tree_util.tree_broadcast(bad_prefix, full)
        with pytest.raises(ValueError, match="tree prefix"):
            ytu.tree_broadcast(bad_prefix, full)


def test_reduce_associative_is_balanced():
    calls = []

    def op(a, b):
        calls.append((a, b))
        return f"({a}+{b})"

    tree = {"a": "w", "b": ["x", "y", "z"]}
    assert yax.tree.reduce_associative(op, tree) == jax.tree.reduce_associative(op, tree)
    assert yax.tree.reduce_associative(op, tree) == "((w+x)+(y+z))"
    assert ytu.tree_reduce_associative(op, [], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        ytu.tree_reduce_associative(op, [])


def test_static_field_is_part_of_the_treedef():
    @ytu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: object
        op: str = yax.tree.static(default="add")

    leaves, treedef = ytu.tree_flatten(Op(x=np.ones(2)))
    assert len(leaves) == 1 and "add" in repr(treedef)
    assert ytu.tree_unflatten(treedef, [5]).op == "add"
    f = dataclasses.fields(Op)[1]
    assert f.metadata["static"] is True


def test_registry_registers_nodes():
    class Box:
        def __init__(self, v):
            self.v = v

    ytu.default_registry.register_node(Box, lambda b: ((b.v,), None), lambda _, c: Box(*c))
    assert ytu.tree_leaves([Box(3), Box(4)]) == [3, 4]
    assert ytu.is_tree_node(Box)
