"""`jit`: trace a function once per cache key, compile it with XLA, and reuse the executable.

The cache key is (pytree structure of the dynamic arguments, their avals, the static arguments'
values, the config state). A call whose key is cached costs one flatten, one dictionary lookup and
one execute; a call whose arguments are all Arrays skips the flatten (the fast path). Under
another transformation the jitted function is the `pjit` primitive holding its jaxpr.
"""

from __future__ import annotations

import functools
import inspect
import warnings

from yax import errors, tree_util
from yax.config import config
from yax.core.ir import ClosedJaxpr
from yax.core.trace import Tracer, bind, current_trace
from yax.interpreters import eager, lowering
from yax.interpreters.eager import EVAL_TRACE
from yax.interpreters.staging import closure_convert, trace_to_jaxpr
from yax.primitives.call import pjit_p
from yax.runtime import backend, executable
from yax.runtime.array import Array
from yax.transforms._args import check_hashable_static, leaf_aval, normalize_argnums


class _Entry:
    """One traced (and, once run eagerly, compiled) specialisation of a jitted function."""

    __slots__ = ("jaxpr", "consts", "out_tree", "exe", "const_bufs", "out_avals", "donated",
                 "n_outs_single", "execute")

    def __init__(self, jaxpr: ClosedJaxpr, consts, out_tree, donated):
        self.jaxpr = jaxpr          # const-free: consts are its leading parameters
        self.consts = consts
        self.out_tree = out_tree
        self.out_avals = jaxpr.out_avals
        self.donated = donated
        self.exe = None
        self.const_bufs = None
        self.execute = None  # the raw PJRT execute of `exe`, bound once for the hot path
        self.n_outs_single = out_tree.num_leaves == 1 and tree_util.treedef_is_leaf(out_tree)

    def compile(self, owner) -> None:
        platform = backend.platform()
        n = len(self.consts)
        donated = tuple(n + i for i in self.donated)
        mctx = lowering.lower_module(self.jaxpr.jaxpr, platform=platform, consts_as_args=False,
                                     donated=donated)
        if mctx.unused_donations:
            warnings.warn(f"{len(mctx.unused_donations)} donated buffer(s) could not be reused: "
                          f"no output has the same shape and dtype; they are not donated",
                          UserWarning, stacklevel=4)
        self.exe = executable.compile_module(mctx.module, self.jaxpr.in_avals, self.out_avals,
                                             platform=platform)
        self.const_bufs = [eager.to_array(c).buffer for c in self.consts]
        self.execute = self.exe.raw_execute
        owner.compile_count += 1

    def run_arrays(self, args) -> object:
        """The hot path: every argument is an Array and the executable exists."""
        try:
            outs = self.execute(self.const_bufs + [a._buf for a in args])
        except Exception:
            _raise_if_deleted(args)
            raise
        if self.n_outs_single:
            return Array(outs[0], self.out_avals[0])
        arrays = [Array(b, a) for b, a in zip(outs, self.out_avals)]
        return tree_util.tree_unflatten(self.out_tree, arrays)

    def run(self, owner, leaves) -> object:
        if self.exe is None:
            self.compile(owner)
        bufs = self.const_bufs + [x._buf if type(x) is Array else eager.to_array(x).buffer
                                  for x in leaves]
        try:
            outs = self.exe(bufs)
        except Exception:
            _raise_if_deleted(leaves)
            raise
        arrays = [Array(b, a) for b, a in zip(outs, self.out_avals, strict=True)]
        if self.n_outs_single:
            return arrays[0]
        return tree_util.tree_unflatten(self.out_tree, arrays)


def _raise_if_deleted(leaves) -> None:
    for x in leaves:
        if type(x) is Array and x.is_deleted():
            raise errors.YaxError("an argument Array was donated to an earlier call "
                                  "(donate_argnums) and no longer exists; pass the output of that "
                                  "call instead")


class JitFunction:
    """The callable returned by `jit`. See `jit` for the meaning of the options."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=()):
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._static_argnums = set(normalize_argnums(static_argnums))
        self._static_argnames = set((static_argnames,) if isinstance(static_argnames, str)
                                    else static_argnames or ())
        self._donate_argnums = set(normalize_argnums(donate_argnums))
        self._link_static_names_and_positions()
        self._cache: dict = {}
        self._fast_cache: dict = {}
        self._fast_ok = not self._static_argnums and not self._donate_argnums
        self.trace_count = 0
        self.compile_count = 0

    def _link_static_names_and_positions(self) -> None:
        """As in JAX, a static position also makes its keyword static, and vice versa."""
        try:
            params = list(inspect.signature(self._fun).parameters.values())
        except (TypeError, ValueError):
            return
        positional = [p.name for p in params
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        for i in list(self._static_argnums):
            if 0 <= i < len(positional):
                self._static_argnames.add(positional[i])
        for name in list(self._static_argnames):
            if name in positional:
                self._static_argnums.add(positional.index(name))

    # --- calling -------------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if self._fast_ok and not kwargs and current_trace() is EVAL_TRACE:
            avals = []
            for a in args:
                if type(a) is not Array:
                    break
                avals.append(a.aval)
            else:
                entry = self._fast_cache.get((tuple(avals), config.enable_x64, config.platform))
                if entry is not None:
                    return entry.run_arrays(args)
            # pytrees of Arrays: one flatten, then the same single lookup
            leaves, tree = tree_util.tree_flatten(args)
            if all(type(x) is Array for x in leaves):
                key = (tree, tuple([x.aval for x in leaves]), config.enable_x64, config.platform)
                entry = self._fast_cache.get(key)
                if entry is not None:
                    return entry.run_arrays(leaves)
        return self._call(args, kwargs)

    def _call(self, args, kwargs):
        entry, leaves, key = self._lookup(args, kwargs)
        if current_trace() is EVAL_TRACE:
            out = entry.run(self, leaves)
            if key is not None and self._fast_ok and not kwargs:
                self._remember_fast(args, entry)
            return out
        outs = bind(pjit_p, *entry.consts, *leaves, jaxpr=entry.jaxpr,
                    name=getattr(self._fun, "__name__", "fun"))
        return tree_util.tree_unflatten(entry.out_tree, outs)

    def _remember_fast(self, args, entry) -> None:
        """Register `entry` under the keys the fast paths of `__call__` compute."""
        if all(type(a) is Array for a in args):
            key = (tuple(a.aval for a in args), config.enable_x64, config.platform)
            self._fast_cache[key] = entry
        leaves, tree = tree_util.tree_flatten(args)
        if all(type(x) is Array for x in leaves):
            key = (tree, tuple(x.aval for x in leaves), config.enable_x64, config.platform)
            self._fast_cache[key] = entry

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

    def _lookup(self, args, kwargs):
        statics, dyn_args, dyn_kwargs, static_pos = self._split_args(args, kwargs)
        leaves, in_tree = tree_util.tree_flatten((tuple(dyn_args), dyn_kwargs))
        avals = tuple(leaf_aval(x) for x in leaves)
        key = (in_tree, avals, statics, config.trace_state())
        entry = self._cache.get(key)
        if entry is None:
            entry = self._trace(args, kwargs, static_pos, in_tree, avals)
            if any(isinstance(c, Tracer) for c in entry.consts):
                key = None  # captured an enclosing transformation's tracer: valid once only
            else:
                self._cache[key] = entry
        return entry, leaves, key

    def _trace(self, args, kwargs, static_pos, in_tree, avals) -> _Entry:
        self.trace_count += 1
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

        name = getattr(self._fun, "__name__", "fun")
        closed = trace_to_jaxpr(flat_fun, avals, name=name, origin=(self._fun, in_tree, static_pos))
        converted, consts = closure_convert(closed)
        donated = self._donated_leaf_indices(args, static_pos)
        return _Entry(converted, consts, out_tree_box[0], donated)

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
        return len(self._cache)

    def clear_cache(self) -> None:
        self._cache.clear()
        self._fast_cache.clear()

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __repr__(self):
        return f"<jit-compiled {getattr(self._fun, '__name__', 'function')}>"


class Lowered:
    """A traced and lowered specialisation: StableHLO text, and `compile()`."""

    def __init__(self, owner: JitFunction, entry: _Entry):
        self._owner = owner
        self._entry = entry

    def as_text(self) -> str:
        n = len(self._entry.consts)
        mctx = lowering.lower_module(self._entry.jaxpr.jaxpr, platform=backend.platform(),
                                     consts_as_args=False,
                                     donated=tuple(n + i for i in self._entry.donated))
        return lowering.module_text(mctx)

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

    def memory_analysis(self) -> dict:
        """Argument, output, temporary and alias bytes of the compiled program."""
        return self._entry.exe.memory_stats()


def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=()):
    """Compile `fun` with XLA: trace once per argument signature, then reuse the executable.

    Args:
      fun: a function of arrays (and pytrees of arrays) returning arrays.
      static_argnums / static_argnames: arguments treated as compile-time constants (hashable);
        each new value retraces. Use them for shapes, flags and Python control flow.
      donate_argnums: arguments whose buffers may be reused for outputs; they are deleted.

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
                                 static_argnames=static_argnames, donate_argnums=donate_argnums)
    if isinstance(fun, JitFunction) and not (static_argnums or static_argnames or donate_argnums):
        return fun
    return JitFunction(fun, static_argnums, static_argnames, donate_argnums)

