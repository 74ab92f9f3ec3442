"""`Traced` and `ArgInfo`: the first stage of a jitted function, as `jax.stages`.

`jit(f).trace(*args)` traces `f` for the arguments' types without lowering or compiling:

    traced = yax.jit(f).trace(x, y)
    traced.jaxpr        # the closed jaxpr (constants bound)
    traced.out_info     # the outputs' ShapeDtypeStructs, in the output pytree
    traced.args_info    # one ArgInfo (shape, dtype, donated) per array argument
    traced.lower()      # the next stage: a Lowered (`.as_text()`, `.compile()`)

The trace is the jitted function's own cache entry, so lowering and calling it later reuse it.
"""

from __future__ import annotations

from dataclasses import dataclass

from yax import tree_util
from yax.core.ir import ClosedJaxpr, Jaxpr
from yax.primitives.callbacks import ShapeDtypeStruct
from yax.runtime import backend


@dataclass(frozen=True, slots=True)
class ArgInfo:
    """One array argument of a traced or lowered function: its aval and whether it is donated.

    Example:
      >>> info = yax.jit(f, donate_argnums=0).trace(x).args_info[0][0]
      >>> info.shape, info.dtype, info.donated
      ((3,), dtype('float32'), True)
    """

    _aval: object
    donated: bool

    @property
    def shape(self):
        return self._aval.shape

    @property
    def dtype(self):
        return self._aval.dtype


class Traced:
    """A jitted function traced for one argument signature (see the module docstring).

    Attributes: `jaxpr`, `fun_name`, `in_tree` (of the pair (positional, keyword) dynamic
    arguments), `in_avals` and `args_info` (pytrees like the arguments), `out_tree`,
    `out_avals` and `out_info` (pytrees like the outputs), `donate_argnums` (flat indices).
    """

    def __init__(self, fun_name: str, entry, in_tree, in_avals, lower):
        self.fun_name = fun_name
        self.in_tree = in_tree
        self._entry, self._flat_in_avals, self._lower = entry, tuple(in_avals), lower

    @property
    def jaxpr(self) -> ClosedJaxpr:
        """The program with its constants bound (the cache entry keeps them as its leading
        parameters)."""
        entry = self._entry
        n = len(entry.consts)
        inner = entry.jaxpr.jaxpr
        if not n:
            return entry.jaxpr
        return ClosedJaxpr(Jaxpr(list(inner.constvars) + inner.invars[:n], inner.invars[n:],
                                 inner.eqns, inner.outvars),
                           list(entry.jaxpr.consts) + list(entry.consts))

    @property
    def in_avals(self):
        return tree_util.tree_unflatten(self.in_tree, list(self._flat_in_avals))

    @property
    def donate_argnums(self) -> tuple:
        return tuple(sorted(self._entry.donated))

    @property
    def args_info(self):
        donated = set(self._entry.donated)
        return tree_util.tree_unflatten(self.in_tree, [
            ArgInfo(a, i in donated) for i, a in enumerate(self._flat_in_avals)])

    @property
    def out_tree(self):
        return self._entry.out_tree

    @property
    def out_avals(self):
        return tree_util.tree_unflatten(self._entry.out_tree, list(self._entry.out_avals))

    @property
    def out_info(self):
        return tree_util.tree_unflatten(self._entry.out_tree, [
            ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
            for a in self._entry.out_avals])

    def lower(self, *, lowering_platforms=None):
        """The next stage: a `Lowered` of this trace, for the platform yax runs on."""
        here = backend.platform()
        if lowering_platforms is not None and tuple(lowering_platforms) not in ((here,),):
            raise ValueError(f"Traced.lower(lowering_platforms={lowering_platforms!r}): yax "
                             f"lowers jitted functions for the platform it runs on, {here!r}; "
                             f"use yax.export.export(..., platforms=...) for others")
        return self._lower()

    def __repr__(self):
        ins = ", ".join(a.str_short() for a in self._flat_in_avals)
        return f"Traced({self.fun_name}: ({ins}))"
