"""`make bench`: every benchmark, yax vs jax side by side in one process, as ratios.

Absolute times on small shared machines are noise; the ratio column is the figure to watch.
`--json PATH` also writes the rows (and the machine and versions) for `benchmarks/plot.py`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

from benchmarks import (  # noqa: E402
    bench_autodiff,
    bench_cache,
    bench_control_flow,
    bench_debug,
    bench_dispatch,
    bench_eager,
    bench_export,
    bench_memory,
    bench_peers,
    bench_sharding,
    bench_sparse,
)
from benchmarks.common import print_table  # noqa: E402

TIMING_MODULES = (bench_dispatch, bench_eager, bench_autodiff, bench_control_flow, bench_debug,
                  bench_sharding, bench_sparse, bench_peers, bench_export, bench_cache)


def _environment() -> dict:
    import jax
    import jaxlib

    import yax
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "yax": yax.__version__, "jax": jax.__version__,
            "jaxlib": jaxlib.__version__, "backend": yax.default_backend()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    rows = []
    for module in TIMING_MODULES:
        rows.extend(module.run())
    print_table(rows)
    print()
    memory = bench_memory.run()
    bench_memory.print_table(memory)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"environment": _environment(), "timings": rows, "memory": memory}, f,
                      indent=1)
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
