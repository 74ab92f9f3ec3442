"""Residual accounting: what reverse mode stores between the forward and the backward pass.

`saved_residuals(f, *args)` linearizes `f` symbolically (nothing runs) and lists each value the
backward pass will read: its shape, dtype, bytes and the user source line that computed it (or
which argument it is). The report ranks source lines by bytes and says, measured by linearizing
`checkpoint(f)` the same way, how much `yax.checkpoint` would store instead; print it with
`residual_report(f, *args)`. `print_saved_residuals(f, *args)` prints jax's own form instead, one
line per residual in jax's order (arguments first, then equations as staged):

    f32[5,4] from the argument W1
    f32[5] output of sin from file.py:3:9 (g)
"""

from __future__ import annotations

import dataclasses
import inspect
import math

import numpy as np

from yax import tree_util
from yax.core.avals import ShapedArray, aval_of_value
from yax.core.trace import current_trace, run_in_trace
from yax.interpreters.partial_eval import linearize_flat
from yax.interpreters.staging import StagingTrace, StagingTracer
from yax.runtime.values import aval_of, canonical_leaf
from yax.transforms.checkpoint import checkpoint

__all__ = ["Residual", "ResidualReport", "saved_residuals", "print_saved_residuals",
           "residual_report"]


@dataclasses.dataclass(frozen=True)
class Residual:
    """One stored value. `source` is "file:line (function)" or "argument <path>"; `primitive`
    names the operation that produced it (None for arguments and captured constants)."""
    shape: tuple
    dtype: np.dtype
    nbytes: int
    source: str
    primitive: str | None
    is_input: bool
    # as jax describes it: the argument's name from f's signature ("W1", "params[0]") or the
    # location "file:line:column (qualified function name)"; `order` sorts as jax lists them
    where: str = ""
    order: tuple = ()
    label: str | None = None  # the checkpoint_name of a `name` equation

    # JAX's saved_residuals returns (aval, description) pairs; a Residual unpacks and indexes
    # like one, so `for aval, desc in saved_residuals(f, x)` runs unchanged
    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(tuple(self.shape), np.dtype(self.dtype))

    @property
    def description(self) -> str:
        """jax's words for where the value comes from (its saved_residuals' second element)."""
        if self.is_input:
            return f"from the argument {self.where}"
        if self.primitive is None:
            return "from a constant"
        if self.label is not None:
            return f"named '{self.label}' from {self.where}"
        return f"output of {self.primitive} from {self.where}"

    def __iter__(self):
        return iter((self.aval, self.description))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index):
        return (self.aval, self.description)[index]

    def describe(self) -> str:
        what = f"{np.dtype(self.dtype).name}{list(self.shape)}"
        made = f" from {self.primitive}" if self.primitive else ""
        return f"{what:<22} {_fmt_bytes(self.nbytes):>10}  {self.source}{made}"


@dataclasses.dataclass
class ResidualReport:
    """The residuals of `f` at given argument types, with totals; `str()` is a ranked report."""
    residuals: list
    checkpointed_bytes: int | None = None  # what `checkpoint(f)` would store

    @property
    def total_bytes(self) -> int:
        return sum(r.nbytes for r in self.residuals)

    def __iter__(self):
        return iter(self.residuals)

    def __len__(self):
        return len(self.residuals)

    def __getitem__(self, index):
        """The index-th residual (a slice gives a list), each unpacking to (aval, description)
        as the pairs of JAX's saved_residuals."""
        return self.residuals[index]

    def by_line(self) -> list[tuple[str, int, int]]:
        """(source, bytes, count) per source line, largest first."""
        totals: dict = {}
        for r in self.residuals:
            b, n = totals.get(r.source, (0, 0))
            totals[r.source] = (b + r.nbytes, n + 1)
        return sorted(((s, b, n) for s, (b, n) in totals.items()), key=lambda t: -t[1])

    def __str__(self) -> str:
        lines = [f"{len(self.residuals)} residuals, {_fmt_bytes(self.total_bytes)} in total",
                 "by source line (largest first):"]
        for source, nbytes, count in self.by_line():
            fate = "keeps" if source.startswith("argument") else "recomputes"
            lines.append(f"  {_fmt_bytes(nbytes):>10}  {count:>3} x  {source}   "
                         f"[checkpoint(f) {fate} these]")
        lines.append("each residual:")
        lines.extend("  " + r.describe() for r in self.residuals)
        if self.checkpointed_bytes is not None:
            lines.append(f"under yax.checkpoint (nothing_saveable) the backward pass would "
                         f"store {_fmt_bytes(self.checkpointed_bytes)} instead of "
                         f"{_fmt_bytes(self.total_bytes)} and recompute the rest")
        return "\n".join(lines)


def saved_residuals(f, *args, compare_checkpoint: bool = True) -> ResidualReport:
    """The values `grad`/`vjp` of `f` at `args` would store for the backward pass.

    Nothing is computed: `f` is traced. Example:
      >>> print(yax.saved_residuals(loss, params, x))
    """
    leaves, in_tree = tree_util.tree_flatten(args)
    avals = [aval_of_value(canonical_leaf(x)) for x in leaves]
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(args)[0]] \
        if hasattr(tree_util, "tree_flatten_with_path") else [f"[{i}]" for i in range(len(avals))]
    names = _arg_names(f, args, paths)
    report = ResidualReport(_residuals(f, in_tree, avals, paths, names))
    if compare_checkpoint:
        report.checkpointed_bytes = ResidualReport(
            _residuals(checkpoint(f), in_tree, avals, paths, names)).total_bytes
    return report


def print_saved_residuals(f, *args) -> None:
    """Print what the backward pass of `f` at `args` stores, as jax's print_saved_residuals
    does: `f32[5,4] from the argument W1`, `f32[5] output of sin from file.py:3:9 (g)`."""
    report = saved_residuals(f, *args, compare_checkpoint=False)
    for r in sorted(report.residuals, key=lambda r: r.order):
        print(f"{r.aval.str_short()} {r.description}")


def residual_report(f, *args) -> ResidualReport:
    """Print yax's ranked report of `saved_residuals(f, *args)` (bytes per source line, each
    residual, and what `checkpoint(f)` would store instead), and return it."""
    report = saved_residuals(f, *args)
    print(report)
    return report


def _arg_names(f, args, paths) -> list[str]:
    """Each argument leaf's name as jax gives it: the parameter of `f`'s signature it binds to,
    followed by its path in the pytree ("params[0]"); `args[i]...` when the signature is
    unknown or does not bind."""
    try:
        bound = inspect.signature(f).bind(*args)
    except (TypeError, ValueError):
        return [f"args{p}" for p in paths]
    names = []
    for name, value in bound.arguments.items():
        if inspect.signature(f).parameters[name].kind is inspect.Parameter.VAR_POSITIONAL:
            value, name = tuple(value), name
        for path, _ in tree_util.tree_flatten_with_path(value)[0]:
            names.append(f"{name}{tree_util.keystr(path)}")
    return names if len(names) == len(paths) else [f"args{p}" for p in paths]


def _residuals(f, in_tree, avals, paths, names) -> list[Residual]:
    trace = StagingTrace(current_trace())
    ins = [trace.new_arg(a) for a in avals]

    def flat(*xs):
        return tree_util.tree_leaves(f(*tree_util.tree_unflatten(in_tree, list(xs))))

    def finish(result):
        _, linear, _ = result
        producer = {v: (i, e) for i, e in enumerate(trace.eqns) for v in e.outvars}
        arg_index = {v: i for i, v in enumerate(trace.invars)}
        return [_describe(c, trace, producer, arg_index, paths, names) for c in linear.consts]
    return run_in_trace(trace, lambda *xs: linearize_flat(flat, list(xs)), ins, finish)


def _describe(value, trace, producer, arg_index, paths, names) -> Residual:
    aval = aval_of(value)
    nbytes = math.prod(aval.shape) * np.dtype(aval.dtype).itemsize
    base = dict(shape=tuple(aval.shape), dtype=np.dtype(aval.dtype), nbytes=nbytes)
    if isinstance(value, StagingTracer) and value._trace is trace:
        var = value._var
        if var in arg_index:
            i = arg_index[var]
            return Residual(**base, source=f"argument {paths[i]}", primitive=None,
                            is_input=True, where=names[i], order=(1, i))
        index, eqn = producer.get(var, (None, None))
        if eqn is not None:
            src = eqn.source
            where = f"{src.filename}:{src.lineno} ({src.function})" if src else "<unknown line>"
            label = eqn.params.get("name") if eqn.primitive.name == "name" else None
            return Residual(**base, source=where, primitive=eqn.primitive.name, is_input=False,
                            where=_jax_location(src), order=(2, index, eqn.outvars.index(var)),
                            label=label)
    return Residual(**base, source="captured constant", primitive=None, is_input=False,
                    order=(0,))


def _jax_location(src) -> str:
    """A location as jax summarises one: "file:line:column (qualified function name)"."""
    if src is None:
        return "unknown"
    column = getattr(src, "column", None)
    function = getattr(src, "qualname", src.function)
    line = f"{src.lineno}:{column}" if column is not None else f"{src.lineno}"
    return f"{src.filename}:{line} ({function})"


def _fmt_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
