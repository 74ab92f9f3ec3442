"""Charts of a `benchmarks/run.py --json` result: yax/jax ratios with the absolute times labelled.

    python benchmarks/plot.py docs/_static/bench/results.json docs/_static/bench

writes `ratios.png` (every timing benchmark, one bar per row: yax's time over jax's, 1.0 = as
fast as jax, below 1 = faster) and `memory.png` (residual and temporary bytes per checkpoint
setting), which the docs' Performance page shows.
"""

from __future__ import annotations

import json
import os
import sys


def _plt():
    import matplotlib
    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt
    return plt


def _fmt_us(us: float) -> str:
    if us >= 1e5:
        return f"{us / 1e6:.2f} s"
    if us >= 1e3:
        return f"{us / 1e3:.1f} ms"
    return f"{us:.1f} us"


def plot_ratios(rows, env, path) -> None:
    plt = _plt()
    names = [r["name"] for r in rows][::-1]
    ratios = [r["ratio"] for r in rows][::-1]
    labels = [f"{_fmt_us(r['yax_us'])} vs {_fmt_us(r['jax_us'])}" for r in rows][::-1]
    fig, ax = plt.subplots(figsize=(10, 0.38 * len(rows) + 1.4))
    colors = ["#3b7dd8" if r <= 1.1 else "#d8843b" for r in ratios]
    bars = ax.barh(names, ratios, color=colors)
    ax.axvline(1.0, color="black", linewidth=0.8)
    for bar, label in zip(bars, labels):
        ax.text(bar.get_width() * 1.02, bar.get_y() + bar.get_height() / 2, label,
                va="center", fontsize=8)
    ax.set_xlim(0, max(ratios) * 1.45)
    ax.set_xlabel("yax time / jax time (lower is better; 1.0 = same speed)")
    where = f"{env.get('backend', '?')}, {env.get('cpus', '?')} cores, {env.get('date', '')[:10]}"
    ax.set_title(f"yax {env.get('yax', '?')} vs jax {env.get('jax', '?')} ({where})",
                 fontsize=10)
    ax.tick_params(axis="y", labelsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_memory(rows, path) -> None:
    plt = _plt()
    mib = 1 / 2 ** 20
    fig, ax = plt.subplots(figsize=(9, 3.6))
    width = 0.2
    xs = range(len(rows))
    series = (("yax residuals", "yax_res", "#3b7dd8"), ("jax residuals", "jax_res", "#9dbde8"),
              ("yax temp", "yax_temp", "#d8843b"), ("jax temp", "jax_temp", "#ebc19d"))
    for k, (label, key, color) in enumerate(series):
        ax.bar([x + (k - 1.5) * width for x in xs], [r[key] * mib for r in rows], width,
               label=label, color=color)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([r["name"].split(", ")[-1] for r in rows], fontsize=8)
    ax.set_ylabel("MiB")
    ax.set_title(rows[0]["name"].rsplit(", ", 1)[0] if rows else "", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        raise SystemExit("usage: plot.py RESULTS.json OUTPUT_DIR")
    with open(argv[0]) as f:
        data = json.load(f)
    os.makedirs(argv[1], exist_ok=True)
    plot_ratios(data["timings"], data.get("environment", {}), os.path.join(argv[1], "ratios.png"))
    if data.get("memory"):
        plot_memory(data["memory"], os.path.join(argv[1], "memory.png"))
    print(f"wrote charts to {argv[1]}")


if __name__ == "__main__":
    main()
