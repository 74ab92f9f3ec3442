"""`jax.extend.source_info_util`: which stack frames count as the user's source line.

yax names the user's line in errors and in printed jaxprs, skipping frames inside yax. A
library built on yax registers its own directory so that its frames are skipped too.
"""

from __future__ import annotations

import os

from yax import errors

__all__ = ["register_exclusion"]


def register_exclusion(path: str) -> None:
    """Frames of files under `path` are no longer reported as the user's source."""
    path = os.path.abspath(path)
    if path not in errors.excluded_dirs:
        errors.excluded_dirs.append(path)
        errors._internal_files.clear()  # answers cached before the exclusion may change
