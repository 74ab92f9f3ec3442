"""`check`: a user's run-time check (`checkify.check(pred, msg, *args, **kwargs)`), as a primitive.

The format arguments are pytrees of arrays, flattened into the operands after `pred`; the param
`fmt_tree` rebuilds `(args, kwargs)` from them, and the message is `msg.format(*args, **kwargs)`
with each leaf shown as an Array, as JAX shows it (`{x}` prints its value, `{x!r}` the Array,
`{x:.2f}` formats a scalar, a dict shows its leaves' reprs).

Inside `checkify` it becomes part of the error state (its checkify rule binds nothing). Anywhere
else it still works: eagerly it raises at once, under jit a host callback raises when the
compiled program runs. It has an effect, so it is never dropped as dead code.

`checkify.debug_check` binds it with `debug=True`: a check only `checkify` sees (outside it,
evaluation and lowering do nothing).
"""

from __future__ import annotations

import numpy as np

from yax import errors, tree_util
from yax.core import dtypes
from yax.core.avals import aval_of_value
from yax.core.ir import subjaxprs
from yax.core.primitive import Primitive
from yax.core.trace import bind
from yax.interpreters.batching import axis_size_of, move_batch_axis
from yax.interpreters.checkify import PAYLOAD
from yax.primitives._lax import lax
from yax.primitives.callbacks import HostCallback, _callback_lower
from yax.primitives.checkify_rules import any_true, fold
from yax.runtime.values import array_from_numpy


def check_message(msg: str, fmt_args, fmt_kwargs):
    """Flatten a check's format arguments: (leaves, fmt_tree). The message is tried on
    placeholders now, so a name or index it lacks fails at trace time, as in JAX."""
    if not isinstance(msg, str):
        raise TypeError(f"checkify.check: the message must be a str, got {type(msg).__name__}")
    leaves, fmt_tree = tree_util.tree_flatten((tuple(fmt_args), dict(fmt_kwargs)))
    args, kwargs = tree_util.tree_unflatten(fmt_tree, [0] * len(leaves))
    try:
        msg.format(*args, **kwargs)
    except (IndexError, KeyError) as e:
        raise type(e)(f"checkify.check: the message {msg!r} names {e} but the check was given "
                      f"{len(fmt_args)} positional format argument(s) and keywords "
                      f"{sorted(fmt_kwargs)}") from None
    except (ValueError, TypeError):  # a format spec for an array, say: checked at run time
        pass
    return leaves, fmt_tree


def render(msg: str, fmt_tree, leaves) -> str:
    """`msg` formatted with the format arguments rebuilt from their (NumPy) leaves."""
    shown = [array_from_numpy(np.asarray(a)) for a in leaves]
    args, kwargs = tree_util.tree_unflatten(fmt_tree, shown)
    return msg.format(*args, **kwargs)


def _raise_if_false(pred, args, msg, fmt_tree, location):
    pred = np.asarray(pred)
    if not pred.all():
        args = [np.asarray(a) for a in args]
        if pred.ndim:  # show the values of the first failing element
            pos = np.unravel_index(int(np.argmax(~pred.reshape(-1))), pred.shape)
            args = [a[pos] if a.shape[:pred.ndim] == pred.shape else a for a in args]
        raise errors.CheckifyError(render(msg, fmt_tree, args), location)


def _check_impl(pred, *args, msg, fmt_tree, debug=False):
    if not debug:
        _raise_if_false(np.asarray(pred), args, msg, fmt_tree, None)
    return []


def _check_lower(ctx, pred, *args, msg, fmt_tree, debug=False):
    """Outside `checkify` a check still works: a host check raises when the program runs (a
    debug check does nothing)."""
    if debug:
        return []
    location = tuple(ctx.source) if ctx.source is not None else None

    def run(p, *a):
        _raise_if_false(p, a, msg, fmt_tree, location)
        return []
    cb = HostCallback(run, "checkify.check", wrap_errors=False)
    return _callback_lower(ctx, pred, *args, callback=cb, result_avals=(), effect="io",
                           ordered=False, vmap_method=None)


def _check_jvp(primals, tangents, **params):
    bind(check_p, *primals, **params)
    return [], []


def _check_batch(args, dims, **params):
    size = axis_size_of(args, dims)
    pred = move_batch_axis(args[0], dims[0], 0, size)
    rest = [move_batch_axis(a, d, 0, size) for a, d in zip(args[1:], dims[1:])]
    bind(check_p, pred, *rest, **params)
    return [], []


def _shown_shape(shape, pred_shape) -> tuple:
    """A format argument shows one element's worth: the dims a batched pred adds drop off."""
    k = len(pred_shape)
    return tuple(shape[k:]) if k and tuple(shape[:k]) == tuple(pred_shape) else tuple(shape)


def _slots(aval, pred_shape) -> int:
    """Payload slots one format argument takes (a complex value: its real and imaginary parts)."""
    n = int(np.prod(_shown_shape(aval.shape, pred_shape), dtype=np.int64))
    return 2 * n if dtypes.is_complex(aval.dtype) else n


def payload_width(jaxpr) -> int:
    """The payload width the checks of `jaxpr` (and of its sub-programs) need."""
    width = PAYLOAD
    for eqn in jaxpr.eqns:
        if eqn.primitive is check_p:
            pred_shape = eqn.inputs[0].aval.shape
            width = max(width, sum(_slots(a.aval, pred_shape) for a in eqn.inputs[1:]))
        for sub in subjaxprs(eqn):
            width = max(width, payload_width(getattr(sub, "jaxpr", sub)))
    return width


def _as_payload(a, aval):
    """Real values for the payload (a complex one as its real then its imaginary part)."""
    if dtypes.is_complex(aval.dtype):
        return lax.concatenate([lax.reshape(lax.real(a), (-1,)), lax.reshape(lax.imag(a), (-1,))],
                               0)
    return a


def _check_checkify(error, pred, *fmt_args, msg, fmt_tree, debug=False):
    """Functionalized: the check becomes part of the error state and is not bound."""
    if "user" not in error.enabled:
        return error, []
    failing = lax.bitwise_not(pred)
    values = list(fmt_args)
    if pred.ndim:  # batched check: show the values of the first failing element
        flat = lax.reshape(failing, (int(np.prod(pred.shape)),))
        pos = lax.argmax(lax.convert_element_type(flat, np.int32), 0, np.int32)
        values = []
        for a in fmt_args:
            if _shown_shape(np.shape(a), pred.shape) != np.shape(a):
                a = lax.reshape(a, (flat.shape[0], *a.shape[pred.ndim:]))
                a = lax.dynamic_index_in_dim(a, pos, keepdims=False)
            values.append(a)
    avals = [aval_of_value(v) for v in values]
    layout = (fmt_tree, tuple((tuple(a.shape), np.dtype(a.dtype), bool(a.weak_type))
                              for a in avals))
    values = [_as_payload(v, a) for v, a in zip(values, avals, strict=True)]
    return fold(error, any_true(failing), msg, values, layout=layout), []


def render_site(template: str, layout, payload) -> str:
    """A user check's message from its slice of an error payload (NumPy)."""
    fmt_tree, leaves = layout
    payload, at, shown = np.asarray(payload), 0, []
    for shape, dtype, weak in leaves:
        n = int(np.prod(shape, dtype=np.int64))
        if dtypes.is_complex(dtype):
            v = payload[at:at + n] + 1j * payload[at + n:at + 2 * n]
            at += 2 * n
        else:
            v = payload[at:at + n]
            at += n
        shown.append(array_from_numpy(v.astype(dtype).reshape(shape), weak_type=weak))
    args, kwargs = tree_util.tree_unflatten(fmt_tree, shown)
    return template.format(*args, **kwargs)


check_p = Primitive("check", multiple_results=True,
                    abstract_eval=lambda pred, *args, msg, fmt_tree, debug=False: [],
                    impl=_check_impl, lower=_check_lower, jvp=_check_jvp, batch=_check_batch,
                    checkify=_check_checkify)
check_p.has_effect = lambda params: True  # never dropped as dead code (checkify must see it)
