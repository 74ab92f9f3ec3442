"""Module `__getattr__` for yax's JAX-mirroring namespaces.

A JAX name that yax does not have raises an AttributeError that says so and points to the API
coverage page, instead of a bare "module has no attribute". yax never imports jax to check
whether the name exists there (only yax/runtime may import jax), so the message is phrased for
both cases: a JAX API not implemented yet, or a misspelt name.
"""

from __future__ import annotations

import importlib
import importlib.util

from yax import errors

COVERAGE_PAGE = "docs/api_coverage.md"


def module_getattr(module_name: str, jax_name: str):
    """A module-level `__getattr__` for module `module_name`, which mirrors JAX's `jax_name`."""

    def __getattr__(name: str):
        if name.startswith("_"):  # dunder probes (copy, pickle, inspect): the plain error
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        full = f"{module_name}.{name}"
        if _is_submodule(module_name, full):  # a subpackage not imported yet (yax.extend)
            return importlib.import_module(full)
        raise errors.NotImplementedAttributeError(
            f"module {module_name!r} has no attribute {name!r}: yax does not implement "
            f"`{jax_name}.{name}` (yet), or the name is misspelt. See {COVERAGE_PAGE} for the "
            f"JAX API yax covers, and docs/differences.md for what it does differently.")
    return __getattr__


def _is_submodule(module_name: str, full: str) -> bool:
    import sys
    if not hasattr(sys.modules.get(module_name), "__path__"):  # a plain module: no submodules
        return False
    return importlib.util.find_spec(full) is not None
