"""Tests for yax.tree_util, using jax.tree_util as an oracle where semantics overlap."""

from __future__ import annotations

import collections
import dataclasses
import functools
import operator
import pickle

import jax.tree_util as jtu
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yax import tree_util as tu

Point = collections.namedtuple("Point", ["x", "y"])
Triple = collections.namedtuple("Triple", ["a", "b", "c"])


# --------------------------------------------------------------------------- strategies

_keys = st.text(alphabet="abcdxyz", min_size=1, max_size=3)
_leaves = st.integers(-1000, 1000) | st.text(alphabet="pq", max_size=2) | st.floats(
    allow_nan=False, allow_infinity=False, width=32)


def _extend(children: st.SearchStrategy) -> st.SearchStrategy:
    return (
        st.tuples()
        | st.lists(children, max_size=4).map(tuple)
        | st.lists(children, max_size=4)
        | st.dictionaries(_keys, children, max_size=4)
        | st.dictionaries(_keys, children, max_size=3).map(collections.OrderedDict)
        | st.builds(Point, children, children)
        | st.builds(Triple, children, children, children)
    )


trees = st.recursive(_leaves | st.none(), _extend, max_leaves=20)


def _same_as_jax(tree, is_leaf=None):
    leaves, td = tu.tree_flatten(tree, is_leaf)
    jleaves, jtd = jtu.tree_flatten(tree, is_leaf)
    assert leaves == jleaves
    assert repr(td) == repr(jtd)
    assert (td.num_leaves, td.num_nodes) == (jtd.num_leaves, jtd.num_nodes)
    return leaves, td, jtd


# --------------------------------------------------------------------------- flatten / unflatten


@settings(max_examples=300, deadline=None)
@given(trees)
def test_flatten_matches_jax_and_round_trips(tree):
    leaves, td, jtd = _same_as_jax(tree)
    assert td.unflatten(leaves) == tree
    assert tu.tree_unflatten(td, leaves) == tree
    # Rebuilding from positional markers exposes ordering and container types.
    n = td.num_leaves
    ours = td.unflatten(range(n))
    theirs = jtd.unflatten(list(range(n)))
    assert ours == theirs and str(ours) == str(theirs)
    assert tu.tree_leaves(tree) == leaves
    assert tu.tree_structure(tree) == td


@settings(max_examples=150, deadline=None)
@given(trees)
def test_children_and_treedef_is_leaf_match_jax(tree):
    _, td, jtd = _same_as_jax(tree)
    assert [repr(c) for c in td.children()] == [repr(c) for c in jtd.children()]
    assert tu.treedef_is_leaf(td) == jtu.treedef_is_leaf(jtd)


@settings(max_examples=200, deadline=None)
@given(trees, trees)
def test_treedef_equality_and_hash_match_jax(a, b):
    td_a, td_b = tu.tree_structure(a), tu.tree_structure(b)
    assert (td_a == td_b) == (jtu.tree_structure(a) == jtu.tree_structure(b))
    assert td_a == tu.tree_structure(a) and hash(td_a) == hash(tu.tree_structure(a))
    if td_a == td_b:
        assert hash(td_a) == hash(td_b)
    cache = {td_a: "a"}
    assert cache.get(tu.tree_structure(a)) == "a"


def test_basic_structures_and_repr():
    td = tu.tree_structure((1, {"b": None, "a": 2}))
    assert repr(td) == "PyTreeDef((*, {'a': *, 'b': None}))"
    assert td.num_leaves == 2 and td.num_nodes == 5
    assert tu.tree_leaves([None, (), {}]) == []
    assert repr(tu.tree_structure(None)) == "PyTreeDef(None)"
    assert repr(tu.tree_structure(3)) == "PyTreeDef(*)"
    assert repr(tu.tree_structure((1,))) == "PyTreeDef((*,))"


def test_dict_children_sorted_and_rebuilt_sorted():
    leaves, td = tu.tree_flatten({"z": 1, "a": 2, "m": 3})
    assert leaves == [2, 3, 1]
    assert list(td.unflatten([7, 8, 9])) == ["a", "m", "z"]


def test_ordered_dict_and_defaultdict():
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    leaves, td = tu.tree_flatten(od)
    assert leaves == [1, 2]
    out = td.unflatten([3, 4])
    assert type(out) is collections.OrderedDict and list(out.items()) == [("b", 3), ("a", 4)]
    dd = collections.defaultdict(list, {"y": 1, "x": 2})
    leaves, td = tu.tree_flatten(dd)
    assert leaves == [2, 1]
    assert repr(td) == repr(jtu.tree_structure(dd))
    out = td.unflatten([5, 6])
    assert type(out) is collections.defaultdict and out.default_factory is list
    assert dict(out) == {"x": 5, "y": 6}
    assert tu.tree_structure(dd) != tu.tree_structure(collections.defaultdict(set, dd))


def test_tuple_subclass_that_is_not_namedtuple_is_leaf():
    class T(tuple):
        pass

    t = T((1, 2))
    assert tu.tree_leaves([t]) == jtu.tree_leaves([t]) == [t]


def test_fast_path_results_are_fresh_and_correct():
    a, b, c = object(), object(), object()
    leaves, td = tu.tree_flatten((a, b, c))
    assert leaves == [a, b, c]
    leaves.append(1)  # mutating the returned list must not affect later calls
    assert tu.tree_flatten((a, b, c))[0] == [a, b, c]
    assert td.unflatten([1, 2, 3]) == (1, 2, 3)
    lst_leaves, lst_td = tu.tree_flatten([a, b])
    assert lst_td != tu.tree_structure((a, b))
    out = lst_td.unflatten(lst_leaves)
    assert out == [a, b] and out is not lst_leaves


def test_unflatten_wrong_leaf_count_raises():
    td = tu.tree_structure({"a": (1, 2), "b": 3})
    with pytest.raises(ValueError, match="expects 3 leaves, got 2"):
        tu.tree_unflatten(td, [1, 2])
    with pytest.raises(ValueError, match="expects 3 leaves, got 4"):
        td.unflatten(iter([1, 2, 3, 4]))
    assert td.unflatten(x for x in (1, 2, 3)) == {"a": (1, 2), "b": 3}


def test_is_leaf_matches_jax():
    tree = [(1, 2), {"a": (3, 4)}, None]
    def is_pair(x):
        return isinstance(x, tuple) and len(x) == 2
    _same_as_jax(tree, is_pair)
    assert tu.tree_leaves(tree, lambda x: x is None) == [1, 2, 3, 4, None]
    assert tu.tree_structure(tree, is_leaf=lambda x: True) == tu.tree_structure(0)


def test_treedef_pickles():
    td = tu.tree_structure({"a": [1, Point(2, 3)], "b": None})
    assert pickle.loads(pickle.dumps(td)) == td


def test_treedef_tuple_compose_and_node_data():
    inner = tu.tree_structure({"k": 0, "v": 0})
    outer = tu.tree_structure([0, 0])
    composed = outer.compose(inner)
    assert composed == tu.tree_structure([{"k": 1, "v": 2}, {"k": 3, "v": 4}])
    assert composed.num_leaves == 4
    tup = tu.treedef_tuple([inner, outer])
    assert tup == tu.tree_structure(({"k": 0, "v": 0}, [0, 0]))
    assert tu.treedef_children(tup) == [inner, outer]
    assert outer.node_data() == (list, None)
    assert tu.tree_structure(5).node_data() is None


# --------------------------------------------------------------------------- tree_map & co


@settings(max_examples=150, deadline=None)
@given(trees)
def test_tree_map_multi_tree_matches_jax(tree):
    def f(x, y):
        return (x, y)

    ours = tu.tree_map(f, tree, tree)
    theirs = jtu.tree_map(f, tree, tree)
    assert ours == theirs
    assert tu.tree_map(repr, tree) == jtu.tree_map(repr, tree)


def test_tree_map_leaf_of_first_tree_matches_subtree_of_rest():
    first = {"a": 1, "b": 2}
    second = {"a": (10, [20]), "b": None}
    ours = tu.tree_map(lambda x, y: (x, y), first, second)
    assert ours == jtu.tree_map(lambda x, y: (x, y), first, second)
    assert ours == {"a": (1, (10, [20])), "b": (2, None)}


@pytest.mark.parametrize("first, other, where", [
    ((1, 2), (1, 2, 3), "<root>"),
    ({"a": (1, 2)}, {"a": (1, 2, 3)}, r"\['a'\]"),
    ({"a": 1}, {"b": 1}, "<root>"),
    ([1, 2], (1, 2), "<root>"),
    ((1, [2, None]), (1, [2, 3]), r"\[1\]\[1\]"),
    (Point(1, 2), (1, 2), "<root>"),
])
def test_tree_map_structure_mismatch_errors(first, other, where):
    with pytest.raises(ValueError, match=f"key path {where}") as info:
        tu.tree_map(lambda x, y: x, first, other)
    msg = str(info.value)
    assert "argument 1" in msg
    assert repr(tu.tree_structure(first)) in msg
    assert repr(tu.tree_structure(other)) in msg
    with pytest.raises(ValueError):
        jtu.tree_map(lambda x, y: x, first, other)  # the oracle agrees it is an error


def test_tree_map_is_leaf_and_none():
    tree = {"a": None, "b": (1, None)}
    assert tu.tree_map(lambda x: x + 1, tree) == {"a": None, "b": (2, None)}
    out = tu.tree_map(lambda x: 0 if x is None else x, tree, is_leaf=lambda x: x is None)
    assert out == {"a": 0, "b": (1, 0)}


def test_flatten_up_to():
    td = tu.tree_structure((0, {"a": 0}))
    assert td.flatten_up_to(([1, 2], {"a": (3,)})) == [[1, 2], (3,)]


def test_reduce_all_and_all_leaves_match_jax():
    tree = {"a": [1, 2, (3,)], "b": 4}
    assert tu.tree_reduce(operator.add, tree) == jtu.tree_reduce(operator.add, tree) == 10
    assert tu.tree_reduce(operator.add, tree, 100) == 110
    assert tu.tree_reduce(operator.add, (), initializer=5) == 5
    with pytest.raises(TypeError):
        tu.tree_reduce(operator.add, ())
    assert tu.tree_all([True, (1, {"x": True})]) is True
    assert tu.tree_all([True, (0, {"x": True})]) is False
    assert tu.tree_all([None, ()]) is True
    for items in ([1, 2], [1, (2,)], [None], [], ["s", 1.5]):
        assert tu.all_leaves(items) == jtu.all_leaves(items), items
    assert tu.all_leaves([None, (1,)], is_leaf=lambda x: x is None or type(x) is tuple)


def test_tree_transpose_matches_jax():
    tree = [{"a": 1, "b": 2}, {"a": 3, "b": 4}, {"a": 5, "b": 6}]
    outer = tu.tree_structure([0, 0, 0])
    inner = tu.tree_structure({"a": 0, "b": 0})
    ours = tu.tree_transpose(outer, inner, tree)
    theirs = jtu.tree_transpose(jtu.tree_structure([0, 0, 0]),
                                jtu.tree_structure({"a": 0, "b": 0}), tree)
    assert ours == theirs == {"a": [1, 3, 5], "b": [2, 4, 6]}
    assert tu.tree_transpose(outer, None, tree) == ours
    nested = ((1, (2, 3)), (4, (5, 6)))
    inner2 = tu.tree_structure((0, (0, 0)))
    assert tu.tree_transpose(tu.tree_structure((0, 0)), inner2, nested) == (
        (1, 4), ((2, 5), (3, 6)))
    with pytest.raises(TypeError, match="structure mismatch"):
        tu.tree_transpose(outer, inner, [{"a": 1, "b": 2}, {"a": 3}, {"a": 5, "b": 6}])


# --------------------------------------------------------------------------- key paths


@settings(max_examples=150, deadline=None)
@given(trees)
def test_key_paths_match_jax(tree):
    ours, td = tu.tree_flatten_with_path(tree)
    theirs, jtd = jtu.tree_flatten_with_path(tree)
    assert [tu.keystr(p) for p, _ in ours] == [jtu.keystr(p) for p, _ in theirs]
    assert [tu.keystr(p, simple=True, separator="/") for p, _ in ours] == [
        jtu.keystr(p, simple=True, separator="/") for p, _ in theirs]
    assert [x for _, x in ours] == [x for _, x in theirs]
    assert repr(td) == repr(jtd)
    assert tu.tree_leaves_with_path(tree) == ours


def test_key_entry_strings():
    assert str(tu.SequenceKey(0)) == "[0]"
    assert str(tu.DictKey("a")) == "['a']"
    assert str(tu.DictKey(3)) == "[3]"
    assert str(tu.GetAttrKey("x")) == ".x"
    assert str(tu.FlattenedIndexKey(2)) == str(jtu.FlattenedIndexKey(2)) == "[<flat index 2>]"
    assert tu.SequenceKey(1) == tu.SequenceKey(1) and tu.DictKey("a") != tu.DictKey("b")
    assert repr(tu.GetAttrKey("x")) == repr(jtu.GetAttrKey("x"))


def test_tree_map_with_path():
    tree = {"a": [1, 2], "b": Point(3, 4)}
    out = tu.tree_map_with_path(lambda p, x, y: (tu.keystr(p), x + y), tree, tree)
    assert out == {"a": [("['a'][0]", 2), ("['a'][1]", 4)],
                   "b": Point(("['b'].x", 6), ("['b'].y", 8))}
    with pytest.raises(ValueError, match="tree_map_with_path"):
        tu.tree_map_with_path(lambda p, x, y: x, tree, {"a": [1, 2]})


# --------------------------------------------------------------------------- registration


class Box:
    """A custom node with static aux data; registered in both libraries."""

    def __init__(self, value, label):
        self.value, self.label = value, label

    def __eq__(self, other):
        return type(other) is Box and (self.value, self.label) == (other.value, other.label)

    def __repr__(self):
        return f"Box({self.value!r}, {self.label!r})"


def _box_flatten(b):
    return (b.value,), b.label


def _box_unflatten(label, children):
    return Box(children[0], label)


tu.register_pytree_node(Box, _box_flatten, _box_unflatten)
jtu.register_pytree_node(Box, _box_flatten, _box_unflatten)


@tu.register_pytree_node_class
class Pair:
    def __init__(self, left, right):
        self.left, self.right = left, right

    def tree_flatten(self):
        return (self.left, self.right), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


class Keyed:
    def __init__(self, u, v):
        self.u, self.v = u, v


def _keyed_flatten_with_keys(k):
    return ((tu.GetAttrKey("u"), k.u), (tu.GetAttrKey("v"), k.v)), None


tu.register_pytree_with_keys(Keyed, _keyed_flatten_with_keys, lambda _, ch: Keyed(*ch))


@tu.register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object
    name: str = dataclasses.field(default="p", metadata={"static": True})


jtu.register_dataclass(Params)


@dataclasses.dataclass
class Manual:
    x: object
    y: object
    tag: str


tu.register_dataclass(Manual, data_fields=["x", "y"], meta_fields=["tag"])


def test_registered_node_with_aux_matches_jax():
    tree = [Box((1, 2), "L"), Box(3, "M")]
    leaves, td, _ = _same_as_jax(tree)
    assert leaves == [1, 2, 3]
    assert td.unflatten([7, 8, 9]) == [Box((7, 8), "L"), Box(9, "M")]
    # Aux data is part of the structure: differing labels give differing cache keys.
    assert tu.tree_structure(Box(1, "L")) != tu.tree_structure(Box(1, "M"))
    assert tu.tree_structure(Box(1, "L")) == tu.tree_structure(Box(2, "L"))
    assert hash(tu.tree_structure(Box(1, "L"))) == hash(tu.tree_structure(Box(2, "L")))
    paths, _ = tu.tree_flatten_with_path(tree)
    jpaths, _ = jtu.tree_flatten_with_path(tree)
    assert [tu.keystr(p) for p, _ in paths] == [jtu.keystr(p) for p, _ in jpaths]
    with pytest.raises(ValueError, match="aux data 'M'"):
        tu.tree_map(lambda a, b: a, Box(1, "L"), Box(1, "M"))


def test_unhashable_aux_still_compares():
    class Odd:
        def __init__(self, v, aux):
            self.v, self.aux = v, aux

    tu.register_pytree_node(Odd, lambda o: ((o.v,), o.aux), lambda a, ch: Odd(ch[0], a))
    td1, td2 = tu.tree_structure(Odd(1, [1])), tu.tree_structure(Odd(2, [1]))
    assert td1 == td2 and hash(td1) == hash(td2)
    assert td1 != tu.tree_structure(Odd(1, [2]))


def test_duplicate_registration_raises():
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_pytree_node(Box, _box_flatten, _box_unflatten)


def test_register_pytree_node_class():
    leaves, td = tu.tree_flatten(Pair(1, (2, 3)))
    assert leaves == [1, 2, 3]
    out = td.unflatten([4, 5, 6])
    assert isinstance(out, Pair) and (out.left, out.right) == (4, (5, 6))
    assert repr(td) == "PyTreeDef(CustomNode(Pair[None], [*, (*, *)]))"
    keys = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Pair(1, 2))]
    assert keys == ["[<flat index 0>]", "[<flat index 1>]"]


def test_register_pytree_with_keys():
    paths = tu.tree_leaves_with_path({"k": Keyed(1, [2])})
    assert [(tu.keystr(p), x) for p, x in paths] == [("['k'].u", 1), ("['k'].v[0]", 2)]
    out = tu.tree_map(lambda x: x * 10, Keyed(1, 2))
    assert (out.u, out.v) == (10, 20)


def test_register_dataclass_decorator_matches_jax():
    p = Params(w=[1, 2], b=3, name="dense")
    leaves, td, _ = _same_as_jax(p)
    assert leaves == [1, 2, 3]
    assert td.unflatten([4, 5, 6]) == Params([4, 5], 6, "dense")
    assert tu.tree_structure(Params(1, 2, "a")) != tu.tree_structure(Params(1, 2, "b"))
    paths = [tu.keystr(k) for k, _ in tu.tree_leaves_with_path(p)]
    assert paths == [jtu.keystr(k) for k, _ in jtu.tree_leaves_with_path(p)]
    assert paths == [".w[0]", ".w[1]", ".b"]


def test_register_dataclass_explicit_fields():
    m = Manual(x=1, y=(2, 3), tag="t")
    leaves, td = tu.tree_flatten(m)
    assert leaves == [1, 2, 3]
    assert td.unflatten([7, 8, 9]) == Manual(7, (8, 9), "t")
    assert repr(td) == "PyTreeDef(CustomNode(Manual[('t',)], [*, (*, *)]))"
    with pytest.raises(TypeError):
        tu.register_dataclass(Box)


# --------------------------------------------------------------------------- Partial


def _scale(x, y, *, factor=1):
    return (x + y) * factor


def test_partial_is_pytree():
    p = tu.Partial(_scale, 1, factor=10)
    leaves, td = tu.tree_flatten(p)
    assert leaves == [1, 10]
    assert isinstance(p, functools.partial) and p(2) == 30
    doubled = tu.tree_map(lambda x: x * 2, p)
    assert isinstance(doubled, tu.Partial) and doubled(2) == (2 + 2) * 20
    assert td == tu.tree_structure(tu.Partial(_scale, 5, factor=6))
    assert td != tu.tree_structure(tu.Partial(_scale, 5))
    assert td != tu.tree_structure(tu.Partial(max, 5, factor=6))
    jleaves, _ = jtu.tree_flatten(jtu.Partial(_scale, 1, factor=10))
    assert leaves == jleaves


def test_partial_of_functools_partial_keeps_inner_args_static():
    inner = functools.partial(_scale, 100)
    p = tu.Partial(inner, 1)
    assert tu.tree_leaves(p) == [1]
    assert p() == 101
    assert tu.tree_leaves(tu.Partial(_scale)) == []


def test_registration_invalidates_leaf_classification():
    class Late:
        def __init__(self, v):
            self.v = v

    obj = Late(5)
    assert tu.tree_leaves((obj, 1)) == [obj, 1]  # classified (and cached) as a leaf
    tu.register_pytree_node(Late, lambda x: ((x.v,), None), lambda _, ch: Late(ch[0]))
    assert tu.tree_leaves((obj, 1)) == [5, 1]
    assert tu.tree_leaves([obj]) == [5]
