"""Sphinx extension: write the API reference pages (docs/api/_gen/*.md) from yax's modules.

Each public module gets one page listing its public names (no leading underscore, not a module),
each rendered by autodoc from its docstring. The pages are generated at every build, so a new
function appears in the reference without anyone editing a page.
"""

from __future__ import annotations

import importlib
import inspect
import os

# (module, title) in the order of the reference's table of contents; missing modules are skipped.
MODULES = [
    ("yax", "yax: transformations and arrays"),
    ("yax.numpy", "yax.numpy"),
    ("yax.numpy.linalg", "yax.numpy.linalg"),
    ("yax.numpy.fft", "yax.numpy.fft"),
    ("yax.lax", "yax.lax"),
    ("yax.random", "yax.random"),
    ("yax.nn", "yax.nn"),
    ("yax.nn.initializers", "yax.nn.initializers"),
    ("yax.scipy.special", "yax.scipy.special"),
    ("yax.scipy.stats", "yax.scipy.stats"),
    ("yax.scipy.linalg", "yax.scipy.linalg"),
    ("yax.scipy.sparse.linalg", "yax.scipy.sparse.linalg"),
    ("yax.scipy.signal", "yax.scipy.signal"),
    ("yax.scipy.optimize", "yax.scipy.optimize"),
    ("yax.scipy.ndimage", "yax.scipy.ndimage"),
    ("yax.image", "yax.image"),
    ("yax.tree_util", "yax.tree_util"),
    ("yax.debug", "yax.debug"),
    ("yax.sharding", "yax.sharding"),
    ("yax.distributed", "yax.distributed"),
    ("yax.experimental.checkify", "yax.experimental.checkify"),
    ("yax.example_libraries.optimizers", "yax.example_libraries.optimizers"),
    ("yax.example_libraries.stax", "yax.example_libraries.stax"),
    ("yax.mixed_precision", "yax.mixed_precision"),
    ("yax.test_util", "yax.test_util"),
]


def public_names(module) -> list[str]:
    names = getattr(module, "__all__", None) or dir(module)
    out = []
    for name in sorted(set(names)):
        if name.startswith("_"):
            continue
        try:
            obj = getattr(module, name)
        except AttributeError:
            continue
        if inspect.ismodule(obj) or not (callable(obj) or inspect.isclass(obj)):
            continue
        if name in ("annotations",) or getattr(obj, "__module__", None) == "typing":
            continue  # `from __future__` flags and type aliases (`InitFn = Callable[...]`)
        out.append(name)
    return out


def _directive(module_name: str, name: str, obj) -> str:
    kind = "autoclass" if inspect.isclass(obj) else "autofunction"
    return f"```{{{kind}}} {module_name}.{name}\n```\n"


def write_pages(outdir: str) -> list[str]:
    os.makedirs(outdir, exist_ok=True)
    written = []
    for module_name, title in MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        names = public_names(module)
        if not names:
            continue
        slug = module_name.replace(".", "_")
        lines = [f"# {title}\n", f"{len(names)} public names, from their docstrings.\n"]
        lines += [_directive(module_name, n, getattr(module, n)) for n in names]
        path = os.path.join(outdir, f"{slug}.md")
        text = "\n".join(lines)
        old = open(path).read() if os.path.exists(path) else None
        if old != text:  # unchanged pages keep their timestamp: Sphinx rebuilds less
            with open(path, "w") as f:
                f.write(text)
        written.append(slug)
    index = ["# API reference\n", "```{toctree}", ":maxdepth: 1", ""]
    index += written + ["```", ""]
    with open(os.path.join(outdir, "index.md"), "w") as f:
        f.write("\n".join(index))
    return written


def _on_builder_inited(app) -> None:
    write_pages(os.path.join(app.srcdir, "api", "_gen"))


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    return {"parallel_read_safe": True, "version": "1"}
