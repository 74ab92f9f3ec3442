"""Compile this when eager: one compiled program per static configuration of a function.

A routine made of several primitives (a linear-algebra solve, a random sampler, a shard_map)
applied eagerly would compile and run each primitive on its own. `CompiledVariants` keeps, per
static configuration (shapes and flags the caller folds into a key), one compiled callable made
by `compile_fun`: `yax.jit` for the libraries above the transformations, or `compile_eager` (here,
below them) for the primitives' own eager rules. Variants live in one bounded cache that
`yax.clear_caches()` empties.
"""

from __future__ import annotations

from yax.compile import cache
from yax.compile.run import run_closed_jaxpr
from yax.config import config
from yax.interpreters.staging import closure_convert, trace_to_jaxpr
from yax.runtime.array import Array
from yax.runtime.values import to_array


class CompiledVariants:
    """Per static key, `compile_fun(make_fun())`, made once (also when threads race)."""

    def __init__(self, name: str, compile_fun=None):
        self._variants = cache.new_cache(f"compiled variants of {name}")
        self._compile = compile_fun or compile_eager

    def get(self, key):
        """The compiled variant under `key`, or None."""
        return self._variants.get(key)

    def get_or_make(self, key, make_fun):
        """The compiled variant under `key`, compiling `make_fun()` on the first call."""
        return self._variants.get_or_make(key, lambda: self._compile(make_fun()))

    def put(self, key, compiled) -> None:
        self._variants.put(key, compiled)

    def __len__(self):
        return len(self._variants)

    def values(self) -> list:
        return self._variants.values()


_traced = cache.new_cache("eagerly compiled traces")


def compile_eager(fun):
    """`fun` (Arrays in, a flat list of Arrays out) as a callable that traces it once per
    argument signature and runs the compiled program (on several devices when its inputs or
    its equations' meshes say so). For concrete Arrays only: no transformation may be active."""
    name = getattr(fun, "__name__", "fun")

    def compiled(*arrays: Array) -> list:
        avals = tuple([a.aval for a in arrays])
        key = (fun, avals, config.trace_state())
        converted, consts = _traced.get_or_make(
            key, lambda: closure_convert(trace_to_jaxpr(fun, list(avals), name=name)))
        return run_closed_jaxpr(converted, [to_array(c) for c in consts] + list(arrays))
    compiled.__name__ = name
    return compiled
