"""`pmap`: run a function on several devices at once, one slice of the mapped axis per device.

yax builds pmap from two pieces it already has rather than a separate replica-style runtime:
`vmap(f, in_axes, out_axes, axis_name=...)` gives the per-example program (collectives over
`axis_name` included) and a `jit` whose inputs and outputs are sharded along the mapped axis
over a one-axis mesh of the devices lets XLA's SPMD partitioner give each device its slice.
So `pmap(f)(x)` computes what `vmap(f)(x)` computes, placed one example per device, and every
transformation composes with it the way it composes with jit and vmap.
"""

from __future__ import annotations

import functools
import itertools

from yax import errors, tree_util
from yax.compile import cache
from yax.core.avals import aval_of_value
from yax.runtime import backend as rt_backend
from yax.runtime.mesh import Mesh
from yax.runtime.named_sharding import NamedSharding
from yax.runtime.partition_spec import PartitionSpec
from yax.runtime.values import canonical_leaf
from yax.transforms._args import check_hashable_static, normalize_argnums
from yax.transforms.api import eval_shape
from yax.transforms.jit import jit
from yax.transforms.vmap import _broadcast_prefix, _normalize_axis, _paths, vmap

_fresh_names = itertools.count()


def pmap(fun=None, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=()):
    """Map `fun` over axis `in_axes` of its arguments, one slice per device, in parallel.

    Args:
      fun: the per-example function (collectives over `axis_name` act across devices).
      axis_name: a name for the mapped axis, for `lax.psum(x, axis_name)` etc.
      in_axes / out_axes: as in `vmap` (ints, None, or pytree prefixes).
      static_broadcasted_argnums: positional arguments passed to every device as Python values
        (hashable; each new value recompiles).
      devices: the devices to use, in order (default: the first `n` local devices, where `n`
        is the mapped axis size).
      backend: the platform ("cpu", "gpu"); default: the one in use.
      axis_size: needed only when no argument is mapped.
      donate_argnums: arguments whose buffers the outputs may reuse.

    Returns:
      A function returning Arrays sharded along `out_axes` over the devices.

    The mapped axis size must not exceed the number of devices. On CPU,
    `XLA_FLAGS=--xla_force_host_platform_device_count=N` (set before yax starts) gives N devices.

    Example:
      >>> f = yax.pmap(lambda x: x / lax.psum(x, "i"), axis_name="i")
      >>> f(jnp.arange(1., 5.))   # with 4 devices: [0.1, 0.2, 0.3, 0.4]
    """
    if fun is None:
        return functools.partial(pmap, axis_name=axis_name, in_axes=in_axes, out_axes=out_axes,
                                 static_broadcasted_argnums=static_broadcasted_argnums,
                                 devices=devices, backend=backend, axis_size=axis_size,
                                 donate_argnums=donate_argnums)
    return PmapFunction(fun, axis_name, in_axes, out_axes, static_broadcasted_argnums, devices,
                        backend, axis_size, donate_argnums)


class PmapFunction:
    """The callable `pmap` returns (one jitted program per static arguments and mesh)."""

    def __init__(self, fun, axis_name, in_axes, out_axes, static_argnums, devices, backend,
                 axis_size, donate_argnums):
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._name = axis_name if axis_name is not None else f"_pmap{next(_fresh_names)}"
        self._in_axes = tuple(in_axes) if isinstance(in_axes, list) else in_axes
        self._out_axes = out_axes
        self._static = normalize_argnums(static_argnums)
        self._donate = normalize_argnums(donate_argnums)
        self._devices = list(devices) if devices is not None else None
        self._backend = backend
        self._axis_size = axis_size
        self._programs = cache.new_cache("pmap programs")

    def __call__(self, *args):
        static = {i: args[i] for i in self._static if i < len(args)}
        for i, v in static.items():
            check_hashable_static(v, f"pmap static_broadcasted_argnums argument {i}")
        dyn_pos = [i for i in range(len(args)) if i not in static]
        dyn = tuple(tree_util.tree_map(canonical_leaf, args[i]) for i in dyn_pos)
        in_axes = self._dynamic_in_axes(len(args), dyn_pos)
        size, dims = self._mapped_size(dyn, in_axes)
        mesh = self._mesh(size)
        key = (tuple(sorted(static.items(), key=lambda kv: kv[0])), mesh,
               tree_util.tree_structure(dyn), tuple(dims))
        program = self._programs.get_or_make(
            key, lambda: self._build(static, dyn_pos, dyn, in_axes, dims, mesh, len(args)))
        return program(*dyn)

    def _dynamic_in_axes(self, nargs: int, dyn_pos: list):
        axes = self._in_axes
        if isinstance(axes, tuple):
            if len(axes) != nargs:
                raise errors.YaxError(f"pmap in_axes {axes} has {len(axes)} entries but the "
                                      f"function got {nargs} positional arguments; give one "
                                      f"entry per argument (None for unmapped ones)")
            return tuple(axes[i] for i in dyn_pos)
        return axes

    def _mapped_size(self, dyn, in_axes):
        axes = _broadcast_prefix(in_axes, dyn, "in_axes")
        paths = _paths(dyn)
        avals = [aval_of_value(x) for x in tree_util.tree_leaves(dyn)]
        dims = [_normalize_axis(a, av.ndim, p, "in_axes") for a, av, p in zip(axes, avals, paths)]
        sizes = {av.shape[d] for av, d in zip(avals, dims) if d is not None}
        if self._axis_size is not None:
            sizes.add(int(self._axis_size))
        if not sizes:
            raise errors.YaxError("pmap needs at least one mapped argument (in_axes not all "
                                  "None), or axis_size=")
        if len(sizes) > 1:
            listing = ", ".join(f"{p}: {av.shape[d]}" for p, av, d in zip(paths, avals, dims)
                                if d is not None)
            raise errors.ShapeError(f"pmap got arguments with different sizes along the mapped "
                                    f"axis: {listing}; every mapped argument needs the same size")
        return sizes.pop(), dims

    def _mesh(self, size: int):
        devices = self._devices
        if devices is None:
            devices = rt_backend.local_devices(self._backend)
            if size > len(devices):
                raise errors.YaxError(
                    f"pmap: the mapped axis has size {size} but only {len(devices)} devices are "
                    f"available; map over at most {len(devices)} (reshape to (devices, "
                    f"per_device, ...) and vmap inside), or on CPU set XLA_FLAGS="
                    f"--xla_force_host_platform_device_count={size} before yax starts")
            devices = devices[:size]
        elif len(devices) != size:
            raise errors.YaxError(f"pmap got devices= with {len(devices)} devices but the mapped "
                                  f"axis has size {size}; they must be equal")
        return _mesh_of(tuple(devices), self._name, Mesh)

    def _build(self, static, dyn_pos, dyn, in_axes, dims, mesh, nargs):
        fun, name = self._fun, self._name

        def per_call(*dyn_args):
            full = list(dyn_args)
            for i, v in sorted(static.items()):
                full.insert(i, v)
            return fun(*full)

        batched = vmap(per_call, in_axes=in_axes, out_axes=self._out_axes, axis_name=name,
                       axis_size=self._axis_size)

        def sharded_along(dim):
            if dim is None:
                return NamedSharding(mesh, PartitionSpec())
            return NamedSharding(mesh, PartitionSpec(*([None] * dim + [name])))

        in_shardings = tree_util.tree_unflatten(tree_util.tree_structure(dyn),
                                                [sharded_along(d) for d in dims])
        out_shape = eval_shape(batched, *dyn)
        out_axes = _broadcast_prefix(self._out_axes, out_shape, "out_axes")
        out_leaves, out_tree = tree_util.tree_flatten(out_shape)
        out_shardings = tree_util.tree_unflatten(
            out_tree, [sharded_along(None if a is None else a % max(len(o.shape), 1))
                       for a, o in zip(out_axes, out_leaves)])
        donate = tuple(dyn_pos.index(i) for i in self._donate if i in dyn_pos)
        return jit(batched, in_shardings=in_shardings, out_shardings=out_shardings,
                   donate_argnums=donate)

    def lower(self, *args):
        """The jitted program's lowering for these arguments (see `jit(...).lower`)."""
        static = {i: args[i] for i in self._static if i < len(args)}
        dyn_pos = [i for i in range(len(args)) if i not in static]
        dyn = tuple(args[i] for i in dyn_pos)
        in_axes = self._dynamic_in_axes(len(args), dyn_pos)
        size, dims = self._mapped_size(dyn, in_axes)
        program = self._build(static, dyn_pos, dyn, in_axes, dims, self._mesh(size), len(args))
        return program.lower(*dyn)

    def __repr__(self):
        return f"<pmap of {getattr(self._fun, '__qualname__', self._fun)!r}>"


@functools.lru_cache(maxsize=64)
def _mesh_of(devices: tuple, name: str, mesh_cls):
    import numpy as np
    grid = np.empty(len(devices), dtype=object)
    grid[:] = list(devices)
    return mesh_cls(grid, (name,))
