"""Reverse mode as compiled programs, reused per recorded structure.

Eager `grad` records a program on every call (the function's Python must run each time: it may
branch on values). Running its vjp op by op costs one executable launch per primitive; instead
the vjp is compiled once per recorded *structure* (equations, params, literals and avals; never
per function: a different branch records a different program) and run as one program.

`traced_vjp_flat` is reverse mode itself (linearize, then transpose); its backward pass runs as
one compiled program when called eagerly (`compiled_backward_pass`).
"""

from __future__ import annotations

import enum
import os

import numpy as np

from yax.compile import cache
from yax.config import config
from yax.core.avals import ShapedArray, TypedScalar, aval_of_value
from yax.core.ir import ClosedJaxpr, Jaxpr, Literal
from yax.core.trace import is_eager
from yax.interpreters.ad_util import Zero, tangent_aval
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.partial_eval import linearize_flat
from yax.interpreters.transpose import UndefinedPrimal, backward_pass
from yax.primitives.call import pjit_p
from yax.runtime.array import Array
from yax.runtime.values import to_array
from yax.transforms.jit import jit


def traced_vjp_flat(flat_fun, p_leaves):
    """(outputs, pullback) of `flat_fun` at `p_leaves`: linearize, then transpose."""
    p_out, linear, nonzero = linearize_flat(flat_fun, p_leaves)
    in_avals = [tangent_aval(aval_of_value(p)) for p in p_leaves]

    def pullback(cts_out: list) -> list:
        cts = [ct for ct, nz in zip(cts_out, nonzero, strict=True) if nz]
        return _run_backward(linear, in_avals, cts)
    return p_out, pullback


def _run_backward(linear, in_avals, cts) -> list:
    """Cotangents of the linear jaxpr's inputs: eagerly as one program compiled per recorded
    structure (see `compiled_backward_pass`), otherwise equation by equation."""
    fast = compiled_backward_pass(linear.jaxpr, linear.consts, in_avals, cts)
    if fast is not None:
        return fast
    undefined = [UndefinedPrimal(a) for a in in_avals]
    return backward_pass(linear.jaxpr, linear.consts, undefined, cts)


def replay(jaxpr, consts):
    """`jaxpr` as a flat function of its invars."""
    def replayed(*xs):
        return eval_jaxpr(jaxpr, consts, xs)
    return replayed


# --- structure keys ------------------------------------------------------------------------------

_SIMPLE_PARAM_TYPES = (type(None), bool, int, float, complex, str, np.dtype, ShapedArray)
_SIMPLE_PARAM_TYPE_SET = frozenset(_SIMPLE_PARAM_TYPES)


class _NotComparable(Exception):
    """A param that cannot be hashed: no reuse."""


def _param_key(value, by_identity: list):
    if type(value) in _SIMPLE_PARAM_TYPE_SET:
        return value
    if isinstance(value, _SIMPLE_PARAM_TYPES) or isinstance(value, enum.Enum):
        return value
    if type(value) is tuple:
        # a tuple of simple values (axes, dimension numbers' leaves) is its own key: one loop,
        # no call and no new tuple per element (keys are built for every eager grad call)
        for v in value:
            if type(v) not in _SIMPLE_PARAM_TYPE_SET:
                return tuple([_param_key(v, by_identity) for v in value])
        return value
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


def eqn_signature(primitive, params: dict, out_avals) -> tuple:
    """(signature, by_identity) of one equation apart from its inputs: equal for equations
    applying the same primitive with the same params to inputs of the same avals; None when
    a param cannot be hashed (see `jaxpr_structure_key`)."""
    by_identity: list = []
    try:
        key = tuple([(k, _param_key(v, by_identity)) for k, v in params.items()])
    except _NotComparable:
        return None, False
    return (primitive, key, tuple(out_avals)), bool(by_identity)


def literal_key(a: Literal) -> tuple:
    """A literal input by value, bit for bit (so -0.0 and 0.0, or two NaNs, stay apart)."""
    val = np.asarray(a.val)
    return ("lit", a.aval, val.dtype.str, val.tobytes())


def _structure(jaxpr: Jaxpr, by_identity: list):
    ids: dict = {}
    parts: list = []
    for v in (*jaxpr.constvars, *jaxpr.invars):
        ids[v] = len(ids)
        parts.append(v.aval)

    def atom(a):
        return literal_key(a) if isinstance(a, Literal) else ids[a]
    for eqn in jaxpr.eqns:
        params = tuple([(k, _param_key(v, by_identity)) for k, v in eqn.params.items()])
        ins = tuple([atom(a) for a in eqn.inputs])
        for v in eqn.outvars:
            ids[v] = len(ids)
        parts.append((eqn.primitive, ins, params, tuple([v.aval for v in eqn.outvars])))
    parts.append(tuple([atom(a) for a in jaxpr.outvars]))
    return (len(jaxpr.constvars), tuple(parts))


# --- the compiled programs ---------------------------------------------------------------------

# keyed by recorded structure and avals, never by function: one bounded cache of the compile floor
_programs = cache.new_cache("eager autodiff programs")

# JAX runs an eager grad one primitive at a time, each its own XLA program, so no multiply-add
# of the backward pass is contracted into an FMA. One fused program would round the last digit
# differently (and print differently); without XLA's fusion pass it rounds as JAX's op by op.
_UNFUSED = {"xla_disable_hlo_passes": "fusion"}


def calls_jit(jaxpr: Jaxpr) -> bool:
    """Whether `jaxpr` calls a jitted function at its top level. jax runs such a call as its own
    fused XLA program (and its derivative as two: the known part, then the transposed one),
    between primitives run one at a time; one unfused program around it would round the call's
    arithmetic differently, so eager autodiff runs such a program as jax does instead."""
    return any(eqn.primitive is pjit_p for eqn in jaxpr.eqns)


def _eager_jit(flat):
    """`flat` jitted for eager autodiff: unfused unless `config.eager_fusion` (read now) or
    XLA's legacy CPU emitters are forced (`--xla_cpu_use_fusion_emitters=false`, which the
    test suite sets for speed): jaxlib 0.10 miscompiles some dot_general backward programs
    with both, so such a process keeps fusion."""
    fuse = config.eager_fusion or "xla_cpu_use_fusion_emitters=false" in os.environ.get(
        "XLA_FLAGS", "")
    return jit(flat, compiler_options=None if fuse else _UNFUSED)


def cached_program(key, make):
    """The compiled program cached under `key`, made by `make()` the first time."""
    return _programs.get_or_make(key, make)


def compiled_backward_pass(jaxpr: Jaxpr, consts, linear_avals, cts_out):
    """`backward_pass` with every invar linear, as one compiled program, or None when it does
    not apply (a transformation is active, a value is not a concrete Array, a param compares
    by identity). Returns the same list `backward_pass` would (Zero where no cotangent
    arrived)."""
    if not is_eager() or config.disable_jit or calls_jit(jaxpr):
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
    key = ("backward", structure, tuple(linear_avals), tuple(ct.aval for ct in cts))
    entry = cached_program(key, lambda: _CompiledBackward(jaxpr, list(linear_avals),
                                                          len(consts)))
    return entry(consts, cts)


class _CompiledBackward:
    """A jitted backward pass of one recorded structure; remembers which cotangents are
    symbolic zeros (known once traced) so only the others leave the program."""

    def __init__(self, jaxpr: Jaxpr, linear_avals: list, n_consts: int):
        self.linear_avals = linear_avals
        self.zero_mask: list[bool] = []
        n = n_consts

        def flat(*args):
            undefined = [UndefinedPrimal(a) for a in linear_avals]
            cts_in = backward_pass(jaxpr, list(args[:n]), undefined, list(args[n:]))
            self.zero_mask = [type(ct) is Zero for ct in cts_in]
            return [ct for ct in cts_in if type(ct) is not Zero]
        flat.__name__ = "backward_pass"
        self.jitted = _eager_jit(flat)

    def __call__(self, consts, cts) -> list:
        outs = iter(self.jitted(*consts, *cts))
        return [Zero(a) if zero else next(outs)
                for a, zero in zip(self.linear_avals, self.zero_mask, strict=True)]


class CompiledTapeVJP:
    """The vjp of one recorded program as a jitted function of (consts, primals, cotangents),
    returning the cotangents of the primals (and first the program's outputs, `with_outputs`).
    Which cotangents are symbolic zeros is known once traced; only the others leave the
    program."""

    def __init__(self, jaxpr, n_consts: int, primal_avals: list, present: tuple,
                 with_outputs: bool = False):
        self.primal_avals = primal_avals
        self.zero_mask: list[bool] = []
        self.n_outputs = len(jaxpr.outvars) if with_outputs else 0
        n_primals = len(primal_avals)

        def flat(*args):
            consts, rest = list(args[:n_consts]), args[n_consts:]
            primals, given = list(rest[:n_primals]), iter(rest[n_primals:])
            cts = [next(given) if p else Zero(tangent_aval(v.aval))  # unread (aux) outputs
                   for p, v in zip(present, jaxpr.outvars, strict=True)]
            p_out, pullback = traced_vjp_flat(replay(jaxpr, consts), primals)
            cts_in = pullback(cts)
            self.zero_mask = [type(ct) is Zero for ct in cts_in]
            nonzero = [ct for ct in cts_in if type(ct) is not Zero]
            return list(p_out) + nonzero if with_outputs else nonzero
        flat.__name__ = "eager_vjp"
        self.jitted = _eager_jit(flat)

    def __call__(self, consts, primals, cts):
        """The primals' cotangents (with `with_outputs`: (outputs, cotangents))."""
        outs = self.jitted(*consts, *primals, *cts)
        n = self.n_outputs
        rest = iter(outs[n:])
        cts_in = [Zero(tangent_aval(a)) if zero else next(rest)
                  for a, zero in zip(self.primal_avals, self.zero_mask, strict=True)]
        return (list(outs[:n]), cts_in) if n else cts_in


def compiled_forward(jaxpr, n_consts: int):
    """`jaxpr` as one jitted function of (consts..., invars...)."""
    def forward(*args):
        return eval_jaxpr(jaxpr, list(args[:n_consts]), list(args[n_consts:]))
    forward.__name__ = "eager_forward"
    return _eager_jit(forward)
