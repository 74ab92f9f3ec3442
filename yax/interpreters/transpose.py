"""Transposition: run a linear jaxpr backwards, from output cotangents to input cotangents.

Equations that do not depend on the linear inputs are evaluated forwards first (they compute
coefficients from the residuals). The linear ones are visited in reverse order, each once; a
primitive's `transpose(cts, *operands, **params)` rule receives `UndefinedPrimal` for its linear
operands and the actual values for the others, and returns one cotangent (or None) per operand.
Cotangents reaching the same variable from several uses are summed; zeros stay symbolic.
"""

from __future__ import annotations

import enum

import numpy as np

from yax.config import config
from yax.core.avals import ShapedArray, TypedScalar
from yax.core.ir import ClosedJaxpr, Jaxpr, Literal
from yax.core.trace import bind, current_trace
from yax.interpreters.ad_util import Zero, add_tangents, instantiate
from yax.interpreters.eager import EVAL_TRACE, to_array
from yax.interpreters.eval_jaxpr import read_typed
from yax.interpreters.staging import trace_to_jaxpr
from yax.runtime.array import Array


class UndefinedPrimal:
    """Marks a linear operand of a transpose rule (its value is what is being solved for)."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined(x) -> bool:
    return type(x) is UndefinedPrimal


def backward_pass(jaxpr: Jaxpr, consts, linear_args, cts_out) -> list:
    """Cotangents of `jaxpr`'s invars marked UndefinedPrimal in `linear_args`.

    `linear_args` holds, per invar, either an UndefinedPrimal (linear) or its value.
    Returns one cotangent per invar (Zero where none reached it, None for non-linear ones).
    """
    env: dict = dict(zip(jaxpr.constvars, consts, strict=True))
    linear: set = set()
    for v, a in zip(jaxpr.invars, linear_args, strict=True):
        if is_undefined(a):
            linear.add(v)
        else:
            env[v] = a

    def read(atom):
        return read_typed(atom, env.__getitem__)

    linear_eqns = []
    for eqn in jaxpr.eqns:
        if any(not isinstance(a, Literal) and a in linear for a in eqn.inputs):
            linear.update(eqn.outvars)
            linear_eqns.append(eqn)
        else:  # a coefficient computed from residuals only
            outs = bind(eqn.primitive, *(read(a) for a in eqn.inputs), **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
            env.update(zip(eqn.outvars, outs, strict=True))

    ct_env: dict = {}
    for v, ct in zip(jaxpr.outvars, cts_out, strict=True):
        if not isinstance(v, Literal) and v in linear and type(ct) is not Zero:
            ct_env[v] = add_tangents(ct_env[v], ct) if v in ct_env else ct

    for eqn in reversed(linear_eqns):
        cts = [ct_env.pop(v, None) for v in eqn.outvars]
        if all(ct is None for ct in cts):
            continue
        cts = [instantiate(Zero(v.aval)) if ct is None else ct
               for ct, v in zip(cts, eqn.outvars)]
        operands = [UndefinedPrimal(a.aval) if not isinstance(a, Literal) and a in linear
                    else read(a) for a in eqn.inputs]
        cts_in = eqn.primitive.transpose(cts, *operands, **eqn.params)
        for a, ct in zip(eqn.inputs, cts_in, strict=True):
            if is_undefined_atom(a, linear) and ct is not None and type(ct) is not Zero:
                ct_env[a] = add_tangents(ct_env[a], ct) if a in ct_env else ct
    return [ct_env.get(v, Zero(v.aval)) if v in linear else None for v in jaxpr.invars]


def is_undefined_atom(atom, linear) -> bool:
    return not isinstance(atom, Literal) and atom in linear


def transpose_jaxpr(closed: ClosedJaxpr, linear_mask: list[bool]) -> ClosedJaxpr:
    """A jaxpr from (non-linear inputs..., output cotangents...) to the linear inputs' cotangents
    (zeros materialised)."""
    in_avals = closed.in_avals
    nonlin_avals = [a for a, lin in zip(in_avals, linear_mask) if not lin]
    n_nonlin = len(nonlin_avals)

    def fun(*args):
        it = iter(args[:n_nonlin])
        linear_args = [UndefinedPrimal(a) if lin else next(it)
                       for a, lin in zip(in_avals, linear_mask, strict=True)]
        cts = backward_pass(closed.jaxpr, closed.consts, linear_args, list(args[n_nonlin:]))
        return [instantiate(ct) for ct, lin in zip(cts, linear_mask) if lin]

    return trace_to_jaxpr(fun, nonlin_avals + list(closed.out_avals), name="transpose")


# --- eager reverse mode: the backward pass as one executable ---------------------------------
# Eager `grad` records a linear jaxpr on every call (the function's Python must run each time:
# it may branch on values). Running its transpose op by op costs one executable launch per
# primitive; instead the transpose is compiled once per recorded *structure* (equations,
# params, literals and avals; never per function) and run as one program.

_SIMPLE_PARAM_TYPES = (type(None), bool, int, float, complex, str, np.dtype, ShapedArray)
_MAX_COMPILED_BACKWARDS = 256


class _NotComparable(Exception):
    """A param that cannot be hashed: no reuse."""


_SIMPLE_PARAM_TYPE_SET = frozenset(_SIMPLE_PARAM_TYPES)


def _param_key(value, by_identity: list):
    if type(value) in _SIMPLE_PARAM_TYPE_SET:
        return value
    if isinstance(value, _SIMPLE_PARAM_TYPES) or isinstance(value, enum.Enum):
        return value
    if type(value) is tuple:
        return tuple([_param_key(v, by_identity) for v in value])
    if type(value) is ClosedJaxpr and not value.consts:  # jit/cond/scan bodies: by structure
        return ("jaxpr", _structure(value.jaxpr, by_identity))
    try:
        hash(value)
    except TypeError:
        raise _NotComparable from None
    by_identity.append(type(value))  # a rule object, a jaxpr with consts: compared as objects
    return ("object", value)


def jaxpr_structure_key(jaxpr: Jaxpr):
    """(key, by_identity): a hashable key equal for two jaxprs that compute the same function
    of their constvars and invars (same equations, params, literals and avals), and whether
    some param only compares as an object (equal when it is the same object). The key is None
    when some param cannot be hashed."""
    by_identity: list = []
    try:
        return _structure(jaxpr, by_identity), bool(by_identity)
    except _NotComparable:
        return None, False


def _structure(jaxpr: Jaxpr, by_identity: list):
    ids: dict = {}
    parts: list = []
    for v in (*jaxpr.constvars, *jaxpr.invars):
        ids[v] = len(ids)
        parts.append(v.aval)

    def atom(a):
        if isinstance(a, Literal):
            val = np.asarray(a.val)
            return ("lit", a.aval, val.dtype.str, val.tobytes())
        return ids[a]
    for eqn in jaxpr.eqns:
        params = tuple([(k, _param_key(v, by_identity)) for k, v in eqn.params.items()])
        ins = tuple([atom(a) for a in eqn.inputs])
        for v in eqn.outvars:
            ids[v] = len(ids)
        parts.append((eqn.primitive, ins, params, tuple([v.aval for v in eqn.outvars])))
    parts.append(tuple([atom(a) for a in jaxpr.outvars]))
    return (len(jaxpr.constvars), tuple(parts))


_compiled_backwards: dict = {}


def compiled_backward_pass(jaxpr: Jaxpr, consts, linear_avals, cts_out):
    """`backward_pass` with every invar linear, as one compiled program, or None when it does
    not apply (a transformation is active, a value is not a concrete Array, a param compares
    by identity). Returns the same list `backward_pass` would (Zero where no cotangent
    arrived)."""

    if current_trace() is not EVAL_TRACE or config.disable_jit:
        return None
    if not all(type(c) is Array for c in consts):
        return None
    cts = []
    for ct in cts_out:
        if type(ct) is TypedScalar:
            ct = to_array(ct)
        elif type(ct) is not Array:
            return None
        cts.append(ct)
    structure, by_identity = jaxpr_structure_key(jaxpr)
    if structure is None or by_identity:
        return None
    key = (structure, tuple(linear_avals), tuple(ct.aval for ct in cts))
    entry = _compiled_backwards.get(key)
    if entry is None:
        if len(_compiled_backwards) >= _MAX_COMPILED_BACKWARDS:
            _compiled_backwards.clear()
        entry = _compiled_backwards[key] = _CompiledBackward(jaxpr, list(linear_avals),
                                                              len(consts))
    return entry(consts, cts)


class _CompiledBackward:
    """A jitted backward pass of one recorded structure; remembers which cotangents are
    symbolic zeros (known once traced) so only the others leave the program."""

    def __init__(self, jaxpr: Jaxpr, linear_avals: list, n_consts: int):
        from yax.transforms.jit import jit

        self.linear_avals = linear_avals
        self.zero_mask: list[bool] = []
        n = n_consts

        def flat(*args):
            undefined = [UndefinedPrimal(a) for a in linear_avals]
            cts_in = backward_pass(jaxpr, list(args[:n]), undefined, list(args[n:]))
            self.zero_mask = [type(ct) is Zero for ct in cts_in]
            return [ct for ct in cts_in if type(ct) is not Zero]
        flat.__name__ = "backward_pass"
        self.jitted = jit(flat)

    def __call__(self, consts, cts) -> list:
        outs = iter(self.jitted(*consts, *cts))
        return [Zero(a) if zero else next(outs)
                for a, zero in zip(self.linear_avals, self.zero_mask, strict=True)]

