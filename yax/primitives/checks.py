"""`check`: a user's run-time check (`checkify.check(pred, msg, *fmt_args)`), as a primitive.

Inside `checkify` it becomes part of the error state (its checkify rule binds nothing). Anywhere
else it still works: eagerly it raises at once, under jit a host callback raises when the
compiled program runs. It has an effect, so it is never dropped as dead code.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.core import dtypes
from yax.core.primitive import Primitive
from yax.core.trace import bind
from yax.interpreters.batching import axis_size_of, move_batch_axis
from yax.interpreters.checkify import PAYLOAD
from yax.primitives._lax import lax
from yax.primitives.callbacks import HostCallback, _callback_lower
from yax.primitives.checkify_rules import any_true, fold


def _raise_if_false(pred, args, msg, location):
    pred = np.asarray(pred)
    if not pred.all():
        if pred.ndim:
            pos = int(np.argmax(~pred.reshape(-1)))
            args = [np.broadcast_to(np.asarray(a), pred.shape).reshape(-1)[pos] for a in args]
        raise errors.CheckifyError(msg.format(*[np.asarray(a).item() if np.ndim(a) == 0 else a
                                                for a in args]), location)


def _check_impl(pred, *args, msg):
    _raise_if_false(np.asarray(pred), [np.asarray(a) for a in args], msg, None)
    return []


def _check_lower(ctx, pred, *args, msg):
    """Outside `checkify` a check still works: a host check raises when the program runs."""
    location = tuple(ctx.source) if ctx.source is not None else None

    def run(p, *a):
        _raise_if_false(p, a, msg, location)
        return []
    cb = HostCallback(run, "checkify.check", wrap_errors=False)
    return _callback_lower(ctx, pred, *args, callback=cb, result_avals=(), effect="io",
                           ordered=False, vmap_method=None)


def _check_jvp(primals, tangents, *, msg):
    bind(check_p, *primals, msg=msg)
    return [], []


def _check_batch(args, dims, *, msg):
    size = axis_size_of(args, dims)
    pred = move_batch_axis(args[0], dims[0], 0, size)
    rest = [move_batch_axis(a, d, 0, size) for a, d in zip(args[1:], dims[1:])]
    bind(check_p, pred, *rest, msg=msg)
    return [], []


def _check_checkify(error, pred, *fmt_args, msg):
    """Functionalized: the check becomes part of the error state and is not bound."""
    if "user" not in error.enabled:
        return error, []
    n_args = len(fmt_args)
    if n_args > PAYLOAD:
        raise errors.CheckifyError(f"checkify.check supports at most {PAYLOAD} format "
                                   f"arguments, got {n_args}")
    ints = tuple(i for i, a in enumerate(error.eqn.inputs[1:])
                 if not dtypes.is_inexact(a.aval.dtype))
    failing = lax.bitwise_not(pred)
    values = []
    if pred.ndim:  # batched check: show the values of the first failing element
        flat = lax.reshape(failing, (int(np.prod(pred.shape)),))
        pos = lax.argmax(lax.convert_element_type(flat, np.int32), 0, np.int32)
        for a in fmt_args:
            a = lax.broadcast_in_dim(a, pred.shape, tuple(range(a.ndim))) \
                if a.shape != pred.shape else a
            values.append(lax.dynamic_index_in_dim(lax.reshape(a, flat.shape), pos,
                                                   keepdims=False))
    else:
        values = [a if not getattr(a, "ndim", 0) else lax.reshape(a, (-1,))[0] for a in fmt_args]
    return fold(error, any_true(failing), msg, values, ints), []


check_p = Primitive("check", multiple_results=True, abstract_eval=lambda pred, *args, msg: [],
                    impl=_check_impl, lower=_check_lower, jvp=_check_jvp, batch=_check_batch,
                    checkify=_check_checkify)
check_p.has_effect = lambda params: True  # never dropped as dead code
