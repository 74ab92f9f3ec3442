"""Every public function of yax's user-facing modules has a docstring (the API reference on the
docs site renders them). NumPy's scalar type aliases in yax.numpy (float32, int8, ...) are types,
documented by NumPy, and are exempt.
"""

from __future__ import annotations

import importlib
import inspect
import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "docs" / "_ext"))
import yax_api  # noqa: E402  (the list of modules the API reference documents)


def _undocumented(module_name: str) -> list[str]:
    module = importlib.import_module(module_name)
    missing = []
    for name in yax_api.public_names(module):
        obj = getattr(module, name)
        if inspect.isclass(obj) and issubclass(obj, np.generic) or obj is getattr(np, name, 0):
            continue  # NumPy scalar types and objects re-exported from NumPy as they are
        doc = inspect.getdoc(obj) or ""
        inherited = not inspect.isclass(obj) and doc == (inspect.getdoc(type(obj)) or "")
        if not doc.strip() or (inherited and not callable(getattr(obj, "__wrapped__", None))):
            missing.append(name)
    return missing


def _importable(name: str) -> bool:
    try:
        importlib.import_module(name)
        return True
    except ImportError:
        return False


@pytest.mark.parametrize("module_name", [m for m, _ in yax_api.MODULES if _importable(m)])
def test_public_functions_have_docstrings(module_name):
    assert _undocumented(module_name) == []
