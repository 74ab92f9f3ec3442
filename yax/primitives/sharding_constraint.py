"""`with_sharding_constraint(x, shardings)`: pin where intermediate values live inside a sharded
program (XLA's partitioner propagates shardings from such pins).

One primitive, `sharding_constraint(x; sharding, mesh)`, with a NamedSharding. It lowers to
`sdy.sharding_constraint`; it is linear (the tangent and the cotangent get the same constraint);
under vmap the spec gets None at the batch dimension; applied eagerly it reshards the Array
(a device_put to the sharding). Its equations carry param `mesh`, so `jit` runs the program on
the mesh's devices.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir.dialects import sdy

from yax import tree_util
from yax.compile.placement import broadcast_prefix
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters import sharding_lowering as sl
from yax.primitives._ad_rules import linear_jvp
from yax.runtime import sharding_bridge, transfer
from yax.runtime.array import Array
from yax.runtime.named_sharding import (
    NamedSharding,
    ShardingError,
    on_current_mesh,
    type_sharding,
)
from yax.runtime.partition_spec import PartitionSpec

__all__ = ["with_sharding_constraint"]


def _abstract_eval(x, *, sharding, mesh):
    sharding.check_shape(x.shape, "with_sharding_constraint's operand")
    # over Explicit mesh axes the constraint is the result's type (reshard / out_sharding=)
    return ShapedArray(x.shape, x.dtype, x.weak_type, type_sharding(sharding, len(x.shape)))


def _lower(ctx, x, *, sharding, mesh):
    typed = getattr(ctx.avals_in[0], "sharding", None)
    if typed is not None and typed.spec.unreduced:  # eagerly, its impl sums the summands
        raise ShardingError(f"a compiled reshard of an unreduced array "
                            f"({ctx.avals_in[0].str_short()}) is not supported by yax; reshard "
                            f"it outside jit")
    ndim = len(ctx.avals_in[0].shape)
    attr = sl.named_sharding_attr(ctx.module_ctx, sharding, ndim)
    return [sdy.ShardingConstraintOp(x, attr).result]


def _impl(x, *, sharding, mesh):  # eager: a list of outputs, as process_primitive returns
    aval = _abstract_eval(x.aval, sharding=sharding, mesh=mesh)
    if sharding_bridge.is_multi_device(x._buf) and sharding_bridge.sharding_of_array(x) == sharding:
        return [x if aval == x.aval else Array(x._buf, aval)]
    return [Array(transfer.device_put_sharded(np.asarray(x), sharding), aval)]


def _transpose(cts, x, *, sharding, mesh):
    return [sharding_constraint_p.bind(cts[0] if isinstance(cts, (list, tuple)) else cts,
                                       sharding=sharding, mesh=mesh)]


def _batch(args, dims, *, sharding, mesh):
    x, d = args[0], dims[0]
    if d is None:
        return [sharding_constraint_p.bind(x, sharding=sharding, mesh=mesh)], [None]
    entries = list(sharding.spec) + [None] * (len(x.shape) - 1 - len(sharding.spec))
    entries.insert(d, None)
    batched = NamedSharding(mesh, PartitionSpec(*entries))
    return [sharding_constraint_p.bind(x, sharding=batched, mesh=mesh)], [d]


sharding_constraint_p = Primitive("sharding_constraint", abstract_eval=_abstract_eval,
                                  lower=_lower, impl=_impl, transpose=_transpose, batch=_batch)
linear_jvp(sharding_constraint_p)


def _named(s) -> NamedSharding:
    if isinstance(s, NamedSharding):
        return s
    if isinstance(s, PartitionSpec):
        return on_current_mesh(s, "with_sharding_constraint")
    raise TypeError(f"with_sharding_constraint: expected a NamedSharding or a PartitionSpec, "
                    f"got {s!r}")


def with_sharding_constraint(x, shardings):
    """Constrain the sharding of `x` (a pytree) inside a sharded program.

    Args:
      x: an array or pytree of arrays.
      shardings: a NamedSharding or a PartitionSpec (with a current mesh), or a pytree of them
        matching (a prefix of) `x`.

    Returns:
      `x` unchanged in value; the compiler places it as asked. Outside `jit` the Arrays are
      resharded (copied onto the sharding).

    Example:
      >>> y = with_sharding_constraint(x @ w, NamedSharding(mesh, P("data")))
    """
    is_leaf = lambda s: isinstance(s, (NamedSharding, PartitionSpec))  # noqa: E731
    leaves, tree = tree_util.tree_flatten(x)
    if is_leaf(shardings):
        per_leaf = [shardings] * len(leaves)
    else:
        per_leaf = broadcast_prefix(shardings, x, "with_sharding_constraint's shardings")
    outs = []
    for leaf, s in zip(leaves, per_leaf, strict=True):
        s = _named(s)
        outs.append(sharding_constraint_p.bind(leaf, sharding=s, mesh=s.mesh))
    return tree_util.tree_unflatten(tree, outs)
