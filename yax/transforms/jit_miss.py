"""A jitted call that misses the fast paths: split the arguments, build the cache key, trace on
a miss (and resolve where the program runs), then compile and execute, or stage a `pjit` under
another transformation. Each function takes the `JitFunction` being called as `fn`.
"""

from __future__ import annotations

import logging

from yax import errors, tree_util
from yax.compile.placement import broadcast_prefix, resolve
from yax.config import config
from yax.core.trace import bind, is_eager
from yax.interpreters.eager import onto_default_device
from yax.interpreters.staging import closure_convert, trace_to_jaxpr
from yax.interpreters.traced_cache import captures_tracer
from yax.primitives.call import pjit_p
from yax.runtime import backend, executable, sharding_bridge
from yax.runtime.array import Array
from yax.transforms import jit_disk, jit_refs
from yax.transforms._args import check_hashable_static, non_array_argument_error
from yax.transforms.jit_entry import CONFIG, Entry, placed_runner, sharded_key

_log = logging.getLogger("yax")


def call(fn, args, kwargs):
    """The general call: eagerly, run (tracing and compiling on a miss) and remember the fast
    keys; under a transformation, stage a `pjit` of the traced program."""
    if config.disable_jit:
        return fn._fun(*args, **kwargs)
    elsewhere = committed_elsewhere(args, kwargs)
    if elsewhere is not None:  # runs where its committed arguments are, as in JAX
        with backend.default_device_scope(elsewhere):
            return call(fn, args, kwargs)
    eager_now = is_eager()
    entry, leaves, cached = lookup(fn, args, kwargs, compile_now=eager_now)
    if eager_now:
        out = entry.run(fn, onto_default_device(leaves))
        # no fast-path keys in debug mode: every call must reach the hook in `entry.run`
        if cached and fn._fast_ok and not kwargs and not (config.debug_nans
                                                          or config.debug_infs):
            remember_fast(fn, args, entry)
        return out
    if entry.has_refs:
        return entry.bind(fn.name, leaves)
    outs = bind(pjit_p, *entry.consts, *leaves, jaxpr=entry.jaxpr, name=fn.name)
    return tree_util.tree_unflatten(entry.out_tree, outs)


def remember_fast(fn, args, entry) -> None:
    """Register `entry` under the keys the fast paths of `__call__` compute."""
    if backend.device_override() is not None or entry.has_refs:  # those keys do not know the
        return  # device, nor the Refs to read and write
    fast = fn._state.fast
    if entry.placement is not None or fn._sharded:
        leaves, tree = tree_util.tree_flatten(args)
        if fn._sharded and all(type(x) is Array for x in leaves):
            fast[sharded_key(tree, leaves)] = placed_runner(entry, leaves)
        return
    if all(type(a) is Array for a in args):
        fast[(tuple(a.aval for a in args), CONFIG[0])] = entry
    leaves, tree = tree_util.tree_flatten(args)
    if all(type(x) is Array for x in leaves):
        fast[(tree, tuple(x.aval for x in leaves), CONFIG[0])] = entry


def split_args(fn, args, kwargs):
    """(static (position or name, value) pairs, dynamic positional args, dynamic kwargs,
    static positions), checking that static values are hashable."""
    nargs = len(args)
    static_pos = {i + nargs if i < 0 else i for i in fn._static_argnums}
    statics, dyn_args = [], []
    for i, a in enumerate(args):
        if i in static_pos:
            check_hashable_static(a, f"#{i}")
            statics.append((i, a))
        else:
            dyn_args.append(a)
    dyn_kwargs = {}
    for k, v in kwargs.items():
        if k in fn._static_argnames:
            check_hashable_static(v, repr(k))
            statics.append((k, v))
        else:
            dyn_kwargs[k] = v
    return tuple(statics), dyn_args, dyn_kwargs, static_pos


def lookup(fn, args, kwargs, compile_now: bool = False):
    """(entry, flat dynamic leaves, whether the entry is cached), tracing on a miss."""
    statics, dyn_args, dyn_kwargs, static_pos = split_args(fn, args, kwargs)
    leaves, in_tree = tree_util.tree_flatten((tuple(dyn_args), dyn_kwargs))
    try:
        avals = tuple(jit_refs.leaf_type(x) for x in leaves)
    except TypeError:
        raise non_array_argument_error(fn._fun, args, kwargs, static_pos) from None
    jit_refs.check_args(fn, leaves, in_tree, static_pos)
    arg_sh = tuple([sharding_bridge.sharding_of_array(x)
                    if type(x) is Array and sharding_bridge.is_multi_device(x._buf) else None
                    for x in leaves])
    key = (in_tree, avals, statics, CONFIG[0], arg_sh, backend.device_override())
    state = fn._state
    entry = state.entries.get(key)
    if entry is not None:
        if compile_now or type(entry) is not jit_disk.LoadedEntry:
            return entry, leaves, True
        # loaded from disk, it has no jaxpr: trace for the transformation (or `.lower()`)
        new = trace(fn, args, kwargs, static_pos, in_tree, avals, arg_sh)
        if not captures_tracer(new):
            state.entries.put(key, new)
        return new, leaves, not captures_tracer(new)

    def make():
        if config.explain_cache_misses:
            explain_miss(fn, key, dyn_args, dyn_kwargs)
        disk_key = (jit_disk.key_for(fn, in_tree, avals, statics, *key[3:])
                    if compile_now and jit_disk.enabled() else None)
        if disk_key is not None:
            donated = donated_leaf_indices(fn, args, static_pos, kwargs)
            loaded = jit_disk.load(disk_key, avals, donated, fn._compiler_options)
            if loaded is not None:  # tracing, lowering and compiling skipped
                return loaded
        new = trace(fn, args, kwargs, static_pos, in_tree, avals, arg_sh)
        if compile_now and not captures_tracer(new):
            loads = executable.stats["cache_loads"]
            new.compile(fn)
            if disk_key is not None:  # compiled here, or loaded by XLA's cache (or unknown)
                jit_disk.store(disk_key, new, fn._compiler_options,
                               fresh=executable.stats["cache_loads"] == loads)
        return new
    entry = state.entries.get_or_make(key, make, keep=lambda e: not captures_tracer(e))
    if len(state.signatures) >= 64:
        del state.signatures[:32]
    state.signatures.append(key)
    return entry, leaves, not captures_tracer(entry)


def trace(fn, args, kwargs, static_pos, in_tree, avals, arg_sh=()) -> Entry:
    if config.no_tracing:
        raise errors.TracingDisallowedError(
            f"re-tracing function {fn.name} at {fn.where()} for `jit`, but 'no_tracing' is set "
            f"(a new cache key: {len(avals)} array argument(s) "
            f"{', '.join(a.str_short() for a in avals) or 'none'})")
    fn._state.trace_count += 1
    static_kwargs = {k: v for k, v in kwargs.items() if k in fn._static_argnames}
    out_tree_box = []
    outer_leaves = tree_util.tree_leaves((args, kwargs))

    def flat_fun(*flat_args):
        flat_args, refs = jit_refs.enter(flat_args, avals)
        dyn_args, dyn_kwargs = tree_util.tree_unflatten(in_tree, flat_args)
        it = iter(dyn_args)
        full = [args[i] if i in static_pos else next(it) for i in range(len(args))]
        out = fn._fun(*full, **dyn_kwargs, **static_kwargs)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_tree_box.append((out_tree, refs))
        return jit_refs.leave(fn, refs, out_leaves, outer_leaves, in_tree, static_pos)

    in_avals = [getattr(a, "inner_aval", a) for a in avals]
    closed = trace_to_jaxpr(flat_fun, in_avals, name=fn.name,
                            origin=(fn._fun, in_tree, static_pos))
    converted, consts = closure_convert(closed, embed_small=True)
    donated = donated_leaf_indices(fn, args, static_pos, kwargs)
    out_tree, refs = out_tree_box[0]
    placement = placement_for(fn, in_tree, in_avals, arg_sh, out_tree, converted)
    return jit_refs.make_entry(converted, consts, out_tree, donated, placement, refs)


def placement_for(fn, in_tree, avals, arg_sh, out_tree, jaxpr):
    """Where the traced program runs (None: one device); see `compile.placement`."""
    if fn._in_shardings is None and fn._out_shardings is None:
        # nothing to broadcast over the pytrees (whose custom nodes must not be rebuilt
        # from avals: their unflatten functions may compute); meshes may still be inside
        paths = leaf_paths(in_tree, avals)
        return resolve(paths, avals, [None] * len(avals), list(arg_sh) or [None] * len(avals),
                       [None] * len(jaxpr.out_avals), jaxpr.out_avals, jaxpr.jaxpr)
    dyn_args, dyn_kwargs = tree_util.tree_unflatten(in_tree, list(avals))
    n_kw = len(tree_util.tree_leaves(dyn_kwargs))
    in_sh = broadcast_prefix(fn._in_shardings, tuple(dyn_args), "in_shardings") + [None] * n_kw
    outs = tree_util.tree_unflatten(out_tree, list(jaxpr.out_avals))
    out_sh = broadcast_prefix(fn._out_shardings, outs, "out_shardings")
    paths = [tree_util.keystr(p) or "<arg>" for p, _ in
             tree_util.tree_flatten_with_path((tuple(dyn_args), dyn_kwargs))[0]]
    return resolve(paths, avals, in_sh, list(arg_sh) or [None] * len(avals), out_sh,
                   jaxpr.out_avals, jaxpr.jaxpr)


def donated_leaf_indices(fn, args, static_pos, kwargs=None) -> tuple:
    """The flat argument indices donated: leaves of donated positions, then of keyword
    arguments named in donate_argnames (keywords flatten after positions, in sorted order)."""
    if not fn._donate_argnums and not fn._donate_argnames:
        return ()
    nargs = len(args)
    donate = {i + nargs if i < 0 else i for i in fn._donate_argnums}
    indices, pos = [], 0
    for i, a in enumerate(args):
        if i in static_pos:
            continue
        n = len(tree_util.tree_leaves(a))
        if i in donate:
            indices.extend(range(pos, pos + n))
        pos += n
    for name in sorted(k for k in (kwargs or {}) if k not in fn._static_argnames):
        n = len(tree_util.tree_leaves(kwargs[name]))
        if name in fn._donate_argnames:
            indices.extend(range(pos, pos + n))
        pos += n
    return tuple(indices)


def leaf_paths(in_tree, avals) -> list[str]:
    """`args[0]['w']`-style names of the flat arguments, for error messages; generic names
    when a custom pytree node cannot be rebuilt from avals."""
    try:
        tree = tree_util.tree_unflatten(in_tree, list(avals))
        return [tree_util.keystr(p) or "<arg>" for p, _ in
                tree_util.tree_flatten_with_path(tree)[0]]
    except Exception:
        return [f"<argument {i}>" for i in range(len(avals))]


def committed_elsewhere(args, kwargs):
    """The device of a committed one-device Array argument placed off the default device (a
    `default_device` block's included: committed arguments win, as in jax), else None."""
    default = None
    for x in tree_util.tree_leaves((args, kwargs)):
        if type(x) is Array and getattr(x, "_committed", None):
            sharding = x._buf.sharding
            if sharding_bridge.is_multi_device(x._buf):
                continue
            device = sharding_bridge.device_of_placement(sharding)
            default = default or backend.default_device()
            if device != default:
                return device
    return None


def explain_miss(fn, key, dyn_args, dyn_kwargs) -> None:
    """config.explain_cache_misses: log what differs from the closest earlier signature."""
    previous = fn._state.signatures
    if not previous:
        return
    in_tree, avals, statics, cfg = key[:4]
    same_tree = [k for k in previous if k[0] == in_tree]
    old = (same_tree or previous)[-1]
    reasons = []
    if old[0] != in_tree:
        reasons.append(f"the pytree structure of the arguments changed from {old[0]} to "
                       f"{in_tree}")
    else:
        paths = [tree_util.keystr(p) for p, _ in
                 tree_util.tree_flatten_with_path((tuple(dyn_args), dyn_kwargs))[0]]
        for path, a, b in zip(paths, old[1], avals):
            if a != b:
                what = [w for w, x, y in (("shape", a.shape, b.shape), ("dtype", a.dtype, b.dtype),
                                          ("weak type", a.weak_type, b.weak_type)) if x != y]
                reasons.append(f"argument {path or '<arg>'}: {' and '.join(what)} changed from "
                               f"{_aval_str(a)} to {_aval_str(b)}")
    if old[2] != statics:
        reasons.append(f"static arguments changed from {old[2]!r} to {statics!r}")
    if old[3] != cfg:
        reasons.append(f"configuration changed from {old[3]!r} to {cfg!r}")
    _log.warning("yax: retracing %s (%s) because %s", fn.name, fn.where(),
                 "; ".join(reasons) or "no earlier signature matched")


def _aval_str(a) -> str:
    return a.str_short() + (" (weak)" if a.weak_type else "")
