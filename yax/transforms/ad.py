"""Public differentiation API: jvp, linearize, vjp, grad, value_and_grad, linear_transpose.

Reverse mode is linearize + transpose (the JAX design): `vjp` evaluates the function while
staging the linear map of its tangents, then runs that linear jaxpr backwards.
"""

from __future__ import annotations

import functools

import numpy as np

from yax import errors, tree_util
from yax.core import dtypes
from yax.core.avals import TypedScalar
from yax.interpreters import jvp as jvp_interp
from yax.interpreters.ad_util import Zero, float0, instantiate, tangent_aval
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.partial_eval import linearize_flat
from yax.interpreters.staging import trace_to_jaxpr
from yax.interpreters.transpose import UndefinedPrimal, backward_pass
from yax.lax.ad_control import stop_gradient
from yax.lax.elementwise import _convert_keep_weak
from yax.runtime import values
from yax.runtime.array import Array
from yax.runtime.values import aval_of, canonical_leaf
from yax.transforms import eager_ad
from yax.transforms._args import normalize_argnums
from yax.transforms.vjp_function import VJPFunction


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
        pa, ta = aval_of(p), (None if _is_float0(t) else aval_of(t))
        if ta is not None and (pa.shape != ta.shape):
            raise errors.ShapeError(f"jvp: tangent {ta.str_short()} does not match its primal "
                                    f"{pa.str_short()}; each tangent has its primal's shape")
        tangents_in.append(Zero(tangent_aval(pa)) if ta is None or not _differentiable(pa)
                           else t)
    out_box = []
    flat = _flat_fun(fun, in_tree, out_box)
    p_out, t_out = jvp_interp.jvp_flat(flat, p_leaves, tangents_in)
    t_out = [_zeros_float0(aval_of(p)) if type(t) is Zero and not _differentiable(aval_of(p))
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


def linearize(fun, *primals, has_aux: bool = False):
    """`(fun(*primals), f_jvp)` where `f_jvp(*tangents)` applies the linearized function.

    The linear function is a staged jaxpr plus residuals: calling it repeatedly does not re-run
    the primal computation. With `has_aux=True`, `fun` returns `(output, aux)`: only `output`
    is linearized and the result is `(output, f_jvp, aux)`, as in JAX.
    """
    p_leaves, in_tree = tree_util.tree_flatten(primals)
    p_leaves = [canonical_leaf(x) for x in p_leaves]
    out_box = []
    flat = _with_aux_outputs(fun, in_tree, out_box, "linearize") if has_aux else \
        _flat_fun(fun, in_tree, out_box)
    p_out, linear, nonzero = linearize_flat(flat, p_leaves)
    out_avals = [aval_of(p) for p in p_out]
    if not has_aux:
        return (tree_util.tree_unflatten(out_box[0], p_out),
                _LinearFunction(linear, nonzero, in_tree, out_box[0], out_avals))
    out_tree, (aux_tree, n_aux) = out_box[0]
    n_out = len(p_out) - n_aux
    # the linear map's outputs are (output leaves, aux leaves); callers see only the output
    both_tree = tree_util.tree_structure(
        (tree_util.tree_unflatten(out_tree, p_out[:n_out]), list(p_out[n_out:])))
    linear_fn = _LinearFunction(linear, nonzero, in_tree, both_tree, out_avals)
    return (tree_util.tree_unflatten(out_tree, p_out[:n_out]),
            functools.partial(_first_of, linear_fn),
            tree_util.tree_unflatten(aux_tree, p_out[n_out:]))


def _first_of(linear_fn, *tangents):
    return linear_fn(*tangents)[0]


def _with_aux_outputs(fun, in_tree, out_box, where: str):
    """A flat function whose aux leaves leave as extra outputs (with no derivative) so their
    values are read while the trace is alive, never as tracers; `out_box` receives
    `(output tree, (aux tree, number of aux leaves))`."""
    def flat(*args):
        out = fun(*tree_util.tree_unflatten(in_tree, args))
        _check_aux_pair(out, where)
        leaves, tree = tree_util.tree_flatten(out[0])
        aux_leaves, aux_tree = tree_util.tree_flatten(out[1])
        out_box.append((tree, (aux_tree, len(aux_leaves))))
        return leaves + [stop_gradient(canonical_leaf(a)) for a in aux_leaves]
    return flat


def _check_no_reduce_axes(reduce_axes, name: str) -> None:
    """JAX 0.10.2 keeps `reduce_axes` in the signature but refuses any non-empty value (the
    option was withdrawn); yax does the same rather than ignore it."""
    if reduce_axes:
        raise NotImplementedError(
            f"{name}: reduce_axes={reduce_axes!r} is no longer supported (JAX withdrew it); "
            f"sum the cotangents over the named axes yourself, e.g. with lax.psum")


def vjp(fun, *primals, has_aux: bool = False, reduce_axes=()):
    """`(fun(*primals), f_vjp)`; `f_vjp(cotangent)` returns one cotangent per primal.
    `reduce_axes` must be empty (JAX refuses it too).

    Example:
      >>> y, f_vjp = yax.vjp(yax.numpy.sin, 0.5)
      >>> f_vjp(1.0)   # (cos(0.5),)
    """
    _check_no_reduce_axes(reduce_axes, "vjp")
    return _vjp(fun, primals, has_aux)


def _vjp(fun, primals, has_aux: bool, unit_cotangent: bool = False):
    """`vjp`; `unit_cotangent`: value_and_grad calls the pullback at once with a unit
    cotangent (eagerly, outputs and gradients then come from one program)."""
    p_leaves, in_tree = tree_util.tree_flatten(primals)
    p_leaves = [canonical_leaf(x) for x in p_leaves]
    out_box = []
    flat = _with_aux_outputs(fun, in_tree, out_box, "vjp") if has_aux else \
        _flat_fun(fun, in_tree, out_box)
    p_out, pullback = eager_ad.vjp_flat(flat, p_leaves, unit_cotangent)
    out_box_aux = [0]
    if has_aux:
        out_box[0], (aux_tree, n_aux) = out_box[0]
        aux = tree_util.tree_unflatten(aux_tree, p_out[len(p_out) - n_aux:])
        p_out = p_out[:len(p_out) - n_aux]
        pullback = functools.partial(_pullback_ignoring_aux, pullback, n_aux)
        out_box_aux[0] = n_aux
    out_tree = out_box[0]
    out_avals = [aval_of(p) for p in p_out]
    p_avals = [aval_of(p) for p in p_leaves]

    def make_f_vjp(pullback):
        def f_vjp(ct):
            ct_leaves, ct_tree = tree_util.tree_flatten(ct)
            if ct_tree != out_tree:
                raise TypeError(f"vjp: the cotangent must have the output's structure {out_tree}, "
                                f"got {ct_tree}")
            for c, a in zip(ct_leaves, out_avals):
                if _shape_of(c) != a.shape:
                    raise errors.ShapeError(f"vjp: cotangent of shape {np.shape(c)} for an output "
                                            f"{a.str_short()}; cotangents have the output's shape")
            # jax's cotangent of an integer/bool output is float0: it carries no data (a zero)
            cts = pullback([None if _is_float0(c) else c for c in ct_leaves])
            real_out = not any(dtypes.is_complex(a.dtype) for a in out_avals)
            flat_cts = []
            for aval, c in zip(p_avals, cts):
                flat_cts.append(_weak_like(_value(c), aval, real_out) if _differentiable(aval)
                                else _zeros_float0(aval))
            return tree_util.tree_unflatten(in_tree, flat_cts)
        return f_vjp

    def residuals():  # (the linear map's residuals, consts -> f_vjp): the pytree's leaves
        n_aux = out_box_aux[0]
        _, linear, nonzero = linearize_flat(flat, p_leaves)
        undefined = [UndefinedPrimal(tangent_aval(aval_of(p))) for p in p_leaves]

        def rebuild(consts):
            def pb(cts_out):
                cts = [ct for ct, nz in zip(cts_out, nonzero, strict=True) if nz]
                return backward_pass(linear.jaxpr, list(consts), undefined, cts)
            return make_f_vjp(functools.partial(_pullback_ignoring_aux, pb, n_aux)
                              if n_aux else pb)
        return list(linear.consts), rebuild

    primal_out = tree_util.tree_unflatten(out_tree, p_out)
    f_vjp = VJPFunction(make_f_vjp(pullback), residuals)
    if has_aux:
        return primal_out, f_vjp, aux
    return primal_out, f_vjp


def _pullback_ignoring_aux(pullback, n_aux: int, cts: list) -> list:
    return pullback(list(cts) + [None] * n_aux)  # aux outputs have zero tangents: unread


def _shape_of(x) -> tuple:
    aval = getattr(x, "aval", None)  # Arrays, tracers and typed scalars: no NumPy call
    return aval.shape if aval is not None else tuple(np.shape(x))


def _weak_like(ct, primal_aval, real_out: bool = False):
    """As JAX: a cotangent returned to the user is weakly typed exactly when its primal is,
    except a complex primal's under a real-valued function: JAX's cotangent there is made by
    `complex(ct, zeros)` (the transpose of `real`/`imag`/`abs`), which is strong."""
    aval = ct.aval if type(ct) is Array else aval_of(ct)
    weak = primal_aval.weak_type and not (real_out and dtypes.is_complex(primal_aval.dtype))
    if aval.weak_type == weak or aval.dtype != primal_aval.dtype:
        return ct
    return _convert_keep_weak(ct, aval.dtype, weak)


def _value(ct):
    """A user-facing cotangent: zeros materialised, typed literals made Arrays."""
    if type(ct) is Array:
        return ct
    if type(ct) is TypedScalar:
        return values.to_array(ct)
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
            aval = aval_of(leaf)
            if aval.dtype in dtypes.REAL_FLOATS and not holomorphic:  # the usual input: passes all
                continue
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
                   allow_int: bool = False, reduce_axes=()):
    """`(fun(*args), gradient of fun with respect to args[argnums])` for a scalar `fun`.

    With `holomorphic=True` the inputs and the output must be complex and the result is the
    complex derivative f'(z). Without it the output must be real; for complex inputs the result
    is then JAX's convention, the conjugate of df/dz* times two (grad(abs(z)**2) == 2*conj(z)).
    `reduce_axes` must be empty (JAX refuses it too).
    """
    _check_no_reduce_axes(reduce_axes, "grad")
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

        out = _vjp(partial_fun, diff_args, has_aux, unit_cotangent=True)
        value, f_vjp = out[0], out[1]
        _check_scalar_output(value, holomorphic)
        grads = f_vjp(_one_like(value))
        grads = grads[0] if single else grads
        if has_aux:
            return (value, out[2]), grads
        return value, grads
    return wrapped


def grad(fun, argnums=0, has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False, reduce_axes=()):
    """The gradient of a scalar-valued `fun` with respect to `args[argnums]`.

    Example:
      >>> yax.grad(lambda x: x ** 3)(2.0)
      Array(12., dtype=float32, weak_type=True)
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, reduce_axes)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        (value_or_pair, grads) = vg(*args, **kwargs)
        if has_aux:
            return grads, value_or_pair[1]
        return grads
    return wrapped


def _check_scalar_output(value, holomorphic: bool = False) -> None:
    leaves = [value] if type(value) is Array else tree_util.tree_leaves(value)
    aval = aval_of(leaves[0]) if len(leaves) == 1 else None
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
    leaf = value if type(value) is Array else tree_util.tree_leaves(value)[0]
    aval = aval_of(leaf)
    # a typed literal: staged programs show `1.0:f32[]` rather than capturing a constant
    one = TypedScalar(1, aval.dtype, weak_type=aval.weak_type)  # as JAX: ones_like(out)
    if type(value) is Array:  # the usual scalar loss: its tree is one leaf
        return one
    return tree_util.tree_unflatten(tree_util.tree_structure(value), [one])


def linear_transpose(fun, *primals):
    """The transpose of the linear function `fun`, for inputs shaped like `primals`."""
    p_leaves, in_tree = tree_util.tree_flatten(primals)
    p_leaves = [canonical_leaf(x) for x in p_leaves]
    in_avals = [tangent_aval(aval_of(p)) for p in p_leaves]
    out_box = []
    closed = trace_to_jaxpr(_flat_fun(fun, in_tree, out_box), in_avals, name="linear_transpose")

    def transposed(ct):
        ct_leaves, _ = tree_util.tree_flatten(ct)
        cts = backward_pass(closed.jaxpr, closed.consts, [UndefinedPrimal(a) for a in in_avals],
                            ct_leaves)
        return tree_util.tree_unflatten(in_tree, [instantiate(c) for c in cts])
    return transposed
