"""`visualize_array_sharding`: a text picture of which device holds which block of an Array,
laid out as jax draws it (jax renders the same table with `rich`; yax draws it itself)."""

from __future__ import annotations

import builtins

# The drawing's proportions, as jax's: a 2-D array is drawn 10 lines high (times `scale`) and
# as wide as its aspect ratio says, a character being 2.5 times as high as it is wide.
_BASE_HEIGHT = 10
_CHAR_ASPECT = 2.5


def visualize_array_sharding(x, *, use_color: bool = False, scale: float = 1.0,
                             min_width: int = 9, max_width: int = 80) -> None:
    """Print a box table of `x`'s blocks, each cell naming the devices that hold it, sized as
    jax sizes it (a cell's area follows its block's share of the array).

    Args:
      x: a 1-D or 2-D yax Array (or anything with `.shape` and `.sharding`).
      use_color: accepted for JAX compatibility; the table is plain text, as jax's is when its
        output is not a colour terminal.
      scale, min_width, max_width: the drawing's height scale and the bounds of a cell's width.

    Example:
      >>> x = yax.device_put(np.zeros((8, 8)), NamedSharding(make_mesh((2, 2), ("a", "b")),
      ...                                                      P("a", "b")))
      >>> yax.debug.visualize_array_sharding(x)   # a 2x2 table: CPU 0, CPU 1 / CPU 2, CPU 3
    """
    del use_color
    builtins.print(sharding_table(x.shape, x.sharding, scale=scale, min_width=min_width,
                                  max_width=max_width))


def visualize_sharding(shape, sharding, *, use_color: bool = False, scale: float = 1.0,
                       min_width: int = 9, max_width: int = 80, color_map=None) -> None:
    """Print the box table of how `sharding` lays out an array of `shape` (1-D or 2-D) over
    its devices, as `visualize_array_sharding` does for an array."""
    del use_color, color_map
    builtins.print(sharding_table(shape, sharding, scale=scale, min_width=min_width,
                                  max_width=max_width))


def sharding_table(shape, sharding, *, scale: float = 1.0, min_width: int = 9,
                   max_width: int = 80) -> str:
    """The table `visualize_array_sharding` prints, as a string (without the blank line that
    follows it)."""
    shape = tuple(shape)
    if len(shape) not in (1, 2):
        raise ValueError(f"visualize_array_sharding draws 1-D and 2-D arrays only, not shape "
                         f"{shape}")
    blocks = _blocks(shape, sharding)
    cells = {at: _Cell(shape, block, devices, scale, min_width, max_width)
             for at, (block, devices) in blocks.items()}
    rows = 1 + max(r for r, _ in cells)
    cols = 1 + max(c for _, c in cells)
    col_width = [max(cells[r, c].width for r in range(rows)) for c in range(cols)]
    lines = [_rule("┌", "┬", "┐", col_width)]
    for r in range(rows):
        height = max(cells[r, c].height for c in range(cols))
        for line in range(height):
            lines.append("│" + "│".join(cells[r, c].line(line, w)
                                        for c, w in enumerate(col_width)) + "│")
        lines.append(_rule("├", "┼", "┤", col_width) if r + 1 < rows
                     else _rule("└", "┴", "┘", col_width))
    return "\n".join(lines)


def _blocks(shape, sharding) -> dict:
    """{(row, col) of the block: (its (start, stop) per dimension, the devices holding it)}.
    A 1-D array is one row of blocks."""
    blocks: dict = {}
    for device, index in sharding.devices_indices_map(shape).items():
        bounds = tuple(s.indices(n)[:2] for s, n in zip(index, shape))
        at = tuple(start // max(stop - start, 1) for start, stop in bounds)
        if len(shape) == 1:
            at = (0,) + at
        entry = blocks.setdefault(at, (bounds, []))
        entry[1].append(device)
    return blocks


class _Cell:
    """One block's cell: its label, padded around to the size its share of the array gives."""

    def __init__(self, shape, bounds, devices, scale, min_width, max_width):
        devices = sorted(devices, key=lambda d: d.id)
        kind = getattr(devices[0], "platform", "cpu").upper()
        self.label = f"{kind} " + ",".join(str(d.id) for d in devices)
        base_height = int(_BASE_HEIGHT * scale)
        aspect = (shape[1] if len(shape) == 2 else 1) / shape[0]
        (wide_start, wide_stop) = bounds[-1]
        width = int((wide_stop - wide_start) / shape[-1] * int(base_height * aspect)
                    * _CHAR_ASPECT)
        if len(shape) == 2:
            (high_start, high_stop) = bounds[0]
            height = int((high_stop - high_start) / shape[0] * base_height)
        else:
            height = 1
        width = min(max(width, min_width), max_width)
        left, odd = divmod(width - len(self.label) - 2, 2)
        self.left, self.right = max(left, 0), max(left + odd, 0)
        top, odd = divmod(height - 2, 2)
        self.top, bottom = max(top, 0), max(top + odd, 0)
        self.width = self.left + len(self.label) + self.right
        self.height = self.top + 1 + bottom

    def line(self, i: int, width: int) -> str:
        """Line `i` of the cell drawn `width` characters wide (the label centred between the
        cell's own left and right margins; blank lines below it fill a taller row)."""
        if i != self.top:
            return " " * width
        inner = width - self.left - self.right
        before = (inner - len(self.label)) // 2
        text = " " * (self.left + before) + self.label
        return text + " " * (width - len(text))


def _rule(left: str, mid: str, right: str, width) -> str:
    return left + mid.join("─" * w for w in width) + right
