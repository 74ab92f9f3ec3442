"""`pjit`: a jitted function applied under another transformation, as one primitive.

Its param `jaxpr` is a const-free closed jaxpr; its operands are the captured values followed by
the function's flattened arguments. Eagerly it compiles `jaxpr` once and runs it; when lowered
inside a larger program it becomes a call to a private function (lowered once per module).
Transformation rules (jvp, partial evaluation, transpose, batching) keep the inner program
staged; checkify checks it inline.
"""

from __future__ import annotations

from yax import errors
from yax.compile.run import compile_closed_jaxpr, run_closed_jaxpr  # noqa: F401 (re-exported)
from yax.core.primitive import Primitive
from yax.core.trace import bind, use_trace
from yax.interpreters import ad_util, batching, lowering
from yax.interpreters import jvp as jvp_interp
from yax.interpreters.checkify import inline_checked
from yax.interpreters.partial_eval import partial_eval_jaxpr
from yax.interpreters.rule_cache import cached
from yax.interpreters.staging import closure_convert
from yax.interpreters.transpose import is_undefined, transpose_jaxpr


def _pjit_abstract_eval(*avals, jaxpr, name):
    expected = jaxpr.in_avals
    if len(avals) != len(expected) or any(
            a.shape != e.shape or a.dtype != e.dtype for a, e in zip(avals, expected)):
        got = ", ".join(a.str_short() for a in avals)
        want = ", ".join(a.str_short() for a in expected)
        raise errors.InputMismatchError(f"pjit {name}: operands ({got}) do not match the traced "
                                        f"program's parameters ({want})")
    return list(jaxpr.out_avals)


def _pjit_lower(ctx, *args, jaxpr, name):
    return lowering.call_function(ctx.module_ctx, jaxpr, name, list(args))


def _pjit_impl(*arrays, jaxpr, name):
    return run_closed_jaxpr(jaxpr, arrays)


# --- transformation rules: each transforms the inner program and keeps it staged ---------------


def _const_free(closed) -> tuple:
    converted, consts = closure_convert(closed)
    return converted, consts


def _pjit_jvp(primals, tangents, *, jaxpr, name):
    nonzero = [type(t) is not ad_util.Zero for t in tangents]
    def make():
        jvp_closed, out_nonzero = jvp_interp.jvp_jaxpr(jaxpr, nonzero, instantiate=False)
        return (*_const_free(jvp_closed), out_nonzero)
    jvp_closed, consts, out_nonzero = cached(("pjit_jvp", jaxpr, tuple(nonzero)), make,
                                             lambda v: v[1])
    outs = bind(pjit_p, *consts, *primals, *[t for t in tangents if type(t) is not ad_util.Zero],
                jaxpr=jvp_closed, name=f"jvp_{name}")
    n = len(jaxpr.out_avals)
    t_iter = iter(outs[n:])
    t_out = [next(t_iter) if nz else ad_util.Zero(ad_util.tangent_aval(a))
             for nz, a in zip(out_nonzero, jaxpr.out_avals, strict=True)]
    return outs[:n], t_out


def _pjit_partial_eval(trace, args, params):
    """Known inputs run the known half now (staged one level out); the rest is staged here."""
    jaxpr, name = params["jaxpr"], params["name"]
    unknowns = [trace.is_unknown(a) for a in args]
    def make():
        known, unknown, out_unknowns, num_res = partial_eval_jaxpr(jaxpr, unknowns)
        return (*_const_free(known), unknown, out_unknowns, num_res)
    known, known_consts, unknown, out_unknowns, num_res = cached(
        ("pjit_pe", jaxpr, tuple(unknowns)), make, lambda v: v[1])
    with use_trace(trace.parent):
        known_outs = bind(pjit_p, *known_consts, *[a for a, u in zip(args, unknowns) if not u],
                          jaxpr=known, name=f"{name}_known")
    n_known_out = len(known_outs) - num_res
    residuals = known_outs[n_known_out:]
    unknown_outs = trace.stage(pjit_p, [*residuals, *[a for a, u in zip(args, unknowns) if u]],
                               {"jaxpr": unknown, "name": f"{name}_unknown"})
    known_iter, unknown_iter = iter(known_outs[:n_known_out]), iter(unknown_outs)
    return [next(unknown_iter) if u else next(known_iter) for u in out_unknowns]


def _pjit_transpose(cts, *args, jaxpr, name):
    linear = [is_undefined(a) for a in args]
    transposed, consts = cached(("pjit_transpose", jaxpr, tuple(linear)),
                                lambda: _const_free(transpose_jaxpr(jaxpr, linear)),
                                lambda v: v[1])
    outs = bind(pjit_p, *consts, *[a for a in args if not is_undefined(a)], *cts,
                jaxpr=transposed, name=f"transpose_{name}")
    it = iter(outs)
    return [next(it) if lin else None for lin in linear]


def _pjit_batch(args, dims, *, jaxpr, name):
    size = batching.axis_size_of(args, dims)
    axis_name = batching.current_axis().axis_name

    def make():
        batched, out_dims = batching.batch_jaxpr(jaxpr, size, list(dims), axis_name=axis_name)
        return (*_const_free(batched), out_dims)
    batched, consts, out_dims = cached(("pjit_batch", jaxpr, tuple(dims), size, axis_name),
                                       make, lambda v: v[1])
    outs = bind(pjit_p, *consts, *args, jaxpr=batched, name=f"vmap_{name}")
    return outs, out_dims


pjit_p = Primitive("pjit", multiple_results=True, abstract_eval=_pjit_abstract_eval,
                   lower=_pjit_lower, impl=_pjit_impl, jvp=_pjit_jvp,
                   partial_eval=_pjit_partial_eval, transpose=_pjit_transpose, batch=_pjit_batch,
                   checkify=inline_checked)
