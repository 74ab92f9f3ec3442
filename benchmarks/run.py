"""`make bench`: every benchmark, yax vs jax side by side in one process, as ratios.

Absolute times on small shared machines are noise; the ratio column is the figure to watch.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

from benchmarks import (  # noqa: E402
    bench_autodiff,
    bench_control_flow,
    bench_dispatch,
    bench_eager,
    bench_memory,
)
from benchmarks.common import print_table  # noqa: E402


def main() -> None:
    rows = []
    for module in (bench_dispatch, bench_eager, bench_autodiff, bench_control_flow):
        rows.extend(module.run())
    print_table(rows)
    print()
    bench_memory.print_table(bench_memory.run())


if __name__ == "__main__":
    main()
