"""Primitives that steer differentiation without computing: stop_gradient.

`stop_gradient(x)` is the identity on values and has a zero derivative, so nothing flows back
through it (use it for targets, running statistics, straight-through tricks).
"""

from __future__ import annotations

from yax.core.primitive import Primitive
from yax.interpreters.ad_util import Zero, tangent_aval
from yax.primitives.checkify_rules import without_nan_check


def _stop_gradient_jvp(primals, tangents):
    x, = primals
    return [stop_gradient_p.bind(x)], [Zero(tangent_aval(x.aval))]


stop_gradient_p = Primitive("stop_gradient", abstract_eval=lambda x: x, lower=lambda ctx, x: [x],
                            jvp=_stop_gradient_jvp,
                            batch=lambda args, dims: ([stop_gradient_p.bind(args[0])], [dims[0]]))

# moves or selects data: a NaN in the output was in an input, and checkify reports it where it
# was made
stop_gradient_p.define(checkify=without_nan_check)
