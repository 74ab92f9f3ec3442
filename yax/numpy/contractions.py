"""Tensor contractions for yax.numpy: einsum and the products built on it.

Every product here is phrased as labelled axes (einsum's letters) and handed to one planner:
  1. per operand: broadcast size-1 axes are dropped, repeated labels ('ii') become a diagonal,
     and labels no one else needs (not in the output, not in another operand) are summed;
  2. while several operands remain, the pair whose result is smallest is contracted by one
     `dot_general` (labels in both that are still needed later are batch dims, the others are
     contracted) — a greedy order that keeps intermediates small;
  3. the last operand is summed down to the output labels and transposed into their order.
So `einsum('ij,jk->ik', a, b)` is a single `dot_general`, and `matmul`, `dot`, `tensordot`,
`inner`, `outer` and `vdot` are the same machinery with labels chosen by NumPy's rules.
"""

from __future__ import annotations

import math
import operator
import string

import numpy as np

from yax import errors, lax
from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.core.trace import bind
from yax.lax._util import out_sharding_of, typed_result, with_out_sharding
from yax.numpy import _promote
from yax.numpy.indexing import getitem
from yax.primitives.dot import dot_general_p
from yax.runtime.values import to_array

__all__ = ["matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum", "einsum_path"]


# --- the planner -------------------------------------------------------------------------------

def _shape(x) -> tuple:
    return tuple(_promote.shape_of(x))


def _label_sizes(name: str, operands, labels) -> dict:
    """Size of every label; size 1 broadcasts against any other size (NumPy's rule)."""
    sizes: dict = {}
    for x, labs in zip(operands, labels, strict=True):
        for lab, n in zip(labs, _shape(x), strict=True):
            if sizes.get(lab, 1) not in (1, n) and n != 1:
                shown = ", ".join(str(_shape(o)) for o in operands)
                raise errors.ShapeError(
                    f"{name}: axes labelled {_show(lab)} have sizes {sizes[lab]} and {n} "
                    f"(operand shapes {shown}); contracted or batch axes must have equal sizes")
            sizes[lab] = n if sizes.get(lab, 1) == 1 else sizes[lab]
    return sizes


def _show(lab) -> str:
    if isinstance(lab, int):
        return f"'...' axis {lab}"
    return f"'{lab}'" if isinstance(lab, str) else str(lab)


def _sum(x, axes):
    if not axes:
        return x
    dt = x.aval.dtype if hasattr(x, "aval") else np.result_type(x)
    reduce = lax.reduce_or if dtypes.is_bool(dt) else lax.reduce_sum  # bool einsum is any()
    return reduce(x, tuple(axes))


def _diagonal(x, labs: list, lab):
    """Keep the diagonal of the first two axes labelled `lab` (one gather, exact for any dtype)."""
    first = labs.index(lab)
    second = labs.index(lab, first + 1)
    rest = [i for i in range(len(labs)) if i not in (first, second)]
    x = lax.transpose(x, tuple(rest) + (first, second))
    ar = np.arange(_shape(x)[-1], dtype=np.int32)
    return getitem(x, (Ellipsis, ar, ar)), [labs[i] for i in rest] + [lab]


def _prepare(x, labs, sizes, needed):
    """Drop broadcast axes, take diagonals, and sum labels that `needed` does not hold."""
    labs = list(labs)
    shape = _shape(x)
    drop = [i for i, lab in enumerate(labs) if shape[i] == 1 and sizes[lab] != 1]
    if drop:
        x = lax.reshape(x, tuple(n for i, n in enumerate(shape) if i not in drop))
        labs = [lab for i, lab in enumerate(labs) if i not in drop]
    while len(set(labs)) != len(labs):
        lab = next(lab for lab in labs if labs.count(lab) > 1)
        x, labs = _diagonal(x, labs, lab)
    unused = [i for i, lab in enumerate(labs) if lab not in needed]
    x = _sum(x, unused)
    return x, [lab for lab in labs if lab in needed]


def _pair_result(labels, i: int, j: int, out) -> list:
    """Labels the contraction of operands i and j must keep (needed by the output or others)."""
    others = set(out)
    for k, labs in enumerate(labels):
        if k not in (i, j):
            others.update(labs)
    union = list(dict.fromkeys(list(labels[i]) + list(labels[j])))
    return [lab for lab in union if lab in others]


def _choose_pair(labels, sizes, out) -> tuple[int, int]:
    """Greedy: the pair whose intermediate result has the fewest elements."""
    best = None
    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            cost = math.prod(sizes[lab] for lab in _pair_result(labels, i, j, out))
            if best is None or cost < best[0]:
                best = (cost, i, j)
    return best[1], best[2]


def _dot_pair(lhs, llabs, rhs, rlabs, keep, precision, preferred):
    """One dot_general: shared kept labels batch, shared others contract."""
    shared = [lab for lab in llabs if lab in rlabs]
    batch = [lab for lab in shared if lab in keep]
    contract = [lab for lab in shared if lab not in keep]
    dnums = ((tuple(llabs.index(c) for c in contract), tuple(rlabs.index(c) for c in contract)),
             (tuple(llabs.index(b) for b in batch), tuple(rlabs.index(b) for b in batch)))
    out = lax.dot_general(lhs, rhs, dnums, precision=precision,
                          preferred_element_type=preferred)
    free_l = [lab for lab in llabs if lab not in shared]
    free_r = [lab for lab in rlabs if lab not in shared]
    return out, batch + free_l + free_r


def _in_output_order(first, second, out) -> bool:
    """Whether putting `first` on the left gives output labels in output order and putting
    `second` there does not."""
    def ordered(labs):
        pos = [out.index(lab) for lab in labs if lab in out]
        return pos == sorted(pos)
    only_first = [lab for lab in first if lab not in second]
    only_second = [lab for lab in second if lab not in first]
    return ordered(only_first + only_second) and not ordered(only_second + only_first)


def _contract(name, operands, labels, out, *, precision=None, preferred_element_type=None):
    """Evaluate the einsum `labels -> out` over `operands` (already of one dtype)."""
    labels = [list(labs) for labs in labels]
    sizes = _label_sizes(name, operands, labels)
    operands = list(operands)
    for k in range(len(operands)):
        needed = set(out).union(*(labels[m] for m in range(len(labels)) if m != k))
        operands[k], labels[k] = _prepare(operands[k], labels[k], sizes, needed)
    while len(operands) > 1:
        i, j = _choose_pair(labels, sizes, out)
        keep = set(_pair_result(labels, i, j, out))
        if _in_output_order(labels[j], labels[i], out):  # spare the final transpose
            i, j = j, i
        res, res_labs = _dot_pair(operands[i], labels[i], operands[j], labels[j], keep,
                                  precision, preferred_element_type)
        operands = [o for k, o in enumerate(operands) if k not in (i, j)] + [res]
        labels = [labs for k, labs in enumerate(labels) if k not in (i, j)] + [res_labs]
    x, labs = _prepare(operands[0], labels[0], sizes, set(out))
    perm = tuple(labs.index(lab) for lab in out)
    if perm != tuple(range(len(perm))):
        x = lax.transpose(x, perm)
    if preferred_element_type is not None:
        x = lax.convert_element_type(x, preferred_element_type)
    return _as_array(x)


def _as_array(x):
    """A TypedScalar (a Python scalar operand that met no primitive) becomes an Array."""
    if hasattr(x, "value") and not hasattr(x, "shape"):
        return to_array(x)
    return x


def _promoted(name: str, *args):
    _promote.check_arraylike(name, *args)
    return _promote.promote_dtypes(*args)


# --- einsum ------------------------------------------------------------------------------------

def _parse_spec(spec: str, ndim: int, ell_labels: list, subscripts: str) -> list:
    letters = spec.replace("...", "")
    if any(c not in string.ascii_letters for c in letters):
        raise ValueError(f"einsum: invalid subscript characters in {spec!r} of {subscripts!r}; "
                         f"use letters a-z, A-Z and '...'")
    if "..." not in spec:
        if len(spec) != ndim:
            raise ValueError(f"einsum: {spec!r} names {len(spec)} axes but its operand has "
                             f"{ndim} (subscripts {subscripts!r})")
        return list(spec)
    n_ell = ndim - len(letters)
    if n_ell < 0:
        raise ValueError(f"einsum: {spec!r} names more axes than its operand's {ndim}")
    head, tail = spec.split("...")
    return list(head) + ell_labels[len(ell_labels) - n_ell:] + list(tail)


def _parse_subscripts(subscripts: str, shapes) -> tuple[list, list]:
    """Input label lists and the output label list; '...' axes get integer labels."""
    subscripts = subscripts.replace(" ", "")
    ins, arrow, out_spec = subscripts.partition("->")
    specs = ins.split(",")
    if len(specs) != len(shapes):
        raise ValueError(f"einsum: {subscripts!r} names {len(specs)} operands but "
                         f"{len(shapes)} were given")
    n_ell = max((len(s) - len(sp.replace("...", "")) for sp, s in zip(specs, shapes,
                                                                       strict=True)
                 if "..." in sp), default=0)
    ell_labels = list(range(n_ell))
    labels = [_parse_spec(sp, len(s), ell_labels, subscripts)
              for sp, s in zip(specs, shapes, strict=True)]
    if not arrow:  # implicit output: '...' then the letters used once, alphabetically
        counts: dict = {}
        for labs in labels:
            for lab in labs:
                counts[lab] = counts.get(lab, 0) + 1
        used = {lab for labs in labels for lab in labs}
        once = sorted(lab for lab in used if isinstance(lab, str) and counts[lab] == 1)
        return labels, [lab for lab in ell_labels if lab in used] + once
    out = list(out_spec.replace("...", "\0"))
    out = [lab for c in out for lab in (ell_labels if c == "\0" else [c])]
    present = {lab for labs in labels for lab in labs}
    for lab in out:
        if isinstance(lab, str) and (lab not in present or out.count(lab) > 1):
            raise ValueError(f"einsum: output label '{lab}' of {subscripts!r} must appear once "
                             f"in the output and in some input")
    return labels, out


def _sublist_to_subscripts(args) -> tuple[str, list]:
    """einsum(a, [0, 1], b, [1, 2], [0, 2]) -> ('ab,bc->ac', [a, b])."""
    args = list(args)
    out = args.pop() if len(args) % 2 else None
    letters = string.ascii_letters

    def spec(sub):
        return "".join("..." if s is Ellipsis else letters[operator.index(s)] for s in sub)
    operands, specs = args[0::2], [spec(s) for s in args[1::2]]
    subscripts = ",".join(specs) + ("" if out is None else "->" + spec(out))
    return subscripts, operands


def einsum(subscripts, *operands, out=None, optimize="greedy", precision=None,
           preferred_element_type=None, out_sharding=None):
    """Einstein summation: `einsum('ij,jk->ik', a, b)` is `a @ b`.

    Subscripts name each operand's axes by letters; '...' stands for leading axes that
    broadcast; without '->' the output holds '...' then the letters used once, sorted. Repeated
    letters in one operand take a diagonal ('ii->i'). The interleaved form
    `einsum(a, [0, 1], b, [1, 2], [0, 2])` is accepted too.

    Args:
      optimize: accepted for NumPy/JAX compatibility; yax always plans greedily (see the
        module docstring).
      precision, preferred_element_type: passed to every `dot_general`.
      out_sharding: the result's sharding (a PartitionSpec over the current mesh, or a
        NamedSharding); needed when both operands shard a contracted axis.
    Returns:
      The contracted array, in the promoted dtype of the operands (or preferred_element_type).
    """
    del optimize  # one planner for every setting
    sharding = out_sharding_of("einsum", out_sharding)
    if out is not None:
        raise NotImplementedError("einsum: out= is not supported (yax arrays are immutable)")
    if not isinstance(subscripts, str):
        subscripts, operands = _sublist_to_subscripts((subscripts,) + operands)
    if not operands:
        raise ValueError("einsum needs at least one operand")
    operands = _promoted("einsum", *operands)
    labels, out_labels = _parse_subscripts(subscripts, [_shape(o) for o in operands])
    with typed_result("dot_general", sharding):
        out = _contract("einsum", operands, labels, out_labels, precision=precision,
                        preferred_element_type=preferred_element_type)
    return with_out_sharding(out, sharding)


# --- products with NumPy's axis rules ----------------------------------------------------------

def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """The `@` product: matrix products over the last two axes, broadcasting the leading ones.

    A 1-D `a` acts as a row vector and a 1-D `b` as a column vector; the added axis is removed
    from the result (NumPy's rule). Scalars are not allowed (use `*`). `out_sharding`: the result's
    sharding and type (as einsum's).
    """
    if out_sharding is None and precision is None and preferred_element_type is None:
        out = _plain_matrix_product(a, b)
        if out is not None:
            return out
    sharding = out_sharding_of("matmul", out_sharding)
    a, b = _promoted("matmul", a, b)
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        raise ValueError(f"matmul: operands must not be scalars, got shapes {sa} and {sb}; use "
                         f"`*` to multiply by a scalar")
    if sa[-1] != sb[max(len(sb) - 2, 0)]:
        raise errors.ShapeError(
            f"matmul: a {sa} and b {sb} do not line up: a's last axis ({sa[-1]}) must equal b's "
            f"{'only' if len(sb) == 1 else 'second-to-last'} axis ({sb[max(len(sb) - 2, 0)]})")
    if len(sa) <= 2 and len(sb) <= 2:
        # Matrices and vectors, the common case (every layer of an MLP): one dot_general
        # contracting a's last axis with b's first, which is what the einsum route below
        # builds for these ranks, without its label bookkeeping (a third of an eager matmul).
        with typed_result("dot_general", sharding):
            out = lax.dot_general(a, b, (((len(sa) - 1,), (0,)), ((), ())),
                                  precision=precision,
                                  preferred_element_type=preferred_element_type)
            if preferred_element_type is not None:
                out = lax.convert_element_type(out, preferred_element_type)
        return with_out_sharding(_as_array(out), sharding)
    batch = _promote.broadcast_shapes(sa[:-2], sb[:-2], name="matmul")
    blabs = [("b", i) for i in range(len(batch))]
    la = (blabs[len(blabs) - (len(sa) - 2):] + ["m"] if len(sa) > 1 else []) + ["k"]
    lb = (blabs[len(blabs) - (len(sb) - 2):] if len(sb) > 1 else []) + ["k"] + (
        ["n"] if len(sb) > 1 else [])
    out = blabs + (["m"] if len(sa) > 1 else []) + (["n"] if len(sb) > 1 else [])
    with typed_result("dot_general", sharding):
        out = _contract("matmul", [a, b], [la, lb], out, precision=precision,
                        preferred_element_type=preferred_element_type)
    return with_out_sharding(out, sharding)


# dimension numbers contracting a's last axis with b's first, per (rank of a, rank of b)
_MATRIX_DNUMS = {(ra, rb): (((ra - 1,), (0,)), ((), ())) for ra in (1, 2) for rb in (1, 2)}


def _plain_matrix_product(a, b):
    """`a @ b` of unsharded matrices or vectors of one dtype and weak type whose sizes line up,
    bound as the one dot_general `matmul` would build, or None for everything else (which the
    general path promotes, checks and reports). Every layer of an MLP is this case, and it runs
    on every op of an eager grad: no promotion, no contexts, no new tuples."""
    a_aval, b_aval = getattr(a, "aval", None), getattr(b, "aval", None)
    if type(a_aval) is not ShapedArray or type(b_aval) is not ShapedArray:
        return None
    dnums = _MATRIX_DNUMS.get((len(a_aval.shape), len(b_aval.shape)))
    if (dnums is None or a_aval.dtype != b_aval.dtype or a_aval.weak_type != b_aval.weak_type
            or a_aval.sharding is not None or b_aval.sharding is not None
            or a_aval.shape[-1] != b_aval.shape[0] or not _promote.is_operand(a)
            or not _promote.is_operand(b)):
        return None
    return bind(dot_general_p, a, b, dimension_numbers=dnums, precision=None,
                preferred_element_type=None)


def _check_pair_sizes(name, sa, sb, axes_a, axes_b):
    for i, j in zip(axes_a, axes_b, strict=True):
        if sa[i] != sb[j]:
            raise errors.ShapeError(f"{name}: axis {i} of a {sa} (size {sa[i]}) and axis {j} of "
                                    f"b {sb} (size {sb[j]}) must have equal sizes")


def _product(name, a, b, axes_a, axes_b, precision, preferred_element_type):
    """Contract axes_a of a with axes_b of b; the result holds a's free axes, then b's."""
    sa, sb = _shape(a), _shape(b)
    _check_pair_sizes(name, sa, sb, axes_a, axes_b)
    la = [("a", i) for i in range(len(sa))]
    lb = [("b", j) for j in range(len(sb))]
    for i, j in zip(axes_a, axes_b, strict=True):
        lb[j] = la[i]
    out = [lab for i, lab in enumerate(la) if i not in axes_a] + [
        lab for j, lab in enumerate(lb) if j not in axes_b]
    return _contract(name, [a, b], [la, lb], out, precision=precision,
                     preferred_element_type=preferred_element_type)


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """NumPy's dot: a scalar operand multiplies; a 1-D `b` contracts with a's last axis; else
    a's last axis contracts with b's second-to-last (dot(a, b)[i, j, k, m] =
    sum(a[i, j, :] * b[k, :, m])). `out_sharding`: as einsum's."""
    sharding = out_sharding_of("dot", out_sharding)
    a, b = _promoted("dot", a, b)
    sa, sb = _shape(a), _shape(b)
    axes = ((), ()) if not sa or not sb else ((len(sa) - 1,), (max(len(sb) - 2, 0),))
    with typed_result("dot_general", sharding):
        out = _product("dot", a, b, *axes, precision, preferred_element_type)
    return with_out_sharding(out, sharding)


def _ravel(x):
    shape = _shape(x)
    return x if len(shape) == 1 else lax.reshape(x, (math.prod(shape),))


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of the flattened arrays, conjugating `a` first (for complex inputs)."""
    a, b = _promoted("vdot", a, b)
    a, b = _ravel(a), _ravel(b)
    if dtypes.is_complex(a.dtype if hasattr(a, "dtype") else np.result_type(a)):
        a = lax.conj(a)
    return _product("vdot", a, b, (0,), (0,), precision, preferred_element_type)


def inner(a, b, *, precision=None, preferred_element_type=None):
    """Sum of products over the last axes of `a` and `b` (a scalar operand multiplies)."""
    a, b = _promoted("inner", a, b)
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        return _product("inner", a, b, (), (), precision, preferred_element_type)
    return _product("inner", a, b, (len(sa) - 1,), (len(sb) - 1,), precision,
                    preferred_element_type)


def outer(a, b, out=None):
    """outer(a, b)[i, j] = a.ravel()[i] * b.ravel()[j]."""
    if out is not None:
        raise NotImplementedError("outer: out= is not supported (yax arrays are immutable)")
    a, b = _promoted("outer", a, b)
    a = _ravel(a) if _shape(a) else lax.reshape(a, (1,))
    b = _ravel(b) if _shape(b) else lax.reshape(b, (1,))
    return _product("outer", a, b, (), (), None, None)


def _tensordot_axes(axes, na: int, nb: int):
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(na, nb):
            raise ValueError(f"tensordot: axes={n} must be between 0 and min(a.ndim, b.ndim)="
                             f"{min(na, nb)}")
        return tuple(range(na - n, na)), tuple(range(n))
    try:
        ax_a, ax_b = axes
    except (TypeError, ValueError):
        raise TypeError(f"tensordot: axes must be an int or a pair of sequences, got "
                        f"{axes!r}") from None
    ax_a = (ax_a,) if isinstance(ax_a, (int, np.integer)) else tuple(ax_a)
    ax_b = (ax_b,) if isinstance(ax_b, (int, np.integer)) else tuple(ax_b)
    if len(ax_a) != len(ax_b):
        raise ValueError(f"tensordot: axes {ax_a} and {ax_b} differ in length")
    for ax, n in ((ax_a, na), (ax_b, nb)):
        if any(not -n <= int(i) < n for i in ax):
            raise errors.ShapeError(f"tensordot: axes {ax} out of range for rank {n}")
    return tuple(int(i) % na for i in ax_a), tuple(int(i) % nb for i in ax_b)


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """Contract `axes` of a with those of b: an int N takes a's last N and b's first N axes; a
    pair of sequences names them. The result holds a's free axes, then b's.

    Example: tensordot(a, b, axes=([1, 0], [0, 1])) for a (3, 4) and b (4, 3) is a scalar.
    """
    a, b = _promoted("tensordot", a, b)
    ax_a, ax_b = _tensordot_axes(axes, len(_shape(a)), len(_shape(b)))
    return _product("tensordot", a, b, ax_a, ax_b, precision, preferred_element_type)


def einsum_path(subscripts, *operands, optimize="greedy"):
    """NumPy's contraction order for `einsum` (computed from the operands' shapes only):
    returns (path, description) as np.einsum_path."""
    dummies = [np.zeros(np.shape(x), dtype=np.float32) for x in operands]
    return np.einsum_path(subscripts, *dummies, optimize=optimize)
