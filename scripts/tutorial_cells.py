"""Do JAX's own tutorial notebooks print the same under yax as under jax 0.10.2?

    python scripts/tutorial_cells.py                 # core and all, one table per notebook
    python scripts/tutorial_cells.py --verbose       # ... and a diff of every differing cell
    python scripts/tutorial_cells.py --only thinking_in_jax --verbose
    python scripts/tutorial_cells.py --mirror /path/to/jax.git --no-cache

The notebooks are read at run time from a git mirror of jax (default
/work/.mirror/jax-ml+jax/repo, tag jax-v0.10.2); none is stored in this repository. Each one's
python code cells (the myst "```{code-cell} ipython3" blocks) run in order, in a fresh child
process, twice: once with the real jax, once in yax's alias mode (`yax.alias_jax()` before the
first cell, the mechanism of `python -m yax` and tests/test_ecosystem.py, so the notebooks'
`import jax` is yax). Per cell the child records what Jupyter would show: the cell's stdout,
then `repr` of the value of a last expression statement (not None, not ended by `;`), and, if
the cell raises, the exception's class name (the traceback's last line). A cell matches when
its stdout+display text is identical in both runs and both raise the same exception class or
neither raises. The exception's message is shown by --verbose; --strict-errors compares it too.

Normalised before comparing: memory addresses (`0x7f...`). Nondeterministic cells form their
own bucket: a cell with `%timeit`/`%time` (its statement runs once, its output is not
compared), and a cell whose output differs between two runs of the real jax (done when the
jax results are first cached). Such a cell counts as matching when both runs raise alike.
The real jax's results are cached under .yax_cache/tutorial_cells/ (they do not change with
yax); --no-cache re-runs them.

Environment of both runs: JAX_PLATFORMS=cpu, the same cell file names, a matplotlib stand-in
that draws nothing when matplotlib is not installed, `%xmode`/`%matplotlib`/`!shell`/`%pip`
lines dropped, and 8 host devices for the notebooks about several devices.

Core (17 tutorial pages, 355 cells): the quickstart (notebooks/thinking_in_jax), the sharp
bits (notebooks/Common_Gotchas_in_JAX), notebooks/autodiff_cookbook,
notebooks/Custom_derivative_rules_for_Python_code, notebooks/autodiff_remat, and the
tutorials key-concepts, jit-compilation, automatic-vectorization, automatic-differentiation,
random-numbers, pytrees, control-flow, stateful-computations, debugging, jaxpr, tracing,
complex-differentiation.

All: core plus every other page of docs/ and docs/notebooks/ with code cells that runs on a
CPU without network or data sets; EXCLUDED below says which are left out and why.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import difflib
import importlib.util
import io
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import time
import types

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_MIRROR = "/work/.mirror/jax-ml+jax/repo"
DEFAULT_TAG = "jax-v0.10.2"
CACHE = ROOT / ".yax_cache" / "tutorial_cells"

CORE = [
    "notebooks/thinking_in_jax", "notebooks/Common_Gotchas_in_JAX",
    "notebooks/autodiff_cookbook", "notebooks/Custom_derivative_rules_for_Python_code",
    "notebooks/autodiff_remat", "key-concepts", "jit-compilation", "automatic-vectorization",
    "automatic-differentiation", "random-numbers", "pytrees", "control-flow",
    "stateful-computations", "debugging", "jaxpr", "tracing", "complex-differentiation",
]
OTHERS = [
    "notebooks/Writing_custom_interpreters_in_Jax", "notebooks/vmapped_log_probs",
    "notebooks/convolutions", "notebooks/shard_map", "notebooks/layout", "external-callbacks",
    "jax-primitives", "higher-order", "jacobian-vector-products", "custom_pytrees",
    "gradient-checkpointing", "parallel", "jep/9407-type-promotion", "array_refs",
    "debugging/flags",
]
EXCLUDED = {
    "notebooks/Neural_Network_and_Data_Loading": "downloads MNIST through torchvision",
    "notebooks/neural_network_with_tfds_data": "downloads MNIST through tensorflow_datasets",
    "notebooks/colocated-python": "needs a colocated-python (Pathways) backend",
    "notebooks/cute_dsl_jax": "needs an NVIDIA GPU and pip-installs CUTLASS",
    "notebooks/host-offloading": "needs the pinned_host memory of a GPU/TPU",
    "ffi": "compiles C++ with cmake",
    "distributed_data_loading": "needs several processes",
    "autodidax": "builds its own JAX from numpy: it prints its own objects, not jax's",
    "autodidax2_part1": "builds its own JAX from numpy: it prints its own objects, not jax's",
    "pallas/*": "Pallas kernels need a GPU/TPU (interpret mode aside)",
}
MULTI_DEVICE = {"notebooks/shard_map", "parallel", "notebooks/layout"}
CELL_TIMEOUT = 120


# ---------------------------------------------------------------- reading the notebooks

def read_notebook(mirror: str, tag: str, name: str) -> str:
    proc = subprocess.run(["git", "-C", mirror, "show", f"{tag}:docs/{name}.md"],
                          capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"tutorial_cells: cannot read docs/{name}.md at {tag} from {mirror}: "
                         f"{proc.stderr.strip()}")
    return proc.stdout


def code_cells(text: str) -> list[dict]:
    """The python code cells of a myst notebook, in order: {"source", "tags"}."""
    cells, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if not lines[i].startswith("```{code-cell}"):
            i += 1
            continue
        i += 1
        options = []
        if i < len(lines) and lines[i].strip() == "---":  # a yaml block of options
            i += 1
            while i < len(lines) and lines[i].strip() != "---":
                options.append(lines[i])
                i += 1
            i += 1
        else:
            while i < len(lines) and lines[i].startswith(":"):
                options.append(lines[i][1:])
                i += 1
        body = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        tags = []
        for opt in options:
            key, _, value = opt.partition(":")
            if key.strip() == "tags":
                tags = [t.strip() for t in value.strip().strip("[]").split(",") if t.strip()]
        cells.append({"source": "\n".join(body).strip("\n"), "tags": tags})
    return cells


# ---------------------------------------------------------------- the child: running cells

class CellTimeout(BaseException):
    pass


_TIMEIT = re.compile(r"^(\s*)%time(it)?\s+(.*)$")


def preprocess(source: str) -> tuple[str, bool]:
    """Python for one cell, and whether it times something (its output is then not compared)."""
    out, timed = [], False
    lines = source.splitlines()
    if lines and lines[0].startswith("%%time"):  # a cell magic: run the body once
        return "\n".join(lines[1:]), True
    for line in lines:
        stripped = line.strip()
        m = _TIMEIT.match(line)
        if m:
            timed = True
            words = m.group(3).split(" ")
            while words and words[0].startswith("-"):  # timeit's options: -n10 -r3
                words.pop(0)
            out.append(f"{m.group(1)}_ = ({' '.join(words)})")
        elif stripped.startswith(("%", "!")):
            out.append(line[: len(line) - len(line.lstrip())] + "pass")
        else:
            out.append(line)
    return "\n".join(out), timed


def _matplotlib_standin() -> None:
    """A matplotlib that draws nothing, so that cells which also plot still run."""
    try:
        import matplotlib  # noqa: F401
        return
    except ImportError:
        pass

    class Anything:
        def __call__(self, *a, **k):
            return Anything()

        def __getattr__(self, name):
            return Anything()

        def __iter__(self):
            return iter((Anything(), Anything()))

        def __getitem__(self, i):
            return Anything()

        def __repr__(self):
            return "<matplotlib stand-in>"

    def module_attr(attr):
        if attr.startswith("__"):  # __file__, __path__, ...: a plain module has none either
            raise AttributeError(attr)
        return Anything()

    for name in ("matplotlib", "matplotlib.pyplot", "matplotlib.cm", "matplotlib.colors"):
        mod = types.ModuleType(name)
        mod.__getattr__ = module_attr
        sys.modules[name] = mod
    sys.modules["matplotlib"].pyplot = sys.modules["matplotlib.pyplot"]


def run_cell(code: str, filename: str, ns: dict) -> tuple[str, list | None]:
    """Run one cell like Jupyter: its stdout plus the repr of a final expression's value."""
    buf = io.StringIO()
    exc = None
    with contextlib.redirect_stdout(buf):
        try:
            tree = ast.parse(code, filename)
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr) \
                    and not code.rstrip().endswith(";"):
                last = ast.Expression(tree.body.pop().value)
            exec(compile(tree, filename, "exec"), ns)
            if last is not None:
                value = eval(compile(last, filename, "eval"), ns)
                if value is not None:
                    ns["_"] = value
                    print(repr(value))
        except CellTimeout:
            exc = ["CellTimeout", "the cell ran past the per-cell timeout"]
        except BaseException as e:  # noqa: BLE001  (a cell's error is its output)
            exc = [type(e).__name__, str(e)]
    return buf.getvalue(), exc


def child(mode: str, cells_path: str, out_path: str, timeout: int) -> None:
    if mode == "yax":
        import yax
        yax.alias_jax()
    _matplotlib_standin()

    def on_alarm(signum, frame):
        raise CellTimeout()

    signal.signal(signal.SIGALRM, on_alarm)
    cells = json.loads(pathlib.Path(cells_path).read_text())
    ns = {"__name__": "__main__"}
    with open(out_path, "w") as out:
        for index, cell in enumerate(cells):
            code, timed = preprocess(cell["source"])
            start = time.time()
            signal.alarm(timeout)
            try:
                text, exc = run_cell(code, f"/tmp/ipykernel/cell_{index}.py", ns)
            finally:
                signal.alarm(0)
            out.write(json.dumps({"out": text, "exc": exc, "timed": timed,
                                  "seconds": round(time.time() - start, 2)}) + "\n")
            out.flush()


def run_notebook(name: str, cells: list[dict], mode: str, timeout: int) -> list[dict]:
    env = dict(os.environ, JAX_PLATFORMS="cpu", YAX_PLATFORM="cpu",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if name in MULTI_DEVICE:
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                            " --xla_force_host_platform_device_count=8").strip()
    with tempfile.TemporaryDirectory() as tmp:
        cells_path, out_path = os.path.join(tmp, "cells.json"), os.path.join(tmp, "out.jsonl")
        pathlib.Path(cells_path).write_text(json.dumps(cells))
        cmd = [sys.executable, __file__, "--child", mode, cells_path, out_path,
               "--cell-timeout", str(timeout)]
        err = ""
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp,
                                  stdin=subprocess.DEVNULL,  # a debugger prompt reads EOF
                                  timeout=timeout * 3 + 60 + 5 * len(cells))
            err = proc.stderr[-2000:] if proc.returncode else ""
        except subprocess.TimeoutExpired:
            err = "the notebook ran past its timeout"
        results = []
        if os.path.exists(out_path):
            results = [json.loads(ln) for ln in pathlib.Path(out_path).read_text().splitlines()]
    while len(results) < len(cells):  # the child died: the rest did not run
        results.append({"out": "", "exc": ["ChildDied", err], "timed": False})
    return results


# ---------------------------------------------------------------- comparing

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


def normalise(text: str) -> str:
    return _ADDRESS.sub("0x...", text)


def shown(result: dict, strict: bool) -> str:
    text = normalise(result["out"])
    if result["exc"]:
        name, msg = result["exc"]
        text += f"[raises {name}]" + (f": {normalise(msg)}" if strict else "") + "\n"
    return text


def jax_results(name: str, cells: list[dict], tag: str, timeout: int, cache: bool) -> list:
    path = CACHE / f"{tag}-{name.replace('/', '+')}.json"
    # whether matplotlib is installed changes what plotting cells print (the stand-in's
    # "<matplotlib stand-in>" or real artists), so results saved under the other case are stale
    plots = importlib.util.find_spec("matplotlib") is not None
    if cache and path.exists():
        saved = json.loads(path.read_text())
        if ([c["source"] for c in saved["cells"]] == [c["source"] for c in cells]
                and saved.get("matplotlib", False) == plots):
            return saved["results"]
    first = run_notebook(name, cells, "jax", timeout)
    second = run_notebook(name, cells, "jax", timeout)
    for a, b in zip(first, second):
        a["nondeterministic"] = a["timed"] or shown(a, True) != shown(b, True)
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": cells, "results": first, "matplotlib": plots}))
    return first


def compare(name, cells, under_jax, under_yax, strict):
    rows = []
    for index, (cell, a, b) in enumerate(zip(cells, under_jax, under_yax)):
        if a["nondeterministic"]:
            same_errors = (a["exc"] or [None])[0] == (b["exc"] or [None])[0]
            kind = "nondet-ok" if same_errors else "differs"
        else:
            kind = "same" if shown(a, strict) == shown(b, strict) else "differs"
        rows.append({"index": index, "kind": kind, "cell": cell, "jax": a, "yax": b})
    return rows


def report_cell(name: str, row: dict) -> None:
    a, b = row["jax"], row["yax"]
    print(f"\n=== {name} cell {row['index']} ===")
    print("\n".join("    " + ln for ln in row["cell"]["source"].splitlines()[:12]))
    diff = difflib.unified_diff(shown(a, True).splitlines(), shown(b, True).splitlines(),
                                "jax", "yax", lineterm="", n=2)
    print("\n".join(diff))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", default=DEFAULT_MIRROR, help="the jax git mirror")
    parser.add_argument("--tag", default=DEFAULT_TAG)
    parser.add_argument("--set", choices=("core", "all"), default="all")
    parser.add_argument("--only", action="append", help="just this notebook (repeatable)")
    parser.add_argument("--verbose", action="store_true", help="diff every differing cell")
    parser.add_argument("--strict-errors", action="store_true",
                        help="compare exception messages too")
    parser.add_argument("--no-cache", action="store_true", help="re-run the real jax")
    parser.add_argument("--cell-timeout", type=int, default=CELL_TIMEOUT)
    parser.add_argument("--json", help="write every cell's outputs here")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child, timeout=args.cell_timeout)
        return 0
    if not os.path.isdir(args.mirror):
        print(f"tutorial_cells: no jax mirror at {args.mirror} (pass --mirror PATH to a clone "
              f"of github.com/jax-ml/jax with tag {args.tag})", file=sys.stderr)
        return 2
    names = args.only or (CORE if args.set == "core" else CORE + OTHERS)
    totals = {"core": [0, 0, 0], "all": [0, 0, 0]}  # matching, nondeterministic, cells
    differing, dump = [], {}
    print(f"{'notebook':48} {'cells':>5} {'same':>5} {'nondet':>6} {'differ':>6} {'secs':>6}")
    for name in names:
        start = time.time()
        cells = code_cells(read_notebook(args.mirror, args.tag, name))
        under_jax = jax_results(name, cells, args.tag, args.cell_timeout, not args.no_cache)
        under_yax = run_notebook(name, cells, "yax", args.cell_timeout)
        rows = compare(name, cells, under_jax, under_yax, args.strict_errors)
        same = sum(r["kind"] == "same" for r in rows)
        nondet = sum(r["kind"] == "nondet-ok" for r in rows)
        bad = [r for r in rows if r["kind"] == "differs"]
        differing += [(name, r) for r in bad]
        for key in ("core", "all") if name in CORE else ("all",):
            t = totals[key]
            t[0], t[1], t[2] = t[0] + same + nondet, t[1] + nondet, t[2] + len(rows)
        print(f"{name:48} {len(rows):5} {same:5} {nondet:6} {len(bad):6} "
              f"{time.time() - start:6.0f}  {' '.join(str(r['index']) for r in bad)}",
              flush=True)
        dump[name] = rows
    for key in ("core", "all"):
        matching, nondet, total = totals[key]
        if total:
            print(f"{key}: {matching}/{total} cells print what jax prints "
                  f"({nondet} of them nondeterministic: only their errors compared)")
    if args.verbose:
        for name, row in differing:
            report_cell(name, row)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(dump, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
