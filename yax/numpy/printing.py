"""How yax Arrays print: they print through NumPy, so NumPy's print options drive them (as in
JAX), and array_repr/array_str format an array's value.
"""

from __future__ import annotations

import numpy as np

__all__ = ["printoptions", "set_printoptions", "get_printoptions", "array_repr", "array_str"]

printoptions = np.printoptions
set_printoptions = np.set_printoptions
get_printoptions = np.get_printoptions


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """The repr of the array's value (np.array_repr)."""
    return np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """The str of the array's value (np.array_str)."""
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)
