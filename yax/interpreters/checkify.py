"""Checkify: run a program with its run-time checks turned into an error value.

`eval_checked(jaxpr, consts, args, state, table)` evaluates a jaxpr again under the current trace
(through `eval_jaxpr`'s `on_eqn` hook); each equation is handed to its primitive's checkify rule,
`primitive.checkify(error, *args, **params) -> (error, outs)`, or to the table's default rule when
the primitive has none. A rule binds the primitive (or a rewritten form of it) and folds the
predicates of the checks it can fail into the error *state*: three arrays
    failed:  bool[]      -- some check failed
    code:    int32[]     -- which check site failed first (an index into the message table)
    payload: float[n]    -- the values the message of that site shows (index, axis, size..., or
                            the flattened format arguments of a `check`); n is 4, or more when
                            a `check` of the program shows more values
The first failure wins. The state is an ordinary value, so the result works under jit, vmap
(states become batched) and grad. The rules live with their primitives (and the shared folding
helpers in yax/primitives/checkify_rules.py): this module knows no primitive by name.

The message table is built at trace time (one entry per check site, naming the primitive and the
user's source line) and travels as static data with the Error.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.core.ir import ClosedJaxpr, Eqn
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.staging import closure_convert, trace_to_jaxpr

PAYLOAD = 4  # the payload's least width: what the built-in checks show


def payload_dtype():
    return dtypes.canonicalize(np.float64)


def state_avals(width: int = PAYLOAD) -> list:
    return [ShapedArray((), np.dtype(bool)), ShapedArray((), np.dtype(np.int32)),
            ShapedArray((width,), payload_dtype())]


def initial_state(width: int = PAYLOAD) -> list:
    return [np.bool_(False), np.int32(-1), np.zeros(width, payload_dtype())]


class Site(NamedTuple):
    """One check site of the message table: its message `template`, `where` it is in the user's
    code, the payload slots shown as integers, and, for a user `check`, the `layout` of its
    format arguments ((args, kwargs) tree, then (shape, dtype, weak_type) per leaf)."""

    template: str
    where: str
    int_slots: tuple
    layout: Any = None


class Table:
    """The message table of one checkified trace: (template, int-valued payload slots), the
    enabled check categories, and the rule for primitives without a checkify rule of their own
    (`default_rule(error, *args, **params) -> (error, outs)`)."""

    def __init__(self, enabled, default_rule, payload_size: int = PAYLOAD):
        self.enabled = frozenset(enabled)
        self.default_rule = default_rule
        self.payload_size = payload_size
        self.messages: list = []

    def site(self, template: str, source, int_slots=(), layout=None) -> int:
        where = f" (at {source})" if source is not None else ""
        self.messages.append(Site(template, where, tuple(int_slots), layout))
        return len(self.messages) - 1


class CheckedError(NamedTuple):
    """What a checkify rule gets and gives back: the error state so far, the message table, and
    the equation being checked (for its source line and its input and output types)."""

    state: list
    table: Table
    eqn: Any

    @property
    def enabled(self) -> frozenset:
        return self.table.enabled

    def with_state(self, state) -> CheckedError:
        return self._replace(state=list(state))


def eval_checked(jaxpr, consts, args, state, table: Table):
    """Evaluate `jaxpr` under the current trace; returns (outputs, final state)."""
    box = [state]

    def on_eqn(eqn: Eqn, ins) -> list:
        rule = getattr(eqn.primitive, "checkify", None) or table.default_rule
        error, outs = rule(CheckedError(box[0], table, eqn), *ins, **eqn.params)
        box[0] = error.state
        return list(outs)
    outs = eval_jaxpr(jaxpr, consts, args, on_eqn=on_eqn)
    return outs, box[0]


def checked_closed(closed: ClosedJaxpr, table: Table, state_at: int) -> tuple:
    """`closed` rewritten to take the state as 3 extra inputs at `state_at` and return it as the
    first 3 outputs. Returns (const-free jaxpr, its consts to pass first)."""
    avals = list(closed.in_avals)

    def fun(*xs):
        xs = list(xs)
        state, ins = xs[state_at:state_at + 3], xs[:state_at] + xs[state_at + 3:]
        outs, state = eval_checked(closed.jaxpr, closed.consts, ins, state, table)
        return [*state, *outs]
    traced = trace_to_jaxpr(fun, avals[:state_at] + state_avals(table.payload_size)
                            + avals[state_at:],
                            name="checkify")
    return closure_convert(traced)


def inline_checked(error: CheckedError, *args, jaxpr, **params):
    """The checkify rule of a call-like primitive whose body is `jaxpr` (pjit, remat): the body
    is checked inline (checkify's own result is not rematerialised)."""
    outs, state = eval_checked(jaxpr.jaxpr, jaxpr.consts, list(args), error.state, error.table)
    return error.with_state(state), outs
