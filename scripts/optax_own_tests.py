"""`make ecosystem`: optax's own test files (shipped in its wheel) under the real jax and under
yax's alias mode (`python -m yax -m pytest`), pass/fail counts side by side.

    python scripts/optax_own_tests.py                # the main files, optax/_src/*_test.py
    python scripts/optax_own_tests.py --all          # every *_test.py optax ships
    python scripts/optax_own_tests.py --only yax --failures out.txt

Each run is a child pytest started from a scratch directory (so yax's own tests/conftest.py
stays out). The failures of the alias-mode run, one line each, go to --failures for
docs/ecosystem.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
LABELS = {"jax": "real jax", "yax": "yax alias mode"}
COUNTED = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


def optax_test_files(every: bool) -> list[pathlib.Path]:
    spec = importlib.util.find_spec("optax")
    if spec is None or spec.origin is None:
        raise SystemExit("optax is not installed: pip install -e '.[ecosystem]'")
    package = pathlib.Path(spec.origin).parent
    files = sorted(package.rglob("*_test.py") if every else (package / "_src").glob("*_test.py"))
    if not files:
        raise SystemExit(f"no *_test.py under {package}: this optax wheel ships no tests")
    return files


def run_pytest(files, alias: bool, report: pathlib.Path, timeout: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               JAX_PLATFORMS="cpu", YAX_PLATFORM="cpu")
    cmd = [sys.executable, *(["-m", "yax"] if alias else []), "-m", "pytest", "-q",
           "-p", "no:cacheprovider", "-p", "no:xdist", "--tb=line", "-rfE",
           "--continue-on-collection-errors", *map(str, files)]
    with tempfile.TemporaryDirectory() as scratch, report.open("w") as log:
        try:  # the log fills as pytest runs, so a long run can be watched
            subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, text=True, env=env,
                           cwd=scratch, timeout=timeout)
        except subprocess.TimeoutExpired:
            log.write(f"\nTIMEOUT after {timeout:.0f} s\n")
    out = report.read_text()
    return counts(out)


def counts(output: str) -> dict:
    """The counts of pytest's last summary line ('3 failed, 1015 passed, 2 skipped in ...')."""
    summary = [ln for ln in output.splitlines()
               if re.search(r"\d+ (passed|failed|errors?)\b", ln)]
    found = {key: 0 for key in COUNTED}
    if summary:
        for number, key in re.findall(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)",
                                      summary[-1]):
            found["error" if key.startswith("error") else key] += int(number)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every *_test.py optax ships")
    parser.add_argument("--only", choices=("jax", "yax"), help="run one side only")
    parser.add_argument("--out", default="ecosystem-reports", help="directory for the logs")
    parser.add_argument("--timeout", type=float, default=5400, help="seconds per side")
    args = parser.parse_args()
    files = optax_test_files(args.all)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sides = [s for s in ("jax", "yax") if args.only in (None, s)]
    results = {}
    for side in sides:
        results[side] = run_pytest(files, side == "yax", out / f"optax-{side}.log", args.timeout)
        print(f"{side}: {results[side]}", flush=True)
    print(f"\noptax's own tests ({len(files)} files), logs in {out}/")
    print(f"{'':10}" + "".join(f"{LABELS[side]:>18}" for side in sides))
    for key in COUNTED:
        print(f"{key:10}" + "".join(f"{results[s][key]:>18}" for s in sides))
    if len(sides) == 2 and results["jax"]["passed"]:
        share = results["yax"]["passed"] / results["jax"]["passed"]
        print(f"\nalias mode passes {share:.1%} of the count that passes under the real jax")


if __name__ == "__main__":
    main()
