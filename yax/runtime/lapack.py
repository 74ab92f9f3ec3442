"""LAPACK registration for CPU linear algebra custom calls.

jaxlib registers the `lapack_*_ffi` custom-call targets with XLA when jax is imported, but their
function pointers into SciPy's LAPACK are only filled in by `jaxlib.cpu._lapack.initialize()`.
Running a module that calls one of them before that segfaults, so every lowering rule that emits
such a call asks for it first (it is cheap after the first time).
"""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=None)
def ensure_lapack_registered() -> None:
    """Bind jaxlib's LAPACK custom-call targets to SciPy's LAPACK (once per process)."""
    from jaxlib.cpu import _lapack  # imports scipy; kept lazy so plain yax does not need it

    _lapack.initialize()
