"""The IR: typed, SSA, first-order programs (jaxprs) and their pretty printer.

A Jaxpr has `constvars`, `invars`, a list of equations and `outvars`. An equation applies one
primitive to atoms (Vars or Literals) with hashable keyword params and binds new Vars. A
ClosedJaxpr pairs a Jaxpr with the values of its constvars; closed jaxprs nest inside params.
"""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

import numpy as np

from yax.core.avals import ShapedArray


class Var:
    __slots__ = ("aval", "count")
    _counter = itertools.count()

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.count = next(Var._counter)

    def __repr__(self):
        return f"Var({self.count}:{self.aval.str_short()})"


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


# --- pretty printing ---

class _Namer:
    def __init__(self):
        self.names: dict[Var, str] = {}

    def __call__(self, v) -> str:
        if isinstance(v, Literal):
            return _literal_str(v)
        name = self.names.get(v)
        if name is None:
            name = self.names[v] = _index_to_name(len(self.names))
        return name


def _index_to_name(i: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    name = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        name = letters[r] + name
    return name


def _literal_str(lit: Literal) -> str:
    val = lit.val
    if isinstance(val, np.ndarray) and val.shape == ():
        val = val.item()
    if isinstance(val, (bool, np.bool_)):
        return "True" if val else "False"
    text = repr(val) if isinstance(val, (int, float, complex)) else str(val)
    return f"{text}:{lit.aval.str_short()}"


def _param_str(value, indent: str) -> str:
    if isinstance(value, ClosedJaxpr):
        inner = pretty_print(value.jaxpr, indent + "    ")
        return "\n" + indent + "    " + inner
    if isinstance(value, Jaxpr):
        return "\n" + indent + "    " + pretty_print(value, indent + "    ")
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, tuple) and value and all(isinstance(v, ClosedJaxpr) for v in value):
        return "(" + ", ".join(_param_str(v, indent) for v in value) + ")"
    return str(value)


def pretty_print(jaxpr: Jaxpr, indent: str = "") -> str:
    name = _Namer()
    binders = lambda vs: " ".join(f"{name(v)}:{v.aval.str_short()}" for v in vs)
    head = f"{{ lambda {binders(jaxpr.constvars)}; {binders(jaxpr.invars)}. let"
    lines = [head]
    for eqn in jaxpr.eqns:
        outs = binders(eqn.outvars)
        params = ", ".join(f"{k}={_param_str(v, indent + '    ')}"
                           for k, v in eqn.params.items())
        params = f"[{params}]" if params else ""
        args = " ".join(name(a) for a in eqn.inputs)
        lines.append(f"{indent}    {outs} = {eqn.primitive.name}{params} {args}".rstrip())
    outs = ", ".join(name(v) for v in jaxpr.outvars)
    lines.append(f"{indent}  in ({outs}{',' if len(jaxpr.outvars) == 1 else ''}) }}")
    return "\n".join(lines)
