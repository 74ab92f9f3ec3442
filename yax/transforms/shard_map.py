"""`yax.shard_map`: write the per-device program; collectives over mesh axes communicate.

    @functools.partial(yax.shard_map, mesh=mesh, in_specs=P("data"), out_specs=P())
    def total(block):
        return lax.psum(block.sum(), "data")
"""

from __future__ import annotations

import functools

from yax import errors, tree_util
from yax.core.avals import aval_of_value
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.primitives import shard_map as sm
from yax.runtime.mesh import current_mesh
from yax.runtime.named_sharding import NamedSharding, ShardingError
from yax.runtime.partition_spec import PartitionSpec
from yax.runtime.values import canonical_leaf

# collectives after which a value is the same on every device along the named axis
_REDUCING = {"psum", "pmax", "pmin", "all_gather"}
# collectives after which it differs per device along the named axis
_VARYING = {"axis_index", "ppermute", "psum_scatter", "all_to_all"}


def shard_map(f=None, *, mesh=None, in_specs=None, out_specs=None, check_vma: bool = True,
              check_rep: bool | None = None, axis_names=None):
    """Run `f` once per device of `mesh` on that device's blocks of the arguments.

    Args:
      f: the per-device function. Collectives (`lax.psum`, `all_gather`, `ppermute`, ...) over
        mesh axis names communicate between devices.
      mesh: a `yax.sharding.Mesh` (default: the current `with mesh:` one).
      in_specs: a PartitionSpec per argument (a pytree prefix of the arguments): dimension i of
        an argument is split over the mesh axes `spec[i]` names; the block `f` sees is divided
        accordingly. Axes the spec does not name: every device along them gets the same block.
      out_specs: a pytree prefix of the outputs: how the blocks `f` returns form each global
        output. Not naming a mesh axis claims the block is the same on every device along it.
      check_vma: check that claim (default True): an output that varies along a mesh axis its
        out spec omits raises an error (use psum/all_gather, or check_vma=False).
      check_rep: the older name of check_vma.
      axis_names: accepted for JAX compatibility; every mesh axis is manual here.

    Returns:
      A function of global arrays returning global arrays.

    Example:
      >>> mesh = yax.make_mesh((8,), ("i",))
      >>> f = yax.shard_map(lambda b: b / lax.psum(b.sum(), "i"), mesh=mesh,
      ...                   in_specs=P("i"), out_specs=P("i"))
      >>> f(jnp.arange(16.)).sum()   # 1.0
    """
    if check_rep is not None:
        check_vma = check_rep
    if f is None:
        return functools.partial(shard_map, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                                 check_vma=check_vma, axis_names=axis_names)
    if in_specs is None or out_specs is None:
        raise errors.YaxError("shard_map needs in_specs= and out_specs= (PartitionSpecs, or "
                              "pytree prefixes of the arguments/outputs made of them)")

    @functools.wraps(f)
    def wrapped(*args):
        the_mesh = mesh if mesh is not None else current_mesh()
        if the_mesh is None:
            raise errors.YaxError("shard_map needs mesh= (or a current mesh: `with mesh:`)")
        return _apply(f, the_mesh, in_specs, out_specs, check_vma, args)
    return wrapped


def _is_spec(x) -> bool:
    return x is None or isinstance(x, PartitionSpec)


def _broadcast_specs(specs, tree, what: str) -> list:
    """One PartitionSpec per leaf of `tree` from a pytree prefix `specs`."""
    if _is_spec(specs):
        return [specs or PartitionSpec()] * len(tree_util.tree_leaves(tree))
    leaves, prefix = tree_util.tree_flatten(specs, is_leaf=_is_spec)
    try:
        subtrees = prefix.flatten_up_to(tree)
    except (ValueError, TypeError) as e:
        raise errors.YaxError(f"shard_map {what} {specs!r} does not match the structure "
                              f"{tree_util.tree_structure(tree)}: {e}") from None
    out = []
    for spec, sub in zip(leaves, subtrees):
        out.extend([spec or PartitionSpec()] * len(tree_util.tree_leaves(sub)))
    return out


def _paths(tree, root: str) -> list[str]:
    return [f"{root}{tree_util.keystr(p)}" for p, _ in tree_util.tree_flatten_with_path(tree)[0]]


def _apply(f, mesh, in_specs, out_specs, check_vma, args):
    name = getattr(f, "__name__", "shard_map")
    args = tree_util.tree_map(canonical_leaf, args)
    leaves, in_tree = tree_util.tree_flatten(args)
    if isinstance(in_specs, tuple) and not isinstance(in_specs, PartitionSpec):
        if len(in_specs) != len(args):
            raise errors.YaxError(f"shard_map in_specs has {len(in_specs)} entries but the "
                                  f"function got {len(args)} arguments; give one per argument")
    specs = _broadcast_specs(in_specs, args, "in_specs")
    paths = _paths(args, "args")
    avals = [aval_of_value(x) for x in leaves]
    local = []
    for aval, spec, path in zip(avals, specs, paths):
        sharding = NamedSharding(mesh, spec)
        sharding.check_rank(aval.ndim, what=f"{path} (shape {aval.shape})")
        sharding.check_shape(aval.shape, what=path)
        local.append(aval.update(shape=sm.local_shape(mesh, spec, aval.shape)))
    out_box = []

    def flat_body(*xs):
        out = f(*tree_util.tree_unflatten(in_tree, list(xs)))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_box.append((out, out_tree))
        return [canonical_leaf(o) for o in out_leaves]

    body, consts = sm.trace_body(flat_body, local, mesh, name)
    out, out_tree = out_box[0]
    o_specs = _broadcast_specs(out_specs, out, "out_specs")
    o_paths = _paths(out, "output")
    for aval, spec, path in zip(body.out_avals, o_specs, o_paths):
        NamedSharding(mesh, spec).check_rank(aval.ndim, what=f"{path} (block {aval.shape})")
    if check_vma:
        _check_vma(body, mesh, [PartitionSpec()] * len(consts) + specs, o_specs, o_paths)
    outs = sm.bind_shard_map(leaves, jaxpr=body, consts=consts, mesh=mesh, in_specs=specs,
                             out_specs=o_specs, check_vma=check_vma, name=name)
    return tree_util.tree_unflatten(out_tree, outs)


def _check_vma(body, mesh, in_specs, out_specs, out_paths) -> None:
    """Which mesh axes each value varies over, forwards through the body (the one jaxpr walk,
    `eval_jaxpr`, with sets of axis names for values); every output must be the same along the
    mesh axes its out spec omits."""
    everything = frozenset(mesh.axis_names)
    nothing = frozenset()

    def axes(x):  # literals (and constants) vary over no axis
        return x if isinstance(x, frozenset) else nothing

    def on_eqn(eqn, ins):
        ins = nothing.union(*map(axes, ins))
        prim = eqn.primitive.name
        axis = eqn.params.get("axis_name")
        if prim in _REDUCING:
            out = ins - {axis}
        elif prim in _VARYING:
            out = ins | {axis}
        elif prim == "shard_map":
            out = everything
        else:
            out = ins
        return [out] * len(eqn.outvars)
    jaxpr = body.jaxpr
    outs = eval_jaxpr(jaxpr, [nothing] * len(jaxpr.constvars),
                      [frozenset(spec.axis_names()) for spec in in_specs], on_eqn=on_eqn)
    for varies, spec, path in zip(outs, out_specs, out_paths):
        claimed = set(spec.axis_names())
        loose = sorted(axes(varies) - claimed, key=mesh.axis_names.index)
        if loose:
            raise ShardingError(
                f"shard_map: {path} varies over mesh axis {loose[0]!r}, but out_specs {spec} "
                f"claims it is the same on every device along {loose[0]!r}. Reduce it first "
                f"(lax.psum / lax.pmean / lax.all_gather over {loose[0]!r}), name the axis in "
                f"the out spec (e.g. P({loose[0]!r})) to keep the blocks, or pass "
                f"check_vma=False if you know the blocks are equal.")
