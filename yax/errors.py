"""Every error yax raises at a user.

Each error names the user's own source line (frames inside yax are skipped) and says what to do.
`assert` is kept for internal invariants only.
"""

from __future__ import annotations

import linecache
import os
import sys
import threading

_YAX_DIR = os.path.dirname(os.path.abspath(__file__))


_internal_files: dict[str, bool] = {}
# more directories whose frames are not the user's (libraries on top of yax register theirs
# through yax.extend.source_info_util.register_exclusion, as with jax's)
excluded_dirs: list[str] = []


def _is_internal(filename: str) -> bool:
    """Frames of yax itself and of the import machinery are not the user's (cached per file:
    this runs for every staged equation)."""
    hit = _internal_files.get(filename)
    if hit is None:
        hit = _internal_files[filename] = (
            filename.startswith(_YAX_DIR) or filename.startswith("<frozen")
            or "contextlib" in filename or "functools" in filename
            or any(filename.startswith(d) for d in excluded_dirs))
    return hit


def user_frame(skip: int = 1):
    """The innermost frame outside yax (and outside the standard library's contextlib/functools)."""
    frame = sys._getframe(skip)
    known = _internal_files  # the cache read inline: one call less per frame walked (about 15
    while frame is not None:  # frames for each equation staged)
        filename = frame.f_code.co_filename
        internal = known.get(filename)
        if not (internal if internal is not None else _is_internal(filename)):
            break
        frame = frame.f_back
    return frame


# While a staged jaxpr is re-run under another transformation (eval_jaxpr), the equations it
# produces belong to the user line that created the original equation, not to whoever called the
# transformation: eval_jaxpr sets this, and user code run from inside a rule clears it.
class _PerThreadSlot(threading.local):
    """One value per thread, read and written as `slot[0]` (a thread's replay must not relabel
    the equations another thread is staging at the same time)."""

    value = None

    def __getitem__(self, _index):
        return self.value

    def __setitem__(self, _index, value):
        self.value = value


replay_source = _PerThreadSlot()


class running_user_code:
    """Context for calling user functions from inside a rule (custom_jvp/custom_vjp rules): the
    lines they stage are their own."""

    def __enter__(self):
        self._prev, replay_source[0] = replay_source[0], None

    def __exit__(self, *exc):
        replay_source[0] = self._prev


def user_location() -> tuple[str, int, str] | None:
    if replay_source[0] is not None:
        return tuple(replay_source[0])
    frame = user_frame(2)
    if frame is None:
        return None
    return (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


def format_location(loc) -> str:
    if loc is None:
        return "<unknown location>"
    filename, lineno, fn = loc
    text = linecache.getline(filename, lineno).strip()
    where = f"{filename}:{lineno} ({fn})"
    return f"{where}\n    {text}" if text else where


def warn_at_user_line(message: str, category=UserWarning) -> None:
    """Issue a warning attributed to the user's own line (not to a frame inside yax)."""
    import warnings
    frame = user_frame(2)
    if frame is None:
        warnings.warn(message, category, stacklevel=2)
        return
    warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno,
                           module=frame.f_globals.get("__name__") or "__main__",
                           registry=frame.f_globals.setdefault("__warningregistry__", {}))


class YaxError(Exception):
    """Base class of the errors yax raises on misuse. The message names the user's source line."""

    def __init__(self, message: str, location=None):
        self.location = location if location is not None else user_location()
        self.bare_message = message
        super().__init__(f"{message}\n  at {format_location(self.location)}")


class RefError(YaxError, ValueError):
    """A misuse of a mutable array reference (yax.new_ref). Its message is JAX's, which already
    names the traced function and its line where one is involved, so no location is appended."""

    def __init__(self, message: str, location=None):
        self.location = location if location is not None else user_location()
        self.bare_message = message
        Exception.__init__(self, message)


class RefTransformError(YaxError):
    """A Ref written with a value of a transformation that does not own it (a vmapped value
    into an unbatched Ref, a differentiated one into a plain Ref): a plain Exception, as jax's."""

    __init__ = RefError.__init__


class JAXTypeError(YaxError, TypeError):
    """The base of the type errors jax documents in `jax.errors` (concretization, leaked tracers,
    key reuse): a `TypeError`, so `except TypeError` still catches them."""


class JAXIndexError(YaxError, IndexError):
    """The base of the index errors jax documents in `jax.errors` (a traced boolean mask)."""


class JaxRuntimeError(YaxError, RuntimeError):
    """A failure while a program runs: an error XLA's runtime reported (wrapped, the original is
    the `__cause__`), a disallowed transfer (`yax.transfer_guard`), a checkify check thrown."""


class TracingDisallowedError(YaxError, RuntimeError):
    """`jit` had to trace (a cache miss) while `yax.no_tracing` is set."""


class ShapeError(YaxError, ValueError, TypeError):
    """Shapes of operands do not fit the operation.

    Both a ValueError (NumPy's convention) and a TypeError (what JAX's `lax` raises for shape
    errors), so `except` clauses written for either library catch it."""


class DTypeError(YaxError, TypeError):
    """Dtypes of operands do not fit the operation."""


class ConcretizationTypeError(JAXTypeError):
    """A traced value was needed as a concrete Python value (bool, index, shape, NumPy array)."""


ConcretizationError = ConcretizationTypeError  # yax's earlier name, kept for existing code


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool()` of a traced value, usually a Python `if` or `while` on it."""


class TracerIntegerConversionError(JAXTypeError):
    """`int()`/`__index__` of a traced value (as in JAX, not a ConcretizationTypeError)."""


class TracerArrayConversionError(JAXTypeError):
    """`np.asarray` (or another NumPy function) applied to a traced value."""


class UnexpectedTracerError(JAXTypeError):
    """A tracer was used after the transformation that made it had finished (a leaked tracer)."""


class KeyReuseError(JAXTypeError):
    """A PRNG key was consumed twice (raised only where key-reuse checking is enabled)."""


class NotImplementedAttributeError(YaxError, AttributeError):
    """A name of JAX's API that yax does not provide (yet); see docs/api_coverage.md."""


class StaticArgumentError(YaxError, ValueError):
    """A static argument to `jit` is unhashable or otherwise unusable."""


class InputMismatchError(YaxError, TypeError):
    """A compiled executable was called with arguments of other shapes or dtypes than its own."""


class NotImplementedRuleError(YaxError, NotImplementedError):
    """A primitive has no rule for a transformation yet."""


class CondPredicateError(YaxError, TypeError):
    """The predicate of lax.cond (or the index of lax.switch) is not a scalar of the right type."""


class BranchOutputMismatchError(YaxError, TypeError):
    """The branches of lax.cond/lax.switch return different structures, shapes or dtypes."""


class ScanCarryError(YaxError, TypeError):
    """The body of a scan/fori_loop returned another structure or types than its carry."""


class ScanLengthError(YaxError, ValueError):
    """The xs of a scan disagree on their leading size, or the length is missing/wrong."""


class LoopBoundsError(YaxError, TypeError):
    """fori_loop bounds that are not integers."""


class WhileLoopPredicateError(YaxError, TypeError):
    """`cond_fun` of a while_loop did not return a boolean scalar."""


class WhileLoopBodyError(YaxError, TypeError):
    """`body_fun` of a while_loop returned another structure or types than its carry."""


class NonConcreteBooleanIndexError(JAXIndexError):
    """A boolean mask index was traced, so the result's shape would depend on its values."""


class WhileLoopReverseModeError(YaxError, NotImplementedError):
    """grad/vjp/linearize through `while_loop`, whose trip count is only known at run time."""


class CustomDerivativeError(YaxError, TypeError):
    """A custom_jvp/custom_vjp rule returned the wrong structure, shape or dtype, or the function
    closes over a value that is being differentiated."""


class CustomVJPForwardModeWarning(UserWarning):
    """jvp of a custom_vjp function whose bwd is not linear: the primal function is differentiated
    instead."""


class JaxprTypeError(YaxError):
    """An internal invariant of a jaxpr is broken (a yax bug, found by YAX_CHECKS=1)."""


def concretization_hint(location) -> str:
    """Suggest the `lax` construct that matches the Python statement on the user's line."""
    text = ""
    if location is not None:
        text = linecache.getline(location[0], location[1]).strip()
    if text.startswith(("if ", "elif ")) or " if " in text:
        return ("Python `if` cannot branch on a traced value. Use `yax.lax.cond(pred, true_fun, "
                "false_fun, *operands)` or `yax.numpy.where(pred, x, y)` to select, or mark the "
                "argument static with `jit(..., static_argnums=...)`.")
    if text.startswith("while "):
        return ("Python `while` cannot test a traced value. Use `yax.lax.while_loop(cond_fun, "
                "body_fun, init)`, or mark the argument static with `static_argnums`.")
    if text.startswith("for ") and "range(" in text:
        return ("`range()` needs a concrete bound. Use `yax.lax.fori_loop(lower, upper, body, "
                "init)`, or mark the bound static with `static_argnums`.")
    if text.startswith("assert "):
        return ("`assert` on a traced value cannot be checked at trace time; check it outside "
                "`jit` or mark the argument static with `static_argnums`.")
    return ("Use `yax.lax.cond`/`yax.lax.while_loop`/`yax.numpy.where` to keep the decision in "
            "the program, or mark the argument static with `jit(..., static_argnums=...)`.")


class DeviceOutOfMemoryError(JaxRuntimeError, MemoryError):
    """An array (or a program's outputs) does not fit in the device's memory. The message names
    the shape, dtype and bytes asked for; nothing is left allocated and yax keeps working."""


# --- host callbacks, checks and debugging flags (debug helpers) --------------------------------

class CallbackError(JaxRuntimeError):
    """A host callback (debug.print/callback, pure_callback, io_callback) raised an exception;
    the original is its `__cause__`. A `JaxRuntimeError`, the class jax raises there."""


class CallbackResultError(YaxError, TypeError):
    """A host callback returned values that do not match its declared result shapes/dtypes."""


class CallbackDerivativeError(YaxError, TypeError):
    """pure_callback/io_callback has no derivative unless wrapped in custom_jvp/custom_vjp."""


class CallbackBatchingError(YaxError, NotImplementedError):
    """A callback cannot be batched the way it was asked (no vmap_method, ordered io_callback)."""


class EffectInWhileCondError(YaxError, TypeError):
    """A side effect (a host callback) inside a while_loop condition."""


class OutOfBoundsIndexError(YaxError, IndexError):
    """An index is out of bounds while index checking (check_indices / checkify) is on."""


class CheckifyError(JaxRuntimeError, ValueError):
    """A check found by `checkify` failed (raised by `err.throw()`)."""


class ConsistencyError(YaxError, AssertionError):
    """Eager and compiled runs of a function disagree (debug.check_consistency)."""


class DebugNaNError(YaxError, FloatingPointError):
    """debug_nans/debug_infs: a primitive produced a NaN (or an infinity)."""

class InvalidArgumentError(YaxError, ValueError):
    """An argument with a value the function does not accept (an unknown mode or norm name)."""


class TypePromotionError(YaxError, TypeError):
    """Two dtypes have no promotion (the name of jax.dtypes.TypePromotionError)."""


class DistributedError(YaxError, RuntimeError):
    """A multi-process run could not start, or was set up in the wrong order."""


class ExportError(YaxError, ValueError):
    """A `yax.export` artefact cannot be read (corrupt, truncated, foreign or from a newer
    format), or an exported function was called with arguments it was not exported for."""


class InconclusiveDimensionOperation(ExportError):
    """A comparison, division or integer conversion of symbolic dimensions (yax.export) whose
    outcome depends on the values the dimensions take (also `yax.extend.core`'s name)."""
