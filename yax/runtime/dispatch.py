"""jaxlib's C++ jit dispatch (`PjitFunction`), driven by yax's own cache-miss function.

A warm call then costs one C++ signature check and one execute: no yax Python runs except the
unflattening of outputs into yax Arrays. The parts yax supplies:
  - a pytree registry of its own, in which `Array` is a node holding its jaxlib buffer (data
    field `_buf`) and aval (metadata: shape, dtype and weak type enter the signature);
  - a jit-key config value mirroring `config.trace_state()` and `disable_jit`, so changing a
    setting misses the C++ cache and goes through the Python path;
  - fast-path data naming a yax executable (the tuple layout jaxlib expects).
  - a second, thread-local jit-key value saying whether a transformation is active. yax's
    current trace lives in a context variable, which C++ cannot read; `use_trace` mirrors it
    into this value (`trace.set_trace_mirror`), so a call under a transformation, even with
    concrete arguments, misses the C++ cache and reaches the Python miss handler, which stages
    it. A warm eager call can therefore enter the C++ object directly, with no Python frame.
    (Like jax's own trace state, the mirror is per thread: a context copied into another
    thread carries yax's trace but not the mirror, and would run eagerly there.)

This is private jaxlib API (checked against 0.10.2), detected once at import: `AVAILABLE` is
False where any piece is missing, and jit then uses only its Python path.
Hazards guarded here (they segfault or misbehave in C++): list lengths in the fast-path data must
all equal len(const_args) + number of arguments; `global_cache_key` must not be None.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.core as _jax_core
from jaxlib import _jax

from yax import tree_util
from yax.config import config
from yax.core import trace as _trace
from yax.runtime import backend
from yax.runtime.array import Array
from yax.runtime.sharding_bridge import sharding_of


class FastpathData(NamedTuple):
    """The fields (and order) of the tuple jaxlib's PjitFunction reads on a cache miss."""

    xla_executable: Any
    out_pytree_def: Any
    in_shardings: list
    out_shardings: list
    out_avals: list
    out_committed: list
    kept_var_bitvec: list
    in_device_local_layouts: list
    const_args: list


_state_ids: dict = {}


def _state_value() -> int:
    """The jit-key value of the config state: a small int per distinct state, because jaxlib
    hashes every key value on every call (the state tuple: 0.10 us; an int: 0.02 us)."""
    state = (config.trace_state(), bool(config.disable_jit), config.default_device)
    return _state_ids.setdefault(state, len(_state_ids))


def _refuse_shard_arg(x, *_rest):
    raise TypeError(f"yax's C++ jit path got a non-Array argument {type(x).__name__}; this is a "
                    f"yax bug (such signatures should stay on the Python path)")


def _detect():
    try:
        registry = _jax.pytree.PyTreeRegistry()
        registry.register_dataclass_node(Array, ["_buf"], ["aval"])
        key = _jax.config.Config("yax_jit_state", _state_value(), include_in_jit_key=True)
        transforming = _jax.config.Config("yax_transforming", False, include_in_jit_key=True)
        device_block = _jax.config.Config("yax_default_device", None, include_in_jit_key=True)
        previous = transforming.swap_local(True)
        if transforming.value is not True:
            return None
        transforming.swap_local(previous)
        if transforming.value is not False:
            return None
        # the call convention: a miss returns (outputs, fast-path data or None, rebuild flag)
        probe = _jax.pjit("yax_probe", None, lambda *a, **k: (a[0] + k["b"], None, False), [],
                          [], ("yax",), registry, _refuse_shard_arg, _jax.PjitFunctionCache(4))
        if probe(1, b=2) != 3 or probe(1, b=2) != 3:
            return None
        return registry, key, transforming, device_block
    except Exception:  # another jaxlib: the Python path only
        return None


_found = _detect()
AVAILABLE = _found is not None
if AVAILABLE:
    _registry, _key_config, _transforming, _device_block = _found
    config.on_change(lambda _name: _key_config.set_global(_state_value()))
    _trace.set_trace_mirror(_transforming.swap_local)
    backend.set_device_mirror(_device_block.swap_local)


def new_cache(capacity: int):
    """A C++ signature cache shared by every wrapper of one (function, options)."""
    return _jax.PjitFunctionCache(capacity=max(int(capacity), 1))


def make_function(name: str, cache_miss, static_argnums, static_argnames, cache):
    """A C++ dispatch object calling `cache_miss(*args, **kwargs)` on a signature miss.

    `cache_miss` returns (outputs, FastpathData or None, False); None keeps that signature on
    the Python path.
    """
    return _jax.pjit(name, None, cache_miss, list(static_argnums), list(static_argnames),
                     ("yax",), _registry, _refuse_shard_arg, cache)


_SLOT = object()  # stands for an output buffer while building the output treedef


def _out_treedef(out_tree, out_avals):
    """jaxlib's treedef of the outputs (Array nodes holding `out_avals`), or None where yax's
    output structure has nodes jaxlib's registry cannot express (custom nodes)."""
    placeholders = [Array(_SLOT, a) for a in out_avals]
    try:
        leaves, treedef = _registry.flatten(tree_util.tree_unflatten(out_tree, placeholders))
    except Exception:
        return None
    if len(leaves) != len(out_avals) or any(x is not _SLOT for x in leaves):
        return None
    return treedef


def fastpath_data(exe, const_bufs: list, n_args: int, out_tree, out_avals) -> FastpathData | None:
    """Fast-path data running a one-device `exe` on const_bufs + the call's flat Array
    buffers, or None (see `_out_treedef`)."""
    treedef = _out_treedef(out_tree, out_avals)
    if treedef is None:
        return None
    n_in = len(const_bufs) + n_args
    sharding = sharding_of(exe.device)
    jax_avals = [_jax_core.ShapedArray(a.shape, a.dtype) for a in out_avals]
    return FastpathData(exe.xla_executable, treedef, [sharding] * n_in,
                        [sharding] * len(out_avals), jax_avals, [True] * len(out_avals),
                        [True] * n_in, [None] * n_in, list(const_bufs))


def sharded_fastpath_data(exe, const_bufs: list, arg_bufs: list, out_tree, out_avals,
                          out_bufs: list) -> FastpathData | None:
    """Fast-path data running a multi-device `exe` on const_bufs + arguments placed as
    `arg_bufs` are (each already as the program expects), its results placed as `out_bufs`,
    the results of one run, are; or None (see `_out_treedef`)."""
    treedef = _out_treedef(out_tree, out_avals)
    if treedef is None or len(out_bufs) != len(out_avals):
        return None
    ins = list(const_bufs) + list(arg_bufs)
    jax_avals = [_jax_core.ShapedArray(a.shape, a.dtype) for a in out_avals]
    return FastpathData(exe.xla_executable, treedef, [b.sharding for b in ins],
                        [b.sharding for b in out_bufs], jax_avals,
                        [bool(b.committed) for b in out_bufs], [True] * len(ins),
                        [None] * len(ins), list(const_bufs))
