"""Builders shared by the JVP, transpose and batching rules of the primitive families.

- `defjvp(prim, *rules)`: elementwise-style JVP: rule i gives the output tangent's contribution
  from input i's tangent; contributions of nonzero tangents are summed.
- `linear_jvp`: the JVP of a primitive linear in all operands is the primitive on the tangents.
- `table_jvp(prim, *entries)`: the JVP a family table's row names: `LINEAR` or defjvp's rules.
- `unbroadcast(ct, aval)`: sum a cotangent down to an operand that was implicitly broadcast.
- `broadcast_batcher`: the vmap rule of elementwise primitives (move batch axes to the front,
  keeping rank-0 unbatched operands as they are).
"""

from __future__ import annotations

import numpy as np

from yax.interpreters.ad_util import Zero, add_tangents, instantiate
from yax.interpreters.batching import axis_size_of, move_batch_axis, not_mapped
from yax.primitives._lax import lax


def defjvp(prim, *rules) -> None:
    """rules[i](t_i, primal_out, *primals, **params) -> tangent contribution (None: not differ.)."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        t_out = Zero(out.aval.strip_weak_type())
        for rule, t in zip(rules, tangents, strict=True):
            if type(t) is Zero or rule is None:
                continue
            t_out = add_tangents(t_out, broadcast_to_aval(rule(t, out, *primals, **params),
                                                           out.aval))
        return [out], [t_out]
    prim.define(jvp=jvp)


def linear_jvp(prim) -> None:
    """For a primitive linear in all operands: tangent = prim(tangents)."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        outs = out if prim.multiple_results else [out]
        if all(type(t) is Zero for t in tangents):
            return outs, [Zero(o.aval.strip_weak_type()) for o in outs]
        t_out = prim.bind(*(instantiate(t) for t in tangents), **params)
        return outs, (list(t_out) if prim.multiple_results else [t_out])
    prim.define(jvp=jvp)


LINEAR = "linear"  # a table row's jvp entry: the primitive is linear in all operands


def table_jvp(prim, *entries) -> None:
    """`(LINEAR,)`: linear_jvp; otherwise defjvp's per-operand rules (None: no derivative)."""
    if entries == (LINEAR,):
        linear_jvp(prim)
    else:
        defjvp(prim, *entries)


def broadcast_to_aval(x, aval):
    """Broadcast a rank-0 value (implicit scalar broadcasting) to `aval`'s shape."""
    shape = getattr(x, "shape", ())
    if tuple(shape) == aval.shape:
        return x
    return lax.broadcast_in_dim(x, aval.shape, ())


def unbroadcast(ct, aval):
    """Sum `ct` to `aval`'s shape when the operand was an implicitly broadcast scalar."""
    if ct is None or type(ct) is Zero:
        return ct
    aval_ct = getattr(ct, "aval", None)  # typed scalars have an aval but no .shape
    shape = aval_ct.shape if aval_ct is not None else np.shape(ct)
    if shape == aval.shape:
        return ct
    assert aval.shape == (), (shape, aval)
    return lax.reduce_sum(ct, tuple(range(len(shape))))


def broadcast_batcher(prim):
    """The vmap rule of an elementwise primitive whose operands share one shape or are scalars.

    Unbatched scalars stay as they are (the primitive broadcasts them); every other operand gets
    its batch axis at the front, materialised by broadcasting where it had none. This relies on
    the primitive accepting rank-0 operands next to arrays in every position (clamp's operand,
    for one, does not: it has its own rule).
    """

    def batch(args, dims, **params):
        size = axis_size_of(args, dims)
        unbatched_shapes = [tuple(a.shape[:d]) + tuple(a.shape[d + 1:]) if d is not None
                            else tuple(getattr(a, "shape", ())) for a, d in zip(args, dims)]
        out_shape = next((s for s in unbatched_shapes if s != ()), ())
        full = (size,) + out_shape
        moved = []
        for a, d, s in zip(args, dims, unbatched_shapes):
            if d is not_mapped and s == ():
                moved.append(a)
                continue
            a = move_batch_axis(a, d, 0, size)
            if tuple(a.shape) != full:  # a batched scalar meeting arrays
                a = lax.broadcast_in_dim(a, full, (0,))
            moved.append(a)
        out = prim.bind(*moved, **params)
        outs = out if prim.multiple_results else [out]
        return list(outs), [0] * len(outs)
    prim.define(batch=batch)
