"""Bitwise elementwise primitives: not, and, or, xor, the shifts, population_count (table rows,
as the other elementwise families) and clz, the number of leading zero bits.

They act on integers (and/or/xor/not also on bools), so their JVPs are symbolic zeros (integers
carry float0 tangents); elementwise, so vmap applies them to the batched operands as they are.
"""

from __future__ import annotations

from yax.core.avals import ShapedArray
from yax.core.primitive import Primitive
from yax.interpreters.ad_util import Zero
from yax.interpreters.mlir import hlo
from yax.primitives._checks import dtype_kind_check
from yax.primitives._elementwise_family import binary_family, op_lower, unary_family

UNARY_TABLE = [
    # name, dtype kind, lowering, output dtype function, jvp (integer/bool outputs: none)
    ("not", "int_or_bool", op_lower(hlo.not_), None, None),
    ("population_count", "int", op_lower(hlo.popcnt), None, None),
]
unary_primitives = unary_family(UNARY_TABLE)

BINARY_TABLE = [
    # name, dtype kind, lowering, (jvp_x, jvp_y)
    ("and", "int_or_bool", op_lower(hlo.and_), (None, None)),
    ("or", "int_or_bool", op_lower(hlo.or_), (None, None)),
    ("xor", "int_or_bool", op_lower(hlo.xor), (None, None)),
    ("shift_left", "int", op_lower(hlo.shift_left), (None, None)),
    ("shift_right_logical", "int", op_lower(hlo.shift_right_logical), (None, None)),
    ("shift_right_arithmetic", "int", op_lower(hlo.shift_right_arithmetic), (None, None)),
]
binary_primitives = binary_family(BINARY_TABLE)


# --- clz -----------------------------------------------------------------------------------------

def _clz_abstract_eval(x):
    dtype_kind_check("clz", x, "int")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _clz_jvp(primals, tangents):
    out = clz_p.bind(*primals)
    return [out], [Zero(out.aval.strip_weak_type())]


clz_p = Primitive("clz", abstract_eval=_clz_abstract_eval,
                  lower=lambda ctx, x: [hlo.count_leading_zeros(x)], jvp=_clz_jvp,
                  batch=lambda args, dims: ([clz_p.bind(args[0])], [dims[0]]))
