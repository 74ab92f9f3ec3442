"""`checkify`: functional run-time checks (as `jax.experimental.checkify`).

    err, out = checkify.checkify(f, errors=checkify.index_checks)(x)
    err.throw()          # raises CheckifyError naming the primitive and the user's line

Error categories: `user_checks` (`checkify.check`), `nan_checks` (a primitive produced a NaN),
`div_checks` (integer division by zero), `index_checks` (out-of-bounds gather/scatter/dynamic
slice), `float_checks` (nan | div), `automatic_checks` (float | index), `all_checks`.
The error is an ordinary value (a pytree), so `jit(checkify(f))`, `vmap(checkify(f))` (one error
per batch element) and `checkify(grad(f))` work; checks inside scan, while_loop and cond bodies
are threaded through the loop.
"""

from __future__ import annotations

import numpy as np

from yax import errors, lax, tree_util
from yax.core.avals import aval_of_value
from yax.core.trace import Tracer, bind
from yax.interpreters import checkify as _interp
from yax.interpreters.staging import trace_to_jaxpr
from yax.primitives.checkify_rules import default_rule
from yax.primitives.checks import check_message, check_p, payload_width, render_site

user_checks = frozenset({"user"})
nan_checks = frozenset({"nan"})
div_checks = frozenset({"div"})
index_checks = frozenset({"index"})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks
# what the sets above hold (jax's hold exception classes; yax's name each kind of check)
ErrorCategory = str

__all__ = ["checkify", "check", "check_error", "debug_check", "Error", "user_checks",
           "nan_checks", "div_checks",
           "index_checks", "float_checks", "automatic_checks", "all_checks", "JaxRuntimeError",
           "ErrorCategory", "init_error"]

JaxRuntimeError = errors.CheckifyError


class Error:
    """The outcome of a checkified call: `get()` is None or the message of the first failed
    check; `throw()` raises it as a `CheckifyError`. Under vmap it holds one outcome per batch
    element (`get()` reports the first failing one)."""

    def __init__(self, failed, code, payload, messages):
        self._failed, self._code, self._payload = failed, code, payload
        self._messages = messages

    def get(self) -> str | None:
        failed = np.asarray(self._failed)
        if not failed.any():
            return None
        code, payload = np.asarray(self._code), np.asarray(self._payload)
        if not failed.ndim:
            return self._message(int(code), payload)
        # under vmap, one line per failing element, as JAX writes them
        lines = []
        for flat in np.flatnonzero(failed.reshape(-1)):
            b = np.unravel_index(int(flat), failed.shape)
            label = ", ".join(str(int(i)) for i in b)
            lines.append(f"at mapped index {label}: {self._message(int(code[b]), payload[b])}")
        return "\n".join(lines)

    def _message(self, code: int, payload) -> str:
        site = self._messages[code]
        if site.layout is not None:  # a user check: its format arguments, rebuilt
            return render_site(site.template, site.layout, payload) + site.where
        values = [int(v) if i in site.int_slots else v.item() for i, v in enumerate(payload)]
        return site.template.format(*values) + site.where

    def get_exception(self):
        msg = self.get()
        return None if msg is None else errors.CheckifyError(msg)

    def throw(self) -> None:
        msg = self.get()
        if msg is not None:
            raise errors.CheckifyError(msg)

    def __repr__(self):
        msg = self.get()
        return "Error(no error)" if msg is None else f"Error({msg})"

    __str__ = __repr__


tree_util.register_pytree_node(
    Error, lambda e: ((e._failed, e._code, e._payload), e._messages),
    lambda messages, children: Error(*children, messages))


# the Error of a call whose checks all passed (as jax's `checkify.init_error`)
init_error = Error(np.bool_(False), np.int32(0), np.zeros((0,), np.float32), ())


def checkify(fun, errors=user_checks):  # noqa: A002  (jax's name)
    """Functionalize the checks of `fun`: the result returns `(err, out)`.

    Args:
      fun: the function to check.
      errors: the set of checks to enable (see the module docstring); default `user_checks`.

    Returns:
      A function with `fun`'s signature returning `(Error, fun's output)`.

    Example:
      >>> f = checkify.checkify(lambda x, i: x[i], errors=checkify.index_checks)
      >>> err, _ = yax.jit(f)(jnp.ones(3), 5)
      >>> err.get()   # 'out-of-bounds indexing in gather: index 5 ... (at file.py:1)'
    """
    enabled = frozenset(errors)

    def wrapped(*args, **kwargs):
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        out_tree_box = []

        def flat(*xs):
            a, kw = tree_util.tree_unflatten(in_tree, xs)
            out_leaves, out_tree = tree_util.tree_flatten(fun(*a, **kw))
            out_tree_box.append(out_tree)
            return out_leaves
        closed = trace_to_jaxpr(flat, [aval_of_value(x) for x in leaves],
                                name=getattr(fun, "__name__", "fun"))
        width = payload_width(closed.jaxpr)  # the most values one check site shows
        table = _interp.Table(enabled, default_rule, width)
        outs, state = _interp.eval_checked(closed.jaxpr, closed.consts, leaves,
                                           _interp.initial_state(width), table)
        err = Error(*state, tuple(table.messages))
        return err, tree_util.tree_unflatten(out_tree_box[0], outs)
    return wrapped


def check(pred, msg: str, *fmt_args, **fmt_kwargs) -> None:
    """Check that `pred` is true; otherwise fail with `msg.format(*fmt_args, **fmt_kwargs)`.

    Args:
      pred: a bool scalar (an array of bools: every element must hold).
      msg: a `str.format` template; its fields name the positional and keyword format
        arguments, each a pytree of arrays shown as JAX shows them (`{x}` the value, `{x!r}`
        the Array, `{x:.2f}` a formatted scalar).

    Inside `checkify(f)` a failure becomes the returned Error. Anywhere else it raises a
    `CheckifyError` right away (eagerly) or when the compiled program runs (under jit).

    Example:
      >>> checkify.check(x > 0, "x must be positive, got {x:.2f}", x=x)
    """
    leaves, fmt_tree = check_message(msg, fmt_args, fmt_kwargs)
    bind(check_p, pred, *leaves, msg=msg, fmt_tree=fmt_tree)


def debug_check(pred, msg: str, *fmt_args, **fmt_kwargs) -> None:
    """A `check` that only `checkify` sees: under `checkify(f)` a failure becomes the returned
    Error, as `check`'s does; anywhere else it does nothing (no host callback, no cost).

    Example:
      >>> def f(x):
      ...     checkify.debug_check(x > 0, "x must be positive, got {}", x)
      ...     return jnp.log(x)
      >>> f(-1.)                                  # nan, no error
      >>> checkify.checkify(f)(-1.)[0].get()      # 'x must be positive, got -1.0 (at ...)'
    """
    leaves, fmt_tree = check_message(msg, fmt_args, fmt_kwargs)
    bind(check_p, pred, *leaves, msg=msg, fmt_tree=fmt_tree, debug=True)


def check_error(error: Error) -> None:
    """Raise `error` if it holds a failure (as `error.throw()`), in a form `checkify` can
    functionalize again: with concrete values it raises at once; with traced ones (under jit,
    vmap, or inside a function given to `checkify`) each of its check sites becomes a `check`
    of its own, so the failure is raised when the program runs, or returned by the enclosing
    `checkify` with the same message.

    Example:
      >>> err, y = checkify.checkify(f, errors=checkify.float_checks)(x)
      >>> checkify.check_error(err)     # raises CheckifyError if f produced a NaN
    """
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes the Error a checkified function returned, got "
                        f"{type(error).__name__}")
    if not any(isinstance(v, Tracer) for v in (error._failed, error._code, error._payload)):
        error.throw()
        return
    for code, site in enumerate(error._messages):
        failing = lax.bitwise_and(error._failed, lax.eq(error._code, np.int32(code)))
        msg, args, kwargs = _site_check(site, error._payload)
        leaves, fmt_tree = check_message(msg, args, kwargs)
        # the new check keeps the original site's line (its messages name it, once)
        before, errors.replay_source[0] = errors.replay_source[0], _location(site.where)
        try:
            bind(check_p, lax.bitwise_not(failing), *leaves, msg=msg, fmt_tree=fmt_tree)
        finally:
            errors.replay_source[0] = before


def _location(where: str):
    """(file, line, function) from a site's " (at file:line)", or None (the caller's line)."""
    inner = where.strip().removeprefix("(at ").removesuffix(")")
    filename, _, line = inner.rpartition(":")
    return (filename, int(line), "check_error") if filename and line.isdigit() else None


def _site_check(site, payload) -> tuple[str, list, dict]:
    """The message template and format arguments that restate one check site."""
    # the check's line goes with the new check (its source), not into the message
    where = "" if _location(site.where) else site.where.replace("{", "{{").replace("}", "}}")
    if site.layout is None:  # an automatic check: its values in order, some of them ints
        args = [payload[..., i] for i in range(payload.shape[-1])]
        args = [lax.convert_element_type(a, np.int32) if i in site.int_slots else a
                for i, a in enumerate(args)]
        return site.template + where, args, {}
    # a user check: its format arguments rebuilt from the payload, then its own template
    fmt_tree, layout = site.layout
    shown, at = [], 0
    for shape, dtype, _weak in layout:
        n = int(np.prod(shape, dtype=np.int64))
        if np.issubdtype(dtype, np.complexfloating):
            part = payload[..., at:at + n] + 1j * payload[..., at + n:at + 2 * n]
            at += 2 * n
        else:
            part = payload[..., at:at + n]
            at += n
        part = lax.convert_element_type(part, dtype)
        shown.append(part.reshape(*payload.shape[:-1], *shape))
    args, kwargs = tree_util.tree_unflatten(fmt_tree, shown)
    return site.template + where, list(args), kwargs

