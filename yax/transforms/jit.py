"""`jit`: trace a function once per cache key, compile it with XLA, and reuse the executable.

The cache key is (pytree structure of the dynamic arguments, their avals, the static arguments'
values, the config state). What is traced and compiled belongs to the *function* and its options,
not to the wrapper: `jit(f)` twice shares one LRU-bounded cache (`config.jit_cache_size`), held
weakly so the function can be garbage-collected.

Two call paths:
  - the C++ path (`jit_cpp`, over `yax.runtime.dispatch`): jaxlib's PjitFunction checks the
    signature and runs the executable itself; yax Python runs only on a signature miss and to
    wrap outputs. Used when the private API is present and `config.jit_cpp_dispatch` is on.
  - the Python path: one flatten, one dictionary lookup, one execute (a call whose arguments are
    all Arrays skips the flatten). It is the fallback and handles everything the C++ path
    declines (non-Array leaves, custom pytree nodes, host callbacks, transformations).
A call that misses both goes to `jit_miss` (key, trace, compile, execute); what is cached per
function lives in `jit_entry`. Under another transformation the jitted function is the `pjit`
primitive holding its jaxpr.
"""

from __future__ import annotations

import functools
import inspect
import warnings

from yax import errors, tree_util
from yax.core import trace as _trace
from yax.core.ir import ClosedJaxpr
from yax.interpreters import lowering
from yax.interpreters.eager import EVAL_TRACE
from yax.interpreters.staging import StagingTrace
from yax.primitives.callbacks import ShapeDtypeStruct
from yax.runtime import backend, executable, sharding_bridge
from yax.runtime.array import Array
from yax.runtime.named_sharding import SingleDeviceSharding
from yax.runtime.sharding_bridge import sharding_of
from yax.runtime.values import leaf_aval
from yax.transforms import jit_cpp, jit_miss
from yax.transforms._args import normalize_argnums
from yax.transforms.jit_entry import (
    CONFIG,
    Entry,
    raise_if_deleted,
    sharded_key,
    state_for,
)
from yax.transforms.traced import Traced

# `current_trace` without its Python frame: the variable exists once yax.interpreters.eager is
# imported (above) and is never replaced
_current_trace = _trace._current.get


def _check_argnums_in_range(fun, option: str, argnums, n_positional: int) -> None:
    bad = sorted(i for i in argnums if not -n_positional <= i < n_positional)
    if bad:
        name = getattr(fun, "__name__", "the function")
        raise errors.StaticArgumentError(
            f"jit({name}, {option}={tuple(sorted(argnums))}): index {bad[0]} is out of range, "
            f"{name} accepts {n_positional} positional argument(s) (valid indices "
            f"{-n_positional}..{n_positional - 1}); use static_argnames for keyword-only "
            f"arguments")


def _source_location(fun) -> str:
    fun = inspect.unwrap(fun) if callable(fun) else fun
    code = getattr(fun, "__code__", None)
    if code is None:
        return "unknown location"
    return f"{code.co_filename}:{code.co_firstlineno}"


def _not_ready(*_args, **_kwargs):
    raise RuntimeError("this JitFunction is still being constructed")


class JitFunction(functools.partial):
    """The callable returned by `jit`. See `jit` for the meaning of the options.

    It is a `functools.partial` of what a call runs, with no bound arguments, because calling a
    partial stays in C: where that callable is jaxlib's C++ dispatch object (`jit_cpp`), a warm
    call runs no yax Python at all. (An instance of a plain class with a `__call__` method, or
    a property returning the callable, costs about 0.4 us more per call.) The dispatch object
    checks the signature, which includes whether a transformation is active (mirrored by
    `use_trace`), and runs the executable; a miss reaches `jit_cpp.cpp_miss`. Functions whose
    call errors yax rewords (donation, static arguments) run `_call_python` instead.
    """

    def __new__(cls, *_args, **_kwargs):
        return super().__new__(cls, _not_ready)  # the callable is set by `__init__`

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=(),
                 in_shardings=None, out_shardings=None, *, donate_argnames=(),
                 keep_unused=False, inline=False, compiler_options=None):
        functools.update_wrapper(self, fun)
        self._in_shardings = in_shardings
        self._out_shardings = out_shardings
        self._sharded = in_shardings is not None or out_shardings is not None
        self._fun = fun
        self._static_argnums = set(normalize_argnums(static_argnums))
        self._static_argnames = _names(static_argnames)
        self._donate_argnums = set(normalize_argnums(donate_argnums))
        self._donate_argnames = _names(donate_argnames)
        self._keep_unused = bool(keep_unused)  # yax keeps every parameter in the program anyway
        self._inline = bool(inline)
        self._compiler_options = dict(compiler_options) if compiler_options else None
        self._link_static_names_and_positions()
        options = (frozenset(self._static_argnums), frozenset(self._static_argnames),
                   frozenset(self._donate_argnums), frozenset(self._donate_argnames))
        if self._sharded:
            options += (_hashable_or_id(in_shardings), _hashable_or_id(out_shardings))
        if self._compiler_options:  # other options, other executables
            options += (tuple(sorted(self._compiler_options.items())),)
        self._state = state_for(fun, options)
        if self._state.trace_count == 0:
            self._state.location = _source_location(fun)
        self.name = self._state.name
        self._fast_ok = not (self._static_argnums or self._donate_argnums
                             or self._donate_argnames)
        self._cpp = None if self._donate_argnames else jit_cpp.make_cpp(self)
        self._use_cpp(self._cpp)

    def _use_cpp(self, cpp) -> None:
        """Call through `cpp` (jaxlib's dispatch object, or None: the Python path). A call runs
        the C++ object itself (see the class docstring), unless yax must see the call's errors
        (donated arguments, unhashable statics) to reword them, or the program is sharded
        (`in_shardings`/`out_shardings`): jaxlib 0.10.2 crashes the process when a sharded
        program's C++ fast path meets a deleted (donated) argument, so those calls check their
        arguments first (`_call_python`), and only they get sharded fast-path data."""
        self._cpp = cpp
        call = self._call_python
        if cpp is not None and self._fast_ok and not self._static_argnames and not self._sharded:
            call = cpp
        self.__setstate__((call, (), {}, self.__dict__))

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
        for nums, names in ((self._static_argnums, self._static_argnames),
                            (self._donate_argnums, self._donate_argnames)):
            for i in list(nums):
                if 0 <= i < len(positional):
                    names.add(positional[i])
            for name in list(names):
                if name in positional:
                    nums.add(positional.index(name))

    # --- calling -------------------------------------------------------------------------------

    def _call_python(self, *args, **kwargs):
        # the eager trace object itself, read from its context variable (a C call, no Python
        # frame of `current_trace()` or `is_eager()` on the warm path)
        trace = _current_trace()
        if trace is not EVAL_TRACE:  # under a transformation: a staged `pjit`
            if self._inline and isinstance(trace, StagingTrace):  # inline=True: no pjit
                return self._fun(*args, **kwargs)
            return jit_miss.call(self, args, kwargs)
        cpp = self._cpp
        if cpp is not None:  # the warm path: jaxlib checks the signature and runs the program
            if self._sharded:
                raise_if_deleted(tree_util.tree_leaves((args, kwargs)))  # see `_use_cpp`
            try:
                return cpp(*args, **kwargs)
            except Exception as e:
                raise_if_deleted(tree_util.tree_leaves((args, kwargs)))
                if isinstance(e, (TypeError, ValueError)) and not isinstance(e, errors.YaxError):
                    jit_miss.split_args(self, args, kwargs)  # yax's error for unhashable statics
                raise
        # the Python warm path: one lookup, one execute (its keys do not know the device of a
        # default_device block)
        if self._fast_ok and not kwargs and not backend.override_active[0]:
            entry, leaves = self._fast_entry(args)
            if entry is not None:
                return entry.run_arrays(leaves)
        return jit_miss.call(self, args, kwargs)

    def _fast_entry(self, args) -> tuple:
        """(entry, flat Arrays) for a call of Arrays (or pytrees of them) that one dictionary
        lookup serves, else (None, None)."""
        fast = self._state.fast
        if not self._sharded:
            avals = []
            for a in args:
                if type(a) is not Array:
                    break
                avals.append(a.aval)
            else:
                entry = fast.get((tuple(avals), CONFIG[0]))
                if entry is not None:
                    return entry, args
        leaves, tree = tree_util.tree_flatten(args)  # pytrees of Arrays: one flatten
        if not all(type(x) is Array for x in leaves):
            return None, None
        if self._sharded:  # the key includes the arguments' placement
            return fast.get(sharded_key(tree, leaves)), leaves
        return fast.get((tree, tuple([x.aval for x in leaves]), CONFIG[0])), leaves

    def _cpp_miss(self, *args, **kwargs):
        """jaxlib's C++ dispatch missed its cache (see `jit_cpp.cpp_miss`)."""
        return jit_cpp.cpp_miss(self, args, kwargs)

    # --- inspection ----------------------------------------------------------------------------

    def lower(self, *args, **kwargs) -> Lowered:
        """Trace and lower for these arguments; `.as_text()` shows StableHLO, `.compile()`."""
        return self.trace(*args, **kwargs).lower()

    def trace(self, *args, **kwargs) -> Traced:
        """Trace (without lowering) for these arguments: a `Traced` with `.jaxpr`, `.out_info`,
        `.args_info` and `.lower()`, as jax's `jit(f).trace(...)`."""
        entry, leaves, _ = jit_miss.lookup(self, args, kwargs)
        _, dyn_args, dyn_kwargs, _ = jit_miss.split_args(self, args, kwargs)
        in_tree = tree_util.tree_structure((tuple(dyn_args), dyn_kwargs))
        traced = Traced(self.name, entry, in_tree, [leaf_aval(x) for x in leaves],
                        lambda: Lowered(self, entry, traced))
        return traced

    def eval_shape(self, *args, **kwargs):
        """The outputs' `ShapeDtypeStruct`s (shape, dtype, weak type), as in jax."""
        entry, _, _ = jit_miss.lookup(self, args, kwargs)
        out_tree = getattr(entry, "real_tree", entry.out_tree)  # without the Refs' new values
        return tree_util.tree_unflatten(out_tree, [
            ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
            for a in entry.out_avals[:out_tree.num_leaves]])

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


def _dialect(dialect: str | None) -> str:
    if dialect in (None, "stablehlo", "hlo"):
        return dialect or "stablehlo"
    raise ValueError(f"unknown dialect {dialect!r}: yax lowers to 'stablehlo' (or 'hlo')")


class Lowered:
    """A traced and lowered specialisation: StableHLO text, and `compile()`; `in_tree`,
    `out_tree`, `args_info` and `out_info` as on the `Traced` it came from."""

    def __init__(self, owner: JitFunction, entry: Entry, traced: Traced | None = None):
        self._owner = owner
        self._entry = entry
        self._traced = traced

    in_tree = property(lambda self: self._traced.in_tree)
    out_tree = property(lambda self: self._traced.out_tree)
    args_info = property(lambda self: self._traced.args_info)
    out_info = property(lambda self: self._traced.out_info)

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The program as text: StableHLO (the default, `dialect="stablehlo"`) or HLO."""
        if _dialect(dialect) == "hlo":
            return self.compiler_ir("hlo").as_hlo_text()
        mctx = self._entry.lower()
        if debug_info:
            with mctx.context:
                return mctx.module.operation.get_asm(enable_debug_info=True)
        return lowering.module_text(mctx)

    def compiler_ir(self, dialect: str | None = None):
        """The program as the compiler takes it, as jax's `Lowered.compiler_ir`: a
        `jaxlib.mlir.ir.Module` in the StableHLO dialect (the default), or with
        `dialect="hlo"` an XLA `XlaComputation` (`.as_hlo_text()`)."""
        module = self._entry.lower().module
        if _dialect(dialect) == "hlo":
            return executable.hlo_computation(module)
        return module

    @property
    def jaxpr(self) -> ClosedJaxpr:
        return self._entry.jaxpr

    def compile(self) -> Compiled:
        if self._entry.exe is None:
            self._entry.compile(self._owner)
        return Compiled(self._owner, self._entry)


class Compiled:
    """A compiled executable for fixed argument shapes/dtypes; calls are checked against them."""

    def __init__(self, owner: JitFunction, entry: Entry):
        self._owner = owner
        self._entry = entry

    @property
    def in_avals(self):
        return self._entry.jaxpr.in_avals[len(self._entry.consts):]

    def __call__(self, *args, **kwargs):
        statics, dyn_args, dyn_kwargs, _ = jit_miss.split_args(self._owner, args, kwargs)
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
            return [sharding_bridge.from_jax(sharding_of(exe.device))] * len(self.in_avals)
        return list(exe.in_shardings[n:])

    @property
    def output_shardings(self):
        """The outputs' shardings (a pytree like the outputs)."""
        exe = self._entry.exe
        if exe.out_shardings is None:
            shardings = [sharding_bridge.from_jax(sharding_of(exe.device))] * \
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


def _names(names) -> set:
    return set((names,) if isinstance(names, str) else names or ())


def _hashable_or_id(x):
    try:
        hash(x)
        return x
    except TypeError:
        return ("id", id(x))


def jit(fun=None, /, *, in_shardings=None, out_shardings=None, static_argnums=(),
        static_argnames=(), donate_argnums=(), donate_argnames=(), keep_unused=False,
        device=None, backend=None, inline=False, compiler_options=None):
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
      donate_argnames: donated arguments by name (linked with donate_argnums, as static ones).
      keep_unused: accepted as in jax; yax always keeps unused parameters in the program.
      device / backend: run on that device (or the first device of that platform); deprecated
        in jax, which warns, and so does yax. Not together, nor with in/out_shardings.
      inline: under another jit (or any staging), trace `fun` into the outer program instead
        of a nested `pjit` equation.
      compiler_options: XLA options by name, e.g. `{"xla_cpu_enable_fast_math": True}`.

    Returns:
      A JitFunction; call it like `fun`. `.lower(*args)` gives the StableHLO, `.trace_count`
      and `.compile_count` count traces and compiles.

    Example:
      >>> f = yax.jit(lambda x: x * 2 + 1)
      >>> f(yax.numpy.arange(3))
      Array([1, 3, 5], dtype=int32)
    """
    options = dict(donate_argnames=donate_argnames, keep_unused=keep_unused, inline=inline,
                   compiler_options=compiler_options)
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, donate_argnums=donate_argnums,
                                 in_shardings=in_shardings, out_shardings=out_shardings,
                                 device=device, backend=backend, **options)
    if device is not None or backend is not None:
        in_shardings = out_shardings = _device_sharding(device, backend, in_shardings,
                                                        out_shardings)
    sharded = in_shardings is not None or out_shardings is not None
    if isinstance(fun, JitFunction) and not (static_argnums or static_argnames or donate_argnums
                                             or sharded or donate_argnames or inline
                                             or compiler_options):
        return fun
    return JitFunction(fun, static_argnums, static_argnames, donate_argnums, in_shardings,
                       out_shardings, **options)


def _device_sharding(device, backend_name, in_shardings, out_shardings):
    """jit(device=, backend=): the one-device sharding of every argument and output."""
    warnings.warn("backend and device argument on jit is deprecated (as in jax): put the "
                  "arguments on the device with yax.device_put instead", DeprecationWarning,
                  stacklevel=3)
    if device is not None and backend_name is not None:
        raise ValueError(f"can't specify both a device and a backend for jit, got "
                         f"device={device!r} and backend={backend_name!r}")
    if in_shardings is not None or out_shardings is not None:
        raise ValueError("jit: device/backend cannot be combined with in_shardings or "
                         "out_shardings")
    if device is None:
        device = backend.devices(backend_name)[0]
    return SingleDeviceSharding(device)
