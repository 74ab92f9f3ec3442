"""yax.numpy: the NumPy API on top of yax.lax, with JAX's dtype promotion and NumPy broadcasting.

Arrays are immutable: use `x.at[idx].set(v)` instead of `x[idx] = v`.
"""

from yax.numpy.dtypes_api import *  # noqa: F401,F403
from yax.numpy.creation import *  # noqa: F401,F403
from yax.numpy.ufuncs import *  # noqa: F401,F403
from yax.numpy.reductions import *  # noqa: F401,F403
from yax.numpy.manipulation import *  # noqa: F401,F403
from yax.numpy.indexing import *  # noqa: F401,F403
from yax.numpy.contractions import *  # noqa: F401,F403
from yax.numpy.sorting import *  # noqa: F401,F403
from yax.numpy.construction import *  # noqa: F401,F403
from yax.numpy.rearrange import *  # noqa: F401,F403
from yax.numpy.searching import *  # noqa: F401,F403
from yax.numpy.setops import *  # noqa: F401,F403
from yax.numpy.statistics import *  # noqa: F401,F403
from yax.numpy.padding import *  # noqa: F401,F403
from yax.numpy.calculus import *  # noqa: F401,F403
from yax.numpy.float_bits import *  # noqa: F401,F403
from yax.numpy.integer_math import *  # noqa: F401,F403
from yax.numpy.scalar_functions import *  # noqa: F401,F403
from yax.numpy.predicates import *  # noqa: F401,F403
from yax.numpy.windows import *  # noqa: F401,F403
from yax.numpy.products import *  # noqa: F401,F403
from yax.numpy.polynomial import *  # noqa: F401,F403
from yax.numpy.functional import *  # noqa: F401,F403
from yax.numpy.host_io import *  # noqa: F401,F403
from yax.numpy.bit_packing import *  # noqa: F401,F403
from yax.numpy.printing import *  # noqa: F401,F403
from yax.numpy.type_aliases import *  # noqa: F401,F403
from yax.numpy import array_methods as _array_methods  # noqa: F401  (installs operators)
from yax.runtime.array import Array as ndarray  # noqa: F401
from yax.numpy import linalg  # noqa: F401,E402  (jnp.linalg)

from yax._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__, "jax.numpy")  # JAX names yax lacks
from yax.numpy import fft  # noqa: F401,E402  (jnp.fft)
from yax.numpy.ufunc_objects import frompyfunc, ufunc  # noqa: E402,F401
