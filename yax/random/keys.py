"""PRNG keys: making them from seeds, splitting, folding in data.

Two kinds of key, as in jax: `PRNGKey(seed)` returns a raw key, a plain uint32 array of shape
(2,) (a batch of raw keys has shape (..., 2)); `key(seed)` returns a typed key, a
`PRNGKeyArray` of shape () and dtype `key<fry>` over the same data (see typed_keys.py).
`key_data` and `wrap_key_data` convert between the two. `split` and `fold_in` return keys of the
kind they are given; every sampler accepts both. Both kinds pass through `jit`, `vmap`, `scan`
and `fori_loop` (raw keys as arrays, typed keys as pytree nodes over their data).
"""

from __future__ import annotations

import numpy as np

from yax import errors, lax
from yax import numpy as jnp
from yax.core import dtypes
from yax.core.avals import TypedScalar
from yax.core.trace import Tracer
from yax.random import _checks, threefry
from yax.random._kernel import Kernel
from yax.random.typed_keys import IMPL_NAME as _IMPL_NAME
from yax.random.typed_keys import KEY_DTYPE, KeyDType, PRNGKeyArray, rewrap_like
from yax.runtime import values
from yax.runtime.array import Array
from yax.transforms.jit import jit

_seed_kernel = jit(threefry.seed)
_split_kernel = Kernel(threefry.split)
_fold_in_kernel = jit(
    lambda key, data: threefry.fold_in(key, lax.convert_element_type(data, np.uint32)))


def _impl_of(name: str, impl, dtype):
    """jax's `impl` / `dtype` pair: a key dtype names its implementation (a string `dtype`
    is read as an implementation name, as jax does); giving both is an error there too."""
    if dtype is None:
        return impl
    if impl is not None:
        raise ValueError(f"yax.random.{name}: pass impl= or dtype=, not both")
    if isinstance(dtype, KeyDType):
        return _IMPL_NAME
    if isinstance(dtype, str):
        return dtype
    raise TypeError(f"yax.random.{name}: dtype= must be a key dtype (`key.dtype`), got "
                    f"{dtype!r}")


def _check_impl(name: str, impl) -> None:
    if impl is not None and impl not in (_IMPL_NAME, "fry"):
        raise _checks.RandomArgumentError(
            f"yax.random.{name}: the only PRNG implementation is '{_IMPL_NAME}', got {impl!r}.")


def key_dtype(impl=None):
    """The dtype of typed keys of PRNG implementation `impl` (`key<fry>`; yax has only
    threefry2x32)."""
    _check_impl("key_dtype", impl)
    return KEY_DTYPE


def _seed_from_numpy(name: str, value) -> Array:
    """The key of a concrete integer seed, computed on the host."""
    if dtypes.is_python_scalar(value):
        if not isinstance(value, int):
            raise errors.DTypeError(
                f"yax.random.{name}: the seed must be an integer, got {type(value).__name__} "
                f"{value!r}.")
        if not -2 ** 63 <= value < 2 ** 63:
            raise errors.DTypeError(
                f"yax.random.{name}: the seed {value} does not fit in int64.")
        value = np.int64(value)
    value = np.asarray(value)
    if not dtypes.is_int(value.dtype):
        raise errors.DTypeError(
            f"yax.random.{name}: the seed must be an integer, got dtype {value.dtype}.")
    # Without x64 a 64-bit seed is narrowed first (keeping its low 32 bits), as jax does.
    value = value.astype(dtypes.canonicalize(value.dtype))
    if value.dtype.itemsize == 8:
        bits = int(value.astype(np.uint64))
        words = [bits >> 32, bits & 0xFFFFFFFF]
    else:
        words = [0, int(value.astype(np.uint32))]
    return jnp.asarray(np.array(words, dtype=np.uint32))


def PRNGKey(seed, *, impl=None):
    """A PRNG key (uint32[2]) made from an integer seed, identical to `jax.random.PRNGKey`.

    Args:
      seed: a 64- or 32-bit integer (Python int, NumPy integer, or integer array scalar, which
        may be traced). Without x64 mode only its low 32 bits count.
      impl: optional, must be None or 'threefry2x32'.

    Returns:
      A uint32 array of shape (2,): the high and low 32-bit words of the seed.

    Example:
      >>> yax.random.PRNGKey(42)  # doctest: +SKIP
      Array([ 0, 42], dtype=uint32)
    """
    _check_impl("PRNGKey", impl)
    if isinstance(seed, (Array, Tracer)):
        aval = seed.aval
        if aval.ndim:
            raise errors.ShapeError(
                f"yax.random.PRNGKey takes a scalar seed, got {aval.str_short()}; use yax.vmap "
                f"to make a batch of keys.")
        if not dtypes.is_int(aval.dtype):
            raise errors.DTypeError(
                f"yax.random.PRNGKey: the seed must be an integer, got {aval.str_short()}.")
        return _seed_kernel(seed)
    if np.ndim(seed):
        raise errors.ShapeError(
            f"yax.random.PRNGKey takes a scalar seed, got shape {np.shape(seed)}; use yax.vmap "
            f"to make a batch of keys.")
    return _seed_from_numpy("PRNGKey", seed)


def key(seed, *, impl=None, dtype=None):
    """A typed PRNG key made from an integer seed, as `jax.random.key`.

    Returns:
      A `PRNGKeyArray` of shape () and dtype `key<fry>` whose data is `PRNGKey(seed)`; every
      yax.random function accepts it, and its draws equal jax's for `jax.random.key(seed)`.

    Example:
      >>> yax.random.key(0)  # doctest: +SKIP
      Array((), dtype=key<fry>) overlaying:
      [0 0]

    `dtype`: a key dtype (`k.dtype` of a typed key) instead of `impl`, as in jax.
    """
    _check_impl("key", _impl_of("key", impl, dtype))
    return PRNGKeyArray(PRNGKey(seed))


def split(key, num=2):
    """Split a key into `num` new keys (an int, or a tuple giving the shape of the batch).

    Returns:
      For a raw key, a uint32 array of shape `(num, 2)` (or `(*num, 2)`); for a typed key, a
      key array of shape `(num,)` (or `num`). Equal to `jax.random.split`.

    Example:
      >>> key, subkey = yax.random.split(yax.random.PRNGKey(0))
    """
    data = _checks.as_key("split", key)
    shape = _checks.static_shape("split", num, "num")
    return rewrap_like(key, _split_kernel(data, shape=shape))


def fold_in(key, data):
    """A new key that is a deterministic function of `key` and the 32-bit integer `data`.

    Example:
      >>> step_key = yax.random.fold_in(yax.random.PRNGKey(0), 7)
    """
    return rewrap_like(key, _fold_in(_checks.as_key("fold_in", key), data))


def _fold_in(key, data):
    if isinstance(data, (Array, Tracer)):
        aval = data.aval
        if aval.ndim or not (dtypes.is_int(aval.dtype) or dtypes.is_bool(aval.dtype)):
            error = errors.ShapeError if aval.ndim else errors.DTypeError
            raise error(
                f"yax.random.fold_in takes an integer scalar, got {aval.str_short()}; use "
                f"yax.vmap for a batch.")
        return _fold_in_kernel(key, data)
    if np.ndim(data):
        raise errors.ShapeError(
            f"yax.random.fold_in takes an integer scalar, got shape {np.shape(data)}; use "
            f"yax.vmap for a batch.")
    if isinstance(data, (int, np.integer)) and not isinstance(data, (bool, np.bool_)):
        if not -2 ** 31 <= int(data) < 2 ** 32:
            raise errors.DTypeError(
                f"yax.random.fold_in: data {int(data)} does not fit in 32 bits.")
        word = TypedScalar.of(int(data) & 0xFFFFFFFF, np.dtype(np.uint32), weak_type=False)
        return _fold_in_kernel(key, values.to_array(word))  # a cached device scalar
    raise errors.DTypeError(
        f"yax.random.fold_in takes an integer scalar, got {type(data).__name__} {data!r}.")


def key_data(keys):
    """The uint32 data of a key or batch of keys, shape `(*keys.shape, 2)` (a raw key is
    returned as it is)."""
    return _checks.as_key("key_data", keys, allow_batched=True)


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """The typed key(s) whose data is `key_bits_array` (a uint32 array of shape (..., 2));
    `dtype` as in `key`."""
    _check_impl("wrap_key_data", _impl_of("wrap_key_data", impl, dtype))
    if isinstance(key_bits_array, PRNGKeyArray):
        raise errors.DTypeError(
            "yax.random.wrap_key_data takes raw uint32 key data, got a typed key array; use "
            "yax.random.key_data(keys) to get its data.")
    return PRNGKeyArray(_checks.as_key("wrap_key_data", key_bits_array, allow_batched=True))


def key_impl(keys) -> str:
    """The name of the PRNG implementation of `keys`: always 'threefry2x32'."""
    _checks.as_key("key_impl", keys, allow_batched=True)
    return _IMPL_NAME


def clone(key):
    """A copy of `key` (keys are immutable values, so this returns it)."""
    return key
