"""The IR: typed, SSA, first-order programs (jaxprs) and their pretty printer.

A Jaxpr has `constvars`, `invars`, a list of equations and `outvars`. An equation applies one
primitive to atoms (Vars or Literals) with hashable keyword params and binds new Vars. A
ClosedJaxpr pairs a Jaxpr with the values of its constvars; closed jaxprs nest inside params.
"""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

import numpy as np

from yax.core import param_display, pp
from yax.core.avals import ShapedArray


class Var:
    __slots__ = ("aval", "count")
    _counter = itertools.count()

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.count = next(Var._counter)

    def __repr__(self):
        # JAX's repr (an identity, then the type with full dtype names), for code that prints
        # equations as JAX's tutorials do
        return f"Var(id={id(self)}):{str(self.aval).lstrip('~')}"


class Literal:
    """A scalar constant written inline in the program."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval: ShapedArray):
        self.val = val
        self.aval = aval

    def __repr__(self):
        return f"Literal({self.val})"


Atom = Var | Literal


class SourceInfo(NamedTuple):
    filename: str
    lineno: int
    function: str

    def __str__(self):
        return f"{self.filename}:{self.lineno} ({self.function})"


class Eqn(NamedTuple):
    primitive: Any
    inputs: list
    params: dict
    outvars: list
    source: SourceInfo | None = None

    invars = property(lambda self: self.inputs)  # JAX's name for the inputs (jax.extend.core)


class Jaxpr:
    __slots__ = ("constvars", "invars", "eqns", "outvars")

    def __init__(self, constvars, invars, eqns, outvars):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.eqns = list(eqns)
        self.outvars = list(outvars)

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    def __str__(self):
        return pretty_print(self)

    __repr__ = __str__


class ClosedJaxpr:
    """A jaxpr with its constants bound. Hashed by identity, so it can sit in params."""

    __slots__ = ("jaxpr", "consts", "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts):
        assert len(consts) == len(jaxpr.constvars)
        self.jaxpr = jaxpr
        self.consts = list(consts)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)
    literals = property(lambda self: self.consts)  # JAX's other name for the consts

    def __str__(self):
        return pretty_print(self.jaxpr)

    __repr__ = __str__


def subjaxprs(eqn: Eqn):
    """Every sub-program an equation holds in its params (branches, loop bodies, jit bodies...):
    each ClosedJaxpr or Jaxpr, found directly or inside (nested) tuples and lists, in param
    order. This is the one place that knows where sub-programs sit."""
    for value in eqn.params.values():
        yield from _jaxprs_in(value)


def _jaxprs_in(value):
    if isinstance(value, (ClosedJaxpr, Jaxpr)):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _jaxprs_in(item)


# --- pretty printing: jax's layout, built from yax.core.pp documents ---

class _Namer:
    """Names vars a, b, ..., z, ba, ... in order of first appearance, across nested jaxprs."""

    def __init__(self):
        self.names: dict[Var, str] = {}
        self.count = 0
        self.hoisted: dict[int, tuple[str, Jaxpr]] = {}  # id(jaxpr) -> (its let-name, jaxpr)

    def __call__(self, v) -> str:
        if isinstance(v, Literal):
            return _literal_str(v)
        name = self.names.get(v)
        if name is None:
            name = self.names[v] = self.fresh()
        return name

    def fresh(self) -> str:
        self.count += 1
        return _index_to_name(self.count - 1)


def _index_to_name(i: int) -> str:
    """jax's var names: `i` written in base 26 with digits a-z (..., z, ba, bb, ...)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    name = letters[i % 26]
    while i >= 26:
        i //= 26
        name = letters[i % 26] + name
    return name


def _literal_str(lit: Literal) -> str:
    val = lit.val
    if isinstance(val, np.ndarray) and val.shape == ():
        val = val.item()
    if isinstance(val, (bool, np.bool_)):
        text = "True" if val else "False"
    else:
        text = repr(val) if isinstance(val, (int, float, complex)) else str(val)
    return f"{text}:{lit.aval.str_short()}"


def _used_vars(jaxpr: Jaxpr) -> set:
    used = {v for v in jaxpr.outvars if isinstance(v, Var)}
    for eqn in jaxpr.eqns:
        used.update(a for a in eqn.inputs if isinstance(a, Var))
    return used


def _binders(name, vs, used=None):
    def one(v):
        label = "_" if used is not None and v not in used else name(v)
        return pp.Text(f"{label}:{v.aval.str_short()}")
    return pp.Fill(tuple(one(v) for v in vs))


def _jaxpr_doc(jaxpr: Jaxpr, name: _Namer):
    used = _used_vars(jaxpr)
    head = pp.concat("{ lambda ", pp.Nest(4, _binders(name, jaxpr.constvars)), "; ",
                     pp.Nest(4, _binders(name, jaxpr.invars)), ". let")
    eqns = [_eqn_doc(eqn, name, used) for eqn in jaxpr.eqns]
    body = pp.Nest(4, pp.concat(pp.Brk(" "), pp.join(pp.Brk("; "), eqns)))
    outs = [name(v) for v in jaxpr.outvars]
    # each result carries its comma, so a long tuple wraps after one, as jax's does
    items = [pp.Text(f"{o},") for o in outs[:-1]] + [pp.Text(o) for o in outs[-1:]]
    if len(outs) == 1:
        items = [pp.Text(f"{outs[0]},")]
    results = pp.Nest(2, pp.Fill(tuple(items)))
    tail = pp.Nest(2, pp.concat(pp.Brk(" "), "in (", results, ") }"))
    return pp.Group(pp.concat(head, body, tail))


def _eqn_doc(eqn: Eqn, name: _Namer, used: set):
    custom = getattr(eqn.primitive, "pp_eqn", None)
    if custom is not None:  # a primitive printed in its own syntax (a Ref's `b <- a[1]`)
        return pp.Text(custom(eqn, name, used))
    outs = pp.Nest(2, _binders(name, eqn.outvars, used))  # as jax: wrapped results indent 2
    prim = eqn.primitive.name
    shown = param_display.shown_params(prim, eqn.params, [v.aval for v in eqn.outvars])
    if prim == "pjit" and "jaxpr" in eqn.params:
        _alias_call_binders(eqn, name)
    params = [pp.concat(f"{k}=", _param_doc(v, name)) for k, v in shown]
    parts = [outs, f" = {param_display.print_name(prim)}"]
    if params:
        parts.append(_bracketed("[", params, "]"))
    # as jax: the space before the arguments stays even when there are none
    parts.append(" ")
    parts.append(pp.Nest(2, pp.Fill(tuple(pp.Text(name(a)) for a in eqn.inputs))))
    return pp.concat(*parts)


def _alias_call_binders(eqn: Eqn, name: _Namer):
    """As jax: a jit body's binders take the names of the call's own arguments and results."""
    inner = eqn.params["jaxpr"]
    inner = inner.jaxpr if isinstance(inner, ClosedJaxpr) else inner
    for outer, var in itertools.chain(zip(eqn.inputs, inner.invars),
                                      zip(eqn.outvars, inner.outvars)):
        if isinstance(outer, Var) and isinstance(var, Var) and var not in name.names:
            name.names[var] = name(outer)


def _bracketed(open_, items, close):
    inner = pp.Nest(2, pp.concat(pp.Brk(""), pp.join(pp.Brk(" "), items)))
    return pp.Group(pp.concat(open_, inner, pp.Brk(""), close))


def _param_doc(value, name: _Namer):
    inner = value.jaxpr if isinstance(value, ClosedJaxpr) else value
    if isinstance(inner, Jaxpr) and id(inner) in name.hoisted:
        return pp.Text(name.hoisted[id(inner)][0])
    if isinstance(value, ClosedJaxpr):
        return _jaxpr_doc(value.jaxpr, name)
    if isinstance(value, Jaxpr):
        return _jaxpr_doc(value, name)
    if isinstance(value, tuple) and value and all(
            isinstance(v, (ClosedJaxpr, Jaxpr)) for v in value):
        return _bracketed("(", [_param_doc(v, name) for v in value], ")")
    if isinstance(value, np.dtype):
        return pp.Text(value.name)
    if callable(value) and hasattr(value, "__name__") and not isinstance(value, type):
        return pp.Text(value.__name__)
    return pp.Text(str(value))


# as jax: a sub-jaxpr of more equations than this is printed once, above, as `let name = ... in`
_HOIST_EQNS = 10


def _collect_hoisted(jaxpr: Jaxpr, name: _Namer, walked: set):
    """The big sub-jaxprs, innermost first, each once however often it is used."""
    for eqn in jaxpr.eqns:
        for sub in subjaxprs(eqn):
            inner = sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub
            if id(inner) in walked:
                continue
            walked.add(id(inner))
            _collect_hoisted(inner, name, walked)
            if len(inner.eqns) > _HOIST_EQNS:
                name.hoisted[id(inner)] = (_hoist_label(eqn, name), inner)


def _hoist_label(eqn: Eqn, name: _Namer) -> str:
    """jax's label: a jit body is named after its function, any other sub-jaxpr `jaxpr`; a
    repeated label gets a counter (jaxpr, jaxpr1, ...)."""
    base = "jaxpr"
    if eqn.primitive.name == "pjit":
        base = "".join(c for c in str(eqn.params.get("name", "")) if c.isalnum() or c == "_")
        base = base or "jaxpr"
    taken = {label for label, _ in name.hoisted.values()}
    label, k = base, 0
    while label in taken:
        k += 1
        label = f"{base}{k}"
    return label


def pretty_print(jaxpr: Jaxpr, indent: str = "") -> str:
    """The jaxpr as jax prints it: on one line when it fits in 80 columns, otherwise one
    equation a line, params and nested jaxprs broken over lines as jax breaks them, and big
    sub-jaxprs printed once above the program that uses them."""
    name = _Namer()
    _collect_hoisted(jaxpr, name, set())
    parts = [pp.render(pp.concat(f"let {label} = ", _jaxpr_doc(inner, name), " in"))
             for label, inner in list(name.hoisted.values())]
    parts.append(pp.render(pp.Nest(len(indent), _jaxpr_doc(jaxpr, name))))
    return "\n".join(parts)
