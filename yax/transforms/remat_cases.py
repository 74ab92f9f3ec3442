"""What a checkpoint policy may answer besides True/False, as jax.ad_checkpoint names them:
`Saveable` (keep the value), `Recompute` (recompute it in the backward pass) and
`Offloadable(src, dst)` (keep it, moved to another memory space).

yax's remat reads a policy's answer as a truth value, so these are values with the truth of
what they ask for. An Offloadable value is kept like a saveable one, in device memory: yax's
runtime has one memory space per device (no pinned-host offloading), so it has nowhere else to
put it; the gradient is the same.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Offloadable", "Recompute", "Saveable"]


class RecomputeType:
    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "Recompute"


class SaveableType:
    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "Saveable"


Recompute = RecomputeType()
Saveable = SaveableType()


class Offloadable(NamedTuple):
    """Keep the value, offloaded from memory kind `src` to `dst` (kept in device memory)."""

    src: str
    dst: str

    def __bool__(self) -> bool:  # a saved value (a 2-tuple is truthy anyway; said explicitly)
        return True
