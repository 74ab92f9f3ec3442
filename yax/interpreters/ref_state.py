"""Mutable array references (`yax.new_ref`): where a `Ref`'s current value lives.

A `Ref` is a box holding a value of the trace it was created in (its *home*): a concrete Array
at the top level, a tracer inside a transformation. Reading and writing it threads that value
through the program as it is traced, so a Ref that stays inside one transformation is state
discharged at trace time: jit, grad and vmap see only ordinary values.

A Ref used across a transformation boundary is threaded explicitly:
  - a staging trace whose caller knows how to thread refs (jit, make_jaxpr, the bodies of
    scan, cond and while_loop; `allow_refs`, `enter_body`)
    *captures* an outer Ref on first use: it gets a new input of the Ref's type, later reads and
    writes inside the trace use that input's current value, and the caller passes the Ref's
    value in and writes the final value (`captured_values`) back after the call;
  - refs passed as arguments to jit or vmap become inputs and extra outputs the same way
    (`thread_ref_args`);
  - a write from a transformation that does not own the Ref (a vmapped or differentiated value
    into an outer Ref) is an error, as in JAX: the outer Ref could not hold it.
The indexing operations (`ref[idx]`, `ref[idx] = v`, `ref[idx] += v`) are yax.ref's, on top.
"""

from __future__ import annotations

from yax import errors
from yax.core.avals import ShapedArray, aval_of_value
from yax.core.trace import Tracer, current_trace, is_eager
from yax.interpreters.batching import BatchTrace
from yax.interpreters.staging import StagingTrace, StagingTracer


class AbstractRef:
    """The type of a `Ref`: `Ref{float32[3]}` (its inner array type is `inner_aval`)."""

    __slots__ = ("inner_aval",)

    def __init__(self, inner_aval: ShapedArray):
        self.inner_aval = inner_aval

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    ndim = property(lambda self: self.inner_aval.ndim)
    size = property(lambda self: self.inner_aval.size)
    weak_type = property(lambda self: self.inner_aval.weak_type)

    def __eq__(self, other):
        return type(other) is AbstractRef and self.inner_aval == other.inner_aval

    def __hash__(self):
        return hash(("Ref", self.inner_aval))

    def str_short(self) -> str:
        return f"Ref{{{self.inner_aval.str_short()}}}"

    def __str__(self):
        a = self.inner_aval
        return f"Ref{{{a.dtype.name}[{','.join(str(d) for d in a.shape)}]}}"

    __repr__ = __str__


class Ref:
    """A mutable array reference: `yax.new_ref(init)`. Read and write it by indexing
    (`ref[...]`, `ref[0] = v`, `ref[1:] += v`); see yax.ref."""

    __slots__ = ("_value", "_home", "_aval", "_where", "__weakref__")
    passes_as_operand = True  # eagerly, the staged Ref equations receive the Ref itself

    def __init__(self, value, home, where=None):
        self._value = value
        self._home = home
        aval = aval_of_value(value)
        aval = getattr(aval, "inner_aval", aval)  # a staged Ref's value is of type Ref{...}
        self._aval = ShapedArray(aval.shape, aval.dtype)
        self._where = where  # (file, line, function) of its creation, for error messages

    # no `aval`: what has one passes for an array operand inside yax
    ref_type = property(lambda self: AbstractRef(self._aval))
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: self._aval.ndim)
    size = property(lambda self: self._aval.size)

    def typeof(self) -> AbstractRef:  # what yax.typeof answers
        return AbstractRef(self._aval)

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"a mutable array reference {self.ref_type} is not an array: read its "
                        f"value first, e.g. `jnp.sin(ref[...])` instead of `jnp.sin(ref)`")

    def __len__(self):
        if not self._aval.shape:
            raise TypeError("len() of unsized object")
        return self._aval.shape[0]

    def __iter__(self):
        raise TypeError("'Ref' object is not iterable; read it first: `ref[...]`")

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


def new_box(value) -> Ref:
    """A new Ref holding `value`, at home in the current trace."""
    if isinstance(value, Ref):
        raise errors.RefError("new_ref: a Ref cannot hold a Ref (no higher-order refs); "
                              "pass `ref[...]` to copy its value")
    return Ref(value, current_trace(), errors.user_location())


# --- where the value is, from the current trace ----------------------------------------------

def _binding(ref: Ref, writing: bool = False):
    """The trace whose copy of `ref`'s value the current code reads and writes: the Ref's home,
    or the innermost staging trace that captured it (capturing it now if it can). A staging
    trace that cannot capture Refs is looked through for reads (the value is a constant of its
    program); a write through one that runs its program later (a cond branch) is an error."""
    home = ref._home
    if not home.alive:
        raise errors.RefError(
            f"a Ref {ref.ref_type} created inside a transformation that has finished was used "
            f"after it; return its value (`ref[...]`) instead of the Ref")
    t = current_trace()
    chain = []
    while t is not home:
        if t is None:
            raise errors.RefError(
                f"a Ref {ref.ref_type} created inside a transformation was used outside of it; "
                f"return its value (`ref[...]`) instead of the Ref")
        values = getattr(t, "ref_values", None)
        if values is not None and id(ref) in values:
            found = t
            break
        chain.append(t)
        t = t.parent
    else:
        found = home
    for i, t in enumerate(chain):  # innermost first
        if isinstance(t, StagingTrace) and t.ref_values is not None:
            found = _capture(t, ref)
            chain = chain[:i]
            break
    if writing:
        for t in chain:
            if isinstance(t, StagingTrace) and t.defers:
                raise errors.RefError(
                    f"a Ref {ref.ref_type} is written inside a function traced into a "
                    f"program (by a {t.name} transformation) that yax cannot thread Refs "
                    f"through (jit, scan, cond, while_loop and vmap can; checkpoint and "
                    f"shard_map cannot yet); return the new value from it and write the Ref "
                    f"outside")
    return found


def _capture(trace: StagingTrace, ref: Ref):
    if trace.stages_refs:  # a constant of type Ref{...}, as jax shows a closed-over Ref
        tracer = StagingTracer(trace, trace._const_var(ref, AbstractRef(ref._aval)))
    else:
        tracer = trace.new_arg(ref._aval)
    trace.ref_values[id(ref)] = trace.ref_inputs[id(ref)] = tracer
    trace.ref_order.append(ref)
    return trace


# The equations of Refs staged as values of type Ref{...} (`stages_refs`), set by yax.ref:
# `get(ref_tracer, idx)`, `swap(ref_tracer, idx, value)`, `addupdate(...)`, `freeze(...)`.
staged_ops = None
# The operations on Ref objects by name (new_ref, get, swap, addupdate, freeze), set by yax.ref:
# what a staged program's Ref equations do when it is evaluated.
box_ops: dict = {}


def staged(ref: Ref, writing: bool = False):
    """The Ref-typed tracer standing for `ref` when the trace whose copy the current code uses
    stages Refs (make_jaxpr), else None."""
    b = _binding(ref, writing)
    if not getattr(b, "stages_refs", False):
        return None
    return ref._value if b is ref._home else b.ref_values[id(ref)]


def stages_here() -> bool:
    return getattr(current_trace(), "stages_refs", False)


def read(ref: Ref):
    """The current value of `ref` as seen from the current trace."""
    b = _binding(ref)
    value = ref._value if b is ref._home else b.ref_values[id(ref)]
    if getattr(b, "stages_refs", False):
        return staged_ops.get(value, ())
    return value


def write(ref: Ref, value, op: str = "set/swap") -> None:
    """Make `value` (already of the Ref's shape and dtype) the current value of `ref`."""
    b = _binding(ref, writing=True)
    if getattr(b, "stages_refs", False):
        staged_ops.swap(ref._value if b is ref._home else b.ref_values[id(ref)], (), value)
        return
    while isinstance(value, Tracer) and value._trace.level > b.level:
        lowered = value._trace.lower_value(value)
        if lowered is None:
            _raise_foreign_write(ref, value._trace, b, op)
        value = lowered
    if b is ref._home:
        ref._value = value
    else:
        b.ref_values[id(ref)] = value


def _raise_foreign_write(ref: Ref, trace, binding, op: str):
    t = trace
    while t is not None and t.level > binding.level:
        if isinstance(t, BatchTrace):
            raise errors.RefTransformError(
                f"performing a {op} operation with vmapped value on an unbatched array "
                f"reference of type {ref.ref_type}. Move the array reference to be an argument to "
                f"the vmapped function?")
        t = t.parent
    if "differentiation" in trace.name or "lineariz" in trace.name or "grad" in trace.name:
        raise errors.RefTransformError(
            f"performing a {op} operation with a differentiated value on a non-differentiated "
            f"array reference of type {ref.ref_type}. Move the array reference to be an argument "
            f"of the differentiated function?")
    raise errors.RefTransformError(
        f"performing a {op} operation with a value of a {trace.name} transformation on an "
        f"array reference of type {ref.ref_type} from outside it. Move the array reference to be "
        f"an argument of the transformed function?")


# --- threading refs through a staged program -------------------------------------------------

def allow_refs(trace: StagingTrace, stage: bool = False) -> None:
    """Let `trace` capture the outer Refs its function uses (its caller threads them; with
    `stage`, they are staged as constants of type Ref{...} with get/swap equations)."""
    trace.stages_refs = stage
    trace.ref_values = {}
    trace.ref_inputs = {}
    trace.ref_order = []


def enter_body(refs=()) -> None:
    """At the start of a traced body (a cond branch, a loop body): let the current staging trace
    capture the Refs it uses, capturing `refs` now, in this order (so that bodies traced
    together take the same Refs as the same inputs, right after their own)."""
    trace = current_trace()
    allow_refs(trace)
    for r in refs:
        _capture(trace, r)


def written(trace: StagingTrace) -> list:
    """The Refs the trace captured and wrote."""
    return [r for r in trace.ref_order or () if trace.ref_values[id(r)] is not
            trace.ref_inputs[id(r)]]


def union_of(ref_lists) -> list:
    """The Refs of several bodies, each once, in first-seen order."""
    seen, out = set(), []
    for refs in ref_lists:
        for r in refs:
            if id(r) not in seen:
                seen.add(id(r))
                out.append(r)
    return out


def captured_values(trace: StagingTrace) -> tuple[list, list]:
    """(Refs the trace captured, their final values inside it), in capture order."""
    refs = list(trace.ref_order or ())
    return refs, [trace.ref_values[id(r)] for r in refs]


def box_args(values, is_ref) -> tuple[list, list]:
    """Inside a traced function: fresh Refs at home here for the inputs that were Refs.
    Returns (the arguments to pass, the new Refs)."""
    trace = current_trace()
    out, boxes = [], []
    for v, r in zip(values, is_ref, strict=True):
        if r:
            box = Ref(v, trace)
            boxes.append(box)
            out.append(box)
        else:
            out.append(v)
    return out, boxes


def check_no_duplicates(leaves, fname: str, where: str, transform: str, names=None) -> None:
    """As JAX: one Ref may be passed at most once."""
    seen = {}
    for i, x in enumerate(leaves):
        if isinstance(x, Ref):
            if id(x) in seen:
                a = names[seen[id(x)]] if names else f"argument {seen[id(x)]}"
                b = names[i] if names else f"argument {i}"
                raise errors.RefError(
                    f"only one reference to a mutable array may be passed as an argument to a "
                    f"function, but when tracing {fname} at {where} for {transform} the mutable "
                    f"array reference of type {x.ref_type} appeared at both {a} and {b}.")
            seen[id(x)] = i


def is_eager_ref(ref: Ref) -> bool:
    return is_eager(ref._home)
