"""yax.ref: mutable array references, as jax.ref.

`new_ref(init)` makes a `Ref`; `ref[idx]` reads (`get`), `ref[idx] = v` writes (`swap`, `set`),
`ref[idx] += v` reads then writes, `addupdate` adds in place, `freeze` reads the final value.
Indexers are NumPy's (ints, slices, Ellipsis, integer arrays, tuples of them), with JAX's
out-of-bounds behaviour. Under a transformation a Ref is state threaded through the traced
program (see yax/interpreters/ref_state.py): jit updates the caller's Refs, in place.

    r = new_ref(jnp.zeros(3))
    r[1] += 1.
    r          # Ref([0., 1., 0.], dtype=float32)
"""

from __future__ import annotations

from yax import errors
from yax import numpy as jnp
from yax.core import dtypes
from yax.core.avals import ShapedArray, TypedScalar
from yax.core.trace import current_trace, is_eager
from yax.interpreters import ref_state
from yax.interpreters.ref_state import AbstractRef, Ref
from yax.lax.barriers import optimization_barrier
from yax.lax.elementwise import _convert_keep_weak
from yax.primitives.refs import Staged
from yax.runtime.array import Array

__all__ = ["AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get",
           "new_ref", "set", "swap"]


def new_ref(init_val, *, memory_space=None, kind=None) -> Ref:
    """A new mutable array reference holding (a copy of) `init_val`.

    Args:
      init_val: an array or scalar (a Python scalar gives a weakly typed Ref, as in JAX).
      memory_space, kind: accepted for JAX compatibility; only the default is supported.
    Returns:
      a `Ref`, e.g. `new_ref(jnp.zeros(3))` prints `Ref([0., 0., 0.], dtype=float32)`.
    """
    if memory_space is not None or kind is not None:
        raise NotImplementedError("yax.new_ref: only the default memory_space and kind")
    if isinstance(init_val, Ref):
        return ref_state.new_box(init_val)  # raises: no refs of refs
    value = jnp.asarray(init_val)
    if ref_state.stages_here():  # make_jaxpr: a value of type Ref{...}
        return ref_state.Ref(Staged.new_ref(value), current_trace(), errors.user_location())
    if is_eager() and type(value) is Array:
        value = _copy(value)  # the Ref owns its buffer (updated in place)
    return ref_state.new_box(value)


def empty_ref(ty, memory_space=None) -> Ref:
    """A new Ref of the type `ty` (a ShapeDtypeStruct or an array) whose contents are
    unspecified (yax fills it with zeros)."""
    return new_ref(jnp.zeros(ty.shape, ty.dtype), memory_space=memory_space)


def free_ref(ref: Ref) -> tuple:
    """Declare that `ref` is no longer used. As jax 0.10.2's, it does nothing to the Ref (a hint
    for compiled programs' memory), and returns ()."""
    _check_ref(ref, "free_ref")
    return ()


def _copy(value: Array) -> Array:
    """A copy of `value` in a new device buffer (jnp.array(copy=True) may return `value`
    itself); a Ref's buffer is donated to the jitted functions that update it."""
    return optimization_barrier(value)


def _whole(idx) -> bool:
    return idx is Ellipsis or (type(idx) is tuple and (idx == () or idx == (Ellipsis,)))


def _check_ref(ref, op: str) -> None:
    if not isinstance(ref, Ref):
        raise TypeError(f"{op} takes a Ref (from yax.new_ref), got {type(ref).__name__}")


def get(ref: Ref, idx=()):
    """`ref[idx]`: the indexed part of the Ref's current value, as a new array."""
    _check_ref(ref, "get")
    staged = ref_state.staged(ref)
    if staged is not None:
        return Staged.get(staged, () if _whole(idx) else idx)
    value = ref_state.read(ref)
    if _whole(idx):
        if type(value) is Array:  # a copy: the Ref's own buffer may be updated in place later
            return _copy(value)
        return value
    return value[idx]


def _fit(ref: Ref, value, expected_shape, op: str, whole: bool):
    """`value` as the Ref's dtype (a weakly typed value converts; another dtype is an error)
    and of the indexed part's shape."""
    if isinstance(value, Ref):
        raise errors.RefError(f"`{op}`: cannot store a Ref in a Ref (no higher-order refs)")
    if dtypes.is_python_scalar(value) and ref_state.stages_here():
        value = TypedScalar.of(value, ref.dtype, weak_type=False)  # staged as a literal
    else:
        value = jnp.asarray(value, ref.dtype if dtypes.is_python_scalar(value) else None)
    aval = value.aval
    if aval.dtype != ref.dtype:
        if not aval.weak_type:
            raise errors.RefError(f"Invalid dtype for `{op}`. Ref dtype: {ref.dtype}. Value "
                                  f"dtype: {aval.dtype}. ")
        value = _convert_keep_weak(value, ref.dtype, False)
    if tuple(aval.shape) != tuple(expected_shape):
        raise errors.RefError(
            f"Invalid shape for `{op}`. Ref shape: {ref.shape}. Expected shape: "
            f"{tuple(expected_shape)}. Value shape: {tuple(aval.shape)}. "
            + ("Transforms: (). " if whole else ""))
    if value.aval.weak_type:
        value = _convert_keep_weak(value, ref.dtype, False)
    return value


def _update(ref: Ref, idx, val, op: str, add: bool):
    staged = ref_state.staged(ref, writing=True)
    if staged is not None:
        whole = _whole(idx)
        idx = () if whole else idx
        val = _fit(ref, val, Staged.expected_shape(ref, idx), op, whole)
        if add:
            return Staged.addupdate(staged, idx, val)
        return Staged.swap(staged, idx, val)
    current = ref_state.read(ref)
    old = current if _whole(idx) else current[idx]
    val = _fit(ref, val, old.shape, op, _whole(idx))
    if _whole(idx):
        new = current + val if add else val
        if new is val and type(val) is Array:  # the Ref owns its buffer (donated to jit)
            new = _copy(val)
    else:
        at = current.at[idx]
        new = at.add(val) if add else at.set(val)
    if new.aval.weak_type:
        new = _convert_keep_weak(new, ref.dtype, False)
    ref_state.write(ref, new, "addupdate" if add else "set/swap")
    return old


def swap(ref: Ref, idx, value):
    """`old, ref[idx] = ref[idx], value`; returns `old`."""
    _check_ref(ref, "swap")
    return _update(ref, idx, value, "swap", add=False)


def set(ref: Ref, idx, value) -> None:  # noqa: A001  (jax.ref.set)
    """`ref[idx] = value`."""
    _check_ref(ref, "set")
    _update(ref, idx, value, "swap", add=False)


def addupdate(ref: Ref, idx, value) -> None:
    """`ref[idx] += value`, as one update (repeated integer indices accumulate)."""
    _check_ref(ref, "addupdate")
    _update(ref, idx, value, "addupdate", add=True)


def freeze(ref: Ref):
    """The Ref's final value (as in jax 0.10.2, the Ref stays usable)."""
    _check_ref(ref, "freeze")
    staged = ref_state.staged(ref)
    if staged is not None:
        return Staged.freeze(staged)
    return get(ref, ...)


# --- the Ref's methods ------------------------------------------------------------------------

def _getitem(self, idx):
    return get(self, idx)


def _setitem(self, idx, value):
    set(self, idx, value)


def _repr(self):
    home = self._home
    value = self._value
    if is_eager(home) and type(value) is Array and not value.is_deleted():
        return "Ref" + repr(value)[len("Array"):]
    return f"Ref{{{ShapedArray(self.shape, self.dtype).str_long()}}}"


def _unsafe_buffer_pointer(self) -> int:
    """The device address of the Ref's buffer (the same after jitted in-place updates)."""
    value = ref_state.read(self)
    if type(value) is not Array:
        raise TypeError("unsafe_buffer_pointer: the Ref is traced here; call it outside "
                        "transformations")
    return value._buf.unsafe_buffer_pointer()


def _block_until_ready(self):
    value = self._value
    if type(value) is Array:
        value.block_until_ready()
    return self


Ref.__getitem__ = _getitem
Ref.__setitem__ = _setitem
Ref.__repr__ = _repr
Ref.__str__ = _repr
Ref.unsafe_buffer_pointer = _unsafe_buffer_pointer
Ref.block_until_ready = _block_until_ready


# --- the Ref operations a staged program's equations run (see yax/primitives/refs.py) -----

ref_state.box_ops = {"new_ref": new_ref, "get": get, "swap": swap, "addupdate": addupdate,
                     "freeze": freeze}
