"""Typed PRNG keys: `yax.random.key(seed)` returns a `PRNGKeyArray`, a key array with its own
dtype `key<fry>`, as `jax.random.key` does.

A `PRNGKeyArray` wraps the raw uint32 key data of shape `(*shape, 2)`; its `shape`, `ndim` and
`size` leave out the trailing 2. It is registered as a pytree node with the data as its single
leaf, so `jit`, `vmap`, `scan`, `cond`, `while_loop` and `grad` (as a non-differentiable input)
carry it through unchanged: inside a transformation its data is a tracer and the wrapper is
rebuilt around it. (In jax a typed key is itself a leaf; here `tree_leaves(key)` gives its data.)

Every yax.random function accepts typed and raw keys alike (`_checks.as_key` unwraps them);
`split` and `fold_in` return keys of the kind they were given.
"""

from __future__ import annotations

import numpy as np

from yax import dtypes as _dtypes
from yax import numpy as jnp
from yax import tree_util
from yax.core.trace import Tracer
from yax.runtime.array import register_array_kind

IMPL_NAME = "threefry2x32"


class prng_key:  # noqa: N801  (named like jax.dtypes.prng_key, an abstract dtype class)
    """The abstract class of key dtypes (`jax.dtypes.prng_key`): every typed key's dtype is an
    instance of it."""


class KeyDType(prng_key):
    """The dtype of a typed threefry key: prints `key<fry>`. Equal to every other KeyDType."""

    name = "key<fry>"
    itemsize = 8  # two uint32 words per key
    kind = "V"
    # the category class, as jax's key dtypes: issubdtype(key.dtype, yax.dtypes.prng_key)
    type = _dtypes.prng_key
    extended = True  # not a NumPy dtype (yax.numpy.issubdtype asks)

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        return isinstance(other, KeyDType) or other == self.name

    def __hash__(self) -> int:
        return hash(self.name)


KEY_DTYPE = KeyDType()


def is_key_dtype(dtype) -> bool:
    """True for the dtype of typed keys (and for the class `prng_key` itself)."""
    return isinstance(dtype, prng_key) or dtype is prng_key


class PRNGKeyArray:
    """An array of typed PRNG keys: shape `shape`, dtype `key<fry>`, over uint32 data of shape
    `(*shape, 2)`.

    Make one with `yax.random.key(seed)`, `split`, `fold_in` or `wrap_key_data`; get the data
    back with `yax.random.key_data`. Supports `len`, iteration, indexing (over the key axes),
    `reshape`, `T`, `squeeze` and `ravel`.

    Example:
      >>> k = yax.random.key(0)
      >>> k                             # doctest: +SKIP
      Array((), dtype=key<fry>) overlaying:
      [0 0]
    """

    __slots__ = ("_data",)
    __array_priority__ = 100

    def __init__(self, data):
        # No validation: pytree unflattening may build one around any placeholder object.
        self._data = data

    # --- array-like metadata (the trailing key-data axis left out) ---
    @property
    def shape(self) -> tuple:
        return tuple(self._data.shape[:-1])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def dtype(self) -> KeyDType:
        return KEY_DTYPE

    @property
    def itemsize(self) -> int:
        return KEY_DTYPE.itemsize

    # --- indexing and reshaping act on the key axes ---
    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of an unsized key array (shape ())")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        if any(i is Ellipsis for i in idx):
            idx = (*idx, slice(None))  # keep the key-data axis out of the Ellipsis
        return PRNGKeyArray(self._data[idx])

    def reshape(self, *shape, order: str = "C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return PRNGKeyArray(jnp.reshape(self._data, (*shape, 2), order=order))

    def __yax_broadcast_to__(self, shape):
        """`jnp.broadcast_to(keys, shape)`: the key-data axis stays last, unbroadcast."""
        return PRNGKeyArray(jnp.broadcast_to(self._data, (*shape, 2)))

    def ravel(self):
        return self.reshape(-1)

    flatten = ravel

    def squeeze(self, axis=None):
        if axis is None:
            axis = tuple(i for i, d in enumerate(self.shape) if d == 1)
        return PRNGKeyArray(jnp.squeeze(self._data, axis))

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        axes = axes or tuple(reversed(range(self.ndim)))
        return PRNGKeyArray(jnp.transpose(self._data, (*axes, self.ndim)))

    @property
    def T(self):  # noqa: N802
        return self.transpose()

    def copy(self):
        return PRNGKeyArray(jnp.array(self._data, copy=True))

    def typeof(self) -> KeyAval:
        """What `yax.typeof` gives for a key array (as jax's `ShapedArray(key<fry>[...])`)."""
        return KeyAval(self.shape)

    def block_until_ready(self):
        if hasattr(self._data, "block_until_ready"):
            self._data.block_until_ready()
        return self

    def __repr__(self) -> str:
        data = self._data
        shown = np.asarray(data) if hasattr(data, "__array__") and not _is_tracer(data) \
            else data
        return f"Array({self.shape}, dtype={KEY_DTYPE}) overlaying:\n{shown}"

    __str__ = __repr__

    def __eq__(self, other):
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return jnp.all(self._data == other._data, axis=-1)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else ~eq

    __hash__ = None  # arrays are unhashable


class KeyAval:
    """The abstract value of a key array: its key shape and the key dtype."""

    def __init__(self, shape):
        self.shape, self.dtype = tuple(shape), KEY_DTYPE

    ndim = property(lambda self: len(self.shape))

    def __eq__(self, other):
        return isinstance(other, KeyAval) and other.shape == self.shape

    def __hash__(self):
        return hash(("KeyAval", self.shape))

    def str_short(self) -> str:
        return f"{KEY_DTYPE}[{','.join(str(d) for d in self.shape)}]"

    __str__ = str_short

    def __repr__(self):
        return f"ShapedArray({self.str_short()})"


register_array_kind(PRNGKeyArray)  # isinstance(key, yax.Array), as for jax's typed keys


def _is_tracer(x) -> bool:
    return isinstance(x, Tracer)


tree_util.register_pytree_node(
    PRNGKeyArray, lambda k: ((k._data,), None), lambda _aux, children: PRNGKeyArray(children[0]))


def unwrap(key):
    """The raw uint32 data of a typed key; any other value unchanged."""
    return key._data if isinstance(key, PRNGKeyArray) else key


def rewrap_like(original, new_data):
    """`new_data` as a typed key if `original` was one, else as raw data."""
    return PRNGKeyArray(new_data) if isinstance(original, PRNGKeyArray) else new_data
