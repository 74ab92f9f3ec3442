"""`visualize_array_sharding`: a text picture of which device holds which block of an Array."""

from __future__ import annotations

import builtins


def visualize_array_sharding(x, *, use_color: bool = False, max_width: int = 80) -> None:
    """Print a box table of `x`'s blocks, each cell naming the devices that hold it.

    Args:
      x: a 1-D or 2-D yax Array (or anything with `.shape` and `.sharding`).
      use_color, max_width: accepted for JAX compatibility; the table is plain text (no
        `rich` dependency) and cells are as wide as their labels.

    Example:
      >>> x = yax.device_put(np.zeros((8, 8)), NamedSharding(make_mesh((2, 2), ("a", "b")),
      ...                                                      P("a", "b")))
      >>> yax.debug.visualize_array_sharding(x)   # a 2x2 table: CPU 0, CPU 1 / CPU 2, CPU 3
    """
    builtins.print(sharding_table(x.shape, x.sharding))


def visualize_sharding(shape, sharding, *, use_color: bool = False, scale: float = 1.0,
                       min_width: int = 9, max_width: int = 80, color_map=None) -> None:
    """Print the box table of how `sharding` lays out an array of `shape` (1-D or 2-D) over
    its devices, as `visualize_array_sharding` does for an array; the drawing options are
    accepted for JAX compatibility (plain text)."""
    del use_color, scale, min_width, max_width, color_map
    builtins.print(sharding_table(shape, sharding))


def sharding_table(shape, sharding) -> str:
    """The table `visualize_array_sharding` prints, as a string."""
    shape = tuple(shape)
    if len(shape) not in (1, 2):
        raise ValueError(f"visualize_array_sharding draws 1-D and 2-D arrays only, not shape "
                         f"{shape}")
    shape2 = shape if len(shape) == 2 else (1,) + shape
    index_of = sharding.devices_indices_map(shape)
    cells: dict = {}
    for dev, idx in index_of.items():
        idx2 = idx if len(shape) == 2 else (slice(None),) + tuple(idx)
        key = tuple(_bounds(s, n) for s, n in zip(idx2, shape2))
        cells.setdefault(key, []).append(dev)
    rows = sorted({k[0] for k in cells})
    cols = sorted({k[1] for k in cells})
    labels = {k: _label(devs) for k, devs in cells.items()}
    width = [max(len(labels.get((r, c), "")) for r in rows) + 4 for c in cols]
    lines = [_rule("┌", "┬", "┐", width)]
    for i, r in enumerate(rows):
        text = [labels.get((r, c), "").center(w) for c, w in zip(cols, width)]
        blank = [" " * w for w in width]
        lines += ["│" + "│".join(blank) + "│", "│" + "│".join(text) + "│",
                  "│" + "│".join(blank) + "│"]
        lines.append(_rule("├", "┼", "┤", width) if i + 1 < len(rows)
                     else _rule("└", "┴", "┘", width))
    return "\n".join(lines)


def _bounds(s: slice, n: int) -> tuple:
    start, stop, _ = s.indices(n)
    return (start, stop)


def _label(devices) -> str:
    devices = sorted(devices, key=lambda d: d.id)
    kind = getattr(devices[0], "platform", "cpu").upper()
    return f"{kind} " + ",".join(str(d.id) for d in devices)


def _rule(left: str, mid: str, right: str, width) -> str:
    return left + mid.join("─" * w for w in width) + right
