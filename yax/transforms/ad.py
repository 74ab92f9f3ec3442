"""Public differentiation API: jvp, linearize, vjp, grad, value_and_grad, linear_transpose.

Reverse mode is linearize + transpose (the JAX design): `vjp` evaluates the function while
staging the linear map of its tangents, then runs that linear jaxpr backwards.
"""

from __future__ import annotations

import contextvars
import functools

import numpy as np

from yax import errors, tree_util
from yax.config import config
from yax.core import dtypes
from yax.core.avals import ShapedArray, TypedScalar, aval_of_value
from yax.core.trace import current_trace
from yax.interpreters import eager
from yax.interpreters import jvp as jvp_interp
from yax.interpreters.ad_util import Zero, float0, instantiate, tangent_aval
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.partial_eval import TapeNotApplicable, TapeTracer, linearize_flat, record_tape
from yax.interpreters.staging import trace_to_jaxpr
from yax.interpreters.transpose import (
    UndefinedPrimal,
    backward_pass,
    compiled_backward_pass,
    jaxpr_structure_key,
)
from yax.lax.ad_control import stop_gradient
from yax.lax.elementwise import _convert_keep_weak
from yax.runtime.array import Array
from yax.transforms._args import canonical_leaf, normalize_argnums
from yax.transforms.jit import jit


def _aval(x) -> ShapedArray:
    return aval_of_value(x)


def _flat_fun(fun, in_tree, out_tree_box):
    def flat(*args):
        out = fun(*tree_util.tree_unflatten(in_tree, args))
        leaves, tree = tree_util.tree_flatten(out)
        out_tree_box.append(tree)
        return leaves
    return flat


def _is_float0(x) -> bool:
    return getattr(x, "dtype", None) == float0


def _differentiable(aval) -> bool:
    return dtypes.is_inexact(aval.dtype)


def _zeros_float0(aval):
    return np.zeros(aval.shape, float0)


def jvp(fun, primals, tangents, has_aux: bool = False):
    """Forward-mode: `(fun(*primals), d fun(primals)[tangents])`.

    Example:
      >>> yax.jvp(yax.numpy.sin, (0.0,), (1.0,))
      (Array(0., dtype=float32, weak_type=True), Array(1., dtype=float32, weak_type=True))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp expects primals and tangents as tuples of arguments, e.g. "
                        "jvp(f, (x,), (v,))")
    p_leaves, in_tree = tree_util.tree_flatten(tuple(primals))
    p_leaves = [canonical_leaf(x) for x in p_leaves]
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    t_leaves = [t if _is_float0(t) else canonical_leaf(t) for t in t_leaves]
    if in_tree != t_tree:
        raise TypeError(f"jvp: primals and tangents must have the same structure, got {in_tree} "
                        f"and {t_tree}")
    tangents_in = []
    for p, t in zip(p_leaves, t_leaves):
        pa, ta = _aval(p), (None if _is_float0(t) else _aval(t))
        if ta is not None and (pa.shape != ta.shape):
            raise errors.ShapeError(f"jvp: tangent {ta.str_short()} does not match its primal "
                                    f"{pa.str_short()}; each tangent has its primal's shape")
        tangents_in.append(Zero(tangent_aval(pa)) if ta is None or not _differentiable(pa)
                           else t)
    out_box = []
    flat = _flat_fun(fun, in_tree, out_box)
    p_out, t_out = jvp_interp.jvp_flat(flat, p_leaves, tangents_in)
    t_out = [_zeros_float0(_aval(p)) if type(t) is Zero and not _differentiable(_aval(p))
             else instantiate(t) for p, t in zip(p_out, t_out)]
    out_tree = out_box[0]
    primal_out = tree_util.tree_unflatten(out_tree, p_out)
    tangent_out = tree_util.tree_unflatten(out_tree, t_out)
    if has_aux:
        return primal_out[0], tangent_out[0], primal_out[1]
    return primal_out, tangent_out


class _LinearFunction:
    """A linear map backed by a linear jaxpr and its residuals (what `linearize` returns)."""

    def __init__(self, jaxpr, nonzero, in_tree, out_tree, out_avals):
        self.jaxpr, self.nonzero = jaxpr, nonzero
        self.in_tree, self.out_tree, self.out_avals = in_tree, out_tree, out_avals

    def __call__(self, *tangents):
        leaves, tree = tree_util.tree_flatten(tuple(tangents))
        if tree != self.in_tree:
            raise TypeError(f"linearized function expects tangents structured as {self.in_tree}, "
                            f"got {tree}")
        outs = iter(eval_jaxpr(self.jaxpr.jaxpr, self.jaxpr.consts, leaves))
        flat = [next(outs) if nz else instantiate(Zero(tangent_aval(a)))
                for nz, a in zip(self.nonzero, self.out_avals)]
        return tree_util.tree_unflatten(self.out_tree, flat)


def linearize(fun, *primals):
    """`(fun(*primals), f_jvp)` where `f_jvp(*tangents)` applies the linearized function.

    The linear function is a staged jaxpr plus residuals: calling it repeatedly does not re-run
    the primal computation.
    """
    p_leaves, in_tree = tree_util.tree_flatten(primals)
    p_leaves = [canonical_leaf(x) for x in p_leaves]
    out_box = []
    p_out, linear, nonzero = linearize_flat(_flat_fun(fun, in_tree, out_box), p_leaves)
    out_avals = [_aval(p) for p in p_out]
    return (tree_util.tree_unflatten(out_box[0], p_out),
            _LinearFunction(linear, nonzero, in_tree, out_box[0], out_avals))


def _vjp_flat(flat_fun, p_leaves):
    if _eager_tape_applies(p_leaves):
        return _eager_vjp_flat(flat_fun, p_leaves)
    return _traced_vjp_flat(flat_fun, p_leaves)


def _traced_vjp_flat(flat_fun, p_leaves):
    p_out, linear, nonzero = linearize_flat(flat_fun, p_leaves)
    in_avals = [tangent_aval(_aval(p)) for p in p_leaves]

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


# --- eager vjp: record the primal program, differentiate it as one compiled program ----------

def _eager_tape_applies(p_leaves) -> bool:
    """Called eagerly on concrete Arrays, with jit enabled and no per-op debugging checks."""
    return (current_trace() is eager.EVAL_TRACE and not config.disable_jit
            and not config.debug_nans and not config.debug_infs
            and all(type(x) is Array for x in p_leaves))


def _eager_vjp_flat(flat_fun, p_leaves):
    """`_vjp_flat` for eager calls. The function's Python runs once, under `record_tape`; the
    recorded program then runs compiled, and the pullback is its vjp, compiled too. Both are
    cached per recorded structure (never per function: a different branch records a different
    program)."""
    primals = list(p_leaves)
    try:
        outs, tape_jaxpr, tape = record_tape(flat_fun, primals)
    except TapeNotApplicable:  # e.g. a custom_jvp/custom_vjp call: JAX's call semantics
        return _traced_vjp_flat(flat_fun, p_leaves)
    structure = _reusable_structure(tape_jaxpr)
    speculated = _speculative_grad(outs, tape_jaxpr, structure, primals)
    if speculated is not None:
        p_out, grads, one_aval = speculated
    else:
        p_out = _tape_outputs(outs, tape_jaxpr, tape, structure, primals)

    def pullback(cts_out: list) -> list:
        cts_out = list(cts_out)
        if speculated is not None and _is_unit_cotangent(cts_out, one_aval):
            return list(grads)
        return _tape_pullback(tape_jaxpr, structure, primals, cts_out)
    return p_out, pullback


_seen_by_identity: set = set()


def _reusable_structure(tape_jaxpr):
    """The structure key of a recorded program, or None when it should not be compiled: a
    const is not a concrete Array, a param cannot be hashed, or a param compares as an object
    (a custom rule, a jaxpr with consts) and this key was not seen before (objects made afresh
    on every call would otherwise compile on every call)."""
    if not all(type(c) is Array for c in tape_jaxpr.consts):
        return None
    structure, by_identity = jaxpr_structure_key(tape_jaxpr.jaxpr)
    if structure is not None and by_identity and structure not in _seen_by_identity:
        if len(_seen_by_identity) >= _MAX_COMPILED_TAPES:
            _seen_by_identity.clear()
        _seen_by_identity.add(structure)
        return None
    return structure


_compiled_tapes: dict = {}
_MAX_COMPILED_TAPES = 512


def _cached_tape_program(key, make):
    entry = _compiled_tapes.get(key)
    if entry is None:
        if len(_compiled_tapes) >= _MAX_COMPILED_TAPES:
            _compiled_tapes.clear()
        entry = _compiled_tapes[key] = make()
    return entry


def _tape_outputs(outs, tape_jaxpr, tape, structure, primals) -> list:
    """Concrete outputs of the recorded program: those already computed (Python asked for
    them), else from one compiled run of the program."""
    values = [o.value if isinstance(o, TapeTracer) else o for o in outs]
    if all(v is not None for v in values):
        return values
    if structure is None:
        tape.evaluate()
        return [o.value if isinstance(o, TapeTracer) else o for o in outs]

    key = ("forward", structure, config.trace_state())
    n_consts = len(tape_jaxpr.consts)
    program = _cached_tape_program(key, lambda: jit(_flat_replay(tape_jaxpr.jaxpr, n_consts)))
    return list(program(*tape_jaxpr.consts, *primals))


def _flat_replay(jaxpr, n_consts: int):
    def replay(*args):
        return eval_jaxpr(jaxpr, list(args[:n_consts]), list(args[n_consts:]))
    replay.__name__ = "eager_forward"
    return replay


def _tape_pullback(tape_jaxpr, structure, primals: list, cts_out: list) -> list:
    present = tuple(ct is not None for ct in cts_out)  # aux outputs pass None: never read
    if structure is None or current_trace() is not eager.EVAL_TRACE:
        _, pullback = _traced_vjp_flat(_replay(tape_jaxpr.jaxpr, tape_jaxpr.consts), primals)
        return pullback(cts_out)
    cts = [_concrete_ct(ct) for ct in cts_out if ct is not None]
    key = ("vjp", structure, present, tuple(c.aval for c in cts), config.trace_state())
    entry = _cached_tape_program(key, lambda: _CompiledTapeVJP(
        tape_jaxpr.jaxpr, len(tape_jaxpr.consts), [p.aval for p in primals], present))
    return entry(tape_jaxpr.consts, primals, cts)


def _concrete_ct(ct):
    if type(ct) is Array:
        return ct
    if type(ct) is TypedScalar:
        return eager.to_array(ct)
    return canonical_leaf(ct)


def _replay(jaxpr, consts):
    def replay(*xs):
        return eval_jaxpr(jaxpr, consts, xs)
    return replay


class _CompiledTapeVJP:
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
            p_out, pullback = _traced_vjp_flat(_replay(jaxpr, consts), primals)
            cts_in = pullback(cts)
            self.zero_mask = [type(ct) is Zero for ct in cts_in]
            nonzero = [ct for ct in cts_in if type(ct) is not Zero]
            return list(p_out) + nonzero if with_outputs else nonzero
        flat.__name__ = "eager_vjp"
        self.jitted = jit(flat)

    def __call__(self, consts, primals, cts):
        """The primals' cotangents (with `with_outputs`: (outputs, cotangents))."""
        outs = self.jitted(*consts, *primals, *cts)
        n = self.n_outputs
        rest = iter(outs[n:])
        cts_in = [Zero(tangent_aval(a)) if zero else next(rest)
                  for a, zero in zip(self.primal_avals, self.zero_mask, strict=True)]
        return (list(outs[:n]), cts_in) if n else cts_in


# value_and_grad's pullback is called at once with a unit cotangent for the (scalar) first
# output and none for the aux outputs: eagerly, outputs and gradients then come from one program.
_unit_cotangent_expected = contextvars.ContextVar("yax_unit_cotangent_expected", default=False)


def _vjp_expecting_unit_cotangent(fun, diff_args, has_aux: bool):
    """`vjp(fun, *diff_args, has_aux=has_aux)` for value_and_grad."""
    token = _unit_cotangent_expected.set(True)
    try:
        return vjp(fun, *diff_args, has_aux=has_aux)
    finally:
        _unit_cotangent_expected.reset(token)


def _speculative_grad(outs, tape_jaxpr, structure, primals):
    """(outputs, gradients of the first output for a unit cotangent), from one compiled program,
    or None when value_and_grad is not the caller or the first output is not an inexact
    scalar (grad's own checks then report it)."""
    if not _unit_cotangent_expected.get() or structure is None or not outs:
        return None
    aval = _aval(outs[0])
    if aval.shape != () or not dtypes.is_inexact(aval.dtype):
        return None
    one = eager.to_array(TypedScalar(1, aval.dtype, weak_type=False))
    present = (True,) + (False,) * (len(outs) - 1)
    key = ("value_and_grad", structure, present, one.aval, config.trace_state())
    entry = _cached_tape_program(key, lambda: _CompiledTapeVJP(
        tape_jaxpr.jaxpr, len(tape_jaxpr.consts), [p.aval for p in primals], present,
        with_outputs=True))
    values, grads = entry(tape_jaxpr.consts, primals, [one])
    return values, grads, one.aval


def _is_unit_cotangent(cts_out: list, one_aval) -> bool:
    first = cts_out[0] if cts_out else None
    return (type(first) is TypedScalar and first.aval == one_aval and first.value == 1
            and all(ct is None for ct in cts_out[1:]))


def vjp(fun, *primals, has_aux: bool = False):
    """`(fun(*primals), f_vjp)`; `f_vjp(cotangent)` returns one cotangent per primal.

    Example:
      >>> y, f_vjp = yax.vjp(yax.numpy.sin, 0.5)
      >>> f_vjp(1.0)   # (cos(0.5),)
    """
    p_leaves, in_tree = tree_util.tree_flatten(primals)
    p_leaves = [canonical_leaf(x) for x in p_leaves]
    out_box = []
    flat = _flat_fun(fun, in_tree, out_box)
    if has_aux:
        aux_box = []

        def flat(*args, _inner=flat):
            # aux leaves leave as extra outputs (with no derivative) so their values are read
            # while the differentiation trace is alive, never as tracers
            out = fun(*tree_util.tree_unflatten(in_tree, args))
            _check_aux_pair(out, "vjp")
            leaves, tree = tree_util.tree_flatten(out[0])
            out_box.append(tree)
            aux_leaves, aux_tree = tree_util.tree_flatten(out[1])
            aux_box.append((aux_tree, len(aux_leaves)))
            return leaves + [stop_gradient(canonical_leaf(a)) for a in aux_leaves]
    p_out, pullback = _vjp_flat(flat, p_leaves)
    if has_aux:
        aux_tree, n_aux = aux_box[0]
        aux = tree_util.tree_unflatten(aux_tree, p_out[len(p_out) - n_aux:])
        p_out = p_out[:len(p_out) - n_aux]
        pullback = functools.partial(_pullback_ignoring_aux, pullback, n_aux)
    out_tree = out_box[0]
    out_avals = [_aval(p) for p in p_out]

    def f_vjp(ct):
        ct_leaves, ct_tree = tree_util.tree_flatten(ct)
        if ct_tree != out_tree:
            raise TypeError(f"vjp: the cotangent must have the output's structure {out_tree}, "
                            f"got {ct_tree}")
        for c, a in zip(ct_leaves, out_avals):
            if tuple(np.shape(c)) != a.shape:
                raise errors.ShapeError(f"vjp: cotangent of shape {np.shape(c)} for an output "
                                        f"{a.str_short()}; cotangents have the output's shape")
        cts = pullback(list(ct_leaves))
        flat_cts = [_zeros_float0(_aval(p)) if not _differentiable(_aval(p))
                    else _weak_like(_value(c), _aval(p)) for p, c in zip(p_leaves, cts)]
        return tree_util.tree_unflatten(in_tree, flat_cts)

    primal_out = tree_util.tree_unflatten(out_tree, p_out)
    if has_aux:
        return primal_out, f_vjp, aux
    return primal_out, f_vjp


def _pullback_ignoring_aux(pullback, n_aux: int, cts: list) -> list:
    return pullback(list(cts) + [None] * n_aux)  # aux outputs have zero tangents: unread


def _weak_like(ct, primal_aval):
    """As JAX: a cotangent returned to the user is weakly typed exactly when its primal is."""
    aval = _aval(ct)
    if aval.weak_type == primal_aval.weak_type or aval.dtype != primal_aval.dtype:
        return ct
    return _convert_keep_weak(ct, aval.dtype, primal_aval.weak_type)


def _value(ct):
    """A user-facing cotangent: zeros materialised, typed literals made Arrays."""
    if type(ct) is TypedScalar:
        return eager.to_array(ct)
    return instantiate(ct)


def _check_aux_pair(out, where: str) -> None:
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"{where} with has_aux=True needs the function to return a pair "
                        f"(output, aux), got {type(out).__name__}")


def _check_grad_inputs(args, argnums, allow_int: bool, name: str, holomorphic: bool = False,
                       real_only: bool = False) -> None:
    """JAX's input checks: inexact inputs (complex ones only with `holomorphic`, and only
    those then; `real_only` for forward mode, which has no conjugate convention)."""
    for i in argnums:
        for leaf in tree_util.tree_leaves(args[i]):
            aval = _aval(leaf)
            if holomorphic and not dtypes.is_complex(aval.dtype):
                raise errors.DTypeError(
                    f"{name} with holomorphic=True requires inputs with complex dtype, but got "
                    f"{aval.dtype.name} (argument {i}, {aval.str_short()}). Pass complex inputs "
                    f"(`x.astype(jnp.complex64)`) or drop holomorphic=True.")
            if real_only and not holomorphic and dtypes.is_complex(aval.dtype):
                raise errors.DTypeError(
                    f"{name} requires real-valued inputs (input dtype that is a sub-dtype of "
                    f"np.floating), but got {aval.dtype.name} (argument {i}). For holomorphic "
                    f"differentiation, pass holomorphic=True. For differentiation of "
                    f"non-holomorphic functions of complex inputs, split them into real and "
                    f"imaginary parts (jnp.real/jnp.imag) and differentiate those.")
            if not dtypes.is_inexact(aval.dtype) and not allow_int:
                raise errors.DTypeError(
                    f"{name} requires real- or complex-valued inputs, but argument {i} has "
                    f"dtype {aval.dtype.name} ({aval.str_short()}). Convert it to a float "
                    f"(`x.astype(jnp.float32)`), differentiate with respect to other arguments "
                    f"(`argnums=`), or pass `allow_int=True` to get float0 zeros.")


def value_and_grad(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False):
    """`(fun(*args), gradient of fun with respect to args[argnums])` for a scalar `fun`.

    With `holomorphic=True` the inputs and the output must be complex and the result is the
    complex derivative f'(z). Without it the output must be real; for complex inputs the result
    is then JAX's convention, the conjugate of df/dz* times two (grad(abs(z)**2) == 2*conj(z)).
    """
    single = isinstance(argnums, int)
    nums = normalize_argnums(argnums)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        for i in nums:
            if i >= len(args):
                raise TypeError(f"grad: argnums={argnums} but only {len(args)} positional "
                                f"arguments were given")
        _check_grad_inputs(args, nums, allow_int, "grad", holomorphic)
        diff_args = tuple(args[i] for i in nums)

        def partial_fun(*diff):
            full = list(args)
            for i, d in zip(nums, diff):
                full[i] = d
            return fun(*full, **kwargs)

        out = _vjp_expecting_unit_cotangent(partial_fun, diff_args, has_aux)
        value, f_vjp = out[0], out[1]
        _check_scalar_output(value, holomorphic)
        grads = f_vjp(_one_like(value))
        grads = grads[0] if single else grads
        if has_aux:
            return (value, out[2]), grads
        return value, grads
    return wrapped


def grad(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False):
    """The gradient of a scalar-valued `fun` with respect to `args[argnums]`.

    Example:
      >>> yax.grad(lambda x: x ** 3)(2.0)
      Array(12., dtype=float32, weak_type=True)
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        (value_or_pair, grads) = vg(*args, **kwargs)
        if has_aux:
            return grads, value_or_pair[1]
        return grads
    return wrapped


def _check_scalar_output(value, holomorphic: bool = False) -> None:
    leaves = tree_util.tree_leaves(value)
    aval = _aval(leaves[0]) if len(leaves) == 1 else None
    if aval is None or aval.shape != ():
        shape = aval.str_short() if aval is not None else f"a pytree of {len(leaves)} leaves"
        aux = (" If the function returns (loss, auxiliary data), pass `has_aux=True`: grad then "
               "returns (gradient, aux)." if isinstance(value, (tuple, list)) else "")
        raise errors.ShapeError(
            f"grad requires a scalar output, got {shape}.{aux} For a vector output use "
            f"`yax.vjp(f, x)` with a cotangent, `yax.jacrev`/`yax.jacfwd` for the full Jacobian, "
            f"or reduce the output (e.g. `.sum()`).")
    check_output_dtype(aval, "grad", holomorphic)


def check_output_dtype(aval, name: str, holomorphic: bool) -> None:
    """JAX's output checks for reverse mode: real outputs, or complex ones with holomorphic."""
    if holomorphic and not dtypes.is_complex(aval.dtype):
        raise errors.DTypeError(
            f"{name} with holomorphic=True requires outputs with complex dtype, but got "
            f"{aval.dtype.name}; drop holomorphic=True for a real-valued function")
    if not holomorphic and (dtypes.is_complex(aval.dtype) or not dtypes.is_inexact(aval.dtype)):
        hint = (" For holomorphic differentiation, pass holomorphic=True. For a non-holomorphic "
                "function, differentiate its real and imaginary parts (jnp.real(f(z)), "
                "jnp.imag(f(z))) separately." if dtypes.is_complex(aval.dtype) else
                " Integer and boolean outputs have no derivative; compute a float output.")
        raise errors.DTypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {aval.dtype.name}.{hint}")


def _one_like(value):
    leaf = tree_util.tree_leaves(value)[0]
    aval = _aval(leaf)
    # a typed literal: staged programs show `1.0:f32[]` rather than capturing a constant
    one = TypedScalar(1, aval.dtype, weak_type=False)
    return tree_util.tree_unflatten(tree_util.tree_structure(value), [one])


def linear_transpose(fun, *primals):
    """The transpose of the linear function `fun`, for inputs shaped like `primals`."""
    p_leaves, in_tree = tree_util.tree_flatten(primals)
    p_leaves = [canonical_leaf(x) for x in p_leaves]
    in_avals = [tangent_aval(_aval(p)) for p in p_leaves]
    out_box = []
    closed = trace_to_jaxpr(_flat_fun(fun, in_tree, out_box), in_avals, name="linear_transpose")

    def transposed(ct):
        ct_leaves, _ = tree_util.tree_flatten(ct)
        cts = backward_pass(closed.jaxpr, closed.consts, [UndefinedPrimal(a) for a in in_avals],
                            ct_leaves)
        return tree_util.tree_unflatten(in_tree, [instantiate(c) for c in cts])
    return transposed
