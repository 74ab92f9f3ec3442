"""`lax`: the yax.lax API, for writing differentiation and batching rules.

Rules are written with other primitives, and the clearest way to write them is with the lax
wrappers (as JAX's own rules are). yax.lax sits above this layer, so it is reached lazily: the
module is only looked up when a rule runs, by which time everything is imported.
"""

from __future__ import annotations

import importlib


class _LazyLax:
    __slots__ = ()

    def __getattr__(self, name):
        return getattr(importlib.import_module("yax.lax_like"), name)


lax = _LazyLax()
