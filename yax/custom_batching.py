"""yax.custom_batching (`jax.custom_batching`): a function with its own vmap rule.

    @yax.custom_batching.custom_vmap
    def f(x, y):
        return x * y

    @f.def_vmap
    def f_vmap_rule(axis_size, in_batched, x, y):
        # batched arguments carry the batch at axis 0; in_batched says which are
        return x * y, any(in_batched)   # the result, and whether it is batched

Outside `vmap` the function runs as written. Under `vmap` the rule runs instead of batching the
function's body. `sequential_vmap(f)` is such a function whose rule maps `f` over the batch one
element at a time (`lax.map`), for functions that cannot be batched (host calls, solvers).

It is built the way a user extends yax (yax.extend.core.Primitive and the interpreter
registries): one primitive, `custom_vmap_call`, holding the traced body and the rule. Its jvp
differentiates the body (the primal output still goes through the primitive, so a vmap of the
derivative keeps using the rule for the primal), its lowering is the body's lowering, and its
batching rule calls the user's rule.
"""

from __future__ import annotations

import functools

from yax import lax, tree_util
from yax._jax_names.interpreters import ad, batching, mlir
from yax._pytree.extras import tree_broadcast
from yax.extend.core import Primitive
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.interpreters.jvp import jvp_flat
from yax.interpreters.staging import trace_to_jaxpr
from yax.runtime.values import aval_of

__all__ = ["custom_vmap", "sequential_vmap"]

custom_vmap_p = Primitive("custom_vmap_call")
custom_vmap_p.multiple_results = True


def _body(*operands, jaxpr, num_consts, **_):
    return eval_jaxpr(jaxpr, list(operands[:num_consts]), list(operands[num_consts:]))


custom_vmap_p.def_impl(lambda *operands, **params: _body(*operands, **params))
custom_vmap_p.def_abstract_eval(lambda *avals, jaxpr, **_: [v.aval for v in jaxpr.outvars])
mlir.register_lowering(custom_vmap_p, mlir.lower_fun(_body, multiple_results=True))


def _jvp(primals, tangents, **params):
    outs = custom_vmap_p.bind(*primals, **params)
    # the tangents: forward mode through the body (its primal half is discarded)
    _, tangent_outs = jvp_flat(lambda *xs: _body(*xs, **params), list(primals), list(tangents))
    return outs, [ad.instantiate_zeros(t) for t in tangent_outs]


ad.primitive_jvps[custom_vmap_p] = _jvp


def _batch(args, dims, *, jaxpr, num_consts, rule, in_tree, out_tree, name):
    if any(d is not batching.not_mapped for d in dims[:num_consts]):
        raise ValueError(f"custom_vmap function `{name}` closes over a value batched by an "
                         "enclosing vmap; pass that value as an argument so that its vmap "
                         "rule sees it")
    size = next(a.shape[d] for a, d in zip(args, dims, strict=True)
                if d is not batching.not_mapped)
    leaves = [batching.moveaxis(a, d, 0, size) if d is not batching.not_mapped else a
              for a, d in zip(args[num_consts:], dims[num_consts:], strict=True)]
    flags = [d is not batching.not_mapped for d in dims[num_consts:]]
    call_args = tree_util.tree_unflatten(in_tree, leaves)
    in_batched = list(tree_util.tree_unflatten(in_tree, flags))
    out, out_batched = rule(size, in_batched, *call_args)
    out_leaves, got_tree = tree_util.tree_flatten(out)
    if got_tree != out_tree:
        raise ValueError(f"the vmap rule of `{name}` returned a result of structure {got_tree}; "
                         f"the function returns {out_tree}")
    batched = tree_util.tree_leaves(tree_broadcast(out_batched, out))
    return out_leaves, [0 if b else batching.not_mapped for b in batched]


batching.primitive_batchers[custom_vmap_p] = _batch


class custom_vmap:  # noqa: N801  (jax's name)
    """Wrap `fun` so that `vmap` uses the rule given with `def_vmap` (see the module
    docstring)."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None

    def def_vmap(self, vmap_rule):
        """Set the rule `vmap_rule(axis_size, in_batched, *args) -> (out, out_batched)`;
        returns it (usable as a decorator)."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", "fun")
        if kwargs:
            raise TypeError(f"custom_vmap function `{name}` takes positional arguments only")
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} "
                                 "using def_vmap.")
        leaves, in_tree = tree_util.tree_flatten(args)
        out_trees = []

        def flat(*xs):
            out_leaves, out_tree = tree_util.tree_flatten(
                self.fun(*tree_util.tree_unflatten(in_tree, xs)))
            out_trees.append(out_tree)
            return out_leaves

        closed = trace_to_jaxpr(flat, [aval_of(x) for x in leaves], name=name)
        consts = list(closed.consts)
        outs = custom_vmap_p.bind(*consts, *leaves, jaxpr=closed.jaxpr, num_consts=len(consts),
                                  rule=self.vmap_rule, in_tree=in_tree, out_tree=out_trees[0],
                                  name=name)
        return tree_util.tree_unflatten(out_trees[0], outs)


def sequential_vmap(f):
    """`f` as a custom_vmap function whose vmap runs `f` once per batch element, in order
    (`lax.map` over the batched arguments)."""
    fun = custom_vmap(f)

    @fun.def_vmap
    def rule(axis_size, in_batched, *args):
        leaves, tree = tree_util.tree_flatten(args)
        flags = tree_util.tree_leaves(in_batched)

        def one(batched_leaves):
            it = iter(batched_leaves)
            full = [next(it) if b else x for x, b in zip(leaves, flags, strict=True)]
            return f(*tree_util.tree_unflatten(tree, full))

        out = lax.map(one, [x for x, b in zip(leaves, flags, strict=True) if b])
        return out, tree_util.tree_map(lambda _: True, out)
    return fun
