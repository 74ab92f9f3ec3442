"""`python -m yax script.py [args]` / `python -m yax -m module [args]`: run a program in alias
mode, with every `import jax` resolving to yax (see yax/_alias.py and docs/ecosystem.md).

    python -m yax train.py --steps 100
    python -m yax -m pytest -p no:xdist tests/
"""

from __future__ import annotations

import os
import runpy
import sys

from yax._alias import alias_jax

USAGE = "usage: python -m yax script.py [args ...]  |  python -m yax -m module [args ...]"


def main(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE + "\nRuns the program with `import jax` resolving to yax (alias mode).")
        raise SystemExit(0 if argv else 2)
    if argv[0] == "-m" and len(argv) < 2:
        raise SystemExit(f"python -m yax: -m needs a module name\n{USAGE}")
    if argv[0].startswith("-") and argv[0] != "-m":
        raise SystemExit(f"python -m yax: unknown option {argv[0]!r} (only -m is taken; "
                         f"put python's own options before -m yax)\n{USAGE}")
    if argv[0] != "-m" and not os.path.exists(argv[0]):
        raise SystemExit(f"python -m yax: no such script {argv[0]!r}\n{USAGE}")
    alias_jax()
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path.insert(0, _script_dir(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")


def _script_dir(path: str) -> str:
    return os.path.dirname(os.path.abspath(path))


if __name__ == "__main__":
    main(sys.argv[1:])
