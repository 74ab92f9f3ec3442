"""`jit`: trace a function once per cache key, compile it with XLA, and reuse the executable.

The cache key is (pytree structure of the dynamic arguments, their avals, the static arguments'
values, the config state). What is traced and compiled belongs to the *function* and its options,
not to the wrapper: `jit(f)` twice shares one LRU-bounded cache (`config.jit_cache_size`), held
weakly so the function can be garbage-collected.

Two call paths:
  - the C++ path (`yax.runtime.dispatch`): jaxlib's PjitFunction checks the signature and runs
    the executable itself; yax Python runs only on a signature miss (`_cpp_miss`) and to wrap
    outputs. Used when the private API is present and `config.jit_cpp_dispatch` is on.
  - the Python path: one flatten, one dictionary lookup, one execute (a call whose arguments are
    all Arrays skips the flatten). It is the fallback and handles everything the C++ path
    declines (non-Array leaves, custom pytree nodes, host callbacks, transformations).
Under another transformation the jitted function is the `pjit` primitive holding its jaxpr.
"""

from __future__ import annotations

import functools
import inspect
import logging
import threading
import weakref

from yax import errors, tree_util
from yax._resource_errors import raise_if_out_of_memory
from yax.compile.compiler import compile_jaxpr, lower_jaxpr
from yax.compile.placement import ArgumentPlacer, broadcast_prefix, resolve
from yax.config import config
from yax.core.ir import ClosedJaxpr
from yax.core.trace import Tracer, bind, current_trace
from yax.interpreters import eager, lowering
from yax.interpreters.eager import EVAL_TRACE
from yax.interpreters.staging import closure_convert, trace_to_jaxpr
from yax.primitives.call import pjit_p
from yax.runtime import backend, dispatch, sharding_bridge
from yax.runtime.array import Array
from yax.runtime.lru import LRUCache
from yax.runtime.transfer import sharding_of
from yax.transforms._args import (
    check_hashable_static,
    leaf_aval,
    non_array_argument_error,
    normalize_argnums,
)

_log = logging.getLogger("yax")
_NO_FASTPATH = object()


def _config_key() -> tuple:
    return (config.trace_state(), bool(config.disable_jit))


_CONFIG = [_config_key()]  # the config part of every cache key, refreshed on each change
config.on_change(lambda _name: _CONFIG.__setitem__(0, _config_key()))


class _Entry:
    """One traced (and, once run eagerly, compiled) specialisation of a jitted function."""

    __slots__ = ("jaxpr", "consts", "out_tree", "exe", "const_bufs", "out_avals", "donated",
                 "n_outs_single", "execute", "fastpath", "_lock", "placement", "placer")

    def __init__(self, jaxpr: ClosedJaxpr, consts, out_tree, donated, placement=None):
        self.placement = placement  # a compile.placement.Placement for multi-device programs
        self.placer = None
        self.jaxpr = jaxpr          # const-free: consts are its leading parameters
        self.consts = consts
        self.out_tree = out_tree
        self.out_avals = jaxpr.out_avals
        self.donated = donated
        self.exe = None
        self.const_bufs = None
        self.execute = None  # `exe.run`, bound once for the hot path
        self.fastpath = _NO_FASTPATH  # C++ fast-path data, built on first need
        self.n_outs_single = out_tree.num_leaves == 1 and tree_util.treedef_is_leaf(out_tree)
        self._lock = threading.Lock()

    def compile(self, owner) -> None:
        with self._lock:  # two threads running a traced-but-uncompiled entry compile once
            if self.exe is None:
                self._compile(owner)

    def lower(self):
        """The module of this entry (Shardy-annotated when it runs on several devices)."""
        n = len(self.consts)
        return lower_jaxpr(self.jaxpr, self.placement, tuple(n + i for i in self.donated),
                           n_consts=n)

    def _compile(self, owner) -> None:
        n = len(self.consts)
        pl = self.placement
        if config.log_compiles:
            _log.warning("yax: compiling %s (%s) for arguments (%s)", owner.name, owner.where(),
                         ", ".join(a.str_short() for a in self.jaxpr.in_avals[n:]))
        exe = compile_jaxpr(self.jaxpr, pl, tuple(n + i for i in self.donated), n_consts=n,
                            name=owner.name, warn_unused_donations=True)
        if pl is not None and len(pl.devices) > 1:
            self.placer = ArgumentPlacer(exe.in_shardings)
            self.const_bufs = self.placer.place_all(
                [eager.to_array(c).buffer for c in self.consts], self.jaxpr.in_avals[:n])
        else:
            self.const_bufs = [eager.to_array(c).buffer for c in self.consts]
        self.execute = exe.run
        self.exe = exe  # last: another thread seeing `exe` set finds everything ready
        owner._state.compile_count += 1

    def run_arrays(self, args, place: bool = True) -> object:
        """The Python hot path: every argument is an Array and the executable exists
        (`place=False`: the arguments are known to be placed as the program expects)."""
        bufs = [a._buf for a in args]
        if place and self.placer is not None:
            n = len(self.const_bufs)
            place = self.placer.place
            bufs = [place(n + i, b, a.aval) for i, (b, a) in enumerate(zip(bufs, args))]
        try:
            outs = self.execute(self.const_bufs + bufs)
        except Exception as e:
            _raise_if_deleted(args)
            raise_if_out_of_memory(e, self.out_avals, "jit")
            raise
        if self.n_outs_single:
            return Array(outs[0], self.out_avals[0])
        arrays = [Array(b, a) for b, a in zip(outs, self.out_avals)]
        return tree_util.tree_unflatten(self.out_tree, arrays)

    def run(self, owner, leaves) -> object:
        if self.exe is None:
            self.compile(owner)
        bufs = [x._buf if type(x) is Array else eager.to_array(x).buffer for x in leaves]
        if self.placer is not None:
            n = len(self.const_bufs)
            bufs = [self.placer.place(n + i, b, a)
                    for i, (b, a) in enumerate(zip(bufs, self.jaxpr.in_avals[n:]))]
        bufs = self.const_bufs + bufs
        try:
            outs = self.execute(bufs)
        except Exception as e:
            _raise_if_deleted(leaves)
            raise_if_out_of_memory(e, self.out_avals, "jit")
            raise
        arrays = [Array(b, a) for b, a in zip(outs, self.out_avals, strict=True)]
        if config.debug_nans or config.debug_infs:
            from yax.debug.nans import check_jit_outputs
            check_jit_outputs(self.jaxpr, self.consts + list(leaves), arrays,
                              owner.name)
        if self.n_outs_single:
            return arrays[0]
        return tree_util.tree_unflatten(self.out_tree, arrays)

    def cpp_fastpath(self, leaves):
        """Data for jaxlib's C++ dispatch to run this entry itself, or None (Python path)."""
        if self.fastpath is _NO_FASTPATH:
            ok = (self.exe is not None and not self.exe.host_callbacks
                  and self.placement is None  # jaxlib would compare shardings we do not give
                  and all(type(x) is Array for x in leaves))
            try:
                self.fastpath = (dispatch.fastpath_data(self.exe, self.const_bufs, len(leaves),
                                                        self.out_tree, self.out_avals)
                                 if ok else None)
            except Exception:  # jaxlib refused our data: keep this entry on the Python path
                self.fastpath = None
        return self.fastpath


def _check_argnums_in_range(fun, option: str, argnums, n_positional: int) -> None:
    bad = sorted(i for i in argnums if not -n_positional <= i < n_positional)
    if bad:
        name = getattr(fun, "__name__", "the function")
        raise errors.StaticArgumentError(
            f"jit({name}, {option}={tuple(sorted(argnums))}): index {bad[0]} is out of range, "
            f"{name} accepts {n_positional} positional argument(s) (valid indices "
            f"{-n_positional}..{n_positional - 1}); use static_argnames for keyword-only "
            f"arguments")


def _raise_if_deleted(leaves) -> None:
    for x in leaves:
        if type(x) is Array and x.is_deleted():
            raise errors.YaxError("an argument Array was donated to an earlier call "
                                  "(donate_argnums) and no longer exists; pass the output of that "
                                  "call instead")


class _FunState:
    """What yax learned about one (function, options), shared by every wrapper of it.

    Holds no reference to the function itself, so the weak-keyed registry can drop it.
    """

    def __init__(self, name: str):
        self.name = name
        self.entries = LRUCache(lambda: config.jit_cache_size, on_evict=self._evicted)
        self.fast: dict = {}  # Python fast-path keys -> entries (also in `entries`)
        self.trace_count = 0
        self.compile_count = 0
        self.cpp_cache = None
        self.cpp_functions = weakref.WeakSet()
        self.signatures: list = []  # recent keys, for config.explain_cache_misses
        self.location = "unknown location"  # file:line of the function (never the function)

    def _evicted(self, _key, entry) -> None:
        self.fast = {k: e for k, e in self.fast.items() if getattr(e, "entry", e) is not entry}
        self.clear_cpp()  # so the evicted executable is really freed

    def clear_cpp(self) -> None:
        for f in list(self.cpp_functions):
            f._clear_cache()

    def clear(self) -> None:
        self.entries.clear()
        self.fast = {}
        self.signatures = []
        self.clear_cpp()


_states: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_states_lock = threading.Lock()


def _state_for(fun, options) -> _FunState:
    name = getattr(fun, "__name__", "fun")
    try:
        with _states_lock:
            per_fun = _states.get(fun)
            if per_fun is None:
                per_fun = _states[fun] = {}
            state = per_fun.get(options)
            if state is None:
                state = per_fun[options] = _FunState(name)
            return state
    except TypeError:  # not weak-referenceable or not hashable: a cache of this wrapper's own
        return _FunState(name)


def clear_all() -> None:
    """Empty the caches of every jitted function (their wrappers keep working)."""
    with _states_lock:
        states = [s for per_fun in _states.values() for s in per_fun.values()]
    for s in states:
        s.clear()


def _source_location(fun) -> str:
    fun = inspect.unwrap(fun) if callable(fun) else fun
    code = getattr(fun, "__code__", None)
    if code is None:
        return "unknown location"
    return f"{code.co_filename}:{code.co_firstlineno}"


class JitFunction:
    """The callable returned by `jit`. See `jit` for the meaning of the options."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=(),
                 in_shardings=None, out_shardings=None):
        functools.update_wrapper(self, fun)
        self._in_shardings = in_shardings
        self._out_shardings = out_shardings
        self._sharded = in_shardings is not None or out_shardings is not None
        self._fun = fun
        self._static_argnums = set(normalize_argnums(static_argnums))
        self._static_argnames = set((static_argnames,) if isinstance(static_argnames, str)
                                    else static_argnames or ())
        self._donate_argnums = set(normalize_argnums(donate_argnums))
        self._link_static_names_and_positions()
        options = (frozenset(self._static_argnums), frozenset(self._static_argnames),
                   frozenset(self._donate_argnums))
        if self._sharded:
            options += (_hashable_or_id(in_shardings), _hashable_or_id(out_shardings))
        self._state = _state_for(fun, options)
        if self._state.trace_count == 0:
            self._state.location = _source_location(fun)
        self.name = self._state.name
        self._fast_ok = not self._static_argnums and not self._donate_argnums
        # sharded programs stay on the Python path: its fast key includes argument shardings
        self._cpp = None if self._sharded else self._make_cpp()

    def _make_cpp(self):
        if not (dispatch.AVAILABLE and config.jit_cpp_dispatch):
            return None
        if any(i < 0 for i in self._static_argnums):
            return None  # relative positions depend on the call; the Python path handles them
        state = self._state
        if state.cpp_cache is None:
            state.cpp_cache = dispatch.new_cache(config.jit_cache_size)
        try:
            cpp = dispatch.make_function(self.name, self._cpp_miss,
                                         sorted(self._static_argnums),
                                         sorted(self._static_argnames), state.cpp_cache)
            state.cpp_functions.add(cpp)
        except Exception:  # a jaxlib whose dispatch object differs: the Python path
            return None
        return cpp

    @property
    def trace_count(self) -> int:
        return self._state.trace_count

    @property
    def compile_count(self) -> int:
        return self._state.compile_count

    def where(self) -> str:
        """The jitted function's source file:line (for logs and error messages)."""
        return self._state.location

    def _link_static_names_and_positions(self) -> None:
        """As in JAX, a static position also makes its keyword static, and vice versa."""
        try:
            params = list(inspect.signature(self._fun).parameters.values())
        except (TypeError, ValueError):
            return
        positional = [p.name for p in params
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if not any(p.kind is p.VAR_POSITIONAL for p in params):
            _check_argnums_in_range(self._fun, "static_argnums", self._static_argnums,
                                    len(positional))
            _check_argnums_in_range(self._fun, "donate_argnums", self._donate_argnums,
                                    len(positional))
        for i in list(self._static_argnums):
            if 0 <= i < len(positional):
                self._static_argnames.add(positional[i])
        for name in list(self._static_argnames):
            if name in positional:
                self._static_argnums.add(positional.index(name))

    # --- calling -------------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if self._sharded and self._fast_ok and not kwargs and current_trace() is EVAL_TRACE:
            leaves, tree = tree_util.tree_flatten(args)
            if all(type(x) is Array for x in leaves):
                entry = self._state.fast.get(_sharded_key(tree, leaves))
                if entry is not None:
                    return entry.run_arrays(leaves)
            return self._call(args, kwargs)
        cpp = self._cpp
        if cpp is not None and current_trace() is EVAL_TRACE:
            try:
                return cpp(*args, **kwargs)
            except Exception as e:
                _raise_if_deleted(tree_util.tree_leaves((args, kwargs)))
                if isinstance(e, (TypeError, ValueError)) and not isinstance(e, errors.YaxError):
                    self._split_args(args, kwargs)  # yax's own error for unhashable statics
                raise
        if self._fast_ok and not kwargs and current_trace() is EVAL_TRACE:
            avals = []
            for a in args:
                if type(a) is not Array:
                    break
                avals.append(a.aval)
            else:
                entry = self._state.fast.get((tuple(avals), _CONFIG[0]))
                if entry is not None:
                    return entry.run_arrays(args)
            # pytrees of Arrays: one flatten, then the same single lookup
            leaves, tree = tree_util.tree_flatten(args)
            if all(type(x) is Array for x in leaves):
                entry = self._state.fast.get((tree, tuple([x.aval for x in leaves]), _CONFIG[0]))
                if entry is not None:
                    return entry.run_arrays(leaves)
        return self._call(args, kwargs)

    def _cpp_miss(self, *args, **kwargs):
        """jaxlib's C++ dispatch missed its cache: run the Python path, offer fast-path data."""
        try:
            if config.disable_jit:
                return self._fun(*args, **kwargs), None, False
            if not kwargs and self._state.fast:  # a sharded signature seen before
                flat, tree = tree_util.tree_flatten(args)
                if all(type(x) is Array for x in flat):
                    hit = self._state.fast.get(_sharded_key(tree, flat))
                    if hit is not None:
                        return hit.run_arrays(flat), None, False
            elsewhere = _committed_elsewhere(args, kwargs)
            if elsewhere is not None:
                with backend.default_device_scope(elsewhere):
                    return self._call(args, kwargs), None, False
            entry, leaves, cached = self._lookup(args, kwargs, compile_now=True)
            out = entry.run(self, leaves)
            if (entry.placement is not None and cached and not kwargs
                    and not (config.debug_nans or config.debug_infs)):
                flat, tree = tree_util.tree_flatten(args)
                if all(type(x) is Array for x in flat):
                    self._state.fast[_sharded_key(tree, flat)] = _placed_runner(entry, flat)
        except BaseException:
            # a raising miss would pin this signature to Python; forget it instead
            self._state.clear_cpp()
            raise
        # With debug_nans/debug_infs on (they are in the key) every call must reach the Python
        # path, where the debugging hook checks outputs: such signatures get no fast path.
        if not cached or config.debug_nans or config.debug_infs:
            return out, None, False
        return out, entry.cpp_fastpath(leaves), False

    def _call(self, args, kwargs):
        if config.disable_jit:
            return self._fun(*args, **kwargs)
        elsewhere = _committed_elsewhere(args, kwargs)
        if elsewhere is not None:  # runs where its committed arguments are, as in JAX
            with backend.default_device_scope(elsewhere):
                return self._call(args, kwargs)
        eager_now = current_trace() is EVAL_TRACE
        entry, leaves, cached = self._lookup(args, kwargs, compile_now=eager_now)
        if eager_now:
            out = entry.run(self, leaves)
            # no fast-path keys in debug mode: every call must reach the hook in `entry.run`
            if cached and self._fast_ok and not kwargs and not (config.debug_nans
                                                                 or config.debug_infs):
                self._remember_fast(args, entry)
            return out
        outs = bind(pjit_p, *entry.consts, *leaves, jaxpr=entry.jaxpr, name=self.name)
        return tree_util.tree_unflatten(entry.out_tree, outs)

    def _remember_fast(self, args, entry) -> None:
        """Register `entry` under the keys the fast paths of `__call__` compute."""
        if backend.device_override() is not None:  # those keys do not know the device
            return
        fast = self._state.fast
        if entry.placement is not None or self._sharded:
            leaves, tree = tree_util.tree_flatten(args)
            if self._sharded and all(type(x) is Array for x in leaves):
                fast[_sharded_key(tree, leaves)] = _placed_runner(entry, leaves)
            return
        if all(type(a) is Array for a in args):
            fast[(tuple(a.aval for a in args), _CONFIG[0])] = entry
        leaves, tree = tree_util.tree_flatten(args)
        if all(type(x) is Array for x in leaves):
            fast[(tree, tuple(x.aval for x in leaves), _CONFIG[0])] = entry

    def _split_args(self, args, kwargs):
        nargs = len(args)
        static_pos = {i + nargs if i < 0 else i for i in self._static_argnums}
        statics, dyn_args = [], []
        for i, a in enumerate(args):
            if i in static_pos:
                check_hashable_static(a, f"#{i}")
                statics.append((i, a))
            else:
                dyn_args.append(a)
        dyn_kwargs = {}
        for k, v in kwargs.items():
            if k in self._static_argnames:
                check_hashable_static(v, repr(k))
                statics.append((k, v))
            else:
                dyn_kwargs[k] = v
        return tuple(statics), dyn_args, dyn_kwargs, static_pos

    def _lookup(self, args, kwargs, compile_now: bool = False):
        """(entry, flat dynamic leaves, whether the entry is cached), tracing on a miss."""
        statics, dyn_args, dyn_kwargs, static_pos = self._split_args(args, kwargs)
        leaves, in_tree = tree_util.tree_flatten((tuple(dyn_args), dyn_kwargs))
        try:
            avals = tuple(leaf_aval(x) for x in leaves)
        except TypeError:
            raise non_array_argument_error(self._fun, args, kwargs, static_pos) from None
        arg_sh = tuple([sharding_bridge.sharding_of_array(x)
                        if type(x) is Array and sharding_bridge.is_multi_device(x._buf) else None
                        for x in leaves])
        key = (in_tree, avals, statics, _CONFIG[0], arg_sh, backend.device_override())
        state = self._state
        entry = state.entries.get(key)
        if entry is not None:
            return entry, leaves, True

        def make():
            if config.explain_cache_misses:
                _explain_miss(self, key, dyn_args, dyn_kwargs)
            new = self._trace(args, kwargs, static_pos, in_tree, avals, arg_sh)
            if compile_now and not _captures_tracer(new):
                new.compile(self)
            return new
        entry = state.entries.get_or_make(key, make, keep=lambda e: not _captures_tracer(e))
        if len(state.signatures) >= 64:
            del state.signatures[:32]
        state.signatures.append(key)
        return entry, leaves, not _captures_tracer(entry)

    def _trace(self, args, kwargs, static_pos, in_tree, avals, arg_sh=()) -> _Entry:
        self._state.trace_count += 1
        static_kwargs = {k: v for k, v in kwargs.items() if k in self._static_argnames}
        out_tree_box = []

        def flat_fun(*flat_args):
            dyn_args, dyn_kwargs = tree_util.tree_unflatten(in_tree, flat_args)
            it = iter(dyn_args)
            full = [args[i] if i in static_pos else next(it) for i in range(len(args))]
            out = self._fun(*full, **dyn_kwargs, **static_kwargs)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            out_tree_box.append(out_tree)
            return out_leaves

        closed = trace_to_jaxpr(flat_fun, list(avals), name=self.name,
                                origin=(self._fun, in_tree, static_pos))
        converted, consts = closure_convert(closed)
        donated = self._donated_leaf_indices(args, static_pos)
        placement = self._placement(in_tree, avals, arg_sh, out_tree_box[0], converted)
        return _Entry(converted, consts, out_tree_box[0], donated, placement)

    def _placement(self, in_tree, avals, arg_sh, out_tree, jaxpr):
        """Where the traced program runs (None: one device); see `jit_sharding`."""
        if self._in_shardings is None and self._out_shardings is None:
            # nothing to broadcast over the pytrees (whose custom nodes must not be rebuilt
            # from avals: their unflatten functions may compute); meshes may still be inside
            paths = _leaf_paths(in_tree, avals)
            return resolve(paths, avals, [None] * len(avals),
                                        list(arg_sh) or [None] * len(avals),
                                        [None] * len(jaxpr.out_avals), jaxpr.out_avals,
                                        jaxpr.jaxpr)
        dyn_args, dyn_kwargs = tree_util.tree_unflatten(in_tree, list(avals))
        n_kw = len(tree_util.tree_leaves(dyn_kwargs))
        in_sh = (broadcast_prefix(self._in_shardings, tuple(dyn_args),
                                               "in_shardings") + [None] * n_kw)
        outs = tree_util.tree_unflatten(out_tree, list(jaxpr.out_avals))
        out_sh = broadcast_prefix(self._out_shardings, outs, "out_shardings")
        paths = [tree_util.keystr(p) or "<arg>" for p, _ in
                 tree_util.tree_flatten_with_path((tuple(dyn_args), dyn_kwargs))[0]]
        return resolve(paths, avals, in_sh, list(arg_sh) or [None] * len(avals),
                                    out_sh, jaxpr.out_avals, jaxpr.jaxpr)

    def _donated_leaf_indices(self, args, static_pos) -> tuple:
        if not self._donate_argnums:
            return ()
        nargs = len(args)
        donate = {i + nargs if i < 0 else i for i in self._donate_argnums}
        indices, pos = [], 0
        for i, a in enumerate(args):
            if i in static_pos:
                continue
            n = len(tree_util.tree_leaves(a))
            if i in donate:
                indices.extend(range(pos, pos + n))
            pos += n
        return tuple(indices)

    # --- inspection ----------------------------------------------------------------------------

    def lower(self, *args, **kwargs) -> Lowered:
        """Trace and lower for these arguments; `.as_text()` shows StableHLO, `.compile()`."""
        entry, _, _ = self._lookup(args, kwargs)
        return Lowered(self, entry)

    def eval_shape(self, *args, **kwargs):
        entry, _, _ = self._lookup(args, kwargs)
        return tree_util.tree_unflatten(entry.out_tree, list(entry.out_avals))

    def _cache_size(self) -> int:
        return len(self._state.entries)

    def clear_cache(self) -> None:
        self._state.clear()

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __repr__(self):
        return f"<jit-compiled {self.name}>"


def _leaf_paths(in_tree, avals) -> list[str]:
    """`args[0]['w']`-style names of the flat arguments, for error messages; generic names
    when a custom pytree node cannot be rebuilt from avals."""
    try:
        tree = tree_util.tree_unflatten(in_tree, list(avals))
        return [tree_util.keystr(p) or "<arg>" for p, _ in
                tree_util.tree_flatten_with_path(tree)[0]]
    except Exception:
        return [f"<argument {i}>" for i in range(len(avals))]


def _committed_elsewhere(args, kwargs):
    """The device of a committed one-device Array argument placed off the default device
    (when no default_device override is active), else None."""
    if backend.device_override() is not None:
        return None
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


def _captures_tracer(entry: _Entry) -> bool:
    """Captured an enclosing transformation's tracer: valid for this one trace only."""
    return any(isinstance(c, Tracer) for c in entry.consts)


def _explain_miss(owner: JitFunction, key, dyn_args, dyn_kwargs) -> None:
    """config.explain_cache_misses: log what differs from the closest earlier signature."""
    previous = owner._state.signatures
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
    _log.warning("yax: retracing %s (%s) because %s", owner.name, owner.where(),
                 "; ".join(reasons) or "no earlier signature matched")


def _aval_str(a) -> str:
    return a.str_short() + (" (weak)" if a.weak_type else "")


class Lowered:
    """A traced and lowered specialisation: StableHLO text, and `compile()`."""

    def __init__(self, owner: JitFunction, entry: _Entry):
        self._owner = owner
        self._entry = entry

    def as_text(self) -> str:
        return lowering.module_text(self._entry.lower())

    @property
    def jaxpr(self) -> ClosedJaxpr:
        return self._entry.jaxpr

    def compile(self) -> Compiled:
        if self._entry.exe is None:
            self._entry.compile(self._owner)
        return Compiled(self._owner, self._entry)


class Compiled:
    """A compiled executable for fixed argument shapes/dtypes; calls are checked against them."""

    def __init__(self, owner: JitFunction, entry: _Entry):
        self._owner = owner
        self._entry = entry

    @property
    def in_avals(self):
        return self._entry.jaxpr.in_avals[len(self._entry.consts):]

    def __call__(self, *args, **kwargs):
        statics, dyn_args, dyn_kwargs, _ = self._owner._split_args(args, kwargs)
        leaves, _ = tree_util.tree_flatten((tuple(dyn_args), dyn_kwargs))
        expected = self.in_avals
        if len(leaves) != len(expected):
            raise errors.InputMismatchError(
                f"compiled function expects {len(expected)} array arguments, got {len(leaves)}")
        for i, (x, want) in enumerate(zip(leaves, expected)):
            got = leaf_aval(x)
            if got.shape != want.shape or got.dtype != want.dtype:
                raise errors.InputMismatchError(
                    f"compiled function argument {i} has type {got.str_short()} but the "
                    f"executable was compiled for {want.str_short()}; call the jitted function "
                    f"itself (it recompiles for new shapes and dtypes) or lower it again")
        return self._entry.run(self._owner, leaves)

    def as_text(self) -> str:
        return self._entry.exe.hlo_text()

    @property
    def input_shardings(self):
        """Per array argument, the sharding the program expects (flat, in argument order)."""
        exe = self._entry.exe
        n = len(self._entry.consts)
        if exe.in_shardings is None:
            return [sharding_bridge.from_jax(transfer_sharding(exe.device))] * len(self.in_avals)
        return list(exe.in_shardings[n:])

    @property
    def output_shardings(self):
        """The outputs' shardings (a pytree like the outputs)."""
        exe = self._entry.exe
        if exe.out_shardings is None:
            shardings = [sharding_bridge.from_jax(transfer_sharding(exe.device))] * \
                len(self._entry.out_avals)
        else:
            shardings = list(exe.out_shardings)
        return tree_util.tree_unflatten(self._entry.out_tree, shardings)

    def memory_analysis(self):
        """Byte counts of the compiled program under jax's names (`temp_size_in_bytes`,
        `argument_size_in_bytes`, `output_size_in_bytes`, `alias_size_in_bytes`,
        `generated_code_size_in_bytes`)."""
        return self._entry.exe.memory_analysis()

    def cost_analysis(self) -> dict:
        """XLA's cost estimate (`flops`, `bytes accessed`, ...) as a dict."""
        return self._entry.exe.cost_analysis()


class _PlacedRunner:
    """A sharded entry reached through a key whose argument shardings need no copy."""

    __slots__ = ("entry", "run_arrays")

    def __init__(self, entry):
        self.entry = entry
        self.run_arrays = functools.partial(entry.run_arrays, place=False)


def _placed_runner(entry: _Entry, leaves):
    """`entry`, or a runner skipping the placement check when every argument fits already."""
    placer = entry.placer
    if placer is None:
        return entry
    n = len(entry.const_bufs)
    if all(placer._ok[n + i].get(x._buf.sharding) for i, x in enumerate(leaves)):
        return _PlacedRunner(entry)
    return entry


def _sharded_key(tree, leaves) -> tuple:
    """The fast-path key of a sharded jit call: structure, avals and buffer shardings."""
    return (tree, tuple([x.aval for x in leaves]), tuple([x._buf.sharding for x in leaves]),
            _CONFIG[0])


def _hashable_or_id(x):
    try:
        hash(x)
        return x
    except TypeError:
        return ("id", id(x))


def transfer_sharding(device):
    return sharding_of(device)


def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=(),
        in_shardings=None, out_shardings=None):
    """Compile `fun` with XLA: trace once per argument signature, then reuse the executable.

    Args:
      fun: a function of arrays (and pytrees of arrays) returning arrays.
      static_argnums / static_argnames: arguments treated as compile-time constants (hashable);
        each new value retraces. Use them for shapes, flags and Python control flow.
      donate_argnums: arguments whose buffers may be reused for outputs; they are deleted.
      in_shardings / out_shardings: a pytree prefix of the positional arguments (of the
        outputs) with NamedSharding, SingleDeviceSharding, a PartitionSpec (under `with mesh:`)
        or None (the compiler decides; a committed multi-device argument keeps its own
        sharding) at the leaves. The program then runs SPMD-partitioned over the mesh (its
        devices also come from argument shardings and `mesh` params of its equations), and
        outputs are sharded Arrays placed as the compiler chose. Single-device arguments are
        copied to the expected sharding; a multi-device argument placed differently from
        `in_shardings` is resharded (JAX raises in some versions; copying keeps one code
        path). Different device sets or a spec that does not divide a dimension raise
        ShardingError before XLA runs.

    Returns:
      A JitFunction; call it like `fun`. `.lower(*args)` gives the StableHLO, `.trace_count`
      and `.compile_count` count traces and compiles.

    Example:
      >>> f = yax.jit(lambda x: x * 2 + 1)
      >>> f(yax.numpy.arange(3))
      Array([1, 3, 5], dtype=int32)
    """
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, donate_argnums=donate_argnums,
                                 in_shardings=in_shardings, out_shardings=out_shardings)
    sharded = in_shardings is not None or out_shardings is not None
    if isinstance(fun, JitFunction) and not (static_argnums or static_argnames or donate_argnums
                                             or sharded):
        return fun
    return JitFunction(fun, static_argnums, static_argnames, donate_argnums, in_shardings,
                       out_shardings)

