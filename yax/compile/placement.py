"""Placement of a program on devices: resolving in/out shardings, finding the program's devices
and mesh, the Shardy annotations of its module, and placing arguments where the compiled SPMD
program expects them. Used by jit, eager primitives on sharded inputs and eager `pjit`.

Choices (where JAX differs between versions):
  - a committed multi-device argument whose sharding differs from `in_shardings` is resharded
    (copied to the expected placement) rather than rejected: the result is the same and the
    user keeps one code path; the copy is the price, as in an explicit `device_put`.
  - single-device arguments are copied to the sharding the program expects.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from yax import tree_util
from yax.core.ir import subjaxprs
from yax.interpreters import sharding_lowering as sl
from yax.runtime import guards, sharding_bridge, transfer
from yax.runtime.mesh import AxisType, Mesh
from yax.runtime.mesh import current_mesh as _current_mesh
from yax.runtime.named_sharding import NamedSharding, Sharding, ShardingError, SingleDeviceSharding
from yax.runtime.partition_spec import PartitionSpec


def _is_sharding_leaf(x) -> bool:
    return x is None or isinstance(x, (Sharding, PartitionSpec))


def _as_sharding(s, what: str):
    if s is None or isinstance(s, Sharding):
        return s
    if isinstance(s, PartitionSpec):
        mesh = _current_mesh()
        if mesh is None:
            raise ShardingError(f"{what}: a bare PartitionSpec {s} needs a current mesh; use "
                                f"`with mesh:` or pass NamedSharding(mesh, spec)")
        return NamedSharding(mesh, s)
    raise TypeError(f"{what}: expected a NamedSharding, SingleDeviceSharding, PartitionSpec or "
                    f"None, got {s!r}")


def broadcast_prefix(prefix, tree, what: str) -> list:
    """One sharding per leaf of `tree`, `prefix` being a pytree prefix of it."""
    if _is_sharding_leaf(prefix):
        return [_as_sharding(prefix, what)] * len(tree_util.tree_leaves(tree))
    if isinstance(prefix, (list, tuple)) and isinstance(tree, (list, tuple)):
        if len(prefix) != len(tree):
            raise ValueError(f"{what} has {len(prefix)} entries but the value it describes has "
                             f"{len(tree)}; give one entry per argument (or one for all)")
        return [s for p, t in zip(prefix, tree) for s in broadcast_prefix(p, t, what)]
    if isinstance(prefix, dict) and isinstance(tree, dict):
        return [s for k in tree_util._sorted_keys(tree)
                for s in broadcast_prefix(prefix[k], tree[k], what)]
    raise ValueError(f"{what} {prefix!r} is not a pytree prefix of the value it describes")


def eqn_meshes(jaxpr, out: list) -> list:
    """Meshes named by equation params `mesh`, in sub-jaxprs too."""
    for eqn in jaxpr.eqns:
        for sub in subjaxprs(eqn):
            eqn_meshes(getattr(sub, "jaxpr", sub), out)
        mesh = eqn.params.get("mesh")
        if isinstance(mesh, Mesh):
            out.append(mesh)
    return out


class Placement:
    """Where a sharded program runs: its mesh and devices, per-parameter and per-result shardings
    (None: the compiler decides)."""

    def __init__(self, mesh, in_shardings, out_shardings, first_argument=None):
        self.mesh = mesh
        self.devices = list(mesh.devices.flat)
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        # (sharding, ndim) of a committed multi-device first argument: results the compiler
        # places as it keep that sharding object, as JAX keeps it (spec length included)
        self.first_argument = first_argument


def resolve(paths, avals, in_sh, arg_sh, out_sh, out_avals, jaxpr) -> Placement | None:
    """The program's Placement, or None when it runs on one device.

    `in_sh`/`arg_sh`: per argument leaf, the requested sharding and the committed sharding of a
    multi-device argument. Raises ShardingError for mixed device sets or non-dividing specs."""
    out_sh = [s if s is not None else _typed_placement(a, in_sh, arg_sh)
              for a, s in zip(out_avals, out_sh, strict=True)]
    named = [(f"argument {p}", a, s) for p, a, s in zip(paths, avals, in_sh) if s is not None]
    named += [(f"argument {p}", a, s) for p, a, s, r in zip(paths, avals, arg_sh, in_sh)
              if s is not None and r is None]
    named += [(f"output {i}", a, s) for i, (a, s) in enumerate(zip(out_avals, out_sh))
              if s is not None]
    meshes = [s.mesh for _, _, s in named if isinstance(s, NamedSharding)]
    meshes += eqn_meshes(jaxpr, [])
    multi = [s for _, _, s in named if len(s.device_set) > 1]
    if not meshes and not multi:
        return None
    if meshes:
        mesh = meshes[0]
    else:  # only opaque compiler-chosen shardings: a 1-D mesh over their devices
        mesh = Mesh(np.array(multi[0]._device_order(), dtype=object), ("_devices",))
    devices = set(mesh.devices.flat)
    for what, aval, s in named:
        if s.device_set != devices:
            raise ShardingError(
                f"{what} of shape {tuple(aval.shape)} has sharding {s!r}, on devices "
                f"{sorted(d.id for d in s.device_set)}, but the program runs on {mesh!r} "
                f"(devices {sorted(d.id for d in devices)}); every sharding of one jitted "
                f"program must use the same devices (device_put the argument onto the mesh)")
        if isinstance(s, NamedSharding):
            s.check_shape(aval.shape, what)
    for m in meshes:
        if set(m.devices.flat) != devices:
            raise ShardingError(f"the program uses {m!r} (devices {m.device_ids.tolist()}) and "
                                f"{mesh!r} (devices {mesh.device_ids.tolist()}), which hold "
                                f"different devices; one jitted program runs on one set of "
                                f"devices")
    ins = [r if r is not None else a for r, a in zip(in_sh, arg_sh)]
    ins = [None if isinstance(s, SingleDeviceSharding) else s for s in ins]
    first = None
    if avals and arg_sh[0] is not None and isinstance(ins[0], NamedSharding):
        first = (ins[0], len(avals[0].shape))
    return Placement(mesh, ins, list(out_sh), first)


def _typed_placement(aval, in_sh, arg_sh):
    """A result whose type names a sharding over Explicit mesh axes is placed so: over the
    concrete mesh of the arguments with those axis names and sizes (else the first argument
    mesh's devices laid out as the type's mesh)."""
    typed = getattr(aval, "sharding", None)
    if typed is None:
        return _replicated_on_explicit(aval, in_sh, arg_sh)
    abstract = typed.mesh
    meshes = [s.mesh for s in (*in_sh, *arg_sh) if isinstance(s, NamedSharding)]
    for m in meshes:
        if (m.axis_names, m.axis_sizes) == (abstract.axis_names, abstract.axis_sizes):
            return NamedSharding(m, typed.spec)
    current = _current_mesh()
    if current is not None and (current.axis_names, current.axis_sizes) == (
            abstract.axis_names, abstract.axis_sizes):
        return NamedSharding(current, typed.spec)
    devices = meshes[0].devices if meshes else (current.devices if current is not None
                                                else None)
    if devices is None or devices.size != abstract.size:
        return None
    mesh = Mesh(np.asarray(devices).reshape(abstract.axis_sizes), abstract.axis_names,
                axis_types=abstract.axis_types)
    return NamedSharding(mesh, typed.spec)


def _replicated_on_explicit(aval, in_sh, arg_sh):
    """An untyped result of a program over a mesh whose axes are all Explicit is replicated
    (its type says so), as jax places it, rather than where the compiler would leave it."""
    shape = getattr(aval, "shape", None)
    if shape is None:
        return None
    for s in (*in_sh, *arg_sh):
        if isinstance(s, NamedSharding):
            types = s.mesh.axis_types
            if types and all(t is AxisType.Explicit for t in types):
                return NamedSharding(s.mesh, PartitionSpec(*(None,) * len(shape)))
            return None
    return None


def annotate(mctx, placement: Placement, n_consts: int, in_avals, out_avals) -> None:
    """`sdy.sharding` on main's parameters (consts replicated) and requested results."""
    main = next(op for op in mctx.module.body.operations
                if getattr(op, "sym_name", None) is not None and op.sym_name.value == "main")
    replicated = NamedSharding(placement.mesh, PartitionSpec())
    shardings = [replicated] * n_consts + list(placement.in_shardings)
    with mctx.context, ir.Location.unknown():
        args = {i: sl.named_sharding_attr(mctx, s, len(a.shape))
                for i, (s, a) in enumerate(zip(shardings, in_avals))
                if isinstance(s, NamedSharding)}
        sl.set_value_shardings(main, "arg_attrs", args, len(in_avals))
        res = {i: sl.named_sharding_attr(mctx, s, len(a.shape))
               for i, (s, a) in enumerate(zip(placement.out_shardings, out_avals))
               if isinstance(s, NamedSharding)}
        if res:
            sl.set_value_shardings(main, "res_attrs", res, len(out_avals))


class ArgumentPlacer:
    """Turns argument buffers into the global buffers a sharded executable expects, copying
    those placed differently (memoised per jax sharding object)."""

    def __init__(self, exe_in_shardings):
        self._bridge = sharding_bridge
        self.want = list(exe_in_shardings)
        self._ok: list[dict] = [{} for _ in self.want]

    def place(self, i: int, buf, aval):
        js = buf.sharding
        ok = self._ok[i].get(js)
        if ok is None:
            have = self._bridge.from_jax(js)
            want = self.want[i]
            ok = have == want or (len(have.device_set) > 1 and have.device_set == want.device_set
                                  and _same_blocks(have, want, aval.shape))
            self._ok[i][js] = ok
        if ok:
            return buf
        guards.check("device_to_device", lambda: f"aval={aval.str_short()}, from "
                                                 f"{self._bridge.from_jax(js)} to {self.want[i]}")
        return transfer.device_put_sharded(np.asarray(buf), self.want[i])

    def place_all(self, bufs, avals) -> list:
        return [self.place(i, b, a) for i, (b, a) in enumerate(zip(bufs, avals))]


def _same_blocks(a, b, shape) -> bool:
    try:
        return a.devices_indices_map(shape) == b.devices_indices_map(shape) and \
            a._device_order() == b._device_order()
    except Exception:  # a placement that cannot describe this shape: copy
        return False
