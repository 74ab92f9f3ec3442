"""`custom_linear_solve`: the solution of a linear system, differentiated implicitly.

Operands are `(*matvec_consts, *vecmat_consts, *solve_consts, *transpose_solve_consts, *b)`;
the param `jaxprs` holds four const-free closed jaxprs, each taking its consts and then one
vector shaped like `b`, and `const_counts` how many consts each takes:

    matvec(x) -> b              the linear map A (differentiable; its consts carry dA)
    vecmat(ct_b) -> ct_x        its transpose (None when absent)
    solve(b) -> (x, *aux)       any algorithm with matvec(x) == b (never differentiated)
    transpose_solve(ct_x) -> (ct_b, *aux)   the same for vecmat (None when absent)

Meaning: `x = solve(*solve_consts, *b)`. The rules never look inside `solve`, so it may be a
while_loop or anything else, and each derivative is itself a custom_linear_solve:

    jvp:       dx = custom_linear_solve(same system, db - dA x)    (A x = b  =>  A dx = db - dA x)
    transpose: ct_b = custom_linear_solve(transposed system, ct_x)  (linear in b only)

so grad(grad), hessian, jacfwd(jacrev) ... stay right at every order. `names` keeps the user's
function names for error messages.
"""

from __future__ import annotations

from typing import NamedTuple

from yax import errors
from yax.core.ir import ClosedJaxpr
from yax.core.primitive import Primitive
from yax.core.trace import bind
from yax.interpreters import ad_util, batching, lowering
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.jvp import jvp_flat
from yax.interpreters.rule_cache import cached
from yax.interpreters.staging import closure_convert
from yax.interpreters.transpose import is_undefined
from yax.primitives._lax import lax


class LinearSolveParts(NamedTuple):
    """One entry per function of the system (jaxprs, const counts or names)."""

    matvec: object
    vecmat: object
    solve: object
    transpose_solve: object

    def transposed(self) -> LinearSolveParts:
        """The transposed system: vecmat is its operator and transpose_solve its solver."""
        return LinearSolveParts(self.vecmat, self.matvec, self.transpose_solve, self.solve)


def _split(operands, const_counts) -> tuple[LinearSolveParts, list]:
    groups, start = [], 0
    for n in const_counts:
        groups.append(list(operands[start:start + n]))
        start += n
    return LinearSolveParts(*groups), list(operands[start:])


def _flat(groups) -> list:
    return [x for group in groups for x in group]


def _types(avals) -> list:
    return [(a.shape, a.dtype) for a in avals]


def _sig(avals) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _linear_solve_abstract_eval(*avals, jaxprs, const_counts, names):
    consts, b = _split(avals, const_counts)
    n_b = len(jaxprs.matvec.out_avals)
    if len(b) != n_b:
        raise errors.InputMismatchError(
            f"custom_linear_solve: {len(b)} right-hand-side leaves for a matvec with {n_b}")
    for part, jaxpr, group, name in zip(LinearSolveParts._fields, jaxprs, consts, names):
        if jaxpr is None:
            continue
        if _types(jaxpr.in_avals) != _types([*group, *b]):
            raise errors.InputMismatchError(
                f"custom_linear_solve: {part} ({name}) takes {_sig(jaxpr.in_avals)} but gets "
                f"{_sig([*group, *b])} (its consts, then a vector shaped like b)")
        if _types(jaxpr.out_avals[:n_b]) != _types(b):
            raise errors.InputMismatchError(
                f"custom_linear_solve: {part} ({name}) returns {_sig(jaxpr.out_avals)}; it must "
                f"return a vector shaped like b {_sig(b)}")
    return [*b, *jaxprs.solve.out_avals[n_b:]]


def _linear_solve_lower(ctx, *args, jaxprs, const_counts, names):
    # Eager application lowers this same rule (one equation), so eager and jit agree.
    consts, b = _split(args, const_counts)
    return lowering.lower_jaxpr_body(ctx.module_ctx, jaxprs.solve.jaxpr, [],
                                     [*consts.solve, *b])


# --- jvp: A dx = db - dA x, the same system with another right-hand side ----------------------

def _matvec_tangent(matvec: ClosedJaxpr, consts, consts_dot, x) -> list:
    """dA x: the tangent of matvec(consts, x) along consts_dot, with x held fixed."""
    zeros = [ad_util.Zero(ad_util.tangent_aval(a)) for a in matvec.in_avals[len(consts):]]
    _, out = jvp_flat(lambda *xs: eval_jaxpr(matvec.jaxpr, [], xs), [*consts, *x],
                      [*consts_dot, *zeros])
    return out


def _linear_solve_jvp(primals, tangents, *, jaxprs, const_counts, names):
    params = dict(jaxprs=jaxprs, const_counts=const_counts, names=names)
    outs = bind(linear_solve_p, *primals, **params)
    consts, _ = _split(primals, const_counts)
    consts_dot, b_dot = _split(tangents, const_counts)
    n_b = len(b_dot)
    # solve's and transpose_solve's consts are not differentiated (they only pick the algorithm)
    rhs = list(b_dot)
    if any(type(t) is not ad_util.Zero for t in consts_dot.matvec):
        dA_x = _matvec_tangent(jaxprs.matvec, consts.matvec, consts_dot.matvec, outs[:n_b])
        rhs = [t if type(d) is ad_util.Zero else ad_util.add_tangents(t, lax.neg(d))
               for t, d in zip(rhs, dA_x, strict=True)]
    zeros_aux = [ad_util.Zero(ad_util.tangent_aval(a)) for a in jaxprs.solve.out_avals[n_b:]]
    if all(type(t) is ad_util.Zero for t in rhs):
        return outs, [*(ad_util.Zero(ad_util.tangent_aval(a)) for a in
                        jaxprs.matvec.out_avals), *zeros_aux]
    x_dot = bind(linear_solve_p, *_flat(consts), *[ad_util.instantiate(t) for t in rhs],
                 **params)
    return outs, [*x_dot[:n_b], *zeros_aux]


# --- transpose: linear in b; the cotangent solves the transposed system ------------------------

def _linear_solve_transpose(cts, *operands, jaxprs, const_counts, names):
    consts, b = _split(operands, const_counts)
    if jaxprs.transpose_solve is None:
        raise errors.CustomDerivativeError(
            f"reverse-mode differentiation (grad/vjp) of custom_linear_solve with solve "
            f"{names.solve} needs the transposed system: pass transpose_solve="
            f"lambda vecmat, ct: <x with vecmat(x) == ct>, or symmetric=True when matvec "
            f"{names.matvec} is a symmetric map")
    if any(is_undefined(c) for c in _flat(consts)):
        raise errors.NotImplementedRuleError(
            "custom_linear_solve is linear in its right-hand side only; its matvec/solve "
            "consts cannot be transposed")
    ct_x = [ad_util.instantiate(ct) for ct in cts[:len(b)]]
    ct_b = bind(linear_solve_p, *_flat(consts.transposed()), *ct_x,
                jaxprs=jaxprs.transposed(), const_counts=const_counts.transposed(),
                names=names.transposed())
    return [None] * len(_flat(consts)) + list(ct_b[:len(b)])


# --- batching: one fixed point of which parts of x and b are batched, for all four programs --

# (space of the input vector, space of the output vector) of each program
_SPACES = LinearSolveParts(("x", "b"), ("b", "x"), ("b", "x"), ("x", "b"))


def _natural_out_batched(jaxpr, consts_bat, vec_bat, size, axis_name, n_b) -> list[bool]:
    dims = [0 if bat else None for bat in [*consts_bat, *vec_bat]]
    _, out_dims = batching.batch_jaxpr(jaxpr, size, dims, axis_name=axis_name)
    return [d is not None for d in out_dims[:n_b]]


def _batched_masks(jaxprs, consts_bat, b_bat, size, axis_name):
    """Which leaves of x and of b are batched, so every program maps batched to batched."""
    n_b = len(b_bat)
    masks = {"x": [False] * n_b, "b": list(b_bat)}
    for _ in range(2 * n_b + 2):
        new = {k: list(v) for k, v in masks.items()}
        for jaxpr, bat, (src, dst) in zip(jaxprs, consts_bat, _SPACES):
            if jaxpr is not None:
                out = _natural_out_batched(jaxpr, bat, masks[src], size, axis_name, n_b)
                new[dst] = [a or o for a, o in zip(new[dst], out, strict=True)]
        if new == masks:
            return masks
        masks = new
    raise AssertionError("custom_linear_solve batching: no fixed point")


def _batch_programs(jaxprs, consts_bat, b_bat, size, axis_name):
    masks = _batched_masks(jaxprs, consts_bat, b_bat, size, axis_name)
    programs, extra = [], []
    for jaxpr, bat, (src, dst) in zip(jaxprs, consts_bat, _SPACES):
        if jaxpr is None:
            programs.append(None)
            extra.append([])
            continue
        n_aux = len(jaxpr.out_avals) - len(b_bat)
        dims = [0 if b else None for b in [*bat, *masks[src]]]
        wanted = [0 if b else None for b in masks[dst]] + [0] * n_aux
        batched, _ = batching.batch_jaxpr(jaxpr, size, dims, wanted, axis_name=axis_name)
        converted, consts = closure_convert(batched)
        programs.append(converted)
        extra.append(consts)
    return LinearSolveParts(*programs), extra, masks


def _linear_solve_batch(args, dims, *, jaxprs, const_counts, names):
    size = batching.axis_size_of(args, dims)
    axis_name = batching.current_axis().axis_name
    consts, b = _split(args, const_counts)
    consts_dims, b_dims = _split(dims, const_counts)
    consts_bat = tuple(tuple(d is not None for d in group) for group in consts_dims)
    b_bat = tuple(d is not None for d in b_dims)
    programs, extra, masks = cached(
        ("linear_solve_batch", jaxprs, size, consts_bat, b_bat, axis_name),
        lambda: _batch_programs(jaxprs, consts_bat, b_bat, size, axis_name),
        lambda v: _flat(v[1]))
    groups = [[*e, *(batching.move_batch_axis(c, d, 0, size) if d is not None else c
                     for c, d in zip(group, gdims, strict=True))]
              for e, group, gdims in zip(extra, consts, consts_dims, strict=True)]
    new_b = [batching.move_batch_axis(v, d, 0, size) if bat else v
             for v, d, bat in zip(b, b_dims, masks["b"], strict=True)]
    outs = bind(linear_solve_p, *_flat(groups), *new_b, jaxprs=programs,
                const_counts=LinearSolveParts(*(len(g) for g in groups)), names=names)
    n_aux = len(outs) - len(b)
    return outs, [0 if bat else None for bat in masks["x"]] + [0] * n_aux


linear_solve_p = Primitive("custom_linear_solve", multiple_results=True,
                           abstract_eval=_linear_solve_abstract_eval, lower=_linear_solve_lower,
                           jvp=_linear_solve_jvp, transpose=_linear_solve_transpose,
                           batch=_linear_solve_batch)
