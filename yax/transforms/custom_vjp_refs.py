"""custom_vjp functions called with mutable array references (yax.new_ref) among their
arguments, as the stash_grads recipe of JAX's Ref documentation does: the Refs plumb values out of
the backward pass."""

from __future__ import annotations

from yax import tree_util
from yax.interpreters.ref_state import Ref


def call_with_refs(custom, args, refs: dict):
    """Refs among the arguments (plumbing, as in the stash_grads recipe of JAX's Ref docs)
    are closed over by a custom_vjp function made for this call instead of passed: they are
    not differentiated, and a Ref that fwd returns among its residuals reaches bwd as it
    is (so bwd can write into it)."""
    n = len(args)
    nondiff = {i % n for i in custom.nondiff_argnums if -n <= i < n}
    rest_pos = [i for i in range(n) if i not in refs]
    res_box = []

    def merge(rest):
        it = iter(rest)
        return [refs[i] if i in refs else next(it) for i in range(n)]

    def fwd(*rest):
        out, res = custom.fwd(*merge(rest))
        leaves, tree = tree_util.tree_flatten(res)
        res_box[:] = [(tree, [x if isinstance(x, Ref) else None for x in leaves])]
        return out, [x for x in leaves if not isinstance(x, Ref)]

    def bwd(*a):
        *static, kept, ct = a
        tree, slots = res_box[0]
        it = iter(kept)
        res = tree_util.tree_unflatten(tree, [next(it) if x is None else x for x in slots])
        cts = custom.bwd(*static, res, ct)
        diff_pos = [i for i in range(n) if i not in nondiff]
        return tuple(c for i, c in zip(diff_pos, cts, strict=True) if i not in refs)

    derived = type(custom)(lambda *rest: custom.fun(*merge(rest)),
                         nondiff_argnums=tuple(rest_pos.index(i) for i in sorted(nondiff)
                                               if i not in refs))
    derived.defvjp(fwd, bwd, symbolic_zeros=custom.symbolic_zeros)
    return derived(*[args[i] for i in rest_pos])
