"""Mutable array references staged as values of type `Ref{f32[3]}` (make_jaxpr), with jax's
equations:

    b:Ref{f32[]} = new_ref[kind=None memory_space=None] a
    c:f32[] <- b[1]                    get
    d:f32[], b[0] <- b[0], c           swap (`b[0] <- c` when the old value is unused)
    b[...] += d                        addupdate
    e:f32[] = freeze b

Only a trace that stages Refs (`StagingTrace.stages_refs`, make_jaxpr's) records these; every
other trace threads a Ref's value through the program instead (yax/interpreters/ref_state.py),
so the primitives need no lowering, differentiation or batching rules: a staged program is
evaluated (eagerly or under a transformation) by replaying it on Ref objects, whose operations
are yax.ref's. Their `impl` rules therefore call yax.ref's functions (which index with
yax.numpy, floors above this one), which yax.ref lists in `ref_state.box_ops`.

An indexer is kept as params (ints, slices, Ellipsis, None) plus operands (integer arrays):
`idx` holds one entry per position, ("i", 3), ("s", start, stop, step), ("e",), ("n",) or
("a", k) for the k-th index operand.
"""

from __future__ import annotations

import numpy as np

from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.core.trace import Tracer, bind
from yax.interpreters import ref_state
from yax.interpreters.ref_state import AbstractRef
from yax.runtime.array import Array


def encode(idx) -> tuple[tuple, list]:
    """(hashable description, index operands) of a NumPy indexer."""
    entries, operands = [], []
    for x in idx if type(idx) is tuple else (idx,):
        if x is Ellipsis:
            entries.append(("e",))
        elif x is None:
            entries.append(("n",))
        elif isinstance(x, slice) and all(v is None or type(v) is int
                                          for v in (x.start, x.stop, x.step)):
            entries.append(("s", x.start, x.stop, x.step))
        elif type(x) is int or isinstance(x, np.integer):
            entries.append(("i", int(x)))
        else:
            entries.append(("a", len(operands)))
            operands.append(x)
    return tuple(entries), operands


def decode(entries, operands) -> tuple:
    out = []
    for e in entries:
        kind = e[0]
        out.append(Ellipsis if kind == "e" else None if kind == "n" else
                   slice(*e[1:]) if kind == "s" else e[1] if kind == "i" else operands[e[1]])
    return tuple(out)


def indexed_shape(shape, entries, operand_avals) -> tuple:
    """The shape of `x[idx]` for an `x` of `shape` (NumPy's rules, on a zero-stride view)."""
    probe = np.broadcast_to(np.zeros((), bool), shape)
    index = decode(entries, [np.zeros(a.shape, np.intp) for a in operand_avals])
    return probe[index].shape


def _index_text(eqn, name, entries) -> str:
    ops = eqn.inputs[1:1 + sum(e[0] == "a" for e in entries)]
    parts = []
    for e in entries:
        kind = e[0]
        if kind == "s":
            start, stop, step = ("" if v is None else str(v) for v in e[1:])
            parts.append(f"{start}:{stop}" + (f":{step}" if step else ""))
        else:
            parts.append("..." if kind == "e" else "None" if kind == "n" else
                         str(e[1]) if kind == "i" else name(ops[e[1]]))
    return ",".join(parts) or "..."


# --- the primitives ----------------------------------------------------------------------------

def _new_ref_abstract_eval(x, *, kind, memory_space):
    return AbstractRef(ShapedArray(x.shape, x.dtype, x.weak_type))


def _new_ref_impl(x, *, kind, memory_space):
    return [ref_state.box_ops["new_ref"](x)]


new_ref_p = Primitive("new_ref", abstract_eval=_new_ref_abstract_eval, impl=_new_ref_impl)


def _get_abstract_eval(ref, *index_avals, idx):
    shape = indexed_shape(ref.shape, idx, index_avals)
    return ShapedArray(shape, ref.dtype, ref.inner_aval.weak_type)


def _binder(v, name, used) -> str:
    return f"{name(v) if v in used else '_'}:{v.aval.str_short()}"


def _get_pp(eqn, name, used) -> str:
    return (f"{_binder(eqn.outvars[0], name, used)} <- {name(eqn.inputs[0])}"
            f"[{_index_text(eqn, name, eqn.params['idx'])}]")


def _get_impl(ref, *operands, idx):
    return [ref_state.box_ops["get"](ref, decode(idx, operands))]


get_p = Primitive("get", abstract_eval=_get_abstract_eval, impl=_get_impl)
get_p.pp_eqn = _get_pp


def _swap_abstract_eval(ref, *avals, idx):
    return ShapedArray(indexed_shape(ref.shape, idx, avals[:-1]), ref.dtype)


def _swap_pp(eqn, name, used) -> str:
    target = f"{name(eqn.inputs[0])}[{_index_text(eqn, name, eqn.params['idx'])}]"
    if eqn.outvars[0] not in used:
        return f"{target} <- {name(eqn.inputs[-1])}"
    return f"{_binder(eqn.outvars[0], name, used)}, {target} <- {target}, {name(eqn.inputs[-1])}"


def _swap_impl(ref, *operands, idx):
    return [ref_state.box_ops["swap"](ref, decode(idx, operands[:-1]), operands[-1])]


swap_p = Primitive("swap", abstract_eval=_swap_abstract_eval, impl=_swap_impl)
swap_p.pp_eqn = _swap_pp
swap_p.has_effect = lambda params: True  # kept by dead-code elimination


def _addupdate_pp(eqn, name, used) -> str:
    return (f"{name(eqn.inputs[0])}[{_index_text(eqn, name, eqn.params['idx'])}] += "
            f"{name(eqn.inputs[-1])}")


def _addupdate_impl(ref, *operands, idx):
    ref_state.box_ops["addupdate"](ref, decode(idx, operands[:-1]), operands[-1])
    return []


addupdate_p = Primitive("addupdate", multiple_results=True,
                        abstract_eval=lambda ref, *avals, idx: [], impl=_addupdate_impl)
addupdate_p.pp_eqn = _addupdate_pp
addupdate_p.has_effect = lambda params: True


freeze_p = Primitive("freeze", abstract_eval=lambda ref: ShapedArray(ref.shape, ref.dtype),
                     impl=lambda ref: [ref_state.box_ops["freeze"](ref)])


# --- what yax.ref and ref_state call in a trace that stages Refs ------------------------------

class Staged:
    """The staged operations yax.ref and ref_state call in a trace that stages Refs."""

    @staticmethod
    def new_ref(value):
        return bind(new_ref_p, value, kind=None, memory_space=None)

    @staticmethod
    def get(ref_tracer, idx):
        entries, operands = encode(idx)
        return bind(get_p, ref_tracer, *operands, idx=entries)

    @staticmethod
    def swap(ref_tracer, idx, value):
        entries, operands = encode(idx)
        return bind(swap_p, ref_tracer, *operands, value, idx=entries)

    @staticmethod
    def addupdate(ref_tracer, idx, value):
        entries, operands = encode(idx)
        bind(addupdate_p, ref_tracer, *operands, value, idx=entries)

    @staticmethod
    def freeze(ref_tracer):
        return bind(freeze_p, ref_tracer)

    @staticmethod
    def expected_shape(ref, idx) -> tuple:
        entries, operands = encode(idx)
        avals = [x.aval if isinstance(x, (Array, Tracer)) else ShapedArray(np.shape(x), np.intp)
                 for x in operands]
        return indexed_shape(ref.shape, entries, avals)


ref_state.staged_ops = Staged
