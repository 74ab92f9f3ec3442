"""`debug.check_consistency`: does a function give the same results eagerly and under `jit`?

Beyond JAX. It runs `f` eagerly twice and under `jit` twice, plus `grad` and `vmap` where they
apply, compares every output leaf within tolerance, and explains the usual porting bugs:
  * a Python side effect that runs only when jit traces (a counter, a list append, an in-place
    update of a captured NumPy array): eager results change from call to call, jit's do not;
  * reliance on concrete values (`if x > 0:` on a traced value): jit fails, eager works;
  * a numerical difference: the first primitive whose eager and compiled values diverge is named
    (with the user's line), found by comparing every intermediate value.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from yax import errors, tree_util
from yax.core.ir import Jaxpr
from yax.interpreters.eval_jaxpr import eval_jaxpr
from yax.transforms.ad import grad
from yax.transforms.jit import jit
from yax.transforms.make_jaxpr import make_jaxpr
from yax.transforms.vmap import vmap


class LeafResult(NamedTuple):
    path: str
    ok: bool
    max_abs_diff: float
    max_rel_diff: float


class ConsistencyReport:
    """What `check_consistency` found: `ok`, per-leaf `leaves` (eager vs jit), `problems`
    (one sentence each), `first_divergence` (the primitive and line, or None)."""

    def __init__(self, name: str):
        self.name = name
        self.leaves: list[LeafResult] = []
        self.problems: list[str] = []
        self.first_divergence: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def raise_if_failed(self) -> ConsistencyReport:
        if not self.ok:
            raise errors.ConsistencyError(str(self))
        return self

    def __str__(self):
        lines = [f"consistency of {self.name}: {'OK' if self.ok else 'PROBLEMS FOUND'}"]
        for leaf in self.leaves:
            mark = "ok  " if leaf.ok else "DIFF"
            lines.append(f"  {mark} output{leaf.path}: max |eager - jit| = {leaf.max_abs_diff:.3g}"
                         f" (relative {leaf.max_rel_diff:.3g})")
        lines += [f"  - {p}" for p in self.problems]
        if self.first_divergence:
            lines.append(f"  first divergence: {self.first_divergence}")
        return "\n".join(lines)

    __repr__ = __str__


def _tolerances(leaves, rtol, atol):
    wide = any(np.asarray(x).dtype in (np.float64, np.complex128) for x in leaves)
    return (rtol if rtol is not None else (1e-10 if wide else 1e-5),
            atol if atol is not None else (1e-12 if wide else 1e-6))


def _diff(a, b) -> tuple[float, float]:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return float("inf"), float("inf")
    if a.size == 0:
        return 0.0, 0.0
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        d = np.abs(a.astype(np.int64) - b.astype(np.int64))
        return float(d.max()), float(d.max())
    a, b = a.astype(np.complex128 if "c" in (a.dtype.kind, b.dtype.kind) else np.float64), \
        b.astype(np.complex128 if "c" in (a.dtype.kind, b.dtype.kind) else np.float64)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    d = np.where(same, 0.0, np.abs(a - b))
    rel = d / np.maximum(np.abs(b), 1e-300)
    return float(np.nanmax(d)), float(np.nanmax(np.where(same, 0.0, rel)))


def _agree(a, b, rtol, atol) -> bool:
    abs_d, _ = _diff(a, b)
    if not np.isfinite(abs_d):
        return False
    b = np.asarray(b)
    bound = atol + rtol * (float(np.max(np.abs(b))) if b.size and b.dtype.kind in "fc" else 0.0)
    return abs_d <= bound


def _flat(out):
    paths_leaves, _ = tree_util.tree_flatten_with_path(out)
    return [(tree_util.keystr(p), np.asarray(x)) for p, x in paths_leaves]


def _run(report, what: str, fun, args):
    try:
        return _flat(fun(*args))
    except errors.ConcretizationError as e:
        report.problems.append(f"{what} fails: the function relies on concrete values of traced "
                               f"arguments ({e.bare_message.splitlines()[0]})")
    except Exception as e:  # report any failure, do not hide it
        report.problems.append(f"{what} fails: {type(e).__name__}: {str(e).splitlines()[0]}")
    return None


def check_consistency(f, *args, rtol=None, atol=None, check_grad: bool = True,
                      check_vmap: bool = True) -> ConsistencyReport:
    """Run `f(*args)` eagerly and under `jit` (and its `grad`/`vmap` where they apply) and report
    whether the results agree.

    Args:
      f: a function of arrays.
      *args: example arguments.
      rtol, atol: tolerances (default 1e-5/1e-6 in 32-bit, 1e-10/1e-12 in 64-bit).
      check_grad: also compare `grad(f)` eagerly and under jit when f returns one real scalar.
      check_vmap: also compare `vmap(f)` over two stacked copies of the arguments with `f`.

    Returns:
      A ConsistencyReport (`print` it; `.ok`; `.raise_if_failed()`).

    Example:
      >>> print(yax.debug.check_consistency(lambda x: jnp.sin(x) * 2, jnp.ones(3)))
      consistency of <lambda>: OK
        ok   output: max |eager - jit| = 0 (relative 0)
    """
    name = getattr(f, "__name__", "function")
    report = ConsistencyReport(name)
    eager1 = _run(report, "eager evaluation", f, args)
    jitted = jit(f)
    jit1 = _run(report, "jit", jitted, args)
    eager2 = _run(report, "eager evaluation (second call)", f, args)
    jit2 = _run(report, "jit (second call)", jitted, args) if jit1 is not None else None
    if eager1 is None or jit1 is None:
        return report
    rtol, atol = _tolerances([x for _, x in eager1], rtol, atol)
    _compare_leaves(report, eager1, jit1, rtol, atol)
    _explain_state(report, eager1, eager2, jit1, jit2, rtol, atol)
    if any(not leaf.ok for leaf in report.leaves) and eager2 is not None and _same(
            eager1, eager2, rtol, atol):
        report.first_divergence = first_divergence(f, args, rtol, atol)
    if check_grad and len(eager1) == 1 and eager1[0][1].shape == () and \
            eager1[0][1].dtype.kind == "f":
        _compare_transformed(report, "grad", grad(f), args, rtol, atol)
    if check_vmap:
        _check_vmap(report, vmap(f), args, eager1, rtol, atol)
    return report


def _same(a, b, rtol, atol) -> bool:
    return len(a) == len(b) and all(_agree(x, y, rtol, atol) for (_, x), (_, y) in zip(a, b))


def _compare_leaves(report, eager, compiled, rtol, atol) -> None:
    if len(eager) != len(compiled):
        report.problems.append(f"eager returns {len(eager)} leaves, jit {len(compiled)}")
        return
    for (path, e), (_, c) in zip(eager, compiled):
        abs_d, rel_d = _diff(c, e)
        ok = _agree(c, e, rtol, atol)
        report.leaves.append(LeafResult(path, ok, abs_d, rel_d))
        if not ok:
            report.problems.append(f"output{path}: eager and jit differ (max abs {abs_d:.3g})")


def _explain_state(report, eager1, eager2, jit1, jit2, rtol, atol) -> None:
    if eager2 is None or jit2 is None:
        return
    eager_changes = not _same(eager1, eager2, rtol, atol)
    jit_changes = not _same(jit1, jit2, rtol, atol)
    if eager_changes and not jit_changes:
        report.problems.append(
            "eager results change from call to call but jit's do not: a Python side effect "
            "(a counter, a list, an in-place update of a captured NumPy array) runs only when "
            "jit traces. Pass such state as an argument and return its new value.")
    elif eager_changes:
        report.problems.append("results change from call to call (eager and jit): the function "
                               "depends on state outside its arguments")


def _compare_transformed(report, what, fun, args, rtol, atol) -> None:
    eager = _run(report, f"{what} (eager)", fun, args)
    compiled = _run(report, f"{what} under jit", jit(fun), args)
    if eager is not None and compiled is not None and not _same(eager, compiled, rtol, atol):
        worst = max(_diff(c, e)[0] for (_, e), (_, c) in zip(eager, compiled))
        report.problems.append(f"{what}: eager and jit differ (max abs {worst:.3g})")


def _check_vmap(report, batched, args, eager1, rtol, atol) -> None:
    leaves, tree = tree_util.tree_flatten(args)
    if not leaves:
        return
    stacked = tree_util.tree_unflatten(tree, [np.stack([np.asarray(x)] * 2) for x in leaves])
    out = _run(report, "vmap", batched, stacked)
    if out is None:
        return
    for (path, b), (_, e) in zip(out, eager1):
        if b.shape[:1] != (2,) or not (_agree(b[0], e, rtol, atol) and _agree(b[1], e, rtol,
                                                                              atol)):
            report.problems.append(f"vmap: output{path} of the batched function differs from "
                                   f"the function applied to each example")


def first_divergence(f, args, rtol=1e-5, atol=1e-6) -> str | None:
    """The first primitive of `f`'s program whose eager value differs from its value in the
    compiled program (every intermediate compared in program order), with its source line."""
    leaves = tree_util.tree_leaves(args)
    closed = make_jaxpr(lambda *xs: f(*tree_util.tree_unflatten(
        tree_util.tree_structure(args), xs)))(*leaves)
    jaxpr = closed.jaxpr
    probes = [v for e in jaxpr.eqns for v in e.outvars]

    def all_values(*xs):
        return eval_jaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.eqns, probes),
                          closed.consts, list(xs))
    eager = all_values(*leaves)
    compiled = jit(all_values)(*leaves)
    owner = {v: e for e in jaxpr.eqns for v in e.outvars}
    for v, a, b in zip(probes, eager, compiled):
        if not _agree(np.asarray(b), np.asarray(a), rtol, atol):
            eqn = owner[v]
            where = f" at {eqn.source}" if eqn.source else ""
            return f"{eqn.primitive.name}{where} (max abs {_diff(b, a)[0]:.3g})"
    return None
