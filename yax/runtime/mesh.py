"""`Mesh`: an n-dimensional array of devices with a name per axis; `make_mesh`;
`AbstractMesh`, a mesh's axis names, sizes and types without its devices (what an array's type
names), and the current (abstract) mesh of `set_mesh` / `use_abstract_mesh`.

Partition p of a program compiled for a mesh runs on `mesh.devices.flat[p]` (row-major), which is
also the order collectives' replica groups use.
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
import math
from collections import OrderedDict

import numpy as np

from yax.runtime import backend

_current: contextvars.ContextVar = contextvars.ContextVar("yax_mesh", default=None)
# an AbstractMesh set by `use_abstract_mesh` (or auto_axes / explicit_axes) over the current
# mesh; None: the current mesh's own
_abstract: contextvars.ContextVar = contextvars.ContextVar("yax_abstract_mesh", default=None)


class AxisType(enum.Enum):
    """How a mesh axis is treated. Explicit: an array's sharding over it is part of its type
    (`typeof(x)` shows `8@X`) and every operation propagates it by its rule; Auto: the compiler
    (XLA's partitioner) chooses; Manual: inside shard_map, each device sees its shard."""

    Auto = "auto"
    Explicit = "explicit"
    Manual = "manual"

    def __repr__(self):  # inside a Mesh's repr JAX writes the bare name: axis_types=(Auto,)
        return self.name


def _axis_types(axis_types, n: int) -> tuple:
    """One AxisType per mesh axis (Auto where none is given; one value applies to all)."""
    if axis_types is None:
        return (AxisType.Auto,) * n
    if isinstance(axis_types, AxisType):
        return (axis_types,) * n
    axis_types = tuple(axis_types)
    if len(axis_types) != n or not all(isinstance(t, AxisType) for t in axis_types):
        raise ValueError(f"Mesh: axis_types {axis_types} must be one AxisType per mesh axis "
                         f"({n} axes)")
    return axis_types


class Mesh:
    """Devices laid out in a grid whose axes have names.

    Args:
      devices: an array (or nested list) of devices; its shape is the mesh shape.
      axis_names: one name per axis of `devices`.

    `with mesh:` makes it the current mesh (used by `with_sharding_constraint` and `shard_map`
    when they are given a bare PartitionSpec). Meshes are equal when they hold the same devices
    in the same layout under the same names.
    """

    def __init__(self, devices, axis_names, *, axis_types=None):
        arr = np.empty(np.shape(devices), dtype=object) if not isinstance(devices, np.ndarray) \
            else None
        if arr is not None:
            arr[...] = _object_grid(devices, arr.shape)
            devices = arr
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        if devices.size == 0 and not axis_names:  # the empty mesh, `Mesh((), ())` as in jax
            devices = np.empty((0,), dtype=object)  # no axes, no devices
        elif devices.ndim != len(axis_names):
            raise ValueError(f"Mesh: devices has {devices.ndim} dimensions {devices.shape} but "
                             f"{len(axis_names)} axis names {axis_names} were given; give one "
                             f"name per dimension")
        if len(set(axis_names)) != len(axis_names):
            raise ValueError(f"Mesh: axis names {axis_names} repeat a name")
        ids = [d.id for d in devices.flat]
        if len(set(ids)) != len(ids):
            raise ValueError(f"Mesh: a device appears twice (device ids {ids})")
        self.devices = devices
        self.axis_names = axis_names
        self.axis_types = _axis_types(axis_types, len(axis_names))
        self._key = (tuple(devices.shape), tuple(ids), axis_names, self.axis_types)
        self._token = []
        self._abstract = None

    @property
    def abstract_mesh(self) -> AbstractMesh:
        """This mesh without its devices (sizes, names, axis types and the kind of device)."""
        if self._abstract is None:
            d = self.devices.flat[0] if self.devices.size else None
            info = None if d is None else (getattr(d, "device_kind", None),
                                           getattr(d, "num_cores", None),
                                           getattr(d, "platform", None))
            self._abstract = AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types,
                                          _device=info)
        return self._abstract

    @property
    def shape(self) -> OrderedDict:
        """Axis name -> size, in axis order."""
        return OrderedDict(zip(self.axis_names, self.devices.shape))

    @property
    def axis_sizes(self) -> tuple:
        return tuple(self.shape.values())

    @property
    def shape_tuple(self) -> tuple:
        return tuple(zip(self.axis_names, self.devices.shape))

    @property
    def size(self) -> int:
        return int(self.devices.size)

    @property
    def empty(self) -> bool:
        return self.devices.size == 0

    @property
    def device_ids(self) -> np.ndarray:
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def devices_flat(self) -> list:
        """The devices in partition order (row-major)."""
        return list(self.devices.flat)

    @property
    def local_devices(self) -> list:
        here = backend.process_index()
        return [d for d in self.devices.flat if getattr(d, "process_index", 0) == here]

    @property
    def is_multi_process(self) -> bool:
        return len({getattr(d, "process_index", 0) for d in self.devices.flat}) > 1

    def axis_size(self, name) -> int:
        return _axis_size(self, name)

    def __eq__(self, other):
        return isinstance(other, Mesh) and self._key == other._key

    def __hash__(self):
        return hash(("Mesh", self._key))

    # both as JAX 0.10 prints them; the short form is what a NamedSharding's repr embeds
    def __repr__(self):
        return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
                f"axis_types={self.axis_types})")

    def __str__(self):
        shape = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        shape = shape or "()"
        return f"Mesh({shape}, axis_types={self.axis_types})"

    def __enter__(self):
        self._token.append((_current.set(self), _abstract.set(None)))
        return self

    def __exit__(self, *exc):
        token, abstract = self._token.pop()
        _abstract.reset(abstract)
        _current.reset(token)
        return False


class AbstractMesh:
    """Named mesh axes of given sizes and types, without devices:
    `AbstractMesh((4, 2), ("X", "Y"), (AxisType.Explicit,) * 2)`. An array's type names its
    sharding over one (`typeof(x).sharding.mesh`); `Mesh.abstract_mesh` gives a mesh's."""

    def __init__(self, axis_sizes, axis_names, axis_types=None, *, _device=None):
        self.axis_sizes = tuple(int(s) for s in axis_sizes)
        self.axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if len(self.axis_sizes) != len(self.axis_names):
            raise ValueError(f"AbstractMesh: {len(self.axis_sizes)} sizes {self.axis_sizes} "
                             f"for {len(self.axis_names)} names {self.axis_names}")
        self.axis_types = _axis_types(axis_types, len(self.axis_names))
        self._device = _device  # (device_kind, num_cores, platform) of a concrete mesh's devices

    abstract_mesh = property(lambda self: self)
    shape = property(lambda self: OrderedDict(zip(self.axis_names, self.axis_sizes)))
    shape_tuple = property(lambda self: tuple(zip(self.axis_names, self.axis_sizes)))
    size = property(lambda self: math.prod(self.axis_sizes))
    empty = property(lambda self: not self.axis_names)

    def _names_of(self, kind: AxisType) -> tuple:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is kind)

    explicit_axes = property(lambda self: self._names_of(AxisType.Explicit))
    auto_axes = property(lambda self: self._names_of(AxisType.Auto))
    manual_axes = property(lambda self: self._names_of(AxisType.Manual))

    def axis_size(self, name) -> int:
        return _axis_size(self, name)

    def update_axis_types(self, new: dict) -> AbstractMesh:
        """A copy with the axes named in `new` (name -> AxisType) given those types."""
        unknown = set(new) - set(self.axis_names)
        if unknown:
            raise ValueError(f"update_axis_types: {sorted(unknown)} are not axes of {self}")
        types = tuple(new.get(n, t) for n, t in zip(self.axis_names, self.axis_types))
        return AbstractMesh(self.axis_sizes, self.axis_names, types, _device=self._device)

    def _key(self):
        return (self.axis_sizes, self.axis_names, self.axis_types)

    def __eq__(self, other):
        return isinstance(other, AbstractMesh) and self._key() == other._key()

    def __hash__(self):
        return hash(("AbstractMesh", self._key()))

    def __repr__(self):  # as jax 0.10 writes it
        axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape_tuple) or "()"
        out = f"AbstractMesh({axes}, axis_types={self.axis_types}"
        if self._device is not None:
            kind, cores, platform = self._device
            out += f", device_kind={kind}, num_cores={cores}, platform={platform}"
        return out + ")"

    def __enter__(self):  # `with abstract_mesh:` is `use_abstract_mesh(abstract_mesh)`
        if not hasattr(self, "_tokens"):
            self._tokens = []
        self._tokens.append(_abstract.set(self))
        return self

    def __exit__(self, *exc):
        _abstract.reset(self._tokens.pop())
        return False


EMPTY_ABSTRACT_MESH = AbstractMesh((), ())


def _object_grid(devices, shape):
    flat = list(np.asarray(devices, dtype=object).reshape(-1)) if shape else [devices]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(shape)


def current_mesh() -> Mesh | None:
    """The mesh of the innermost `with mesh:` block (or `use_mesh`), or None."""
    return _current.get()


@contextlib.contextmanager
def use_mesh(mesh: Mesh):
    """Make `mesh` the current mesh inside the block (same as `with mesh:`)."""
    token, abstract = _current.set(mesh), _abstract.set(None)
    try:
        yield mesh
    finally:
        _abstract.reset(abstract)
        _current.reset(token)


@contextlib.contextmanager
def use_abstract_mesh(mesh: AbstractMesh):
    """Inside the block, `get_abstract_mesh()` is `mesh` (the concrete mesh stays as it is):
    bare PartitionSpecs (`reshard`, `out_sharding=`) name its axes, and its axis types decide
    which shardings are part of an array's type."""
    if not isinstance(mesh, AbstractMesh):
        raise TypeError(f"use_abstract_mesh needs an AbstractMesh, got {type(mesh).__name__}")
    token = _abstract.set(mesh)
    try:
        yield mesh
    finally:
        _abstract.reset(token)


class _MeshSetting:
    """`set_mesh(mesh)`: sets the current mesh; also usable as a `with` block that restores
    the previous one."""

    def __init__(self, mesh):
        self._token = _current.set(mesh)
        self._abstract_token = _abstract.set(None)

    def __enter__(self):
        return _current.get()

    def __exit__(self, *exc):
        _abstract.reset(self._abstract_token)
        _current.reset(self._token)
        return False


def set_mesh(mesh):
    """Make `mesh` the current mesh (for this thread / task), as `with mesh:` does inside a
    block. Returns an object that, used in `with`, restores the previous mesh at the end."""
    return _MeshSetting(mesh)


def get_mesh():
    """The current mesh (`with mesh:` / `set_mesh`), or None."""
    return current_mesh()


def get_abstract_mesh() -> AbstractMesh:
    """The current abstract mesh: the one `use_abstract_mesh` (or auto_axes / explicit_axes)
    set, else the current mesh's (`Mesh.abstract_mesh`), else the empty mesh."""
    mesh = _abstract.get()
    if mesh is not None:
        return mesh
    mesh = _current.get()
    return EMPTY_ABSTRACT_MESH if mesh is None else mesh.abstract_mesh


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None) -> Mesh:
    """A mesh of the given shape over the first prod(axis_shapes) devices (default: all devices
    of the backend in use, in id order). Its axes are Explicit unless `axis_types` says
    otherwise, as in jax 0.10 (`Mesh(...)` itself defaults to Auto axes).

    Example:
      >>> mesh = yax.make_mesh((4, 2), ("data", "model"))   # needs 8 devices
    """
    axis_shapes = tuple(int(s) for s in axis_shapes)
    if isinstance(axis_names, str):
        axis_names = (axis_names,)
    if len(axis_shapes) != len(axis_names):
        raise ValueError(f"make_mesh: {len(axis_shapes)} axis sizes {axis_shapes} but "
                         f"{len(axis_names)} names {tuple(axis_names)}")
    devs = list(devices) if devices is not None else backend.devices()
    need = math.prod(axis_shapes)
    if need > len(devs):
        raise ValueError(
            f"make_mesh: a mesh of shape {axis_shapes} needs {need} devices but only "
            f"{len(devs)} are available; on CPU, set XLA_FLAGS=--xla_force_host_platform_"
            f"device_count={need} before yax starts, or use a smaller mesh")
    grid = np.empty(need, dtype=object)
    grid[:] = devs[:need]
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(axis_shapes)
    return Mesh(grid.reshape(axis_shapes), tuple(axis_names), axis_types=axis_types)


def _axis_size(mesh, name) -> int:
    """The size of mesh axis `name` (the product over a tuple of names), for Mesh and
    AbstractMesh alike."""
    if isinstance(name, (tuple, list)):
        return math.prod(_axis_size(mesh, n) for n in name)
    try:
        return mesh.shape[name]
    except KeyError:
        raise ValueError(f"axis name {name!r} is not in the mesh axes "
                         f"{mesh.axis_names}") from None
