"""clz: the number of leading zero bits of each integer (StableHLO count_leading_zeros).

Integer-valued, so its JVP is a symbolic zero (integers carry float0 tangents); elementwise, so
vmap applies it to the batched operand as it is.
"""

from __future__ import annotations

from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters.ad_util import Zero
from yax.interpreters.mlir import hlo
from yax.primitives._checks import dtype_kind_check


def _clz_abstract_eval(x):
    dtype_kind_check("clz", x, "int")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


clz_p = Primitive("clz")
clz_p.abstract_eval = _clz_abstract_eval
clz_p.lower = lambda ctx, x: [hlo.count_leading_zeros(x)]


def _clz_jvp(primals, tangents):
    out = clz_p.bind(*primals)
    return [out], [Zero(out.aval.strip_weak_type())]


clz_p.jvp = _clz_jvp
clz_p.batch = lambda args, dims: ([clz_p.bind(args[0])], [dims[0]])
