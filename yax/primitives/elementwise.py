"""The elementwise family under one name: its primitives are declared by topic in
arithmetic.py, transcendental.py, comparison.py, bits.py and conversions.py (shared table
builders: _elementwise_family.py), and gathered here, where yax.lax and the other families look
them up (`unary_primitives["sin"]`, `add_p`, ...).
"""

from __future__ import annotations

from yax.primitives import arithmetic, bits, comparison, transcendental
from yax.primitives._elementwise_family import (  # noqa: F401
    broadcast_operands,
    nary_abstract_eval,
)
from yax.primitives.arithmetic import integer_pow_p, pow_p  # noqa: F401
from yax.primitives.comparison import clamp_p, comparison_primitives, select_n_p  # noqa: F401
from yax.primitives.conversions import (  # noqa: F401
    bitcast_convert_type_p,
    convert_element_type_p,
)

unary_primitives = {**arithmetic.unary_primitives, **transcendental.unary_primitives,
                    **comparison.unary_primitives, **bits.unary_primitives}
binary_primitives = {**arithmetic.binary_primitives, **transcendental.binary_primitives,
                     **bits.binary_primitives}
globals().update({f"{name}_p": prim for table in (unary_primitives, binary_primitives,
                                                  comparison_primitives)
                  for name, prim in table.items()})
