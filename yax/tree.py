"""yax.tree: the pytree functions under short names, mirroring jax.tree.

    yax.tree.map(lambda x: x * 2, {"a": x, "b": (y, z)})
    leaves, treedef = yax.tree.flatten(tree)

Each function is the yax.tree_util one (`map` is `tree_map`, ...), so the two stay in step.
"""

from __future__ import annotations

from yax import tree_util as _tu
from yax._pytree.extras import static  # noqa: F401

__all__ = ["all", "broadcast", "reduce_associative", "static", "flatten", "flatten_with_path",
           "leaves", "leaves_with_path", "map", "map_with_path", "reduce", "structure",
           "transpose", "unflatten"]

all = _tu.tree_all  # noqa: A001  (jax.tree's names shadow builtins on purpose)
broadcast = _tu.tree_broadcast
reduce_associative = _tu.tree_reduce_associative
flatten = _tu.tree_flatten
flatten_with_path = _tu.tree_flatten_with_path
leaves = _tu.tree_leaves
leaves_with_path = _tu.tree_leaves_with_path
map = _tu.tree_map  # noqa: A001
map_with_path = _tu.tree_map_with_path
reduce = _tu.tree_reduce
structure = _tu.tree_structure
transpose = _tu.tree_transpose
unflatten = _tu.tree_unflatten
