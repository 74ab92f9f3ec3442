"""The trace machinery: the current trace, tracers, and `bind`.

The innermost active transformation is held in a context variable (not a global stack), so each
thread and each asyncio task has its own; a new one starts at the eager trace. Each
trace knows its parent (the trace that was current when it started) and its depth `level`.
`bind` hands a primitive application to the current trace; the trace's rule runs with the parent
set as current, so any primitive the rule binds goes one level out. A value that is not one of a
trace's own tracers comes from further out and is treated as a constant by that trace.
A trace is marked dead when its transformation ends; touching one of its tracers afterwards is an
`UnexpectedTracerError`.
"""

from __future__ import annotations

import contextlib
import contextvars

from yax import errors


class Trace:
    """Base of all traces. Subclasses implement `process_primitive(prim, args, params)`."""

    name = "trace"

    def __init__(self, parent: Trace | None):
        self.parent = parent
        self.level = 0 if parent is None else parent.level + 1
        self.alive = True

    def process_primitive(self, primitive, args, params) -> list:
        raise NotImplementedError

    # --- calls of custom_jvp/custom_vjp functions (yax.transforms.custom_derivatives) ---------
    # `call` is the custom function; it offers `bind_call(args, reuse=True)` (trace the function
    # and bind its call primitive, whose rules run the user's) and `differentiate_now(trace,
    # args)` (run the user's rule at once, one level below the JVP trace `trace`).

    passes_custom_calls = False
    """Whether a custom call none of whose arguments this trace owns goes to the enclosing trace
    (differentiation and batching, as JAX) instead of to this one (staging keeps the call)."""

    def process_custom_jvp_call(self, call, args):
        """Handle a call of the custom_jvp function `call` on `args` (this trace owns some of
        them, or takes every call). By default the call is bound as a primitive."""
        return call.bind_call(args)

    def process_custom_vjp_call(self, call, args):
        """As `process_custom_jvp_call`, for a custom_vjp function."""
        return call.bind_call(args)

    def binds_axis(self, axis_name) -> bool:
        """Whether this trace binds the named axis that collectives (psum, axis_index, ...) act
        across: a vmap given that axis_name."""
        return False

    def is_unknown_tangent(self, tracer) -> bool:
        """Whether `tracer` is a tangent this trace stages into a linear program that is only
        ever transposed (reverse mode: linearize's unknowns)."""
        return False

    def describe_origin(self, tracer):
        """(function name, [(argument name, positional index or None)]) of the traced
        function's arguments that `tracer`'s value depends on, for concretization errors;
        None when this trace does not know (only staging traces record it)."""
        return None

    def lower_value(self, x):
        """`x`, one of this trace's tracers, as a value of the enclosing trace when it carries
        nothing of this transformation (a stopped gradient), else None. Lets a mutable array
        reference from outside the transformation be written with it (yax.ref)."""
        return None

    def check_foreign(self, x: Tracer) -> None:
        """A tracer that is not ours must belong to an enclosing, still active trace."""
        trace = x._trace
        if not trace.alive:
            raise errors.UnexpectedTracerError(_leak_message(x))
        if trace.level >= self.level or not self._encloses(trace):
            raise errors.UnexpectedTracerError(
                f"a tracer of an unrelated {trace.name} transformation ({x.aval.str_short()}) "
                f"reached a {self.name} transformation (another thread's or asyncio task's, or "
                f"one that is not enclosing this one). {_LEAK_ADVICE}")

    def _encloses(self, trace: Trace) -> bool:
        """Whether `trace` is one of this trace's parents (the transformations around it in
        this thread); a live tracer of another thread's transformation is not."""
        t = self.parent
        while t is not None and t.level > trace.level:
            t = t.parent
        return t is trace

    def __repr__(self):
        return f"{type(self).__name__}(level={self.level})"


_LEAK_ADVICE = ("Traced values must not be stored outside the transformed function (in globals, "
                "attributes or closures that outlive it); return them as outputs instead.")


def _origin_text(x: Tracer, what: str) -> str:
    """' It depends on the value of the argument n of f ...' when a staging trace (jit) knows
    which of its arguments the value came from; '' otherwise."""
    for _ in range(16):  # unwrap differentiation/batching tracers down to a staged value
        if hasattr(x, "_var"):
            break
        inner = getattr(x, "primal", None)
        inner = getattr(x, "val", None) if inner is None else inner
        if not isinstance(inner, Tracer):
            return ""
        x = inner
    else:
        return ""
    origin = x._trace.describe_origin(x)
    if not origin or not origin[1]:
        return ""
    fname, args = origin
    names = ", ".join(n for n, _ in args)
    text = (f" It depends on the value of the argument{'s' if len(args) > 1 else ''} {names} "
            f"of the traced function {fname}.")
    static = [i for _, i in args if i is not None]
    if static and ("int" in what or "bool" in what):
        nums = ", ".join(str(i) for i in sorted(set(static)))
        text += (f" If it is a size, shape or flag, mark it static: "
                 f"`jit({fname}, static_argnums=({nums},))`.")
    return text


def _numpy_hint() -> str:
    """' Use yax.numpy.sin ...' when the user's line calls a NumPy function by name."""
    import linecache
    import re
    loc = errors.user_location()
    text = linecache.getline(loc[0], loc[1]) if loc is not None else ""
    found = re.search(r"\b(?:np|numpy|onp)\.([A-Za-z_][\w.]*)\s*\(", text)
    if found is None:
        return ""
    name = found.group(1)
    return (f"\n  NumPy functions cannot run on traced values: use `yax.numpy.{name}` (jnp.{name}) "
            f"instead of `np.{name}`, or compute with NumPy outside the transformed function.")


def _leak_message(x: Tracer) -> str:
    where = x.source
    made = f" It was created at {errors.format_location(where)}." if where else ""
    return (f"a tracer ({x.aval.str_short()}) from a {x._trace.name} transformation that has "
            f"already finished was used.{made} {_LEAK_ADVICE}")


class Tracer:
    """A stand-in for a value inside a transformation. Operators are installed by yax.numpy."""

    __slots__ = ("_trace",)
    __array_priority__ = 1000

    @property
    def aval(self):
        raise NotImplementedError

    @property
    def source(self):
        return None

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of an unsized (0-d) traced value")
        return self.aval.shape[0]

    def to_concrete(self):
        """The concrete value behind this tracer, or a ConcretizationError."""
        raise errors.ConcretizationError(self._concretization_message("a concrete value"))

    def _concretization_message(self, what: str) -> str:
        loc = errors.user_location()
        return (f"a traced value {self.aval.str_short()} was used where {what} is needed, inside "
                f"a {self._trace.name} transformation, so its value is not known yet."
                f"{_origin_text(self, what)} {errors.concretization_hint(loc)}")

    def __bool__(self):
        if not self._trace.alive:
            raise errors.UnexpectedTracerError(_leak_message(self))
        value = self.to_concrete_or_none()
        if value is None:
            raise errors.TracerBoolConversionError(
                self._concretization_message("a Python bool (an `if`, `while`, `and`/`or` or "
                                             "`assert`)"))
        return bool(value)

    def to_concrete_or_none(self):
        return None

    def _concrete_scalar(self, kind: str, convert, error=errors.TracerIntegerConversionError):
        value = self.to_concrete_or_none()
        if value is None:
            raise error(self._concretization_message(kind))
        return convert(value)

    def __index__(self):
        return self._concrete_scalar("a Python int (an index, size or range bound)", int)

    def __int__(self):
        return self._concrete_scalar("a Python int", int, errors.ConcretizationTypeError)

    def __float__(self):
        return self._concrete_scalar("a Python float", float, errors.ConcretizationTypeError)

    def __complex__(self):
        return self._concrete_scalar("a Python complex", complex,
                                     errors.ConcretizationTypeError)

    def __array__(self, dtype=None, copy=None):
        raise errors.TracerArrayConversionError(self._concretization_message(
            "a NumPy array (np.asarray or a NumPy function)") + _numpy_hint())

    def __hash__(self):
        raise TypeError(f"a traced value {self.aval.str_short()} is not hashable; to use it as a "
                        f"static argument of jit it must be a concrete Python value")

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d traced value")
        return (self[i] for i in range(self.aval.shape[0]))

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}>with<{type(self._trace).__name__}>"


# The current trace, per thread and per asyncio task (a new thread, and a new context, start at
# the eager trace: the variable's default, installed once by yax.interpreters.eager at import).
_current: contextvars.ContextVar[Trace] | None = None
_eager: Trace | None = None


def current_trace() -> Trace:
    return _current.get()


def is_eager(trace: Trace | None = None) -> bool:
    """Whether `trace` (by default the current one) is the eager trace: no transformation is
    active, primitives run on concrete values."""
    return (_current.get() if trace is None else trace) is _eager


def eager_trace() -> Trace:
    """The eager trace (the root of every chain of traces)."""
    return _eager


def set_eval_trace(trace: Trace) -> None:
    """Make `trace` the default current trace of every thread and context (once, at import)."""
    global _current, _eager
    _eager = trace
    if _current is None:
        _current = contextvars.ContextVar("yax_current_trace", default=trace)
    elif _current.get() is not trace:
        _current.set(trace)


# Mirrors "a transformation is active" for code that cannot read a context variable: jaxlib's
# C++ jit dispatch keys its cache on a thread-local value, which the runtime installs here as
# `swap(value) -> previous value` (a thread starts at the eager trace in both).
_mirror_swap = None


def set_trace_mirror(swap) -> None:
    """Have `use_trace` call `swap(True)` on entering a non-eager trace (`swap(False)` on
    entering the eager one) and `swap(previous)` on leaving it."""
    global _mirror_swap
    _mirror_swap = swap


@contextlib.contextmanager
def use_trace(trace: Trace):
    token = _current.set(trace)
    swap = _mirror_swap
    previous = swap(trace is not _eager) if swap is not None else None
    try:
        yield trace
    finally:
        _current.reset(token)
        if swap is not None:
            swap(previous)


def run_in_trace(trace: Trace, fun, ins, finish):
    """Run `fun(*ins)` with `trace` current, read its outputs with `finish(outs)` while the trace
    is still alive, then end the trace (its tracers become leaked if they escape)."""
    try:
        with use_trace(trace):
            outs = fun(*ins)
        return finish(outs)
    finally:
        trace.alive = False


# Inside a shard_map body whose varying manual axes are checked, operands varying along
# different mesh axes are first cast to their union (jax's implicit `pvary`), so that the
# derivative of an invariant operand is summed over the devices. Set by primitives.mesh_axes
# for the body's extent; None elsewhere, at the cost of one lookup per bind.
operand_casts: contextvars.ContextVar = contextvars.ContextVar("yax_operand_casts", default=None)


def bind(primitive, *args, **params):
    """Apply `primitive` to `args` under the innermost active transformation."""
    if len(args) > 1:
        cast = operand_casts.get()
        if cast is not None:
            args = cast(primitive, args, params)
    outs = _current.get().process_primitive(primitive, args, params)
    return outs if primitive.multiple_results else outs[0]
