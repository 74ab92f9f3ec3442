"""`lax`: the yax.lax API, for writing differentiation and batching rules.

Rules are written with other primitives, and the clearest way to write them is with the lax
wrappers (as JAX's own rules are). yax.lax sits above this layer, so it is reached lazily: the
module is only looked up when a rule runs, by which time everything is imported.
"""

from __future__ import annotations

import importlib


class _LazyLax:
    __slots__ = ("_module",)

    def __init__(self):
        self._module = None

    def __getattr__(self, name):
        module = self._module
        if module is None:
            module = self._module = importlib.import_module("yax.lax")
        return getattr(module, name)


lax = _LazyLax()
