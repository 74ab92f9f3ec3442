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

from yax import errors, tree_util
from yax.core.avals import aval_of_value
from yax.core.trace import bind
from yax.interpreters import checkify as _interp
from yax.interpreters.staging import trace_to_jaxpr
from yax.primitives.checkify_rules import default_rule
from yax.primitives.checks import check_p  # noqa: F401  (re-exported)

user_checks = frozenset({"user"})
nan_checks = frozenset({"nan"})
div_checks = frozenset({"div"})
index_checks = frozenset({"index"})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks
# what the sets above hold (jax's hold exception classes; yax's name each kind of check)
ErrorCategory = str

__all__ = ["checkify", "check", "Error", "user_checks", "nan_checks", "div_checks",
           "index_checks", "float_checks", "automatic_checks", "all_checks", "JaxRuntimeError",
           "ErrorCategory"]

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
        where = ""
        if failed.ndim:
            b = np.unravel_index(int(np.argmax(failed.reshape(-1))), failed.shape)
            code, payload = code[b], payload[b]
            where = f" (at mapped index {b[0] if len(b) == 1 else b})"
        template, ints = self._messages[int(code)]
        values = [int(v) if i in ints else v.item() for i, v in enumerate(payload)]
        return template.format(*values) + where

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
        table = _interp.Table(enabled, default_rule)
        outs, state = _interp.eval_checked(closed.jaxpr, closed.consts, leaves,
                                           _interp.initial_state(), table)
        err = Error(*state, tuple(table.messages))
        return err, tree_util.tree_unflatten(out_tree_box[0], outs)
    return wrapped


def check(pred, msg: str, *fmt_args, **fmt_kwargs) -> None:
    """Check that `pred` is true; otherwise fail with `msg.format(*fmt_args)`.

    Inside `checkify(f)` a failure becomes the returned Error. Anywhere else it raises a
    `CheckifyError` right away (eagerly) or when the compiled program runs (under jit).
    """
    if fmt_kwargs:
        raise TypeError("checkify.check takes positional format arguments only in yax")
    loc = tree_util.tree_leaves(fmt_args)
    bind(check_p, pred, *loc, msg=msg)
