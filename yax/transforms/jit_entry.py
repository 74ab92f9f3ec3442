"""The compiled entries of jitted functions: what `jit` keeps per function and signature.

`FunState` holds what yax learned about one (function, options), shared by every wrapper of it:
an LRU of `Entry`s (one traced program per cache key, compiled on its first eager run) and the
fast-path keys that reach them with one dictionary lookup. `Entry.run_arrays` is the Python hot
path; `Entry.run` the general one. States are held weakly per function; `clear_all` empties them.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import weakref

from yax import errors, tree_util
from yax._resource_errors import raise_if_out_of_memory
from yax.compile import cache
from yax.compile.compiler import compile_jaxpr, lower_jaxpr
from yax.compile.placement import ArgumentPlacer
from yax.config import config
from yax.core.avals import ShapedArray
from yax.core.ir import ClosedJaxpr
from yax.runtime import values
from yax.runtime.array import Array, note_execute
from yax.runtime.lru import LRUCache
from yax.runtime.named_sharding import NamedSharding, type_sharding

_log = logging.getLogger("yax")
NO_FASTPATH = object()  # an entry whose C++ fast-path data is not built yet

# Checks run on a jitted call's outputs while debug_nans/debug_infs is on, as
# `check(jaxpr, args, outs, name)`; yax.debug.nans installs its own.
output_checks: list = []


def _config_key() -> tuple:
    return (config.trace_state(), bool(config.disable_jit))


CONFIG = [_config_key()]  # the config part of every cache key, refreshed on each change
config.on_change(lambda _name: CONFIG.__setitem__(0, _config_key()))


def _typed_by_placement(avals, placement):
    """Results placed by `out_shardings=` over Explicit mesh axes have those shardings as their
    types (as an explicitly sharded value's would)."""
    if placement is None or not any(isinstance(s, NamedSharding) for s in placement.out_shardings):
        return avals
    out = []
    for a, s in zip(avals, placement.out_shardings, strict=True):
        t = type_sharding(s, a.ndim) if type(a) is ShapedArray and a.sharding is None else None
        out.append(a if t is None else a.update(sharding=t))
    return out


class Entry:
    """One traced (and, once run eagerly, compiled) specialisation of a jitted function."""

    __slots__ = ("jaxpr", "consts", "out_tree", "exe", "const_bufs", "out_avals", "donated",
                 "n_outs_single", "execute", "fastpath", "_lock", "placement", "placer")
    has_refs = False  # a jit_refs.RefEntry reads and writes Refs around each call

    def __init__(self, jaxpr: ClosedJaxpr, consts, out_tree, donated, placement=None):
        self.placement = placement  # a compile.placement.Placement for multi-device programs
        self.placer = None
        self.jaxpr = jaxpr          # const-free: consts are its leading parameters
        self.consts = consts
        self.out_tree = out_tree
        self.out_avals = _typed_by_placement(jaxpr.out_avals, placement)
        self.donated = donated
        self.exe = None
        self.const_bufs = None
        self.execute = None  # `exe.run`, bound once for the hot path
        self.fastpath = NO_FASTPATH  # C++ fast-path data, built on first need
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
        logging_on = bool(config.log_compiles)
        if logging_on:  # worded as jax's messages, which tools such as optax's tests look for
            _log.warning("Compiling jit(%s) (%s) for arguments (%s)", owner.name, owner.where(),
                         ", ".join(a.str_short() for a in self.jaxpr.in_avals[n:]))
            start = time.perf_counter()
        exe = compile_jaxpr(self.jaxpr, pl, tuple(n + i for i in self.donated), n_consts=n,
                            name=owner.name, warn_unused_donations=True,
                            compiler_options=owner._compiler_options)
        if logging_on:
            _log.warning("Finished XLA compilation of jit(%s) in %.6f sec", owner.name,
                         time.perf_counter() - start)
        if pl is not None and len(pl.devices) > 1:
            self.placer = ArgumentPlacer(exe.in_shardings)
            self.const_bufs = self.placer.place_all(
                [values.to_array(c).buffer for c in self.consts], self.jaxpr.in_avals[:n])
        else:
            self.const_bufs = [values.to_array(c).buffer for c in self.consts]
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
            raise_if_deleted(args)
            raise_if_out_of_memory(e, self.out_avals, "jit")
            raise
        note_execute()
        if self.n_outs_single:
            return Array(outs[0], self.out_avals[0])
        arrays = [Array(b, a) for b, a in zip(outs, self.out_avals)]
        return tree_util.tree_unflatten(self.out_tree, arrays)

    def run(self, owner, leaves) -> object:
        if self.exe is None:
            self.compile(owner)
        bufs = [x._buf if type(x) is Array else values.to_array(x).buffer for x in leaves]
        if self.placer is not None:
            n = len(self.const_bufs)
            bufs = [self.placer.place(n + i, b, a)
                    for i, (b, a) in enumerate(zip(bufs, self.jaxpr.in_avals[n:]))]
        bufs = self.const_bufs + bufs
        try:
            outs = self.execute(bufs)
        except Exception as e:
            raise_if_deleted(leaves)
            raise_if_out_of_memory(e, self.out_avals, "jit")
            raise
        note_execute()
        arrays = [Array(b, a) for b, a in zip(outs, self.out_avals, strict=True)]
        if config.debug_nans or config.debug_infs:
            for check in output_checks:
                check(self.jaxpr, self.consts + list(leaves), arrays, owner.name)
        if self.n_outs_single:
            return arrays[0]
        return tree_util.tree_unflatten(self.out_tree, arrays)


def raise_if_deleted(leaves) -> None:
    for x in leaves:
        if type(x) is Array and x.is_deleted():
            raise errors.YaxError("an argument Array was donated to an earlier call "
                                  "(donate_argnums) and no longer exists; pass the output of that "
                                  "call instead")


class FunState:
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


def state_for(fun, options) -> FunState:
    name = getattr(fun, "__name__", "fun")
    try:
        with _states_lock:
            per_fun = _states.get(fun)
            if per_fun is None:
                per_fun = _states[fun] = {}
            state = per_fun.get(options)
            if state is None:
                state = per_fun[options] = FunState(name)
            return state
    except TypeError:  # not weak-referenceable or not hashable: a cache of this wrapper's own
        return FunState(name)


def clear_all() -> None:
    """Empty the caches of every jitted function (their wrappers keep working)."""
    with _states_lock:
        states = [s for per_fun in _states.values() for s in per_fun.values()]
    for s in states:
        s.clear()


cache.on_clear(clear_all)


class PlacedRunner:
    """A sharded entry reached through a key whose argument shardings need no copy."""

    __slots__ = ("entry", "run_arrays")

    def __init__(self, entry):
        self.entry = entry
        self.run_arrays = functools.partial(entry.run_arrays, place=False)


def placed_runner(entry: Entry, leaves):
    """`entry`, or a runner skipping the placement check when every argument fits already."""
    placer = entry.placer
    if placer is None:
        return entry
    n = len(entry.const_bufs)
    if all(placer._ok[n + i].get(x._buf.sharding) for i, x in enumerate(leaves)):
        return PlacedRunner(entry)
    return entry


def sharded_key(tree, leaves) -> tuple:
    """The fast-path key of a sharded jit call: structure, avals and buffer shardings."""
    return (tree, tuple([x.aval for x in leaves]), tuple([x._buf.sharding for x in leaves]),
            CONFIG[0])

