"""Sphinx configuration of the yax documentation site (`make docs`).

Pages are MyST markdown; pages written as text notebooks (`file_format: mystnb`) have their code
cells executed at build time by MyST-NB, so the printed outputs on the site are real. The API
reference is generated from the docstrings (`_ext/yax_api.py`). `make docs` runs sphinx-build with
-W: a warning, a broken cross-reference or a code cell that raises unexpectedly fails the build.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repository root: `import yax` finds this tree
sys.path.insert(0, os.path.join(HERE, "_ext"))
os.environ.setdefault("YAX_PLATFORM", "cpu")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import yax  # noqa: E402

project = "yax"
author = "The yax developers"
copyright = "2026, the yax developers"
release = version = yax.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "yax_api",
]

# Sources: every .md page under docs/ (MyST-NB also reads plain MyST markdown).
source_suffix = {".md": "myst-nb"}
exclude_patterns = ["_build", "jupyter_execute", "Thumbs.db", ".DS_Store", "_ext"]
myst_enable_extensions = ["colon_fence", "dollarmath", "deflist"]
myst_heading_anchors = 3

# Executed code cells: always run (no stale outputs), fail on an unexpected exception.
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_timeout = 600
nb_execution_show_tb = True
nb_merge_streams = True

# Docstrings are Google style (Args:/Returns:/Example:).
napoleon_google_docstring = True
napoleon_numpy_docstring = False
autodoc_typehints = "none"
autodoc_member_order = "alphabetical"
autodoc_default_options = {"undoc-members": False}

html_theme = "furo"
html_title = f"yax {release}"
html_static_path = ["_static"]
