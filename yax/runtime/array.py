"""`Array`: a concrete value on a device (a runtime buffer plus its aval).

NumPy-style operators and methods are installed by `yax.numpy` (which sits above this layer).
"""

from __future__ import annotations

import gc
import operator

import numpy as np
from jaxlib import _jax

from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.core.trace import Tracer
from yax.runtime import backend, guards, transfer

# jaxlib hands Python objects released on its own threads to a queue that only Python's garbage
# collector empties. yax allocates so few long-lived objects that the collector may never run,
# so that queue (about 0.6 KiB per call) grew without bound in long loops (benchmarks/
# bench_soak.py). Only executions started from Python fill it (jaxlib's C++ jit dispatch
# empties it itself: 100,000 warm C++-path calls grow by 0.1 MiB without draining, 100,000
# eager ops by 16 MiB), so the Python paths count their executions (`note_execute`) and it is
# emptied every `DRAIN_EVERY` of them; `Array()` itself stays two assignments, because the C++
# path builds every output through it.
DRAIN_EVERY = 1024
executes = [0]  # Python-path executions so far (the eager hot path counts inline)
try:
    from jaxlib.xla_client import _xla as _xla_ext
    drain = _xla_ext.collect_garbage
except (ImportError, AttributeError):  # a jaxlib without it: rely on the garbage collector
    drain = None


def note_execute() -> None:
    """Count one execution started from Python, emptying jaxlib's queue now and then."""
    executes[0] += 1
    if not executes[0] % DRAIN_EVERY:
        drain_released()


def drain_released() -> None:
    """Empty jaxlib's queue of objects released on its threads."""
    if drain is not None:
        drain()


def _sharding_getter():
    """`buffer_sharding(buf)`: a jax array's sharding. Its public `sharding` is a Python
    property returning the C-level `_sharding` (0.14 us against 0.03 us, read on every eager
    op), so the private name is used where this jaxlib's array type has it (checked once, on
    the type: no buffer is made at import)."""
    array_type = getattr(_jax, "ArrayImpl", None)
    if array_type is not None and hasattr(array_type, "_sharding"):
        return operator.attrgetter("_sharding")
    return operator.attrgetter("sharding")


buffer_sharding = _sharding_getter()


class _ArrayMeta(type):
    """`isinstance(x, Array)` is true for concrete Arrays and for every value that stands for
    one inside a transformation (tracers, typed key arrays), as `isinstance(x, jax.Array)` is:
    libraries test it to tell arrays from other pytree leaves, also inside `jit` and `grad`.
    `issubclass(Tracer, Array)` stays false, and `is_concrete` asks for a real device value."""

    _virtual: tuple = (Tracer,)

    def __instancecheck__(cls, x) -> bool:
        return type.__instancecheck__(cls, x) or (cls is Array and isinstance(x, cls._virtual))


def register_array_kind(kind: type) -> None:
    """Make `isinstance(x, Array)` true for instances of `kind` (a value that is an array for the
    user without being a device buffer, such as a typed PRNG key array)."""
    _ArrayMeta._virtual = (*_ArrayMeta._virtual, kind)


def is_concrete(x) -> bool:
    """Whether `x` is a concrete Array (a device value), not a tracer or another array kind."""
    return type.__instancecheck__(Array, x)


class Array(metaclass=_ArrayMeta):
    """A concrete value on a device: a runtime buffer plus its aval (shape, dtype, weak type).

    Arrays are immutable and support NumPy's operators and methods (installed by yax.numpy),
    `np.asarray(x)`, `.block_until_ready()` and functional updates `x.at[i].set(v)`.
    """

    # `_committed` is set only by explicit placements (device_put, make_array_from_*); Arrays
    # that jaxlib's C++ dispatch path builds never have it, so everything else derives from _buf.
    __slots__ = ("_buf", "aval", "_npy", "_committed", "__weakref__")
    __array_priority__ = 100

    def __init__(self, _buf, aval):  # `_buf` is also the field name the C++ dispatch path uses
        # nothing else: jaxlib's C++ jit path builds each output through this (with keywords),
        # and every statement here is a measurable part of a warm call (`_npy` starts unset)
        self._buf = _buf
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)
    nbytes = property(lambda self: self.aval.nbytes)

    @property
    def buffer(self):
        if transfer.is_deleted(self._buf):
            raise RuntimeError("this Array was donated to a jitted function (donate_argnums) and "
                               "its buffer has been deleted; use the function's output instead")
        return self._buf

    def _host_copy(self):
        try:
            return self._npy
        except AttributeError:  # never read yet
            return None

    def _value(self) -> np.ndarray:
        value = self._host_copy()
        if value is None:
            guards.check("device_to_host", self._describe)
            value = transfer.to_numpy(self.buffer)
            if value.dtype != self.aval.dtype:  # never expected; guards against runtime drift
                value = value.astype(self.aval.dtype)
            value = np.array(value, copy=True)
            value.setflags(write=False)
            self._npy = value
        return value

    def _describe(self) -> str:
        where = ", ".join(sorted(str(d) for d in self._buf.sharding.device_set))
        return f"aval={self.aval.str_short()}, device={where}"

    def copy_to_host_async(self) -> None:
        """Start copying the value to the host, so that a later `np.asarray(x)` need not wait
        for it (an explicit device-to-host transfer for the transfer guards)."""
        if self._host_copy() is None:
            with guards.explicit():
                guards.check("device_to_host", self._describe)
            transfer.copy_to_host_async(self.buffer)

    def __array__(self, dtype=None, copy=None):
        value = self._value()
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        return value.copy() if copy else value

    def block_until_ready(self) -> Array:
        transfer.block_until_ready(self.buffer)
        return self

    def is_deleted(self) -> bool:
        return transfer.is_deleted(self._buf)

    def devices(self) -> set:
        """The set of devices holding a part of this Array."""
        return set(self._buf.sharding.device_set)

    @property
    def device(self):
        """The device of a single-device Array (a sharded one: use .devices() or .sharding)."""
        devs = self._buf.sharding.device_set
        if len(devs) != 1:
            raise ValueError(f"this Array of shape {self.shape} is spread over {len(devs)} "
                             f"devices, so it has no single .device; use .devices() or "
                             f".sharding (sharding: {self.sharding!r})")
        return next(iter(devs))

    @property
    def sharding(self):
        """Where each block lives, as a yax sharding (SingleDeviceSharding, NamedSharding...)."""
        return transfer.yax_sharding_of(self._buf)

    @property
    def committed(self) -> bool:
        """True when the placement was asked for (device_put to a device or sharding, or a
        sharded value): such Arrays are not moved implicitly."""
        flag = getattr(self, "_committed", None)
        if flag is None:
            return len(self._buf.sharding.device_set) > 1
        return flag

    @property
    def is_fully_addressable(self) -> bool:
        return self.sharding.is_fully_addressable

    @property
    def is_fully_replicated(self) -> bool:
        return self.sharding.is_fully_replicated

    @property
    def addressable_shards(self) -> list:
        """The blocks this process holds: `Shard`s with .device, .index, .data, .replica_id."""
        return _shards(self, addressable_only=True)

    @property
    def global_shards(self) -> list:
        """Every block (those of other processes have .data None)."""
        return _shards(self, addressable_only=False)

    def addressable_data(self, index: int) -> Array:
        return self.addressable_shards[index].data

    def tolist(self):
        return self._value().tolist()

    def item(self, *args):
        return self._value().item(*args)

    def __bool__(self):
        return bool(self._value())

    def __int__(self):
        return int(self._value())

    def __float__(self):
        return float(self._value())

    def __complex__(self):
        return complex(self._value())

    def __index__(self):
        if not np.issubdtype(self.dtype, np.integer):
            raise TypeError(f"only integer arrays can be used as an index, not {self.dtype}")
        return int(self._value())

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d Array)")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d Array")
        return (self[i] for i in range(self.shape[0]))

    __hash__ = None  # arrays are mutable-looking values: never usable as static arguments

    def __repr__(self):
        # jax's layout: the values wrapped as numpy wraps them (room left for a trailing
        # comma), then the dtype on the last line, after one space or, when that line has no
        # room for it, after as many spaces as "Array(" is long
        dtype = f"dtype={self.dtype.name}" + (", weak_type=True" if self.aval.weak_type else "")
        width = np.get_printoptions()["linewidth"]
        if self.size == 0:
            body = f"[], shape={self.shape}"
        else:
            body = np.array2string(self._value(), separator=", ", prefix="Array(", suffix=",",
                                   max_line_width=width)
        last_line = len(body) - body.rfind("\n") + 1
        sep = " " * 6 if last_line + len(dtype) + 2 > width else " "
        return f"Array({body},{sep}{dtype})"

    def __str__(self):
        return str(self._value())

    def __format__(self, spec):
        if not self.shape:
            return format(self._value().item(), spec)
        return format(str(self), spec)

    def __reduce__(self):
        # a sharded value is gathered; it comes back on the default device (devices are not
        # picklable objects, and the other side may have other devices)
        return (_rebuild, (self._value(), self.aval.weak_type))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class Shard:
    """One block of an Array: the `device` holding it, its `index` (a tuple of slices into the
    global array), its `data` (a single-device Array, None on another process's device) and
    `replica_id` (0 for the first copy of a replicated block)."""

    __slots__ = ("device", "index", "replica_id", "data")

    def __init__(self, device, index, replica_id, data):
        self.device, self.index, self.replica_id, self.data = device, index, replica_id, data

    def __repr__(self):
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data!r})")


def _shards(array: Array, addressable_only: bool) -> list:

    buf = array.buffer
    index_of = array.sharding.devices_indices_map(array.shape)
    buffers = {transfer.device_of(b): b for b in transfer.shards_of(buf)}
    seen: dict = {}
    out = []
    for dev, idx in index_of.items():
        key = tuple((s.start, s.stop, s.step) for s in idx)
        replica = seen[key] = seen.get(key, -1) + 1
        local = buffers.get(dev)
        if local is None and addressable_only:
            continue
        data = None
        if local is not None:
            data = Array(local, ShapedArray(tuple(local.shape), array.dtype, array.weak_type))
            data._committed = True
        out.append(Shard(dev, idx, replica, data))
    return out


def live_arrays(platform: str | None = None) -> list:
    """Every Array of this process that is alive and not deleted, on the devices of `platform`
    (default: the backend in use). Found by the garbage collector's list of objects, so the
    hot paths keep no registry; a debugging tool, as jax's."""
    platform = backend.platform() if platform is None else platform.lower()
    out = []
    for obj in gc.get_objects():
        if type(obj) is Array and not transfer.is_deleted(obj._buf):
            if any(d.platform == platform for d in obj._buf.sharding.device_set):
                out.append(obj)
    return out


def _rebuild(value, weak_type):
    """Unpickling: the value back on the default device (narrowed to 32 bits when x64 is off)."""

    value = np.asarray(value)
    dt = dtypes.canonicalize(value.dtype, warn=True)
    if dt != value.dtype:
        value = value.astype(dt)
    buf = transfer.device_put(value, backend.default_device())
    return Array(buf, ShapedArray(value.shape, dt, weak_type))
