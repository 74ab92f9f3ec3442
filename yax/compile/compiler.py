"""`compile_jaxpr`: the one road from a closed jaxpr to an executable.

Lowering (`interpreters/lowering.py`) makes one StableHLO module with entry `main`; a placement
adds the Shardy annotations of a multi-device program; the runtime compiles it through the
persistent compilation cache. jit, eager primitives, eager `pjit`, shard_map and the
compile-when-eager helpers all come through here.
"""

from __future__ import annotations

import warnings

from yax.compile.placement import Placement, annotate
from yax.core.ir import ClosedJaxpr
from yax.interpreters import lowering
from yax.runtime import backend, executable


def lower_jaxpr(closed: ClosedJaxpr, placement: Placement | None = None, donated=(), *,
                n_consts: int = 0) -> lowering.ModuleContext:
    """The module of `closed` (its consts embedded; Shardy-annotated under a placement whose
    shardings describe the parameters after the first `n_consts`, which are replicated)."""
    mctx = lowering.lower_module(closed.jaxpr, platform=backend.platform(),
                                 consts=closed.consts, consts_as_args=False,
                                 donated=tuple(donated),
                                 device_ids=None if placement is None else
                                 [d.id for d in placement.devices])
    if placement is not None:
        annotate(mctx, placement, n_consts, closed.in_avals, closed.out_avals)
    return mctx


def compile_jaxpr(closed: ClosedJaxpr, placement: Placement | None = None, donated=(), *,
                  n_consts: int = 0, device=None, name: str | None = None,
                  warn_unused_donations: bool = False) -> executable.Executable:
    """Lower and compile `closed` for the current platform.

    Args:
      closed: the program; its consts are embedded in the module.
      placement: where a multi-device program runs (see `placement.resolve`); None: one device,
        `device` (default: the default device).
      donated: indices of parameters whose buffers an output of the same type may reuse.
      n_consts: leading parameters that are captured constants (replicated under a placement).
      name: shown by `config.log_compiles`.
      warn_unused_donations: warn (at the caller of the caller's caller) about donations no
        output could take.
    """
    mctx = lower_jaxpr(closed, placement, donated, n_consts=n_consts)
    if warn_unused_donations and mctx.unused_donations:
        warnings.warn(f"{len(mctx.unused_donations)} donated buffer(s) could not be reused: "
                      f"no output has the same shape and dtype; they are not donated",
                      UserWarning, stacklevel=6)
    if placement is not None:
        where = dict(devices=placement.devices, mesh=placement.mesh,
                     out_shardings=placement.out_shardings,
                     first_argument=placement.first_argument,
                     in_shardings=[None] * n_consts + list(placement.in_shardings))
    else:
        where = dict(devices=[device] if device is not None else None)
    return executable.compile_module(mctx.module, closed.in_avals, closed.out_avals,
                                     platform=backend.platform(), name=name,
                                     host_callbacks=getattr(mctx, "host_callbacks", ()),
                                     **where)
