"""`callback`: call a Python function on the host from inside a program, with all its rules.

`callback(*args; callback, result_avals, effect, ordered, vmap_method)` hands its operands (as
NumPy arrays) to `callback` (a HostCallback) and returns its results, checked against
`result_avals`. `effect` is one of
  "pure"  -- pure_callback: no side effect, so an unused call may be removed or merged;
  "debug" -- debug.print/debug.callback: a side effect with no results, never differentiated
             (it sees primal values), one call per batch element under vmap;
  "io"    -- io_callback: a side effect with results.
Side-effecting calls are never removed by dead-code elimination (`has_effect`); with `ordered`,
calls of one program body are chained by a token so they run in program order.

Eagerly the function is called directly. Lowered, it becomes a typed-FFI custom call naming the
callable by its position in the module's `host_callbacks` list (see RUNTIME_NOTES "Host
callbacks"); the callable handed to XLA checks and converts every result before XLA reads it, since
XLA itself reinterprets wrong dtypes or shapes silently.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from yax import errors
from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.core.trace import bind
from yax.interpreters import mlir
from yax.interpreters.batching import not_mapped
from yax.interpreters.mlir import hlo
from yax.interpreters.staging import jaxpr_has_effects
from yax.primitives._lax import lax
from yax.primitives.checkify_rules import without_nan_check
from yax.runtime.values import array_from_numpy

EFFECTS = ("pure", "debug", "io")
VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized", None)


class ShapeDtypeStruct:
    """A declared array type (shape and dtype, no data): the result type of a callback, or an
    argument of `eval_shape`/`jit(...).lower`. As `jax.ShapeDtypeStruct`."""

    __slots__ = ("shape", "dtype", "sharding", "weak_type")

    def __init__(self, shape, dtype, *, sharding=None, weak_type: bool = False):
        # symbolic dimensions of yax.export (a higher floor, so recognised by a marker) stay
        self.shape = tuple(d if getattr(d, "_yax_symbolic_dim", False) else int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.sharding = sharding
        self.weak_type = weak_type

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    @classmethod
    def like(cls, x) -> ShapeDtypeStruct:
        """The declared type of `x` (an array, tracer, NumPy array or scalar): its shape,
        dtype and weak type, and its sharding when `x` was placed explicitly (device_put)."""
        aval = getattr(x, "aval", None)
        if aval is None:
            value = np.asarray(x)
            weak = type(x) in (bool, int, float, complex)  # Python scalars, not NumPy ones
            return cls(value.shape, dtypes.canonicalize(value.dtype), weak_type=weak)
        sharding = getattr(x, "sharding", None) if getattr(x, "committed", False) else None
        return cls(aval.shape, aval.dtype, sharding=sharding, weak_type=aval.weak_type)

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self):
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})"


def result_aval(x) -> ShapedArray:
    """The aval a declared result (anything with `.shape` and `.dtype`) stands for."""
    try:
        shape, dtype = tuple(x.shape), np.dtype(x.dtype)
    except (AttributeError, TypeError) as e:
        raise errors.CallbackResultError(
            f"a callback result must be declared by an object with .shape and .dtype "
            f"(yax.ShapeDtypeStruct or an array), got {x!r}") from e
    return ShapedArray(shape, dtypes.canonicalize(dtype))


class HostCallback:
    """A Python function as the callback primitive holds it: `flat_fn(*numpy arrays)` returns a
    flat sequence of results. Hashed by identity (it sits in params and cache keys).

    `name` and `defined_at` name the user's function in errors. With `wrap_errors` False an
    exception of `flat_fn` reaches the caller unchanged (checks that raise IndexError etc.).
    """

    __slots__ = ("flat_fn", "name", "defined_at", "wrap_errors", "__weakref__")

    def __init__(self, flat_fn, name: str, defined_at=None, wrap_errors: bool = True):
        self.flat_fn = flat_fn
        self.name = name
        self.defined_at = defined_at
        self.wrap_errors = wrap_errors

    def run(self, args, result_avals, called_at) -> list:
        """Call the function on NumPy arrays; returns its results checked and converted."""
        try:
            outs = self.flat_fn(*args)
        except (errors.CallbackResultError, errors.JaxRuntimeError):
            raise  # already says what failed (a nested callback, a debugger's quit)
        except Exception as e:
            if not self.wrap_errors:
                raise
            where = f" (defined at {self.defined_at})" if self.defined_at else ""
            err = errors.CallbackError(
                f"the host callback `{self.name}`{where} raised {type(e).__name__}: {e}",
                called_at)
            raise err from e
        return check_results(self, outs, result_avals, called_at)

    def __repr__(self):
        return f"<callback {self.name}>"


def check_results(cb: HostCallback, outs, result_avals, called_at) -> list:
    """NumPy arrays of exactly the declared shapes and dtypes (64-bit results narrowed when x64
    is off, as values of the program are), C-contiguous; a clear error otherwise."""
    outs = [] if outs is None else list(outs)
    if len(outs) != len(result_avals):
        raise errors.CallbackResultError(
            f"the host callback `{cb.name}` returned {len(outs)} value(s) but {len(result_avals)} "
            f"were declared ({_types(result_avals)})", called_at)
    checked = []
    for i, (x, aval) in enumerate(zip(outs, result_avals)):
        x = np.asarray(x)
        if x.dtype != aval.dtype and dtypes.canonicalize(x.dtype) == aval.dtype \
                and x.dtype.kind == aval.dtype.kind:
            x = x.astype(aval.dtype)
        if x.shape != aval.shape or x.dtype != aval.dtype:
            got = ShapedArray(x.shape, x.dtype).str_short() if x.dtype in dtypes.SUPPORTED \
                else f"{x.dtype}{list(x.shape)}"
            raise errors.CallbackResultError(
                f"the host callback `{cb.name}` returned {got} for result {i}, but "
                f"{aval.str_short()} was declared; return exactly the declared shape and dtype "
                f"(e.g. `np.asarray(y, dtype)`) or change result_shape_dtypes", called_at)
        checked.append(x if x.flags.c_contiguous else np.array(x, order="C"))
    return checked


def _types(avals) -> str:
    return ", ".join(a.str_short() for a in avals) or "none"


# --- abstract evaluation, eager evaluation ------------------------------------------------------

def _callback_abstract_eval(*avals, callback, result_avals, effect, ordered, vmap_method):
    return list(result_avals)


def _callback_impl(*arrays, callback, result_avals, effect, ordered, vmap_method):
    outs = callback.run([np.asarray(a) for a in arrays], result_avals, errors.user_location())
    return [array_from_numpy(o) for o in outs]


# --- lowering: a typed-FFI custom call naming the callable by index -----------------------------

class _XlaCallable:
    """What XLA calls: NumPy arrays in (None for a token), a tuple of results out. It never lets
    an exception or an unchecked value reach XLA: an exception is kept for the executable to
    raise (`take_error`) and XLA is told only that the call failed."""

    __slots__ = ("callback", "result_avals", "ordered", "called_at", "error")

    def __init__(self, callback, result_avals, ordered, called_at):
        self.callback = callback
        self.result_avals = result_avals
        self.ordered = ordered
        self.called_at = called_at
        self.error = None

    def __call__(self, *args):
        if self.ordered:
            args = args[1:]
        try:
            outs = self.callback.run(args, self.result_avals, self.called_at)
        except BaseException as e:
            self.error = e
            raise RuntimeError(f"host callback {self.callback.name} failed") from None
        return (None, *outs) if self.ordered else tuple(outs)

    def take_error(self):
        err, self.error = self.error, None
        return err


def _target(platform: str) -> str:
    kind = "gpu" if platform in ("gpu", "cuda", "rocm") else "cpu"
    return f"xla_ffi_python_{kind}_callback"


def _layouts(types) -> ir.ArrayAttr:
    index = ir.IndexType.get()
    attrs = []
    for t in types:
        rank = t.rank if isinstance(t, ir.RankedTensorType) else 0
        attrs.append(ir.DenseIntElementsAttr.get(np.arange(rank - 1, -1, -1, dtype=np.int64),
                                                 type=index))
    return ir.ArrayAttr.get(attrs)


def _callback_lower(ctx, *args, callback, result_avals, effect, ordered, vmap_method):
    mctx = ctx.module_ctx
    index = len(mctx.host_callbacks)
    source = tuple(ctx.source) if ctx.source is not None else None
    mctx.host_callbacks.append(_XlaCallable(callback, result_avals, ordered, source))
    operands = list(args)
    result_types = [mlir.aval_type(a) for a in result_avals]
    if ordered:
        token = mctx.token if mctx.token is not None else hlo.AfterAllOp([]).result
        operands.insert(0, token)
        result_types.insert(0, hlo.TokenType.get())
    config_attr = ir.DictAttr.get(
        {"index": ir.IntegerAttr.get(ir.IntegerType.get_unsigned(64), index)})
    op = hlo.CustomCallOp(
        result_types, operands, _target(ctx.platform),
        has_side_effect=ir.BoolAttr.get(effect != "pure"),
        backend_config=config_attr,
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4),
        operand_layouts=_layouts([o.type for o in operands]),
        result_layouts=_layouts(result_types))
    results = list(op.results)
    if ordered:
        mctx.token = results.pop(0)
    return results


# --- differentiation: debug callbacks see primals; the others have no derivative ----------------

def _callback_jvp(primals, tangents, *, callback, result_avals, effect, ordered, vmap_method):
    if effect == "debug":
        outs = bind(callback_p, *primals, callback=callback, result_avals=result_avals,
                    effect=effect, ordered=ordered, vmap_method=vmap_method)
        return outs, []
    kind = "pure_callback" if effect == "pure" else "io_callback"
    raise errors.CallbackDerivativeError(
        f"{kind} `{callback.name}` cannot be differentiated: yax cannot see inside a Python "
        f"function. Give it a derivative by wrapping the function that calls {kind} in "
        f"yax.custom_jvp or yax.custom_vjp (whose rules may call {kind} again).")


# --- batching -----------------------------------------------------------------------------------

def _callback_batch(args, dims, *, callback, result_avals, effect, ordered, vmap_method):
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not not_mapped)
    params = dict(effect=effect, ordered=ordered, vmap_method=vmap_method)
    if effect == "debug":  # one call per batch element, in order (what the user wants to see)
        for i in range(size):
            sliced = [a if d is not_mapped else lax.index_in_dim(a, i, d, keepdims=False)
                      for a, d in zip(args, dims)]
            bind(callback_p, *sliced, callback=callback, result_avals=result_avals, **params)
        return [], []
    method = vmap_method
    if effect == "io":
        if ordered:
            raise errors.CallbackBatchingError(
                f"an ordered io_callback (`{callback.name}`) cannot be batched with vmap: the "
                f"order of the calls for the batch elements would be undefined. Use "
                f"ordered=False or loop with yax.lax.map.")
        method = "sequential"
    if method is None:
        raise errors.CallbackBatchingError(
            f"pure_callback `{callback.name}` is batched by vmap but was given no vmap_method; "
            f"pass vmap_method='sequential' (call it once per batch element), 'expand_dims' or "
            f"'broadcast_all' (call it once on batched arrays), as in JAX.")
    args = [a if d is not_mapped else _moveaxis0(a, d) for a, d in zip(args, dims)]
    batched = [d is not not_mapped for d in dims]
    out_avals = tuple(a.update(shape=(size, *a.shape)) for a in result_avals)
    if method in ("sequential", "sequential_unrolled"):
        host = _sequential(callback, batched, size)
    else:
        if method == "broadcast_all":
            args = [a if b else lax.broadcast(a, (size,)) for a, b in zip(args, batched)]
        elif method == "expand_dims":  # unbatched operands get a leading axis of size 1
            args = [a if b else lax.expand_dims(a, (0,)) for a, b in zip(args, batched)]
        # legacy_vectorized: unbatched operands are passed unchanged
        host = callback  # the user's function itself returns the batched results
    outs = bind(callback_p, *args, callback=host, result_avals=out_avals, **params)
    return outs, [0] * len(outs)


def _moveaxis0(x, d):
    if d == 0:
        return x
    perm = [d] + [i for i in range(x.ndim) if i != d]
    return lax.transpose(x, tuple(perm))


def _sequential(cb: HostCallback, batched, size) -> HostCallback:
    """A callback that calls `cb` once per batch element on the host and stacks the results."""
    def loop(*args):
        rows = [list(cb.flat_fn(*[a[i] if b else a for a, b in zip(args, batched)]))
                for i in range(size)]
        n = len(rows[0]) if rows else 0
        return [np.stack([np.asarray(r[k]) for r in rows]) for k in range(n)]
    return HostCallback(loop, cb.name, cb.defined_at, cb.wrap_errors)


callback_p = Primitive("callback", multiple_results=True, abstract_eval=_callback_abstract_eval,
                       lower=_callback_lower, jvp=_callback_jvp, batch=_callback_batch,
                       impl=_callback_impl)
callback_p.has_effect = lambda params: params["effect"] != "pure"
callback_p.ordered_effect = lambda params: params["ordered"] and params["effect"] != "pure"


# --- effects in a while_loop condition are refused -----------------------------------------------

def check_no_effects(jaxpr, where: str) -> None:
    """Raise a clear error if `jaxpr` (or a sub-program of it) has a side effect."""
    if jaxpr_has_effects(jaxpr):
        raise errors.EffectInWhileCondError(
            f"{where} contains a side effect (debug.print, debug.callback or io_callback). XLA "
            f"may run a loop condition any number of times (even zero when it knows the trip "
            f"count), so effects are not allowed there; move it into the loop body.")


def bind_callback(cb: HostCallback, args, result_avals, *, effect: str, ordered: bool = False,
                  vmap_method=None) -> list:
    """Apply the callback primitive (the entry point the public API functions share)."""
    if effect not in EFFECTS:
        raise ValueError(f"effect must be one of {EFFECTS}, got {effect!r}")
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"vmap_method must be one of {VMAP_METHODS}, got {vmap_method!r}")
    return bind(callback_p, *args, callback=cb, result_avals=tuple(result_avals), effect=effect,
                ordered=bool(ordered), vmap_method=vmap_method)

# a callback's results are the user's data: checkify does not look inside them for NaNs
callback_p.define(checkify=without_nan_check)
