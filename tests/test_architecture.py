"""The house stays in order: yax's modules are read with `ast` (nothing is imported) and checked
against the floors of docs/design.md.

- no import cycle among module-level imports;
- no module imports a module of a higher floor (at the top or inside a function);
- modules stay under 600 lines and functions under 60;
- an import inside a function is the exception, each with a comment on its line (or the line
  above) saying why it cannot be at the top, and few of them in all;
- `jax` itself is imported only in `yax/runtime/`.

An edge is what an import statement names (`from yax.numpy import linalg` names
`yax.numpy.linalg`, `from yax.numpy import zeros` the package `yax.numpy` itself), plus the
packages Python runs on the way: importing `yax.debug.nans` from `yax.transforms.jit` runs
`yax/debug/__init__.py` first.
"""

from __future__ import annotations

import ast
import functools
import pathlib
from collections import defaultdict

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / "yax"

# Lowest first. A module belongs to the floor of the longest prefix listed for it.
FLOORS: tuple[tuple[str, ...], ...] = (
    # 0 base: the IR, errors, config, pytrees
    ("yax.core", "yax.errors", "yax.config", "yax._version", "yax.tree_util", "yax.tree",
     "yax._pytree", "yax._resource_errors", "yax.checkpoint_policies", "yax._missing"),
    # 1 the XLA runtime: backend, buffers, devices and the shardings that describe placement
    ("yax.runtime",),
    # 2 turning jaxprs into executables, and the interpreters
    ("yax.compile", "yax.interpreters"),
    # 3 every primitive with all its rules
    ("yax.primitives",),
    # 4 the yax.lax API
    ("yax.lax",),
    # 5 the public transformations and the tools built on them
    ("yax.transforms", "yax.debug", "yax.experimental", "yax.extend", "yax.ad_checkpoint",
     "yax.export"),
    # 6 yax.numpy
    ("yax.numpy",),
    # 7 libraries on top, and the package itself
    ("yax.scipy", "yax.nn", "yax.random", "yax.example_libraries", "yax.image", "yax.ops",
     "yax.mixed_precision", "yax.distributed", "yax.test_util", "yax.dtypes", "yax.sharding",
     "yax"),
)

# Imports inside functions allowed in all of yax/ (each explained by a comment).
MAX_FUNCTION_IMPORTS = 15


def floor_of(module: str) -> int:
    best, best_len = None, -1
    for level, prefixes in enumerate(FLOORS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = level, len(prefix)
    assert best is not None, f"{module} is on no floor: add it to FLOORS"
    return best


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


class Import:
    def __init__(self, module: str, node: ast.AST, targets: list[str], in_function: bool,
                 explained: bool):
        self.module, self.line, self.targets = module, node.lineno, targets
        self.in_function, self.explained = in_function, explained

    def __repr__(self):
        where = "in a function" if self.in_function else "at the top"
        return f"{MODULES[self.module].relative_to(ROOT.parent)}:{self.line} ({where})"


def _targets(module: str, node: ast.AST, is_package: bool) -> list[str]:
    names = []
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            parts = module.split(".")
            if not is_package:
                parts = parts[:-1]
            parts = parts[: len(parts) - (node.level - 1)]
            base = ".".join(parts + ([base] if base else []))
        for alias in node.names:
            candidate = f"{base}.{alias.name}"
            names.append(candidate if candidate in MODULES else base)
    out = []
    for name in names:
        if name == "jax" or name.startswith("jax.") or name.startswith("jaxlib"):
            out.append(name)
            continue
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name:
            out.append(name)
            out.extend(_parent_packages_run(module, name))
    return out


def _parent_packages_run(importer: str, target: str) -> list[str]:
    """Importing `a.b.c` first runs the `__init__` of every package above it that the importer
    is not itself inside (those have started already): `a.b`, when importer is `x.y`."""
    parts = target.split(".")
    parents = [".".join(parts[:i]) for i in range(1, len(parts))]
    return [p for p in parents if not (importer == p or importer.startswith(p + "."))]


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _explained(lines: list[str], node: ast.AST) -> bool:
    here = lines[node.lineno - 1]
    above = lines[node.lineno - 2].strip() if node.lineno >= 2 else ""
    return ("#" in here and "noqa" not in here.split("#", 1)[1][:5]) or above.startswith("#")


def _imports() -> list[Import]:
    found = []
    for module, path in MODULES.items():
        text = path.read_text()
        lines = text.splitlines()
        is_package = path.name == "__init__.py"

        def visit(node, in_function):
            for child in ast.iter_child_nodes(node):
                if _is_type_checking(child):
                    continue
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    targets = _targets(module, child, is_package)
                    if targets:
                        found.append(Import(module, child, targets, in_function,
                                            _explained(lines, child)))
                nested = in_function or isinstance(
                    child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                visit(child, nested)

        visit(ast.parse(text), False)
    return found


@functools.cache
def imports() -> tuple[Import, ...]:
    """Every import statement of yax (read on first use: parsing all of yax at collection
    would cost every xdist worker a second, most of them never running these tests)."""
    return tuple(_imports())


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def _edges(include_functions: bool) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in imports():
        if imp.in_function and not include_functions:
            continue
        for target in imp.targets:
            if target in MODULES:
                edges[imp.module].add(target)
    for module in MODULES:
        edges.setdefault(module, set())
    return edges


def test_every_module_is_on_a_floor():
    for module in MODULES:
        floor_of(module)


def test_no_cycle_among_module_level_imports():
    cycles = _cycles(_edges(include_functions=False))
    assert not cycles, f"import cycles: {cycles}"


def test_no_import_reaches_up_a_floor():
    upward = sorted({f"{imp!r} reaches {target}" for imp in imports() for target in imp.targets
                     if target in MODULES and floor_of(target) > floor_of(imp.module)})
    assert not upward, "imports of a higher floor:\n" + "\n".join(upward)


def test_imports_inside_functions_are_few_and_explained():
    inside = [imp for imp in imports() if imp.in_function]
    unexplained = [imp for imp in inside if not imp.explained]
    assert not unexplained, ("imports inside functions without a comment saying why they "
                             "cannot be at the top:\n" + "\n".join(map(repr, unexplained)))
    assert len(inside) <= MAX_FUNCTION_IMPORTS, "\n".join(map(repr, inside))


def test_only_the_runtime_imports_jax():
    outside = [imp for imp in imports() if floor_of(imp.module) != 1
               and any(t == "jax" or t.startswith(("jax.", "jaxlib")) for t in imp.targets)
               and not any(t.startswith("jaxlib.mlir") for t in imp.targets)]
    assert not outside, "\n".join(map(repr, outside))


@pytest.mark.parametrize("edges", [{"a": {"b"}, "b": {"a"}, "c": set()},
                                   {"a": {"b"}, "b": {"c"}, "c": {"a"}}])
def test_the_cycle_finder_finds_cycles(edges):
    assert _cycles(edges), "the checker must be able to fail"


def test_the_floor_map_orders_the_known_layers():
    assert floor_of("yax.core.ir") < floor_of("yax.runtime.array") < floor_of(
        "yax.interpreters.eager") < floor_of("yax.primitives.elementwise") < floor_of(
        "yax.lax.cond") < floor_of("yax.transforms.jit") < floor_of("yax.numpy.ufuncs") < floor_of(
        "yax.scipy.special")


MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 59


def test_modules_are_small():
    big = {str(p.relative_to(ROOT.parent)): n for p in MODULES.values()
           if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not big, f"modules over {MAX_MODULE_LINES} lines (split them by topic): {big}"


def test_functions_are_short():
    long = []
    for path in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} {node.name} "
                                f"({length} lines)")
    assert not long, "functions of 60 lines or more:\n" + "\n".join(long)


# The AD interpreters' own vocabulary (symbolic zeros materialised, cotangents summed) sits on
# their floor, below the primitives they differentiate.
# yax.custom_batching is written with the extension API (yax.extend.core.Primitive and the
# jax.interpreters registries), as a user adds a primitive, on purpose: it is that API's example
PRIMITIVES_OUTSIDE_PRIMITIVES = {"yax.interpreters.ad_util", "yax.custom_batching"}


def test_primitives_are_defined_under_primitives():
    outside = []
    for module, path in MODULES.items():
        if module.startswith("yax.primitives.") or module in PRIMITIVES_OUTSIDE_PRIMITIVES:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "Primitive"):
                outside.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}")
    assert not outside, "primitives defined outside yax/primitives/: " + ", ".join(outside)


RULE_SLOTS = {"abstract_eval", "lower", "jvp", "transpose", "batch", "impl", "partial_eval",
              "checkify"}


def test_a_primitive_gets_its_rules_in_its_own_module():
    """No module attaches rules to a primitive it imported (`other_p.define(...)` or
    `other_p.jvp = ...`): every rule of a primitive sits in the module that defines it."""
    foreign = []
    for path in MODULES.values():
        tree = ast.parse(path.read_text())
        imported = {alias.asname or alias.name for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) for alias in node.names}
        for node in ast.walk(tree):
            target = None
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "define"):
                target = node.func.value
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and t.attr in RULE_SLOTS:
                        target = t.value
            if isinstance(target, ast.Name) and target.id in imported:
                foreign.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} {target.id}")
    assert not foreign, "rules attached outside their primitive's module:\n" + "\n".join(foreign)
