"""debug_nans / debug_infs: stop at the primitive that first produced a NaN (or an infinity).

Two hooks call in here, each only while a flag is on: `check_primitive` after every eager
primitive application, and `check_jit_outputs` after a jitted call (installed in the eager
interpreter's and jit's `output_checks` when this module is imported, as `yax.debug` does).
A jitted call whose outputs hold a NaN is run again op by op, eagerly (jitted sub-functions
inlined), so the eager check names the first primitive that produced it and the user's line;
this is what JAX does too.
"""

from __future__ import annotations

import numpy as np

from yax import errors
from yax.config import config
from yax.core import dtypes
from yax.core.trace import eager_trace, use_trace
from yax.interpreters import eager
from yax.interpreters.eval_jaxpr import bind_eqn, eval_jaxpr
from yax.transforms import jit_entry


def _bad(value: np.ndarray) -> str | None:
    if not dtypes.is_inexact(value.dtype):
        return None
    if config.debug_nans and np.isnan(value).any():
        return "nan"
    if config.debug_infs and np.isinf(value).any():
        return "inf"
    return None


def check_primitive(primitive, outs) -> None:
    """Raise if an output of one eager primitive application holds a NaN/inf."""
    for out in outs:
        kind = _bad(np.asarray(out))
        if kind is not None:
            raise errors.DebugNaNError(
                f"invalid value ({kind}) encountered in {primitive.name}: the first primitive "
                f"that produced a {kind} (debug_nans/debug_infs is on; turn it off with "
                f"yax.config.update('debug_nans', False))")


def check_jit_outputs(jaxpr, args, outs, name: str) -> None:
    """After a jitted call: if an output holds a NaN/inf, find the primitive that made it."""
    kinds = [_bad(np.asarray(o)) for o in outs]
    if not any(kinds):
        return
    with use_trace(eager_trace()):
        _rerun(jaxpr.jaxpr, jaxpr.consts, list(args))
    kind = next(k for k in kinds if k)
    raise errors.DebugNaNError(
        f"invalid value ({kind}) in the output of jitted function {name}; running it again op by "
        f"op did not reproduce it (the compiled program may compute differently, e.g. fused "
        f"operations), so the primitive could not be named")


def _rerun(jaxpr, consts, args) -> list:
    """Evaluate `jaxpr` eagerly, one primitive at a time, inlining jitted sub-functions."""
    def on_eqn(eqn, ins):
        if eqn.primitive.name == "pjit":
            inner = eqn.params["jaxpr"]
            return _rerun(inner.jaxpr, inner.consts, ins)
        return bind_eqn(eqn, ins)  # eval_jaxpr sets the line errors name
    return eval_jaxpr(jaxpr, consts, args, on_eqn=on_eqn)


eager.output_checks.append(check_primitive)
jit_entry.output_checks.append(check_jit_outputs)
