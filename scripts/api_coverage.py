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
- objects defined in Python's standard library (`typing.Any`, `functools.partial`, `zip`) that a
  module imported for its implementation;
- the `*_p` primitive objects (internal handles, not user functions), in every module;
- submodules that are themselves excluded (see EXCLUDED).
For `scipy.stats`, each distribution submodule counts as one name and so does each public function
inside it (`norm.logpdf`), since a distribution without its `logpdf` is not usable.

The modules compared are every public module of the installed jax (found by walking the
package) except those in EXCLUDED, each excluded for the reason given there and in
docs/differences.md. A name is present in yax when the same dotted path resolves on the yax
module standing for the jax module: the one alias mode serves (yax/_alias_table.py: `jax.core`
is yax._jax_names.core), else the yax module of the same name (`yax.numpy.fft` for
`jax.numpy.fft`, `yax` for top-level `jax`). A submodule name is also present when alias mode
serves that submodule. A name that exists only to raise
NotImplementedError (a function, or a class whose constructor, whose body is that one `raise`)
is not present. Presence is all that is measured: the tests of each function check that it
behaves like jax's.
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

# Which jax modules count: every public module of the installed jax (found by walking the
# package: no path component starting with "_"), except those EXCLUDED below, each for a reason
# that docs/differences.md also gives ("Modules outside the coverage count"). Keys are relative to
# `jax` ("" is the top-level package). An excluded prefix excludes its submodules too.
EXCLUDED: dict[str, str] = {
    "experimental.pallas": "Pallas kernel language (TPU/GPU kernels; yax lowers whole programs)",
    "experimental.mosaic": "Mosaic TPU/GPU kernel compiler bindings",
    "extend.pallas": "Pallas kernel language (TPU/GPU kernels)",
    "experimental.jax2tf": "TensorFlow bridge (needs TensorFlow; yax.export covers serialisation)",
    "experimental.colocated_python": "Pathways multi-host colocated Python runtime",
    "experimental.array_serialization": "tensorstore checkpointing (use orbax or numpy)",
    "experimental.roofline": "performance-model tool over jax's internal jaxpr types",
    "experimental.source_mapper": "developer tool mapping HLO back to jax source internals",
    "experimental.mesh_utils": "TPU/GPU physical-topology device-mesh builders",
    "experimental.topologies": "TPU topology descriptions for ahead-of-time compilation",
    "experimental.transfer": "cross-process device-to-device transfer server",
    "experimental.serialize_executable": "pickling of jax's own compiled executables",
    "experimental.compilation_cache": "jax's persistent compilation cache (yax has its own cache)",
    "experimental.buffer_callback": "GPU/TPU buffer callbacks into raw device memory",
    "experimental.scheduling_groups": "XLA scheduling annotations for multi-device overlap",
    "experimental.fused": "XLA fusion annotations",
    "experimental.sparse": "sparse arrays (BCOO/BCSR) are not implemented (open work)",
    "extend.ifrt_programs": "IFRT (jax's C++ runtime) program builders",
    "extend.backend": "jax's backend/client objects (yax's runtime keeps them private)",
    "extend.xla": "jax's XLA computation objects",
    "extend.mlir": "jaxlib's MLIR bindings themselves (use jaxlib.mlir directly)",
    "extend.core.primitives": "jax's own primitive objects, listed per module instead (lax.*_p)",
    "interpreters.pxla": "pmap/pjit internals of jax",
    "interpreters.xla": "jax's legacy XLA lowering internals",
    "lib": "jaxlib's extension modules",
    "tools": "command-line tools (jax_to_ir, pgo_nsys_converter)",
    "cloud_tpu_init": "Cloud TPU start-up hook",
    "collect_profile": "command-line profiler script",
    "version": "version strings (yax.__version__ and jax.__version__ in alias mode)",
    "scipy.stats.": "each distribution is counted inside scipy.stats (see below)",
}


def _excluded(key: str) -> bool:
    for prefix in EXCLUDED:
        if prefix.endswith("."):
            if key.startswith(prefix):
                return True
        elif key == prefix or key.startswith(prefix + "."):
            return True
    return False


def discover_modules() -> tuple[str, ...]:
    """The public modules of the installed jax that count, relative to `jax`."""
    import pkgutil

    import jax
    keys = [""]
    for info in pkgutil.walk_packages(jax.__path__, "jax.", onerror=lambda name: None):
        key = info.name.removeprefix("jax.")
        if any(part.startswith("_") for part in key.split(".")) or _excluded(key):
            continue
        module = _import(info.name)  # a module that does not import is not usable API
        # a module without public names of its own (jax.experimental.pjit, whose `pjit` moved
        # to jax.jit) has nothing to count
        if module is not None and public_names(module, key):
            keys.append(key)
    return tuple(keys)


def modules() -> tuple[str, ...]:
    return MODULES


# Modules whose every top-level helper is importable but whose API, as jax's documentation
# (docs/jax.*.rst) and module docstrings give it, is only these names: the rest (`fact`,
# `zero_prop`, `runge_kutta_step`, ...) are the implementation's helpers.
DOCUMENTED: dict[str, tuple[str, ...]] = {
    "experimental.jet": ("jet",),
    "experimental.ode": ("odeint",),
    "experimental.rnn": ("get_num_params_in_lstm", "init_lstm_weight", "lstm",
                         "unpack_lstm_weights"),
    "experimental.multihost_utils": ("assert_equal", "broadcast_one_to_all",
                                     "global_array_to_host_local_array",
                                     "host_local_array_to_global_array", "process_allgather",
                                     "sync_global_devices"),
    "experimental.custom_partitioning": ("custom_partitioning",),
    "profiler": ("StepTraceAnnotation", "TraceAnnotation", "annotate_function",
                 "device_memory_profile", "register_subprocess", "save_device_memory_profile",
                 "start_server", "start_trace", "stop_trace", "trace"),
}

# Modules whose distribution-like submodules are expanded into `sub.function` names.
EXPANDED_SUBMODULES = ("scipy.stats",)


def _full_name(package: str, module: str) -> str:
    return f"{package}.{module}" if module else package


def _import(name: str):
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001  (some jax modules need optional packages; any failure
        return None    # to import means the module is not available here)


def _from_stdlib(value) -> bool:
    """An object defined in Python's standard library (`typing.Any`, `functools.partial`,
    `map`): a module imported it for its implementation; it is not jax's API."""
    if isinstance(value, (str, int, float, bool, tuple, types.ModuleType)) or value is None:
        return False
    owner = getattr(value, "__module__", None)
    if not isinstance(owner, str):
        return False
    return owner.split(".")[0] in sys.stdlib_module_names


def _is_primitive(value) -> bool:
    # jax's `*_p` objects: internal handles of its primitives, not user functions
    return type(value).__name__ == "Primitive" or any(
        c.__name__ == "Primitive" for c in type(value).__mro__)


def _is_api_name(module: types.ModuleType, name: str, value) -> bool:
    if name.startswith("_"):
        return False
    if isinstance(value, _future._Feature):
        return False
    if isinstance(value, types.ModuleType):
        full = getattr(value, "__name__", "")
        key = full.removeprefix("jax.")
        # scipy.stats's distributions are excluded as modules of their own but are names of
        # scipy.stats (EXPANDED_SUBMODULES)
        expanded = module.__name__.removeprefix("jax.") in EXPANDED_SUBMODULES
        return full == f"{module.__name__}.{name}" and (expanded or not _excluded(key))
    return not _from_stdlib(value) and not _is_primitive(value)


def public_names(module: types.ModuleType, module_key: str) -> list[str]:
    """The public API names of a jax module (see the module docstring for the rule)."""
    if module_key in DOCUMENTED:
        return sorted(DOCUMENTED[module_key])
    names = []
    for name in dir(module):
        value = getattr(module, name, None)
        if not _is_api_name(module, name, value):
            continue
        names.append(name)
        if module_key in EXPANDED_SUBMODULES and isinstance(value, types.ModuleType):
            names.extend(f"{name}.{inner}" for inner in dir(value)
                         if _is_api_name(value, inner, getattr(value, inner, None)))
    return sorted(names)


def _has(root, dotted: str, module_key: str = "") -> bool:
    obj = root
    for part in dotted.split("."):
        if obj is None or not hasattr(obj, part):
            # a submodule alias mode serves under this jax module (`jax.custom_derivatives`)
            from yax._alias_table import ALIASES
            key = f"{module_key}.{dotted}" if module_key else dotted
            return obj is root and f"jax.{key}" in ALIASES
        obj = getattr(obj, part)
    return not only_raises_not_implemented(obj)


def only_raises_not_implemented(obj) -> bool:
    """Whether `obj` is a function (or a class whose constructor is one) whose body, past its
    docstring, is a single `raise NotImplementedError(...)`: a name that exists only to say it
    is missing is not covered."""
    import ast
    import inspect
    import textwrap
    if isinstance(obj, type):
        obj = obj.__dict__.get("__init__")
    obj = inspect.unwrap(obj) if callable(obj) else obj
    if not inspect.isfunction(obj):
        return False
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
    except (OSError, TypeError, SyntaxError):
        return False
    fn = tree.body[0]
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    body = [st for st in fn.body
            if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    name = exc.id if isinstance(exc, ast.Name) else getattr(exc, "attr", "")
    return name in ("NotImplementedError", "NotImplementedAttributeError")


def yax_module_name(module_key: str) -> str:
    """The yax module standing for jax's `module_key`: the one alias mode serves under the jax
    name (yax/_alias_table.py), else the yax module of the same dotted name."""
    from yax._alias_table import ALIASES
    return ALIASES.get(_full_name("jax", module_key), _full_name("yax", module_key))


def _import_all(package: str) -> None:
    # Importing a submodule adds it to its parent's namespace; importing all of them first makes
    # the counts independent of which modules were asked for, and in which order.
    for key in modules():
        _import(_full_name(package, key) if package == "jax" else yax_module_name(key))


def coverage(module_key: str) -> dict:
    """{"module", "total", "present", "missing": [...], "percent"} for one module."""
    _import_all("jax")
    _import_all("yax")
    jax_module = _import(_full_name("jax", module_key))
    if jax_module is None:
        return {"module": module_key or "jax", "total": 0, "present": 0, "missing": [],
                "percent": 100.0}
    names = public_names(jax_module, module_key)
    yax_module = _import(yax_module_name(module_key))
    missing = [n for n in names if yax_module is None or not _has(yax_module, n, module_key)]
    total = len(names)
    present = total - len(missing)
    return {"module": module_key or "jax", "total": total, "present": present,
            "missing": missing, "percent": round(100.0 * present / total, 1) if total else 100.0}


def total(rows: list[dict]) -> dict:
    """The row of all modules together: names present over names counted."""
    present = sum(r["present"] for r in rows)
    count = sum(r["total"] for r in rows)
    return {"module": f"all {len(rows)} modules", "total": count, "present": present,
            "missing": [], "percent": round(100.0 * present / count, 1) if count else 100.0}


def _as_text(rows: list[dict]) -> str:
    lines = [f"{'module':32s} {'yax':>5s} {'jax':>5s} {'%':>6s}"]
    lines += [f"{r['module']:32s} {r['present']:5d} {r['total']:5d} {r['percent']:6.1f}"
              for r in [*rows, total(rows)]]
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
    t = total(rows)
    lines.append(f"| **{t['module']}** | {t['present']} | {t['total']} | {t['percent']:.1f} | |")
    return "\n".join(lines)


def _excluded_markdown() -> str:
    return "\n".join(f"- `jax.{key.rstrip('.')}`: {why}" for key, why in EXCLUDED.items())


# computed once, when the script is loaded (the tests read it)
MODULES: tuple[str, ...] = discover_modules()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append",
                        help="a module relative to jax (e.g. lax, numpy.fft, jax); repeatable")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--markdown", action="store_true", help="a Markdown table")
    group.add_argument("--json", action="store_true", help="JSON, one object per module")
    group.add_argument("--excluded", action="store_true",
                       help="the modules not counted and why (Markdown list)")
    args = parser.parse_args(argv)
    if args.excluded:
        print(_excluded_markdown())
        return 0
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    keys = modules()
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
