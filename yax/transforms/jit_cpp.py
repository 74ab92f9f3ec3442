"""The C++ dispatch glue of `jit`: building jaxlib's dispatch object for a `JitFunction`,
answering its cache misses, and the fast-path data that lets C++ run an entry itself.

A warm call on the C++ path runs no yax Python except wrapping the outputs; on a signature miss
C++ calls `cpp_miss`, which runs the Python path and offers the entry's fast-path data (None
keeps that signature on the Python path: sharded programs, host callbacks, debug flags).
"""

from __future__ import annotations

from yax import tree_util
from yax.config import config
from yax.core.trace import current_trace
from yax.interpreters.eager import EVAL_TRACE, onto_default_device
from yax.interpreters.staging import StagingTrace
from yax.runtime import backend, dispatch
from yax.runtime.array import Array
from yax.transforms import jit_miss
from yax.transforms.jit_entry import NO_FASTPATH, placed_runner, sharded_key


def make_cpp(fn):
    """jaxlib's dispatch object calling back into `fn` on a miss, or None (Python path only)."""
    if not (dispatch.AVAILABLE and config.jit_cpp_dispatch):
        return None
    if any(i < 0 for i in fn._static_argnums):
        return None  # relative positions depend on the call; the Python path handles them
    state = fn._state
    if state.cpp_cache is None:
        state.cpp_cache = dispatch.new_cache(config.jit_cache_size)
    try:
        cpp = dispatch.make_function(fn.name, fn._cpp_miss, sorted(fn._static_argnums),
                                     sorted(fn._static_argnames), state.cpp_cache)
        state.cpp_functions.add(cpp)
    except Exception:  # a jaxlib whose dispatch object differs: the Python path
        return None
    return cpp


def cpp_miss(fn, args, kwargs):
    """jaxlib's C++ dispatch missed its cache: run the Python path, offer fast-path data."""
    try:
        if config.disable_jit:
            return fn._fun(*args, **kwargs), None, False
        trace = current_trace()
        if trace is not EVAL_TRACE:  # a transformation is active: stage a `pjit`
            if fn._inline and isinstance(trace, StagingTrace):
                return fn._fun(*args, **kwargs), None, False
            return jit_miss.call(fn, args, kwargs), None, False
        if not kwargs and fn._state.fast:  # a sharded signature seen before
            flat, tree = tree_util.tree_flatten(args)
            if all(type(x) is Array for x in flat):
                hit = fn._state.fast.get(sharded_key(tree, flat))
                if hit is not None:
                    return hit.run_arrays(flat), None, False
        elsewhere = jit_miss.committed_elsewhere(args, kwargs)
        if elsewhere is not None:
            with backend.default_device_scope(elsewhere):
                return jit_miss.call(fn, args, kwargs), None, False
        entry, leaves, cached = jit_miss.lookup(fn, args, kwargs, compile_now=True)
        if backend.device_override() is not None:  # inside a default_device block: no C++
            # fast path (it would not move uncommitted arguments to the block's device)
            return entry.run(fn, onto_default_device(leaves)), None, False
        out = entry.run(fn, leaves)
        if (entry.placement is not None and cached and not kwargs
                and not (config.debug_nans or config.debug_infs)):
            flat, tree = tree_util.tree_flatten(args)
            if all(type(x) is Array for x in flat):
                fn._state.fast[sharded_key(tree, flat)] = placed_runner(entry, flat)
    except BaseException:
        # a raising miss would pin this signature to Python; forget it instead
        fn._state.clear_cpp()
        raise
    # With debug_nans/debug_infs on (they are in the key) every call must reach the Python
    # path, where the debugging hook checks outputs: such signatures get no fast path.
    if not cached or config.debug_nans or config.debug_infs:
        return out, None, False
    if entry.placement is not None:  # only functions that check for deleted arguments first
        return out, sharded_fastpath(entry, leaves, out) if fn._sharded else None, False
    return out, fastpath(entry, leaves), False


def sharded_fastpath(entry, leaves, out):
    """Data for jaxlib's C++ dispatch to run a multi-device `entry` on arguments placed as
    these `leaves` are, or None (Python path). Offered only where every argument is already
    placed as the program expects (no copy), and built per signature: jaxlib's signature
    holds each argument's sharding, and the data names those very sharding objects, so a
    differently placed call misses and takes the Python path, which copies it. Only for
    functions with `in_shardings`/`out_shardings`, whose calls check for deleted arguments
    before entering C++ (see `JitFunction._use_cpp`)."""
    if (entry.exe is None or entry.exe.host_callbacks or entry.has_refs
            or entry.placer is None or not all(type(x) is Array for x in leaves)
            or placed_runner(entry, leaves) is entry):
        return None
    outs = tree_util.tree_leaves(out)
    if not all(type(x) is Array for x in outs):
        return None
    try:
        return dispatch.sharded_fastpath_data(
            entry.exe, entry.const_bufs, [x._buf for x in leaves], entry.out_tree,
            entry.out_avals, [x._buf for x in outs])
    except Exception:  # jaxlib refused our data: keep this signature on the Python path
        return None


def fastpath(entry, leaves):
    """Data for jaxlib's C++ dispatch to run a one-device `entry` itself, or None."""
    if entry.fastpath is NO_FASTPATH:
        ok = (entry.exe is not None and not entry.exe.host_callbacks and not entry.has_refs
              and entry.placement is None  # jaxlib would compare shardings we do not give
              and all(type(x) is Array for x in leaves))
        try:
            entry.fastpath = (dispatch.fastpath_data(entry.exe, entry.const_bufs, len(leaves),
                                                     entry.out_tree, entry.out_avals)
                              if ok else None)
        except Exception:  # jaxlib refused our data: keep this entry on the Python path
            entry.fastpath = None
    return entry.fastpath
