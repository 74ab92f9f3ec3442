"""yax.lax: the primitive-level API, mirroring jax.lax signatures.

Wrappers validate and canonicalise arguments (Python scalars take the dtype of the array they
meet), then bind primitives. Unlike yax.numpy they do not promote dtypes or broadcast ranks.
"""

from yax.lax.elementwise import (  # noqa: F401
    RoundingMethod, abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitcast_convert_type,
    bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clamp, clz, conj,
    convert_element_type,
    cos, cosh, digamma, div, eq, erf, erf_inv, erfc, exp, exp2, expm1, floor, ge, gt, imag,
    integer_pow, is_finite, le, lgamma, log, log1p, logistic, lt, max, min, mul, ne, neg, nextafter,
    population_count, pow, real, reciprocal, rem, round, rsqrt, select, select_n, shift_left,
    shift_right_arithmetic, shift_right_logical, sign, sin, sinh, sqrt, square, sub, tan, tanh)
from yax.lax.shape import *  # noqa: F401,F403
from yax.lax.slicing import *  # noqa: F401,F403
from yax.lax.reductions import *  # noqa: F401,F403
from yax.lax.sort import *  # noqa: F401,F403
from yax.lax.dot import *  # noqa: F401,F403
from yax.lax.conv import *  # noqa: F401,F403
from yax.lax.ad_control import *  # noqa: F401,F403
from yax.lax.collectives import *  # noqa: F401,F403
from yax.lax.while_loop import *  # noqa: F401,F403
from yax.lax.cond import *  # noqa: F401,F403
from yax.lax.scan import *  # noqa: F401,F403
from yax.lax.mapped import *  # noqa: F401,F403
from yax.lax import linalg  # noqa: F401,E402  (yax.lax.linalg, like jax.lax.linalg)
from yax.lax.windowed import *  # noqa: F401,F403
from yax.lax.top_k import *  # noqa: F401,F403
from yax.core.primitive import Primitive
from yax import primitives



def _primitive_objects() -> dict:
    """Every `<name>_p` Primitive defined under yax.primitives (JAX's `lax.exp_p` etc.), for
    interpreters that dispatch on `eqn.primitive`."""
    import importlib
    import pkgutil

    found = {}
    for info in pkgutil.walk_packages(primitives.__path__, primitives.__name__ + "."):
        module = importlib.import_module(info.name)
        found.update({k: v for k, v in vars(module).items()
                      if k.endswith("_p") and isinstance(v, Primitive) and k not in found})
    return found


globals().update(_primitive_objects())

from yax._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("yax.lax", "jax.lax")  # JAX names yax lacks
# --- scientific extras (sci-a): fft, associative_scan, custom_root/linear_solve, misc ---
from yax.lax.fft import *  # noqa: F401,F403,E402
from yax.lax.associative_scan import *  # noqa: F401,F403,E402
from yax.lax.custom_root import *  # noqa: F401,F403,E402
from yax.lax.linear_solve import *  # noqa: F401,F403,E402
from yax.lax.custom_reductions import *  # noqa: F401,F403,E402
from yax.lax.construction import *  # noqa: F401,F403,E402
from yax.lax.reshaping import *  # noqa: F401,F403,E402
from yax.lax.barriers import *  # noqa: F401,F403,E402
from yax.lax.gather_scatter import *  # noqa: F401,F403,E402
from yax.lax.approx_top_k import *  # noqa: F401,F403,E402
from yax.lax.function_wrappers import *  # noqa: F401,F403,E402
from yax.lax.type_names import *  # noqa: F401,F403,E402
from yax.lax.conv_transpose import *  # noqa: F401,F403,E402
from yax.lax.special import *  # noqa: F401,F403,E402  (igamma, betainc, zeta, bessel_i0e, ...)
from yax.primitives.sharding_constraint import with_sharding_constraint  # noqa: F401,E402
from yax.lax.ragged_dot import (  # noqa: E402,F401
    RaggedDotDimensionNumbers,
    ragged_dot,
    ragged_dot_general,
)
from yax.lax.mulhi import mulhi  # noqa: E402,F401
from yax.lax.rng import RandomAlgorithm, rng_bit_generator, rng_uniform  # noqa: E402,F401
from yax.lax.shape_value import shape_as_value  # noqa: E402,F401
