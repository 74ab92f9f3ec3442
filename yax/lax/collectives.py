"""yax.lax collectives over named axes (bound by `vmap(..., axis_name=...)`), as in jax.lax.

`x` may be a pytree: the collective applies to each leaf. `axis_name` may be a tuple of names for
psum/pmean/pmax/pmin/all_gather/axis_index, acting over all of them at once.
"""

from __future__ import annotations

import math

from yax import errors, tree_util
from yax.core import dtypes
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.lax import elementwise, shape
from yax.primitives import collectives as coll
from yax.primitives import collectives_exchange as exch
from yax.primitives import mesh_axes
from yax.runtime.values import as_operand

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size", "ppermute",
           "pshuffle", "psum_scatter", "all_to_all", "pswapaxes", "pcast"]


def _names(axis_name) -> tuple:
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    if not names:
        raise errors.YaxError("a collective needs at least one axis name")
    if len(set(names)) != len(names):
        raise errors.YaxError(f"axis_name {axis_name!r} repeats a name; list each axis once")
    return names


def _over_names(bind_one, x, axis_name):
    names = _names(axis_name)

    def leaf(v):
        v = as_operand(v)
        for name in names:  # a reduction over several axes is one reduction after another
            v = bind_one(v, name)
        return v
    return tree_util.tree_map(leaf, x)


def psum(x, axis_name):
    """Sum of `x` over the examples of the named axis (the same result for every example).

    Example:
      >>> yax.vmap(lambda v: v / lax.psum(v, "i"), axis_name="i")(jnp.arange(1., 4.))
      # [1/6, 2/6, 3/6]
    """
    names = _names(axis_name)
    if len(names) > 1 and coll.all_check_vma(names):  # jax's one psum over them all
        return tree_util.tree_map(lambda v: coll.psum_invariant_bind(as_operand(v), names), x)
    return _over_names(coll.psum_bind, x, axis_name)


def pmax(x, axis_name):
    """Elementwise maximum of `x` over the examples of the named axis."""
    return _over_names(coll.pmax_bind, x, axis_name)


def pmin(x, axis_name):
    """Elementwise minimum of `x` over the examples of the named axis."""
    return _over_names(coll.pmin_bind, x, axis_name)


def pmean(x, axis_name):
    """Mean of `x` over the examples of the named axis (integers give floats, as in JAX)."""
    count = math.prod(coll.axis_size(name) for name in _names(axis_name))

    def mean(v):
        if not dtypes.is_inexact(v.aval.dtype):
            v = elementwise.convert_element_type(v, dtypes.default_float())
        return elementwise.div(v, count)
    return tree_util.tree_map(mean, psum(x, axis_name))


def all_gather(x, axis_name, *, axis: int = 0, tiled: bool = False):
    """Every example's `x`, stacked along a new axis `axis` (tiled=True: concatenated along the
    existing `axis`). Over several names the gathered axis is indexed by the examples' positions,
    the first name varying slowest.

    Example:
      >>> yax.vmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(jnp.arange(3.))
      # every row is [0, 1, 2]
    """
    names = _names(axis_name)

    def leaf(v):
        v = as_operand(v)
        ndim = v.aval.ndim
        limit = ndim if tiled else ndim + 1
        if not -limit <= axis < limit:
            raise errors.ShapeError(f"all_gather axis={axis} is out of range for an operand "
                                    f"{v.aval.str_short()} (tiled={tiled}); use an axis in "
                                    f"[{-limit}, {limit})")
        ax = axis % limit
        if len(names) == 1:
            return coll.all_gather_bind(v, names[0], ax, bool(tiled))
        for name in reversed(names):  # the last name is gathered first, ending up innermost
            v = coll.all_gather_bind(v, name, ax, False)
        dims = v.aval.shape
        merged = len(names) + (1 if tiled else 0)
        return shape.reshape(v, dims[:ax] + (math.prod(dims[ax:ax + merged]),)
                             + dims[ax + merged:])
    return tree_util.tree_map(leaf, x)


def axis_index(axis_name):
    """The position (int32) of the current example along the named axis (over several names:
    the linear position, the first name varying slowest)."""
    index = None
    for name in _names(axis_name):
        i = coll.axis_index_bind(name)
        index = i if index is None else elementwise.add(
            elementwise.mul(index, coll.axis_size(name)), i)
    return index


def _one_name(axis_name, what: str):
    names = _names(axis_name)
    if len(names) != 1:
        raise errors.YaxError(f"{what} over several axis names {names} is not supported; apply "
                              f"it over one axis name at a time")
    return names[0]


def ppermute(x, axis_name, perm):
    """Send each example's `x` to another: `perm` lists (source, destination) index pairs along
    the axis; an example no source sends to receives zeros.

    Example:
      >>> n = 4   # shift right by one, cyclically
      >>> lax.ppermute(x, "i", perm=[(j, (j + 1) % n) for j in range(n)])
    """
    name = _one_name(axis_name, "ppermute")
    return tree_util.tree_map(lambda v: exch.ppermute_bind(as_operand(v), name, perm), x)


def pshuffle(x, axis_name, perm):
    """Example i receives the `x` of example `perm[i]` (ppermute with pairs (perm[i], i))."""
    return ppermute(x, axis_name, [(int(src), i) for i, src in enumerate(perm)])


def psum_scatter(x, axis_name, *, scatter_dimension: int = 0, axis_index_groups=None,
                 tiled: bool = False):
    """The psum of `x`, of which example i keeps only slice i of `scatter_dimension` (tiled:
    block i). The transpose of all_gather."""
    if axis_index_groups is not None:
        raise errors.YaxError("psum_scatter: axis_index_groups is not supported")
    name = _one_name(axis_name, "psum_scatter")

    def leaf(v):
        v = as_operand(v)
        dim = scatter_dimension % max(v.aval.ndim, 1)
        return exch.psum_scatter_bind(v, name, dim, bool(tiled))
    return tree_util.tree_map(leaf, x)


def all_to_all(x, axis_name, split_axis: int, concat_axis: int, *, axis_index_groups=None,
               tiled: bool = False):
    """Split `x` along `split_axis` into one piece per example, send piece i to example i, and
    concatenate what arrives along `concat_axis` (untiled: the split axis, whose size must be
    the axis size, is removed and a new axis of that size appears at `concat_axis`)."""
    if axis_index_groups is not None:
        raise errors.YaxError("all_to_all: axis_index_groups is not supported")
    name = _one_name(axis_name, "all_to_all")

    def leaf(v):
        v = as_operand(v)
        rank = v.aval.ndim
        return exch.all_to_all_bind(v, name, split_axis % rank, concat_axis % rank, bool(tiled))
    return tree_util.tree_map(leaf, x)


def pswapaxes(x, axis_name, axis: int, *, axis_index_groups=None):
    """Swap the mapped axis `axis_name` with positional axis `axis` of `x` (whose size must be
    the axis size): an all_to_all that splits and concatenates along `axis`."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def axis_size(axis_name):
    """The size of the named mapped axis (bound by vmap(..., axis_name=...)); for a tuple of
    names, the product of their sizes."""
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    return math.prod(coll.axis_size(n) for n in names)


_PCAST_TO = ("unreduced", "reduced", "varying")


def _typeof(v):
    own = getattr(type(v), "typeof", None)  # eager shard_map values type themselves
    return own(v) if own is not None else None


def _varying_axes(v) -> frozenset:
    """The mesh axes `v`'s type says it varies over (eager shard_map values know theirs, and
    a traced body's values carry theirs in their types)."""
    mat = getattr(_typeof(v), "manual_axis_type", None)
    return mat.varying if mat is not None else mesh_axes.vma_of(v)  # a traced body's value


def check_loop_carry_vma(what: str, in_avals, out_avals) -> None:
    """jax's loop error inside a checked shard_map body: the body must return each carry
    varying along the mesh axes it came in with (else its second iteration would see another
    type than the one it was traced for)."""
    for k, (a, b) in enumerate(zip(in_avals, out_avals)):
        va, vb = getattr(a, "vma", frozenset()), getattr(b, "vma", frozenset())
        if va != vb:
            raise errors.ShapeError(
                f"{what}: body_fun output and input must have identical types, but carry {k} "
                f"comes in as {a.str_short()} and goes out as {b.str_short()}, so the manual "
                f"axis types do not match. This might be fixed by applying `lax.pcast(..., "
                f"{tuple(sorted(vb - va))}, to='varying')` to the initial carry value.")


def _mesh_of(v):
    typed = _typeof(v)
    return typed.sharding.mesh if typed is not None else v.aval.mesh


def check_carry_vma(body, operands, n_consts: int, n_carry: int, carry_name, paths) -> None:
    """jax's scan error when the body changes the mesh axes a carry varies over (the carry
    keeps one type). `body` is the traced (const-free) body on `operands` (consts, carry, xs);
    only values that know their varying axes (eager shard_map) are checked."""
    ins = [_varying_axes(v) for v in operands]
    if not any(ins):
        return
    mesh = next(_mesh_of(v) for v, i in zip(operands, ins) if i)
    everything = frozenset(mesh.axis_names)

    def on_eqn(eqn, vals):
        union = frozenset().union(*(v for v in vals if isinstance(v, frozenset)))
        return [mesh_axes.out_varying(eqn.primitive.name, eqn.params, union, everything)
                ] * len(eqn.outvars)
    jaxpr = body.jaxpr
    outs = eval_jaxpr(jaxpr, [frozenset()] * len(jaxpr.constvars), ins, on_eqn=on_eqn)
    carry_in, carry_out = ins[n_consts:n_consts + n_carry], outs[:n_carry]
    avals = body.out_avals[:n_carry]
    order = mesh.axis_names

    def typed(aval, vma):
        dims = ",".join(str(d) for d in aval.shape)
        return f"{aval.dtype.name}[{dims}]{mesh_axes.vma_suffix(mesh, vma)}"

    def component(path):
        return (f"the input carry component {carry_name}{path}" if carry_name and path else
                f"the input carry {carry_name}" if carry_name else
                f"the input carry at path {path}" if path else "the input carry")
    bad = [(p, a, i, frozenset(o) if isinstance(o, frozenset) else frozenset())
           for p, a, i, o in zip(paths, avals, carry_in, carry_out)]
    bad = [(p, a, i, o) for p, a, i, o in bad if i != o]
    if not bad:
        return
    diffs = [f"{component(p)} has type {typed(a, i)} but the corresponding output carry "
             f"component has type {typed(a, o)}, so the manual axis types do not match"
             for p, a, i, o in bad]
    fixes = [f"applying `jax.lax.pcast(..., {tuple(x for x in order if x in o - i)}, "
             f"to='varying')`, to the initial carry value corresponding to {component(p)}"
             for p, a, i, o in bad if o - i]
    listed = lambda items: (f"{items[0][0].upper()}{items[0][1:]}.\n" if len(items) == 1 else
                            "".join(f"  * {d};\n" for d in items[:-1]) + f"  * {items[-1]}.\n")
    hint = ""
    if fixes:
        hint = ("This might be fixed by " + fixes[0] + ".\n" if len(fixes) == 1 else
                "This might be fixed by:\n" + "".join(f"  * {d};\n" for d in fixes[:-1])
                + f"  * {fixes[-1]}.\n")
        hint += ("See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for "
                 "more information.\n\n")
    raise TypeError("scan body function carry input and carry output must have equal types, "
                    f"but they differ:\n\n{listed(diffs)}\n{hint}Revise the function so "
                    "that all output types match the corresponding input types.")


def pcast(x, axis_name, *, to: str):
    """Change the type of `x` along mesh axes inside shard_map, moving no data:
    `to="varying"` types a value that is the same on every device along `axis_name` as one
    that varies along it (what a scan carry or a cond branch needs to match another, varying,
    value). The `"reduced"`/`"unreduced"` types of jax are not modelled by yax: those raise.

    Example:
      >>> y = lax.pcast(y, "i", to="varying")   # y: float32[3] -> float32[3]{V:i}
    """
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    if not axis_name:
        return x
    names = _names(axis_name)
    if to not in _PCAST_TO:
        raise ValueError("Got unexpected `to` value. Allowed `to` values are: "
                         f"{set(_PCAST_TO)}")

    def leaf(v):
        v = as_operand(v)
        varying = _varying_axes(v)
        state = {"varying" if n in varying else "invarying" for n in names}
        if len(state) > 1:
            raise ValueError("jax.lax.pcast can only accept axis_name which corresponds to one "
                             "of varying, unreduced, reduced or invarying state of the input. "
                             f"Got axes: {names} and input state: {state}")
        from_, = state
        if (from_, to) != ("invarying", "varying"):
            raise ValueError(f"Unsupported pcast from={from_}, to={to!r}")
        return coll.pvary_bind(v, names)
    return tree_util.tree_map(leaf, x)
