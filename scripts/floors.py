"""Draw yax's floors from the source: `python scripts/floors.py` prints, for each floor (lowest at
the bottom), its packages and how many module-level imports reach each lower floor.

It reads the same FLOORS map and import graph as tests/test_architecture.py, so the picture in
docs/design.md can be regenerated whenever the house changes.
"""

from __future__ import annotations

import collections
import importlib.util
import pathlib
import textwrap

ROOT = pathlib.Path(__file__).resolve().parent.parent
NAMES = ("base", "runtime", "compile + interpreters", "primitives", "lax", "transforms",
         "numpy", "libraries")


def _architecture():
    spec = importlib.util.spec_from_file_location("architecture",
                                                  ROOT / "tests" / "test_architecture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    arch = _architecture()
    counts = collections.Counter()
    sizes = collections.Counter()
    for module, path in arch.MODULES.items():
        sizes[arch.floor_of(module)] += len(path.read_text().splitlines())
    for imp in arch.imports():
        if imp.in_function:
            continue
        for target in imp.targets:
            if target in arch.MODULES:
                counts[(arch.floor_of(imp.module), arch.floor_of(target))] += 1
    width = 76
    for level in reversed(range(len(arch.FLOORS))):
        packages = ", ".join(p.removeprefix("yax.") or "(the yax package)"
                             for p in arch.FLOORS[level])
        reaches = ", ".join(f"{NAMES[low].split()[0]} {counts[(level, low)]}"
                            for low in range(level) if counts[(level, low)])
        lines = [f"{level} {NAMES[level]:<24} {sizes[level]:>6} lines"]
        lines += textwrap.wrap(packages, width - 4, initial_indent="  ",
                               subsequent_indent="  ")
        if reaches:
            lines += textwrap.wrap("imports of lower floors: " + reaches, width - 4,
                                   initial_indent="  ", subsequent_indent="    ")
        print("+" + "-" * width + "+")
        for line in lines:
            print("| " + line.ljust(width - 2) + " |")
    print("+" + "-" * width + "+")


if __name__ == "__main__":
    main()
