"""Lowering a jaxpr with symbolic dimensions into StableHLO with dynamic (`?`) dimensions.

The module's `main` takes `tensor<?x4xf32>`-style arguments. Each dimension variable is read
once, at the top of `main`, from an argument dimension where it appears as `k*v + c`
(`stablehlo.get_dimension_size`), and every symbolic shape a primitive needs is computed from
those values as a `tensor<Nxi64>`. Primitives whose result shape StableHLO cannot infer get
their dynamic op here (broadcast_in_dim -> dynamic_broadcast_in_dim, reshape ->
dynamic_reshape, iota -> dynamic_iota, slice -> real_dynamic_slice, pad -> dynamic_pad,
cumsum -> a masked dot, AD's zeros -> a broadcast zero; while/cond/scan are rebuilt with their
bodies lowered here);
a whitelist of primitives whose own lowering rules build type-inferred ops (elementwise,
reductions, dot_general, transpose, concatenate, select_n, ...) reuse them, with `?` result
types; any equation whose avals are all static uses its primitive's own rule unchanged. Call
primitives (jit, custom_jvp/vjp calls, remat) are inlined so that the dimension values are in
scope. Anything else raises an ExportError naming the primitive.

The static lowering (yax/interpreters/lowering.py) is untouched: eager and jit programs never
come here. At call time the module is refined to static shapes (see refine.py).
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from yax import errors
from yax.export import binding, symbolic
from yax.interpreters import lowering, mlir
from yax.interpreters.mlir import func, hlo
from yax.primitives import reductions as red  # the argmax/argmin reduce region and identities
from yax.primitives import scatter as sc  # the scatter primitives and their window sizes
from yax.primitives import slicing as sl  # gather's comparison helper and default fill
from yax.primitives.arithmetic import integer_pow_p
from yax.primitives.slicing import GatherScatterMode, gather_p

_I64 = np.dtype(np.int64)

# call-like primitives whose sub-jaxpr is lowered in place: name -> the param holding it
_INLINE = {"pjit": "jaxpr", "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr",
           "remat": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr"}

# primitives whose own rules emit ops with inferred (or `?`) result types: safe on symbolic
# shapes once rank-0 operands are broadcast to the full shape (elementwise ones)
_ELEMENTWISE = frozenset("""
add sub mul div rem max min pow atan2 nextafter neg sign floor ceil round is_finite exp exp2
log log1p expm1 tanh logistic sin cos tan asin acos atan sinh cosh asinh acosh atanh sqrt rsqrt
cbrt abs square integer_pow erf erfc erf_inv lgamma digamma not and or xor eq ne lt le gt ge
select_n convert_element_type stop_gradient clamp real imag conj complex reduce_precision
shift_left shift_right_logical shift_right_arithmetic population_count clz copy copy_p add_any
""".split())
_SHAPE_INFERRED = frozenset("""
reduce_sum reduce_max reduce_min reduce_prod reduce_and reduce_or reduce_xor
dot_general transpose concatenate rev name optimization_barrier sort
dynamic_slice dynamic_update_slice
""".split())


class DimValues:
    """The i64 scalar value of each dimension expression, emitted in `main`'s entry block."""

    def __init__(self, args, avals):
        self.cache: dict = {}
        self.vars: dict = {}
        for arg, aval in zip(args, avals, strict=True):
            for axis, d in enumerate(aval.shape):
                lin = binding.linear(d) if symbolic.is_symbolic_dim(d) else None
                if lin is None or lin[0] in self.vars:
                    continue
                var, k, c = lin
                size = hlo.convert(mlir.tensor_type((), _I64), hlo.get_dimension_size(arg, axis))
                if c:
                    size = hlo.subtract(size, mlir.constant(np.int64(c)))
                if k != 1:
                    size = hlo.divide(size, mlir.constant(np.int64(k)))
                self.vars[var] = size

    def child(self) -> DimValues:
        """The values for use inside a nested region: the variables (defined in `main`'s entry
        block, which dominates every region) are shared; derived values are not, since one
        computed inside a region is not visible outside it or in a sibling region."""
        inner = DimValues.__new__(DimValues)
        inner.cache, inner.vars = {}, self.vars
        return inner

    def scalar(self, d) -> ir.Value:
        if not symbolic.is_symbolic_dim(d):
            return mlir.constant(np.int64(d))
        hit = self.cache.get(d)
        if hit is not None:
            return hit
        total = None
        for mono, coeff in d._terms.items():
            term = mlir.constant(np.int64(coeff)) if coeff != 1 or not mono else None
            for atom, power in mono:
                v = self._atom(atom)
                for _ in range(power):
                    term = v if term is None else hlo.multiply(term, v)
            total = term if total is None else hlo.add(total, term)
        self.cache[d] = total
        return total

    def _atom(self, atom) -> ir.Value:
        if isinstance(atom, str):
            if atom not in self.vars:
                raise errors.ExportError(
                    f"dimension variable {atom!r} does not appear in any argument shape as "
                    f"k*{atom} + c, so its value cannot be found at run time")
            return self.vars[atom]
        kind, e, k = atom
        op = hlo.divide if kind == "floordiv" else hlo.remainder  # dimensions are >= 0
        return op(self.scalar(e), mlir.constant(np.int64(k)))

    def shape(self, dims) -> ir.Value:
        """A `tensor<len(dims)xi64>` of the dimensions."""
        if not dims:
            return mlir.constant(np.zeros((0,), np.int64))
        one = mlir.tensor_type((1,), _I64)
        parts = [hlo.reshape(one, self.scalar(d)) for d in dims]
        return parts[0] if len(parts) == 1 else hlo.concatenate(parts, 0)


def lower_symbolic_module(closed, *, platform: str) -> lowering.ModuleContext:
    """A module whose `main` has the (symbolic -> dynamic) types of `closed`'s avals."""
    jaxpr = closed.jaxpr
    mctx = lowering.ModuleContext(platform)
    with mctx.context, ir.Location.unknown():
        mctx.module = ir.Module.create()
        in_types = [mlir.aval_type(v.aval) for v in jaxpr.invars]
        out_types = [mlir.aval_type(a) for a in jaxpr.out_avals]
        with ir.InsertionPoint(mctx.module.body):
            main = func.FuncOp("main", ir.FunctionType.get(in_types, out_types))
            mctx._names.add("main")
            main.attributes["sym_visibility"] = ir.StringAttr.get("public")
            block = main.add_entry_block()
        with ir.InsertionPoint(block):
            dims = DimValues(list(block.arguments), [v.aval for v in jaxpr.invars])
            consts = [mlir.constant(np.asarray(c)) for c in closed.consts]
            outs = _lower_body(mctx, dims, jaxpr, consts, list(block.arguments))
            outs = [_as_type(o, t) for o, t in zip(outs, out_types, strict=True)]
            func.ReturnOp(outs)
    return mctx


def _as_type(value, want) -> ir.Value:
    """`value` with exactly `main`'s declared result type (a static result may be `?`)."""
    return value if value.type == want else hlo.convert(want, value)


def _lower_body(mctx, dims, jaxpr, consts, args) -> list:
    env, read = lowering.jaxpr_environment(jaxpr, consts, args)
    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.inputs]
        outs = _lower_eqn(mctx, dims, eqn, ins)
        if not isinstance(outs, (list, tuple)):
            outs = [outs]
        for v, val in zip(eqn.outvars, outs, strict=True):
            env[v] = val
    return [read(v) for v in jaxpr.outvars]


def _has_symbolic(eqn) -> bool:
    avals = [a.aval for a in eqn.inputs] + [v.aval for v in eqn.outvars]
    return any(symbolic.is_symbolic(a.shape) for a in avals if hasattr(a, "shape"))


def _lower_eqn(mctx, dims, eqn, ins):
    name = eqn.primitive.name
    avals_in = [a.aval for a in eqn.inputs]
    avals_out = [v.aval for v in eqn.outvars]
    if name in _INLINE:
        sub = eqn.params[_INLINE[name]]
        sub_consts = [mlir.constant(np.asarray(c)) for c in sub.consts]
        return _lower_body(mctx, dims, sub.jaxpr, sub_consts, ins)
    ctx = lowering.RuleContext(mctx, avals_in, avals_out, eqn.source)
    if not _has_symbolic(eqn) and name != "dim_as_value":  # its avals are static scalars
        return eqn.primitive.lower(ctx, *ins, **eqn.params)
    rule = _DYNAMIC_RULES.get(name)
    try:
        if rule is not None:
            return rule(dims, ctx, *ins, **eqn.params)
        if name in _ELEMENTWISE:
            ins, ctx = _broadcast_scalars(dims, ctx, ins)
            return eqn.primitive.lower(ctx, *ins, **eqn.params)
        if name in _SHAPE_INFERRED:
            return eqn.primitive.lower(ctx, *ins, **eqn.params)
    except errors.ExportError as e:
        raise errors.ExportError(f"yax.export cannot lower primitive {name!r} with symbolic "
                                 f"shapes ({_sig(avals_in, avals_out)}): {e}") from None
    raise errors.ExportError(
        f"yax.export does not support primitive {name!r} with symbolic shapes "
        f"({_sig(avals_in, avals_out)}); export with concrete shapes, or see docs/export.md "
        f"for the supported primitives")


def _sig(avals_in, avals_out) -> str:
    ins = ", ".join(a.str_short() for a in avals_in)
    outs = ", ".join(a.str_short() for a in avals_out)
    return f"({ins}) -> ({outs})"


def _broadcast_scalars(dims, ctx, ins):
    """Broadcast rank-0 operands of an elementwise op to the (symbolic) result shape, so the
    op's own rule never needs a static broadcast."""
    out = ctx.avals_out[0]
    if not out.shape or all(a.shape == out.shape for a in ctx.avals_in):
        return ins, ctx
    new_ins, new_avals = [], []
    for x, a in zip(ins, ctx.avals_in, strict=True):
        if a.shape != out.shape and a.ndim == 0:
            full = a.update(shape=out.shape)
            x = hlo.dynamic_broadcast_in_dim(mlir.aval_type(full), x, dims.shape(out.shape),
                                             mlir.dense_i64([]))
            a = full
        new_ins.append(x)
        new_avals.append(a)
    return new_ins, lowering.RuleContext(ctx.module_ctx, new_avals, ctx.avals_out, ctx.source)


def _broadcast_in_dim(dims, ctx, x, *, shape, broadcast_dimensions, **_):
    return hlo.dynamic_broadcast_in_dim(mlir.aval_type(ctx.avals_out[0]), x, dims.shape(shape),
                                        mlir.dense_i64(broadcast_dimensions))


def _reshape(dims, ctx, x, *, new_sizes, dimensions=None, **_):
    if dimensions is not None:
        raise errors.ExportError("reshape with `dimensions` is not supported")
    return hlo.dynamic_reshape(mlir.aval_type(ctx.avals_out[0]), x, dims.shape(new_sizes))


def _to_out_shape(dims, ctx, x, **_):
    """squeeze / expand_dims: a reshape to the (symbolic) result shape."""
    out = ctx.avals_out[0]
    return hlo.dynamic_reshape(mlir.aval_type(out), x, dims.shape(out.shape))


def _iota(dims, ctx, *, dtype, shape, dimension, **_):
    return hlo.dynamic_iota(mlir.aval_type(ctx.avals_out[0]), dims.shape(shape),
                            ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dimension))


def _slice(dims, ctx, x, *, start_indices, limit_indices, strides, **_):
    strides = strides if strides is not None else (1,) * len(start_indices)
    return hlo.real_dynamic_slice(mlir.aval_type(ctx.avals_out[0]), x, dims.shape(start_indices),
                                  dims.shape(limit_indices), dims.shape(strides))


def _cumsum(dims, ctx, x, *, axis, reverse, **_):
    """cumsum along an axis of symbolic size n as a dot with the n x n triangular mask (XLA's
    reduce_window needs static padding, which depends on n)."""
    a = ctx.avals_in[0]
    n = a.shape[axis]
    if not np.issubdtype(a.dtype, np.inexact) and not np.issubdtype(a.dtype, np.integer):
        raise errors.ExportError(f"cumsum of {a.dtype} is not supported")
    square = dims.shape((n, n))
    idx_t = mlir.tensor_type((n, n), np.int32)
    rows = hlo.dynamic_iota(idx_t, square, ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0))
    cols = hlo.dynamic_iota(idx_t, square, ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 1))
    cmp = "LE" if not reverse else "GE"
    mask = hlo.compare(cols, rows, hlo.ComparisonDirectionAttr.get(cmp))
    mask = hlo.convert(mlir.tensor_type((n, n), a.dtype), mask)
    # out[i, rest] = sum_j mask[i, j] * x[.., j, ..]: contract mask dim 1 with x's axis
    dot_t = mlir.tensor_type((n,) + a.shape[:axis] + a.shape[axis + 1:], a.dtype)
    dnums = hlo.DotDimensionNumbers.get(lhs_batching_dimensions=[], rhs_batching_dimensions=[],
                                        lhs_contracting_dimensions=[1],
                                        rhs_contracting_dimensions=[axis])
    prod = hlo.dot_general(dot_t, mask, x, dnums)
    perm = list(range(1, axis + 1)) + [0] + list(range(axis + 1, a.ndim))
    return hlo.transpose(prod, mlir.dense_i64(perm))


def _pad(dims, ctx, x, padding_value, *, padding_config):
    """pad with padding amounts that may be symbolic (the transpose of a slice at symbolic
    bounds pads by them)."""
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    return hlo.dynamic_pad(mlir.aval_type(ctx.avals_out[0]), x, padding_value, dims.shape(lo),
                           dims.shape(hi), dims.shape(interior))


def _dim_as_value(dims, ctx, *, dim, dtype):
    return hlo.convert(mlir.tensor_type((), dtype), dims.scalar(dim))


def _arg_reduce(direction, identity):
    """argmax/argmin: the static rule's variadic reduce over (values, indices), with the index
    operand made by dynamic_iota (the static rule's iota needs a static shape)."""
    def rule(dims, ctx, x, *, axes, index_dtype):
        aval, out, idx_dt = ctx.avals_in[0], ctx.avals_out[0], np.dtype(index_dtype)
        idx = hlo.dynamic_iota(mlir.tensor_type(aval.shape, idx_dt), dims.shape(aval.shape),
                               ir.IntegerAttr.get(ir.IntegerType.get_signless(64), axes[0]))
        inits = [mlir.constant(red._identity(identity, aval.dtype)),
                 mlir.constant(red._identity(red._highest, idx_dt))]
        types = [mlir.tensor_type(out.shape, aval.dtype), mlir.aval_type(out)]
        op = hlo.ReduceOp(types, [x, idx], inits, mlir.dense_i64(axes))
        red._arg_region(op, aval.dtype, idx_dt, direction)
        return [op.results[1]]
    return rule


# --- gather / scatter: the static rules build their index bounds as constants of the indices'
# shape; with symbolic indices the bounds are broadcast here and the static rule then runs in a
# mode that needs no bounds (promise_in_bounds for gather, fill_or_drop for scatter).

def _index_bounds(dims, indices, idx_aval, upper):
    """`(lo, hi)` broadcast to the indices' (symbolic) shape; `upper` per index-vector entry."""
    dt, n = np.dtype(idx_aval.dtype), idx_aval.ndim
    shape = dims.shape(idx_aval.shape)
    t = mlir.aval_type(idx_aval)
    vec = hlo.convert(mlir.tensor_type((len(upper),), dt), dims.shape(tuple(upper)))
    hi = hlo.dynamic_broadcast_in_dim(t, vec, shape, mlir.dense_i64([n - 1]))
    lo = hlo.dynamic_broadcast_in_dim(t, mlir.constant(np.zeros((), dt)), shape,
                                      mlir.dense_i64([]))
    return lo, hi


def _gather(dims, ctx, operand, indices, *, dimension_numbers, slice_sizes, mode, fill_value,
            **params):
    dn, (op_aval, idx_aval), out = dimension_numbers, ctx.avals_in, ctx.avals_out[0]
    upper = [op_aval.shape[d] - slice_sizes[d] for d in dn.start_index_map]
    mask = None
    if mode != GatherScatterMode.PROMISE_IN_BOUNDS:
        lo, hi = _index_bounds(dims, indices, idx_aval, upper)
        if mode == GatherScatterMode.FILL_OR_DROP:
            mask = _all_in_bounds(indices, idx_aval, lo, hi)
        indices = hlo.clamp(lo, indices, hi)
    if symbolic.is_symbolic(slice_sizes):  # full symbolic windows: the sizes as an operand
        attr = hlo.GatherDimensionNumbers.get(
            offset_dims=list(dn.offset_dims), collapsed_slice_dims=list(dn.collapsed_slice_dims),
            operand_batching_dims=list(dn.operand_batching_dims),
            start_indices_batching_dims=list(dn.start_indices_batching_dims),
            start_index_map=list(dn.start_index_map), index_vector_dim=idx_aval.ndim - 1)
        res = hlo.dynamic_gather(operand, indices, dims.shape(slice_sizes), attr,
                                 indices_are_sorted=bool(params.get("indices_are_sorted")),
                                 results=[mlir.aval_type(out)])
    else:
        res = gather_p.lower(ctx, operand, indices, dimension_numbers=dn,
                             slice_sizes=slice_sizes, mode=GatherScatterMode.PROMISE_IN_BOUNDS,
                             fill_value=fill_value, **params)[0]
    if mask is None:
        return [res]
    shape = dims.shape(out.shape)
    batch_axes = [i for i in range(out.ndim) if i not in dn.offset_dims]
    mask = hlo.dynamic_broadcast_in_dim(mlir.tensor_type(out.shape, np.bool_), mask, shape,
                                        mlir.dense_i64(batch_axes))
    fill = sl._default_fill(out.dtype) if fill_value is None else fill_value
    fill = hlo.dynamic_broadcast_in_dim(mlir.aval_type(out), mlir.constant(
        np.asarray(fill, out.dtype)), shape, mlir.dense_i64([]))
    return [hlo.select(mask, res, fill)]


def _all_in_bounds(indices, idx_aval, lo, hi):
    dt = idx_aval.dtype
    ok = hlo.and_(sl._compare(indices, lo, "GE", dt), sl._compare(indices, hi, "LE", dt))
    op = hlo.ReduceOp([mlir.tensor_type(idx_aval.shape[:-1], np.bool_)], [ok],
                      [mlir.constant(np.array(True))], mlir.dense_i64([idx_aval.ndim - 1]))
    scalar = mlir.tensor_type((), np.bool_)
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([hlo.and_(*block.arguments)])
    return op.results[0]


def _scatter(name):
    def rule(dims, ctx, operand, indices, updates, *, dimension_numbers, mode, **params):
        dn, (op_aval, idx_aval, upd_aval) = dimension_numbers, ctx.avals_in
        if mode == GatherScatterMode.CLIP:
            sizes = sc._scatter_window_sizes(op_aval, upd_aval, dn)
            upper = [op_aval.shape[d] - sizes[d] for d in dn.scatter_dims_to_operand_dims]
            lo, hi = _index_bounds(dims, indices, idx_aval, upper)
            indices = hlo.clamp(lo, indices, hi)
            mode = GatherScatterMode.FILL_OR_DROP  # clamped: every window fits now
        return sc.scatter_primitives[name].lower(ctx, operand, indices, updates,
                                              dimension_numbers=dn, mode=mode, **params)
    return rule


def _cumulative(combine, identity):
    """cumprod/cummax/cummin along an axis of symbolic size: XLA's reduce_window (the static
    rule) needs static windows and padding, so this is a while loop over the axis (moved to
    the front) carrying the running value and the output buffer."""
    def rule(dims, ctx, x, *, axis, reverse):
        a = ctx.avals_in[0]
        perm = [axis] + [i for i in range(a.ndim) if i != axis]
        front = a.update(shape=tuple(a.shape[i] for i in perm))
        xt = hlo.transpose(x, mlir.dense_i64(perm)) if axis else x
        rest = tuple(front.shape[1:])
        init = mlir.constant(red._identity(identity, a.dtype))
        acc0 = hlo.dynamic_broadcast_in_dim(mlir.tensor_type(rest, a.dtype), init,
                                            dims.shape(rest), mlir.dense_i64([]))
        buf0 = hlo.dynamic_broadcast_in_dim(mlir.aval_type(front), init, dims.shape(front.shape),
                                            mlir.dense_i64([]))
        n = _i32_of(dims, front.shape[0])
        op, body = _counted_loop(n, [acc0, xt, buf0])
        types = [r.type for r in op.results]
        with ir.InsertionPoint(body):
            inner = dims.child()
            i, acc, xs, buf = list(body.arguments)
            idx = hlo.subtract(hlo.subtract(n, mlir.constant(np.int32(1))), i) if reverse else i
            row, xs = _row(inner, xs, front, idx, reverse)
            acc = _as_type(combine(acc, row), types[1])
            buf = _put_row(inner, buf, acc, front, idx)
            hlo.return_([hlo.add(i, mlir.constant(np.int32(1))), acc, xs, buf])
        out = op.results[3]
        return [hlo.transpose(out, mlir.dense_i64(np.argsort(perm))) if axis else out]
    return rule


def _zeros(dims, ctx, *, shape, dtype, **_):
    return hlo.dynamic_broadcast_in_dim(mlir.aval_type(ctx.avals_out[0]),
                                        mlir.constant(np.zeros((), dtype)), dims.shape(shape),
                                        mlir.dense_i64([]))


def _integer_pow(dims, ctx, x, *, y):
    """x ** y: the static rule for |y|, then 1 / that for a negative y, with the 1 broadcast to
    the symbolic shape (the static rule builds a constant of the static shape)."""
    power = integer_pow_p.lower(ctx, x, y=abs(y))[0] if y else None
    aval = ctx.avals_out[0]
    one = hlo.dynamic_broadcast_in_dim(mlir.aval_type(aval), mlir.constant(np.ones((), aval.dtype)),
                                       dims.shape(aval.shape), mlir.dense_i64([]))
    if power is None:
        return [one]
    return [hlo.divide(one, power) if y < 0 else power]


# --- control flow: the static rules' structure, with bodies lowered by `_lower_body` so that
# symbolic shapes inside them get the dynamic rules too. The regions read the dimension values
# of `main`'s entry block directly (StableHLO regions are not isolated from above).

def _while(dims, ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    mctx, n = ctx.module_ctx, cond_nconsts + body_nconsts
    types = [mlir.aval_type(a) for a in ctx.avals_in]
    op = hlo.WhileOp(types, list(args))
    cond_block = op.cond.blocks.append(*types)
    with ir.InsertionPoint(cond_block):
        a = list(cond_block.arguments)
        hlo.return_(_lower_closed(mctx, dims, cond_jaxpr, a[:cond_nconsts] + a[n:]))
    body_block = op.body.blocks.append(*types)
    with ir.InsertionPoint(body_block):
        a = list(body_block.arguments)
        new = _lower_closed(mctx, dims, body_jaxpr, a[cond_nconsts:n] + a[n:])
        hlo.return_(a[:n] + [_as_type(v, t) for v, t in zip(new, types[n:], strict=True)])
    return list(op.results)[n:]


def _cond(dims, ctx, index, *args, branches):
    mctx, n = ctx.module_ctx, len(branches)
    out_types = [mlir.aval_type(a) for a in ctx.avals_out]
    if n == 1:
        return _lower_closed(mctx, dims, branches[0], list(args))
    index = hlo.clamp(mlir.constant(np.int32(0)), index, mlir.constant(np.int32(n - 1)))
    case = hlo.CaseOp(out_types, index, n)
    for region, br in zip(case.regions, branches, strict=True):
        block = region.blocks.append()
        with ir.InsertionPoint(block):
            outs = _lower_closed(mctx, dims, br, list(args))
            hlo.return_([_as_type(v, t) for v, t in zip(outs, out_types, strict=True)])
    return list(case.results)


def _lower_closed(mctx, dims, closed, args) -> list:
    """`closed` lowered into the current (nested) region."""
    consts = [mlir.constant(np.asarray(c)) for c in closed.consts]
    return _lower_body(mctx, dims.child(), closed.jaxpr, consts, args)


def _i32_of(dims, d) -> ir.Value:
    return hlo.convert(mlir.tensor_type((), np.int32), dims.scalar(d))


def _row(dims, x, aval, idx, reverse):
    """`(x[idx], x for the next iteration)` along the leading axis. With static trailing
    dimensions this is a dynamic_slice at the loop index. With symbolic ones a dynamic_slice
    (static sizes) cannot be written and a real_dynamic_slice at the loop index could not be
    refined (its bounds are not constants), so the row is always taken at the front (the back
    when reversed) and `x` is rotated by one row per iteration: every bound is then a function
    of the dimension variables only, which refinement folds to constants."""
    rest = tuple(aval.shape[1:])
    if not symbolic.is_symbolic(rest):
        zero = mlir.constant(np.int32(0))
        piece = hlo.dynamic_slice(x, [idx] + [zero] * len(rest), mlir.dense_i64((1,) + rest))
        return hlo.reshape(mlir.tensor_type(rest, aval.dtype), piece), x
    n, zeros = aval.shape[0], (0,) * len(rest)
    k = n - 1 if reverse else 0

    def rows(lo, hi):
        t = mlir.tensor_type((hi - lo,) + rest, aval.dtype)
        return hlo.real_dynamic_slice(t, x, dims.shape((lo,) + zeros), dims.shape((hi,) + rest),
                                      mlir.constant(np.ones(len(rest) + 1, np.int64)))
    row = hlo.dynamic_reshape(mlir.tensor_type(rest, aval.dtype), rows(k, k + 1),
                              dims.shape(rest))
    parts = [rows(n - 1, n), rows(0, n - 1)] if reverse else [rows(1, n), rows(0, 1)]
    return row, _as_type(hlo.concatenate(parts, 0), x.type)


def _put_row(dims, buf, y, buf_aval, idx) -> ir.Value:
    """buf[idx] = y along the leading axis."""
    shape = (1,) + tuple(buf_aval.shape[1:])
    t = mlir.tensor_type(shape, buf_aval.dtype)
    piece = (hlo.dynamic_reshape(t, y, dims.shape(shape)) if symbolic.is_symbolic(shape)
             else hlo.reshape(t, y))
    zero = mlir.constant(np.int32(0))
    return hlo.dynamic_update_slice(buf, piece, [idx] + [zero] * (len(shape) - 1))


def _scan(dims, ctx, *args, jaxpr, length, reverse, num_consts, num_carry, **_):
    """scan as a stablehlo.while over (i, consts, carry, xs, ys buffers); `length` and the
    buffers' shapes may be symbolic."""
    mctx = ctx.module_ctx
    if not symbolic.is_symbolic_dim(length) and length == 0:
        return list(args[num_consts:num_consts + num_carry]) + [
            _zeros(dims, _Out(a), shape=a.shape, dtype=a.dtype) for a in ctx.avals_out[num_carry:]]
    ys0 = [_zeros(dims, _Out(a), shape=a.shape, dtype=a.dtype)
           for a in ctx.avals_out[num_carry:]]
    n_len = _i32_of(dims, length)
    op, body = _counted_loop(n_len, [*args, *ys0])
    types = [r.type for r in op.results]
    with ir.InsertionPoint(body):
        dims = dims.child()
        i, *rest = list(body.arguments)
        consts, carry = rest[:num_consts], rest[num_consts:num_consts + num_carry]
        xs, ys = rest[num_consts + num_carry:len(args)], rest[len(args):]
        xs_avals = ctx.avals_in[num_consts + num_carry:]
        idx = hlo.subtract(hlo.subtract(n_len, mlir.constant(np.int32(1))), i) if reverse else i
        pairs = [_row(dims, x, a, idx, reverse) for x, a in zip(xs, xs_avals, strict=True)]
        x_now, xs = [r for r, _ in pairs], [nxt for _, nxt in pairs]
        outs = _lower_closed(mctx, dims, jaxpr, consts + carry + x_now)
        new_carry = [_as_type(v, t) for v, t in
                     zip(outs[:num_carry], types[1 + num_consts:1 + num_consts + num_carry],
                         strict=True)]
        ys = [_put_row(dims, b, y, a, idx) for b, y, a in
              zip(ys, outs[num_carry:], ctx.avals_out[num_carry:], strict=True)]
        hlo.return_([hlo.add(i, mlir.constant(np.int32(1))), *consts, *new_carry, *xs, *ys])
    results = list(op.results)
    return (results[1 + num_consts:1 + num_consts + num_carry] + results[1 + len(args):])


class _Out:
    """A stand-in RuleContext with one output aval (for `_zeros`)."""

    def __init__(self, aval):
        self.avals_out = [aval]



def _counted_loop(n, state: list):
    """A `while i < n` op over (i = 0, *state): returns the op and its body block, into which the
    caller emits the step (its first argument is the counter)."""
    state = [mlir.constant(np.int32(0)), *state]
    types = [v.type for v in state]
    op = hlo.WhileOp(types, state)
    cond = op.cond.blocks.append(*types)
    with ir.InsertionPoint(cond):
        hlo.return_([hlo.compare(cond.arguments[0], n, hlo.ComparisonDirectionAttr.get("LT"),
                                 compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))])
    return op, op.body.blocks.append(*types)

_DYNAMIC_RULES = {
    "broadcast_in_dim": _broadcast_in_dim, "reshape": _reshape, "iota": _iota,
    "squeeze": _to_out_shape, "expand_dims": _to_out_shape, "slice": _slice, "cumsum": _cumsum,
    "zeros": _zeros, "pad": _pad, "while": _while, "cond": _cond, "scan": _scan,
    "dim_as_value": _dim_as_value, "integer_pow": _integer_pow,
    "argmax": _arg_reduce("GT", red._lowest),
    "argmin": _arg_reduce("LT", red._highest), "gather": _gather,
    "cumprod": _cumulative(hlo.multiply, lambda dt: 1),
    "cummax": _cumulative(hlo.maximum, red._lowest),
    "cummin": _cumulative(hlo.minimum, red._highest),
    **{n: _scatter(n) for n in ("scatter", "scatter_add", "scatter_mul", "scatter_min",
                                "scatter_max")}}
