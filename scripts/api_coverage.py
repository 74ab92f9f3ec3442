"""How much of jax's public API yax offers, module by module (compared with the installed jax).

    python scripts/api_coverage.py                 # one line per module, then what is missing
    python scripts/api_coverage.py --module lax    # one module only
    python scripts/api_coverage.py --markdown      # the table of docs/api_coverage.md
    python scripts/api_coverage.py --json          # machine-readable (used by the tests)

What counts as a public name of a jax module `M`:
- every attribute of `M` whose name has no leading underscore, except
- attributes that are modules and are not a submodule of `M` itself: `jax.numpy.fft` counts as the
  name `fft` of `numpy`, but `jnp` or `functools` imported inside `jax.example_libraries.stax`
  do not (they are implementation imports, not API);
- `__future__` feature flags (`annotations`), which are compiler directives, not API;
- in `lax`, the `*_p` primitive objects (internal handles, not user functions).
For `scipy.stats`, each distribution submodule counts as one name and so does each public function
inside it (`norm.logpdf`), since a distribution without its `logpdf` is not usable.

A name is present in yax when the same dotted path resolves on the yax module (`yax.numpy.fft`
for `jax.numpy.fft`, `yax` for top-level `jax`). Presence is all that is measured: the tests of
each function check that it behaves like jax's.
"""

from __future__ import annotations
import __future__ as _future

import argparse
import importlib
import json
import os
import sys
import types

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("YAX_PLATFORM", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

# Module names relative to `jax` (and `yax`); "" is the top-level package.
MODULES = (
    "numpy", "numpy.fft", "numpy.linalg", "lax", "scipy.special", "scipy.stats", "scipy.linalg",
    "scipy.signal", "scipy.optimize", "scipy.ndimage", "nn", "nn.initializers", "random",
    "example_libraries.optimizers", "example_libraries.stax", "image", "tree_util", "sharding",
    "",
)

# Modules whose distribution-like submodules are expanded into `sub.function` names.
EXPANDED_SUBMODULES = ("scipy.stats",)


def _full_name(package: str, module: str) -> str:
    return f"{package}.{module}" if module else package


def _import(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _is_api_name(module: types.ModuleType, name: str, value) -> bool:
    if name.startswith("_"):
        return False
    if isinstance(value, _future._Feature):
        return False
    if isinstance(value, types.ModuleType):
        return getattr(value, "__name__", "") == f"{module.__name__}.{name}"
    return True


def public_names(module: types.ModuleType, module_key: str) -> list[str]:
    """The public API names of a jax module (see the module docstring for the rule)."""
    names = []
    for name in dir(module):
        value = getattr(module, name, None)
        if not _is_api_name(module, name, value):
            continue
        if module_key == "lax" and name.endswith("_p"):
            continue
        names.append(name)
        if module_key in EXPANDED_SUBMODULES and isinstance(value, types.ModuleType):
            names.extend(f"{name}.{inner}" for inner in dir(value)
                         if _is_api_name(value, inner, getattr(value, inner, None)))
    return sorted(names)


def _has(root, dotted: str) -> bool:
    obj = root
    for part in dotted.split("."):
        if obj is None or not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def _import_all(package: str) -> None:
    # Importing a submodule adds it to its parent's namespace; importing all of them first makes
    # the counts independent of which modules were asked for, and in which order.
    for key in MODULES:
        _import(_full_name(package, key))


def coverage(module_key: str) -> dict:
    """{"module", "total", "present", "missing": [...], "percent"} for one module."""
    _import_all("jax")
    _import_all("yax")
    jax_module = _import(_full_name("jax", module_key))
    if jax_module is None:
        return {"module": module_key or "jax", "total": 0, "present": 0, "missing": [],
                "percent": 100.0}
    names = public_names(jax_module, module_key)
    yax_module = _import(_full_name("yax", module_key))
    missing = [n for n in names if yax_module is None or not _has(yax_module, n)]
    total = len(names)
    present = total - len(missing)
    return {"module": module_key or "jax", "total": total, "present": present,
            "missing": missing, "percent": round(100.0 * present / total, 1) if total else 100.0}


def _as_text(rows: list[dict]) -> str:
    lines = [f"{'module':32s} {'yax':>5s} {'jax':>5s} {'%':>6s}"]
    lines += [f"{r['module']:32s} {r['present']:5d} {r['total']:5d} {r['percent']:6.1f}"
              for r in rows]
    for r in rows:
        if r["missing"]:
            lines.append(f"\n{r['module']} missing ({len(r['missing'])}): "
                         + ", ".join(r["missing"]))
    return "\n".join(lines)


def _as_markdown(rows: list[dict]) -> str:
    lines = ["| module | yax | jax | % | missing |", "|---|---:|---:|---:|---|"]
    for r in rows:
        missing = ", ".join(f"`{n}`" for n in r["missing"]) or "-"
        lines.append(f"| `{r['module']}` | {r['present']} | {r['total']} | {r['percent']:.1f} "
                     f"| {missing} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append",
                        help="a module relative to jax (e.g. lax, numpy.fft, jax); repeatable")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--markdown", action="store_true", help="a Markdown table")
    group.add_argument("--json", action="store_true", help="JSON, one object per module")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    keys = MODULES
    if args.module:
        keys = tuple("" if m in ("jax", "") else m.removeprefix("jax.") for m in args.module)
    rows = [coverage(k) for k in keys]
    if args.json:
        print(json.dumps(rows, indent=1))
    elif args.markdown:
        print(_as_markdown(rows))
    else:
        print(_as_text(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
