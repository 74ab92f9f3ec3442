"""jit with mutable array references (yax.new_ref): refs passed as arguments and refs the
function closes over are threaded through the compiled program.

The traced program takes each such Ref's current value as an input and returns its final value
as an extra output; `RefEntry` reads the values before the call and writes them back after it.
Eagerly the Ref inputs are donated, so XLA updates the Refs' buffers in place (as jax, whose
Refs are always donated). Under another transformation the same happens around the `pjit`.
"""

from __future__ import annotations

from yax import errors, tree_util
from yax.core.trace import bind, current_trace
from yax.interpreters import ref_state
from yax.interpreters.ref_state import AbstractRef, Ref
from yax.interpreters.staging import _flat_arg_names
from yax.primitives.call import pjit_p
from yax.runtime.values import leaf_aval
from yax.transforms.jit_entry import Entry


def leaf_type(x):
    """The cache-key type of a flat jit argument: its aval, or an AbstractRef for a Ref."""
    if isinstance(x, Ref):
        return AbstractRef(x._aval)
    return leaf_aval(x)


def arg_names(fn, in_tree, static_pos, n: int) -> list[str]:
    return [name for name, _ in _flat_arg_names((fn._fun, in_tree, static_pos), n)]


def check_args(fn, leaves, in_tree, static_pos) -> None:
    if any(isinstance(x, Ref) for x in leaves):
        names = arg_names(fn, in_tree, static_pos, len(leaves))
        ref_state.check_no_duplicates(leaves, fn.name, fn.where(), "jit", names)


class RefInfo:
    """What the traced function did with Refs: which flat inputs are Refs, the boxes standing
    for them inside the trace, and the outer Refs it closed over."""

    def __init__(self, is_ref):
        self.is_ref = is_ref
        self.boxes = []
        self.inputs = []
        self.captured = []
        self.written = []  # per Ref (arguments', then captured), whether the function wrote it


def enter(flat_args, avals):
    """Inside the traced function: replace the Ref inputs by Refs at home in the trace."""
    is_ref = [type(a) is AbstractRef for a in avals]
    info = RefInfo(is_ref)
    ref_state.allow_refs(current_trace())
    args, info.boxes = ref_state.box_args(list(flat_args), is_ref)
    info.inputs = [b._value for b in info.boxes]
    return args, info


def leave(fn, info: RefInfo, out_leaves, outer_leaves, in_tree, static_pos) -> list:
    """Inside the traced function, after it returned: the outputs plus the Refs' final values.
    Raises JAX's errors for a returned Ref and for a Ref both passed and closed over."""
    names = None
    for x in out_leaves:
        if isinstance(x, Ref):
            if x in info.boxes:
                names = names or arg_names(fn, in_tree, static_pos, len(info.is_ref))
                k = [i for i, r in enumerate(info.is_ref) if r][info.boxes.index(x)]
                origin = f"was passed in as the argument {names[k]}"
            else:
                where = x._where
                origin = ("was created on line " + (f"{where[0]}:{where[1]} ({where[2]})"
                                                   if where else "<unknown>"))
            raise errors.RefError(
                f"function {fn.name} at {fn.where()} traced for jit returned a mutable array "
                f"reference of type {x.ref_type}, but mutable array references cannot be "
                f"returned.\n\nThe returned mutable array {origin}.")
    trace = current_trace()
    captured, values = ref_state.captured_values(trace)
    passed = {id(x) for x in outer_leaves if isinstance(x, Ref)}
    for r in captured:
        if id(r) in passed:
            names = arg_names(fn, in_tree, static_pos, len(info.is_ref))
            k = next(i for i, x in enumerate(outer_leaves) if x is r)
            raise errors.RefError(
                f"when tracing {fn.name} at {fn.where()} for jit, a mutable array reference of "
                f"type {r.ref_type} was both closed over and passed as the argument {names[k]}")
    info.captured = captured
    finals = [ref_state.read(b) for b in info.boxes] + list(values)
    written_captured = {id(r) for r in ref_state.written(trace)}
    info.written = ([v is not x for v, x in zip(finals, info.inputs)]
                    + [id(r) in written_captured for r in captured])
    # only the Refs it wrote come back (and are donated): the others keep their buffers
    return list(out_leaves) + [v for v, w in zip(finals, info.written) if w]


class RefEntry(Entry):
    """An entry whose program threads Refs: its outputs are (outputs, the Refs' new values)."""

    __slots__ = ("ref_positions", "captured", "real_tree", "written")
    has_refs = True

    def __init__(self, jaxpr, consts, out_tree, donated, placement, info: RefInfo, real_tree):
        self.ref_positions = [i for i, r in enumerate(info.is_ref) if r]
        self.captured = info.captured
        self.real_tree = real_tree
        self.written = info.written
        n = len(info.is_ref)
        positions = self.ref_positions + list(range(n, n + len(self.captured)))
        donated = tuple(sorted(set(donated) | {p for p, w in zip(positions, self.written) if w}))
        super().__init__(jaxpr, consts, out_tree, donated, placement)

    def _inputs(self, leaves):
        leaves = list(leaves)
        refs = [leaves[i] for i in self.ref_positions] + list(self.captured)
        for i in self.ref_positions:
            leaves[i] = ref_state.read(leaves[i])
        return leaves + [ref_state.read(r) for r in self.captured], refs

    def _finish(self, outs, refs):
        real, new_values = outs
        for r, v in zip([r for r, w in zip(refs, self.written) if w], new_values, strict=True):
            ref_state.write(r, v)
        return real

    def run(self, owner, leaves):
        ins, refs = self._inputs(leaves)
        return self._finish(super().run(owner, ins), refs)

    def bind(self, name, leaves):
        """Under a transformation: a `pjit` of the program, the Refs read and written here."""
        ins, refs = self._inputs(leaves)
        outs = bind(pjit_p, *self.consts, *ins, jaxpr=self.jaxpr, name=name)
        return self._finish(tree_util.tree_unflatten(self.out_tree, outs), refs)


def make_entry(converted, consts, out_tree, donated, placement, info: RefInfo) -> Entry:
    """A RefEntry when the traced function used Refs across its boundary, else an Entry."""
    if not any(info.is_ref) and not info.captured:
        return Entry(converted, consts, out_tree, donated, placement)
    n_new = sum(info.written)
    leaf = tree_util.tree_structure(0)
    both = tree_util.treedef_tuple([out_tree, tree_util.treedef_tuple([leaf] * n_new)])
    return RefEntry(converted, consts, both, donated, placement, info, out_tree)
