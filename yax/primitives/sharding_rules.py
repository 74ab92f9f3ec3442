"""Sharding rules: how each primitive's result is sharded over Explicit mesh axes.

In explicit-sharding mode an array's type names its sharding (`f32[8@X,4]`), so every
primitive says how its result's type follows from its operands' (jax's "sharding in types").
A rule is the primitive's `sharding` rule, `rule(avals_in, avals_out, **params) -> avals_out`;
`Primitive.out_avals` calls it only when some operand carries a sharding, so programs without
Explicit meshes never reach this module. The rules come in kinds, declared as a table below (one
row per kind, listing its primitives), as the elementwise families are:

  elementwise   operands of the result's rank are zipped dimension by dimension; a dimension's
                sharding is its operands' (equal where more than one is sharded)
  reduce        the reduced dimensions go (the reduction over a sharded one is all-reduced)
  cumulative    the scanned dimension must be unsharded; the result is sharded as the operand
  shape ops     transpose, broadcast_in_dim, reshape, squeeze, expand_dims, rev, pad, concatenate,
                slice, dynamic_slice, dynamic_update_slice: dimensions move with the data
  dot_general   batch and free dimensions keep their sharding; sharded contracting dimensions
                need `out_sharding=` (the result could be reduced several ways)
  linalg, fft   the dimensions the operation mixes must be unsharded; batch dimensions keep theirs
  typed         the result types already carry their shardings (jit, control flow, custom
                derivatives, sharding constraints: their avals come from a typed sub-program)

A result that names one mesh axis twice is an error, as in jax. A primitive with no rule given
explicitly sharded operands is a clear error (core.primitive), never a silently dropped sharding.
`named_sharding.result_sharding(name, dims)` forces the result type of the `name` primitives
bound inside it (the `out_sharding=` of dot/einsum/reshape, whose wrappers then pin the value with
a sharding constraint; the transpose of dot_general, which types a cotangent as its primal).
"""

from __future__ import annotations

# imported for their primitives, which the table below annotates by name
import yax.primitives.arithmetic  # noqa: F401
import yax.primitives.barriers  # noqa: F401
import yax.primitives.bits  # noqa: F401
import yax.primitives.call  # noqa: F401
import yax.primitives.comparison  # noqa: F401
import yax.primitives.control_flow.cond  # noqa: F401
import yax.primitives.control_flow.scan  # noqa: F401
import yax.primitives.control_flow.while_loop  # noqa: F401
import yax.primitives.conversions  # noqa: F401
import yax.primitives.custom_derivatives  # noqa: F401
import yax.primitives.dot  # noqa: F401
import yax.primitives.elementwise  # noqa: F401
import yax.primitives.fft  # noqa: F401
import yax.primitives.linalg  # noqa: F401
import yax.primitives.reductions  # noqa: F401
import yax.primitives.remat  # noqa: F401
import yax.primitives.scatter  # noqa: F401
import yax.primitives.shape  # noqa: F401
import yax.primitives.sharding_constraint  # noqa: F401
import yax.primitives.slicing  # noqa: F401
import yax.primitives.sort  # noqa: F401
import yax.primitives.top_k  # noqa: F401
from yax.core.avals import ShapedArray
from yax.core.primitive import all_primitives
from yax.interpreters import ad_util  # noqa: F401  (add_any)
from yax.runtime.named_sharding import ShardingTypeError, forced_result, type_sharding, typed

# --- helpers ------------------------------------------------------------------------------------

def entries(aval) -> tuple:
    """One spec entry per dimension of `aval` (None: not sharded over an Explicit axis)."""
    s = getattr(aval, "sharding", None)
    n = len(aval.shape)
    if s is None:
        return (None,) * n
    spec = tuple(s.spec)
    return spec[:n] + (None,) * (n - len(spec))


def _mesh_of(name: str, avals):
    meshes = {a.sharding.mesh for a in avals if getattr(a, "sharding", None) is not None}
    if len(meshes) > 1:
        raise ShardingTypeError(f"{name}: operands are sharded over different meshes "
                                f"{sorted(map(str, meshes))}; reshard them onto one mesh")
    return next(iter(meshes))


def _names(entry) -> tuple:
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


class _Spelled:
    """A spec held only to spell an illegal result type in an error message."""

    def __init__(self, spec):
        self.spec = spec


def _out(name, avals, aval, dims, mesh, unreduced=frozenset()):
    """`aval` typed with `dims`; an error when the result names one mesh axis twice."""
    used = [n for e in dims for n in _names(e)] + sorted(unreduced)
    if len(used) != len(set(used)):
        bad = ShapedArray(aval.shape, aval.dtype, sharding=_Spelled(tuple(dims)))
        ins = ", ".join(a.str_short() for a in avals)
        raise ShardingTypeError(f"{name} operation with inputs: {ins} produces an illegally "
                                f"sharded result: {bad.str_short()}")
    return typed(aval, dims, mesh, unreduced)


# --- the rule kinds -----------------------------------------------------------------------------

def _elementwise(name):
    def rule(avals, outs, **params):
        mesh = _mesh_of(name, avals)
        res = []
        for out in outs:
            dims = []
            for i, size in enumerate(out.shape):
                found = {entries(a)[i] for a in avals
                         if len(a.shape) == len(out.shape) and a.shape[i] == size} - {None}
                if len(found) > 1:
                    specs = ", ".join(str(entries(a)) for a in avals
                                      if len(a.shape) == len(out.shape))
                    raise ShardingTypeError(f"{name} got incompatible shardings for "
                                            f"broadcasting: {specs}.")
                dims.append(found.pop() if found else None)
            res.append(_out(name, avals, out, dims, mesh))
        return res
    return rule


def _each(name):
    """Multiple results, result i sharded as operand i (optimization_barrier)."""
    def rule(avals, outs, **params):
        return [typed(o, entries(a), a.sharding.mesh)
                if getattr(a, "sharding", None) is not None else o
                for a, o in zip(avals, outs, strict=True)]
    return rule


def _reduce(name):
    def rule(avals, outs, *, axes, **params):
        (x,), mesh = avals, _mesh_of(name, avals)
        dims = [e for i, e in enumerate(entries(x)) if i not in axes]
        return [typed(o, dims, mesh) for o in outs]
    return rule


def _along(name, axis_of, what):
    """The operation mixes the dimensions `axis_of(params, ndim)`: they must be unsharded."""
    def rule(avals, outs, **params):
        mesh = _mesh_of(name, avals)
        x = avals[0]
        for i in axis_of(params, len(x.shape)):
            if entries(x)[i] is not None:
                raise ShardingTypeError(what(name, x, i))
        return [typed(o, entries(x) if o.shape == x.shape else
                      _batch_dims(x, o), mesh) for o in outs]
    return rule


def _batch_dims(x, o) -> tuple:
    """Leading dimensions shared by operand and result keep their sharding; the rest None."""
    out = []
    for i, size in enumerate(o.shape):
        out.append(entries(x)[i] if i < len(x.shape) and x.shape[i] == size else None)
        if out[-1] is None:
            return tuple(out) + (None,) * (len(o.shape) - len(out))
    return tuple(out)


def _reduced_msg(name, x, i):
    return (f"Input should be unsharded over the axis being reduced. Got input type="
            f"{x.str_long().lstrip('~')} and axis={i}")


def _sort_msg(name, x, i):
    return (f"Arguments to {name} must be unsharded over the sorting dimension. Got arg "
            f"sharding={x.sharding} and sorting dimension={i}")


def _linalg_msg(name, x, i):
    return (f"Input 0 to {name} must be unsharded on non-batch dimensions, but got "
            f"{x.sharding.spec}.")


def _mixed_msg(name, x, i):
    return (f"{name}: dimension {i} of {x.str_short()} is sharded, and {name} needs it whole; "
            f"reshard the operand (yax.reshard) or use yax.sharding.auto_axes")


def _transpose(avals, outs, *, permutation):
    x = avals[0]
    return [typed(outs[0], [entries(x)[p] for p in permutation], x.sharding.mesh)]


def _broadcast_in_dim(avals, outs, *, shape, broadcast_dimensions, **params):
    x = avals[0]
    dims = [None] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        if x.shape[i] == shape[d]:
            dims[d] = entries(x)[i]
    return [_out("broadcast_in_dim", avals, outs[0], dims, x.sharding.mesh)]


def _reshape(avals, outs, *, new_sizes, dimensions):
    x = avals[0]
    dims = _reshape_dims(x, tuple(new_sizes)) if dimensions is None else None
    if dims is None:
        raise ShardingTypeError(
            f"This reshape is not supported. Please specify the sharding of the output via the "
            f"`out_sharding` argument of jax.lax.reshape. Got operand type: "
            f"{x.str_long().lstrip('~')}, new sizes: {tuple(new_sizes)}")
    return [typed(outs[0], dims, x.sharding.mesh)]


def _reshape_dims(x, new):
    """Group operand and result dimensions (size-1 ones aside) into runs of equal products. A
    run of operand dimensions merged into one result dimension shards it over all their axes
    (major first); one operand dimension split into several shards the first (which must
    divide); any other run must be unsharded. None: no rule applies (out_sharding= decides)."""
    ent, mesh = entries(x), x.sharding.mesh
    if any(ent[k] is not None and mesh.axis_size(_names(ent[k])) > 1
           for k, d in enumerate(x.shape) if d == 1):
        return None
    old = [k for k, d in enumerate(x.shape) if d != 1]
    keep = [k for k, d in enumerate(new) if d != 1]
    out, i, j = [None] * len(new), 0, 0
    while i < len(old) and j < len(keep):
        gi, gj = [old[i]], [keep[j]]
        pi, pj = x.shape[old[i]], new[keep[j]]
        i, j = i + 1, j + 1
        while pi != pj:
            if pi < pj and i < len(old):
                pi *= x.shape[old[i]]
                gi.append(old[i])
                i += 1
            elif pj < pi and j < len(keep):
                pj *= new[keep[j]]
                gj.append(keep[j])
                j += 1
            else:
                return None
        names = tuple(n for k in gi for n in _names(ent[k]))
        if not names:
            continue
        if len(gi) > 1 and len(gj) > 1:
            return None
        if new[gj[0]] % mesh.axis_size(names):
            return None
        out[gj[0]] = names[0] if len(names) == 1 else names
    return out


def _squeeze(avals, outs, *, dimensions):
    x = avals[0]
    return [typed(outs[0], [e for i, e in enumerate(entries(x)) if i not in dimensions],
                  x.sharding.mesh)]


def _expand_dims(avals, outs, *, dimensions):
    x = avals[0]
    dims = list(entries(x))
    for d in sorted(dimensions):
        dims.insert(d, None)
    return [typed(outs[0], dims, x.sharding.mesh)]


def _same_as_first(name):
    def rule(avals, outs, **params):
        x = avals[0]
        if x.sharding is None:
            return _elementwise(name)(avals, outs, **params)
        return [typed(o, entries(x), x.sharding.mesh) for o in outs]
    return rule


def _sized(name):
    """slice / dynamic_slice / pad: a dimension whose size changes must be unsharded, unless
    the result still divides over its axes (pad)."""
    def rule(avals, outs, **params):
        x, out = avals[0], outs[0]
        mesh = _mesh_of(name, avals)
        dims = []
        for i, (e, a, b) in enumerate(zip(entries(x), x.shape, out.shape)):
            if e is not None and a != b and (name != "pad" or b % mesh.axis_size(_names(e))):
                raise ShardingTypeError(
                    f"{name} of {x.str_short()} to shape {tuple(out.shape)}: dimension {i} is "
                    f"sharded over {e} and changes size; reshard it, or use the jnp function's "
                    f"out_sharding= / yax.sharding.auto_axes")
            dims.append(e)
        return [typed(out, dims, mesh)]
    return rule


def _concatenate(avals, outs, *, dimension):
    """Operands sharded alike (an unsharded dimension meets any); the result is so sharded."""
    dims = []
    for i in range(len(outs[0].shape)):
        found = {entries(a)[i] for a in avals} - {None}
        if len(found) > 1:
            raise ShardingTypeError(f"concatenate needs its operands sharded alike, got "
                                    f"{', '.join(a.str_short() for a in avals)}")
        dims.append(found.pop() if found else None)
    return [_out("concatenate", avals, outs[0], dims, _mesh_of("concatenate", avals))]


def _dot_general(avals, outs, *, dimension_numbers, **params):
    lhs, rhs = avals
    (lc, rc), (lb, rb) = dimension_numbers
    le, re_ = entries(lhs), entries(rhs)
    mesh = _mesh_of("dot_general", avals)
    lspec, rspec = tuple(le[d] for d in lc), tuple(re_[d] for d in rc)
    for a, b in zip(lspec, rspec, strict=True):
        if a is not None and b is not None:
            if a == b:
                raise ShardingTypeError(
                    f"Contracting dimensions are sharded and it is ambiguous how the output "
                    f"should be sharded. Please specify the output sharding via the "
                    f"`out_sharding` parameter. Got lhs_contracting_spec={lspec} and "
                    f"rhs_contracting_spec={rspec}")
            raise ShardingTypeError(f"dot_general requires contracting dimensions to have "
                                    f"consistent sharding, got {lspec} and {rspec}.")
    batch = []
    for a, b in zip((le[d] for d in lb), (re_[d] for d in rb), strict=True):
        if a is not None and b is not None and a != b:
            raise ShardingTypeError(f"dot_general requires lhs batch dimensions and rhs batch "
                                    f"dimensions to have the same sharding, got {a} and {b}.")
        batch.append(a if a is not None else b)
    lfree = [e for i, e in enumerate(le) if i not in lc + lb]
    rfree = [e for i, e in enumerate(re_) if i not in rc + rb]
    return [_out("dot_general", avals, outs[0], batch + lfree + rfree, mesh)]


def _gather(avals, outs, *, dimension_numbers, slice_sizes, **params):
    """Result batch dimensions are sharded as the indices' (the index vector is the last
    axis); window dimensions taken whole keep the operand's. An operand dimension that is
    indexed may be sharded only over axes that shard the indices too (rows gathered where they
    live, as take_along_axis does); anything else asks for out_sharding, as in jax."""
    operand, indices = avals
    dn = dimension_numbers
    oe, ie = entries(operand), entries(indices)
    batch = list(ie[:-1])
    on_indices = {n for e in batch for n in _names(e)}
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    window = []
    for i, e in enumerate(oe):
        whole = slice_sizes[i] == operand.shape[i]
        if e is not None and not (whole and i not in dropped) and not (
                i in dropped and set(_names(e)) <= on_indices):
            raise ShardingTypeError(
                f"Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the "
                f"gather indexing as out sharding could not be resolved unambiguously (or "
                f"would require collectives on inputs). Got operand={operand!r}, "
                f"indices={indices!r}")
        if i not in dropped:
            window.append(e)
    w, b = iter(window), iter(batch)
    dims = [next(w) if i in dn.offset_dims else next(b) for i in range(len(outs[0].shape))]
    return [_out("gather", avals, outs[0], dims, _mesh_of("gather", avals))]


def _scan(avals, outs, *, jaxpr, num_consts, num_carry, **params):
    """Scanned operands must be unsharded along the scanned axis (as jax); the stacked
    results are typed as the body's, unsharded along the new leading axis."""
    for x in avals[num_consts + num_carry:]:
        if entries(x) and entries(x)[0] is not None:
            raise ShardingTypeError(f"0th dimension of all xs should be replicated. Got "
                                    f"{x.sharding.spec}")
    res = list(outs[:num_carry])
    for o, body in zip(outs[num_carry:], jaxpr.out_avals[num_carry:], strict=True):
        s = getattr(body, "sharding", None)
        res.append(o if s is None else typed(o, (None, *entries(body)), s.mesh))
    return res


def _typed(avals, outs, **params):
    """The results' types come from a typed sub-program or a param: keep them."""
    return outs


def _constraint(avals, outs, *, sharding, mesh):
    x = avals[0]
    return [outs[0].update(sharding=type_sharding(sharding, len(x.shape)))]


def _last(k):
    return lambda params, ndim: tuple(range(ndim - k, ndim))


_ELEMENTWISE = (
    "abs acos acosh add and asin asinh atan atan2 atanh bessel_i0e bessel_i1e cbrt ceil conj cos "
    "cosh digamma div eq erf erf_inv erfc exp exp2 expm1 floor ge gt igamma igamma_grad_a igammac "
    "imag is_finite le lgamma log log1p logistic lt max min mul ne neg nextafter not or polygamma "
    "population_count random_gamma_grad real regularized_incomplete_beta rem round rsqrt "
    "shift_left shift_right_arithmetic shift_right_logical sign sin sinh sqrt sub tan tanh xor "
    "zeta integer_pow pow clamp select_n add_any convert_element_type bitcast_convert_type "
    "reduce_precision stop_gradient clz")

# kind -> the primitives it types (by name); a name missing from yax is skipped
_TABLE = {
    **{n: _elementwise(n) for n in _ELEMENTWISE.split()},
    **{n: _reduce(n) for n in "reduce_sum reduce_prod reduce_max reduce_min reduce_and "
       "reduce_or argmax argmin".split()},
    **{n: _along(n, lambda p, nd: (p["axis"],), _reduced_msg)
       for n in "cumsum cumprod cummax cummin".split()},
    "sort": _along("sort", lambda p, nd: (p["dimension"],), _sort_msg),
    "top_k": _along("top_k", lambda p, nd: (nd - 1,), _mixed_msg),
    **{n: _along(n, _last(2), _linalg_msg) for n in
       "lu cholesky qr eigh svd eig schur hessenberg tridiagonal triangular_solve".split()},
    "fft": _along("fft", lambda p, nd: tuple(range(nd - len(p["fft_lengths"]), nd)),
                  _mixed_msg),
    "optimization_barrier": _each("optimization_barrier"),
    "transpose": _transpose,
    "broadcast_in_dim": _broadcast_in_dim,
    "reshape": _reshape,
    "squeeze": _squeeze,
    "expand_dims": _expand_dims,
    "rev": _same_as_first("rev"),
    "dynamic_update_slice": _same_as_first("dynamic_update_slice"),
    **{n: _same_as_first(n) for n in
       "scatter scatter_add scatter_mul scatter_min scatter_max".split()},
    "slice": _sized("slice"),
    "dynamic_slice": _sized("dynamic_slice"),
    "pad": _sized("pad"),
    "concatenate": _concatenate,
    "dot_general": _dot_general,
    "gather": _gather,
    "sharding_constraint": _constraint,
    "scan": _scan,
    **{n: _typed for n in "pjit cond while custom_jvp_call custom_vjp_call custom_vjp_lin "
       "remat name custom_linear_solve shard_map custom_vmap_call".split()},
}


def sharding_rule(primitive):
    """The rule `Primitive.out_avals` applies, with `result_sharding`'s forcing on top."""
    name, own = primitive.name, _TABLE.get(primitive.name)

    def rule(avals, outs, **params):
        if name != "sharding_constraint":
            _refuse_unreduced(name, avals)
        forced = forced_result(name)
        if forced is not None and len(forced[0]) <= len(outs[0].shape):
            dims, unreduced = forced
            dims += (None,) * (len(outs[0].shape) - len(dims))
            return [_out(name, avals, outs[0], dims, _mesh_of(name, avals), unreduced)]
        return own(avals, outs, **params)
    return rule


def _refuse_unreduced(name, avals) -> None:
    for a in avals:
        s = getattr(a, "sharding", None)
        if s is not None and (s.spec.unreduced or s.spec.reduced):
            raise ShardingTypeError(
                f"{name} of {', '.join(x.str_short() for x in avals)}: yax does not compute on "
                f"unreduced (or reduced) arrays; reshard the operand first "
                f"(yax.reshard(x, P(...)) without unreduced= sums its partial values)")


def _install() -> None:
    prims = all_primitives()
    for name in _TABLE:
        p = prims.get(name)
        if p is not None:
            p.define(sharding=sharding_rule(p))


_install()
__all__ = ["entries", "sharding_rule"]
