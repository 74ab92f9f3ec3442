"""The order jax gives complex numbers: lexicographic, by real part and then imaginary part.

jax accepts complex operands in `lax.max`/`lax.min`, `lax.reduce_max`/`reduce_min` and
`lax.sort` (hence `jnp.maximum`, `jnp.max`, `jnp.sort`, `jnp.argsort`, `jnp.searchsorted`), and
`jnp.less` & co. compare complex values in that order (while `lax.lt` itself rejects them). The
comparison primitives here take real keys only, so each complex operation is written with the
real and imaginary parts, which every transformation already handles: `max(x, y)` is
`select(x >= y, x, y)`, a reduction takes the largest real part and then the largest imaginary
part among the entries that have it, and a sort orders by the two parts as two keys.
"""

from __future__ import annotations

import numpy as np

from yax.core import dtypes
from yax.core.trace import bind
from yax.primitives import elementwise as ew
from yax.primitives import reductions as red
from yax.primitives.shape import broadcast_in_dim_p
from yax.runtime.values import as_operand

_CMP = {name: ew.comparison_primitives[name] for name in ("eq", "lt", "le", "gt", "ge")}
# strict part of each comparison: (x < y) is (re < re) or (re == re and im < im)
_STRICT = {"lt": "lt", "le": "lt", "gt": "gt", "ge": "gt"}


def is_complex(x) -> bool:
    return dtypes.is_complex(x.aval.dtype)


def _parts(x):
    return bind(ew.unary_primitives["real"], x), bind(ew.unary_primitives["imag"], x)


def compare(name: str, x, y):
    """`name` ("lt", "le", "gt", "ge") of complex arrays of one shape, in lexicographic order."""
    (xr, xi), (yr, yi) = _parts(x), _parts(y)
    strict = bind(_CMP[_STRICT[name]], xr, yr)
    tie = bind(ew.binary_primitives["and"], bind(_CMP["eq"], xr, yr), bind(_CMP[name], xi, yi))
    return bind(ew.binary_primitives["or"], strict, tie)


def extremum(name: str, x, y):
    """Elementwise "max" or "min" of complex arrays of one shape (x where they are equal)."""
    keep_x = compare("ge" if name == "max" else "le", x, y)
    return bind(ew.select_n_p, keep_x, y, x)


def reduce_extremum(name: str, x, axes: tuple):
    """`reduce_max`/`reduce_min` of a complex array over `axes`: the largest (smallest) real
    part, then the largest (smallest) imaginary part among the entries that have it."""
    reduce = red.reduce_primitives[name]
    xr, xi = _parts(x)
    best_re = bind(reduce, xr, axes=axes)
    spread = bind(broadcast_in_dim_p, best_re, shape=x.aval.shape,
                  broadcast_dimensions=tuple(i for i in range(x.aval.ndim) if i not in axes))
    fill = as_operand(np.array(-np.inf if name == "reduce_max" else np.inf, xi.aval.dtype))
    fill = bind(broadcast_in_dim_p, fill, shape=x.aval.shape, broadcast_dimensions=())
    candidates = bind(ew.select_n_p, bind(_CMP["eq"], xr, spread), fill, xi)
    best_im = bind(reduce, candidates, axes=axes)
    return _complex(best_re, best_im, x.aval.dtype)


def _complex(re, im, dtype):
    convert = ew.convert_element_type_p
    re = bind(convert, re, new_dtype=dtype, weak_type=False)
    im = bind(convert, im, new_dtype=dtype, weak_type=False)
    unit = bind(broadcast_in_dim_p, as_operand(np.array(1j, dtype)), shape=im.aval.shape,
                broadcast_dimensions=())
    return bind(ew.binary_primitives["add"], re, bind(ew.binary_primitives["mul"], im, unit))


def sort_operands(operands, num_keys: int):
    """(operands, num_keys) with every complex key among the first `num_keys` replaced by its
    real and imaginary parts, and the number of leading extra operands to drop after sorting
    (the originals are carried along, so they come back unchanged in value)."""
    keys = operands[:num_keys]
    if num_keys > len(operands) or not any(is_complex(k) for k in keys):  # sort_p says why
        return operands, num_keys, 0
    expanded = []
    for k in keys:
        expanded.extend(_parts(k) if is_complex(k) else (k,))
    return [*expanded, *operands], len(expanded), len(expanded)
