"""`yax.shard_map`: write the per-device program; collectives over mesh axes communicate.

    @functools.partial(yax.shard_map, mesh=mesh, in_specs=P("data"), out_specs=P())
    def total(block):
        return lax.psum(block.sum(), "data")
"""

from __future__ import annotations

import functools

from yax import errors, tree_util
from yax.core.avals import aval_of_value
from yax.core.trace import Tracer, is_eager
from yax.primitives import shard_map as sm
from yax.runtime.mesh import AxisType, current_mesh
from yax.runtime.named_sharding import NamedSharding, ShardingError
from yax.runtime.partition_spec import PartitionSpec
from yax.runtime.values import canonical_leaf
from yax.transforms import shard_map_eager
from yax.transforms.api import device_put
from yax.transforms.tracing import typeof


class _Infer:
    """The default of `in_specs`: read each argument's spec from its type (Explicit meshes)."""

    def __repr__(self):
        return "Infer"


Infer = _Infer()


def shard_map(f=None, *, out_specs, mesh=None, in_specs=Infer, check_vma: bool = True,
              check_rep: bool | None = None, axis_names=None):
    """Run `f` once per device of `mesh` on that device's blocks of the arguments.

    Args:
      f: the per-device function. Collectives (`lax.psum`, `all_gather`, `ppermute`, ...) over
        mesh axis names communicate between devices.
      mesh: a `yax.sharding.Mesh` (default: the current `with mesh:` / `set_mesh` one).
      in_specs: a PartitionSpec per argument (a pytree prefix of the arguments): dimension i of
        an argument is split over the mesh axes `spec[i]` names; the block `f` sees is divided
        accordingly. Axes the spec does not name: every device along them gets the same block.
        Omitted: on a mesh of Explicit axes, each argument's spec is read from its type
        (`typeof(x).sharding.spec`); given there, it must equal that spec.
      out_specs: a pytree prefix of the outputs: how the blocks `f` returns form each global
        output. Not naming a mesh axis claims the block is the same on every device along it.
        None (or P()) for an output that is the same on every device.
      check_vma: check that claim (default True): an output that varies along a mesh axis its
        out spec omits raises an error (use psum/all_gather, or check_vma=False).
      check_rep: the older name of check_vma.
      axis_names: accepted for JAX compatibility; every mesh axis is manual here.

    Returns:
      A function of global arrays returning global arrays. Called outside any transformation
      it runs eagerly, block by block (`print` in `f` shows every device's block); under jit,
      grad, vmap, ... it is staged as one `shard_map` equation.

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

    @functools.wraps(f)
    def wrapped(*args):
        the_mesh = mesh if mesh is not None else current_mesh()
        if the_mesh is None:
            raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to "
                             "enter into a mesh context")
        if in_specs is Infer and not _all_explicit(the_mesh):
            types = ", ".join(str(t) for t in the_mesh.axis_types)
            raise TypeError("shard_map in_specs argument must be a pytree of "
                            "`jax.sharding.PartitionSpec` instances, but it was `None` when "
                            f"axis_names={frozenset(the_mesh.axis_names)} are of type {types}")
        return _apply(f, the_mesh, in_specs, out_specs, check_vma, args)
    return wrapped


def _all_explicit(mesh) -> bool:
    return all(t is AxisType.Explicit for t in mesh.axis_types)


def _typed_spec(x, ndim: int) -> PartitionSpec:
    spec = tuple(typeof(x).sharding.spec)
    return PartitionSpec(*(spec + (None,) * (ndim - len(spec))))


def _padded(spec, ndim: int) -> PartitionSpec:
    spec = tuple(spec)
    return PartitionSpec(*(spec + (None,) * (ndim - len(spec))))


def _check_explicit_specs(leaves, avals, specs) -> None:
    """On an Explicit mesh an argument's type fixes its spec: in_specs must agree with it."""
    for x, aval, spec in zip(leaves, avals, specs):
        have = _typed_spec(x, aval.ndim)
        want = _padded(spec, aval.ndim)
        if have != want:
            raise ValueError(
                f"in_specs passed to shard_map: {want} does not match the specs of the input: "
                f"{have} for arg: {typeof(x)}. `in_specs` is an optional argument so you can "
                "omit specifying it and shard_map will infer the in_specs from the arguments. "
                "If you want to reshard your inputs, you can use `jax.reshard` on the arguments "
                "and then pass those args to shard_map.")


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


def _spec_keys(specs, n_leaves_per_spec) -> list[str]:
    """For each output leaf, the path of its entry in the out_specs prefix ('' for one spec)."""
    if _is_spec(specs):
        return [""] * n_leaves_per_spec[0]
    keyed = tree_util.tree_flatten_with_path(specs, is_leaf=_is_spec)[0]
    out = []
    for (path, _), n in zip(keyed, n_leaves_per_spec):
        out.extend([tree_util.keystr(path)] * n)
    return out


def _leaf_counts(specs, tree) -> list[int]:
    if _is_spec(specs):
        return [len(tree_util.tree_leaves(tree))]
    prefix = tree_util.tree_structure(specs, is_leaf=_is_spec)
    return [len(tree_util.tree_leaves(sub)) for sub in prefix.flatten_up_to(tree)]


def _in_specs(in_specs, mesh, args, leaves, avals) -> list:
    if in_specs is Infer:
        return [_typed_spec(x, a.ndim) for x, a in zip(leaves, avals)]
    if isinstance(in_specs, tuple) and not isinstance(in_specs, PartitionSpec):
        if len(in_specs) != len(args):
            raise errors.YaxError(f"shard_map in_specs has {len(in_specs)} entries but the "
                                  f"function got {len(args)} arguments; give one per argument")
    specs = _broadcast_specs(in_specs, args, "in_specs")
    if _all_explicit(mesh):
        _check_explicit_specs(leaves, avals, specs)
    return specs


def _apply(f, mesh, in_specs, out_specs, check_vma, args):
    name = getattr(f, "__name__", "shard_map")
    args = tree_util.tree_map(canonical_leaf, args)
    leaves, in_tree = tree_util.tree_flatten(args)
    avals = [aval_of_value(x) for x in leaves]
    specs = _in_specs(in_specs, mesh, args, leaves, avals)
    paths = _paths(args, "args")
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

    if is_eager() and not any(isinstance(x, Tracer) for x in leaves):
        return _apply_eager(flat_body, out_box, mesh, specs, out_specs, check_vma, leaves)
    body, consts = sm.trace_body(flat_body, local, mesh, name,
                                 in_vma=[frozenset(s.axis_names()) for s in specs],
                                 check_vma=check_vma)
    out, out_tree = out_box[0]
    o_specs = _out_specs(out_specs, out, mesh, [a.ndim for a in body.out_avals],
                         [a.shape for a in body.out_avals])
    if check_vma:
        _check_vma(body, mesh, o_specs, name, _spec_keys(out_specs, _leaf_counts(out_specs, out)))
    outs = sm.bind_shard_map(leaves, jaxpr=body, consts=consts, mesh=mesh, in_specs=specs,
                             out_specs=o_specs, check_vma=check_vma, name=name)
    return tree_util.tree_unflatten(out_tree, outs)


def _out_specs(out_specs, out, mesh, ndims, shapes) -> list:
    o_specs = _broadcast_specs(out_specs, out, "out_specs")
    for ndim, shape, spec, path in zip(ndims, shapes, o_specs, _paths(out, "output")):
        NamedSharding(mesh, spec).check_rank(ndim, what=f"{path} (block {shape})")
    return o_specs


def _apply_eager(flat_body, out_box, mesh, specs, out_specs, check_vma, leaves):
    """Run the body now, block by block (see shard_map_eager), and assemble the outputs."""
    results = shard_map_eager.run(flat_body, mesh, leaves, specs, check_vma)
    out, out_tree = out_box[0]
    o_specs = _out_specs(out_specs, out, mesh, [len(b) for _, _, b in results],
                         [b for _, _, b in results])
    if check_vma:
        # as jax's eager path: the first failing output alone, named after jax's internal
        # re-layout function
        for (_, v, _), spec in zip(results, o_specs):
            _raise_if_loose([frozenset(v)], mesh, [spec], "_rem_singleton", [""])
    outs = [device_put(shard_map_eager.from_blocks(y, v, mesh, spec, block),
                       NamedSharding(mesh, spec))
            for (y, v, block), spec in zip(results, o_specs, strict=True)]
    return tree_util.tree_unflatten(out_tree, outs)


def _check_vma(body, mesh, out_specs, fun_name, spec_keys) -> None:
    """Every output must be the same along the mesh axes its out spec omits: the body was
    traced with jax's types, so its outputs' types say which axes they vary along."""
    _raise_if_loose([a.vma for a in body.out_avals], mesh, out_specs, fun_name, spec_keys)


def _raise_if_loose(varying, mesh, out_specs, fun_name, spec_keys) -> None:
    """jax's out-spec error when an output varies along a mesh axis its spec omits."""
    msgs, seen = [], set()
    for vma, spec, key in zip(varying, out_specs, spec_keys, strict=True):
        claimed = set(spec.axis_names())
        if not vma - claimed or key in seen:
            continue
        seen.add(key)
        unmentioned = [a for a in mesh.axis_names if a not in claimed]
        if len(unmentioned) > 1:
            need = ",".join(a for a in mesh.axis_names if a in claimed)
            got = ",".join(a for a in mesh.axis_names if a in vma)
            diff = ",".join(a for a in unmentioned if a in vma)
            msgs.append(f"* out_specs{key} is {spec} which implies that the corresponding "
                        f"output value is only varying across mesh axes {{{need}}} and not "
                        f"{{{diff}}}, but it was inferred to be possibly varying over {{{got}}}")
        else:
            msgs.append(f"* out_specs{key} is {spec} which implies that the corresponding "
                        f"output value is replicated across mesh axis '{unmentioned[0]}', but "
                        f"could not infer replication over any axes")
    if not msgs:
        return
    if len(msgs) == 1:
        msgs = [msgs[0][2:]]
    raise ShardingError(
        f"shard_map applied to the function '{fun_name}' was given out_specs which require "
        f"replication which can't be statically inferred given the mesh:\n\n"
        f"The mesh given has shape {tuple(mesh.shape.values())} with corresponding axis names "
        f"{tuple(mesh.axis_names)}.\n\n" + "\n\n".join(msgs) + "\n\n"
        "Check if these output values are meant to be replicated over those mesh axes. If "
        "not, consider revising the corresponding out_specs entries. If so, consider "
        "disabling the check by passing the check_vma=False argument to `jax.shard_map`.")
