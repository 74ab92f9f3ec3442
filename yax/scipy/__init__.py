"""yax.scipy: the parts of SciPy's API that jax.scipy offers, built on yax.numpy and yax.lax.

    import yax.scipy.special as special
    import yax.scipy.stats.norm as norm
    import yax.scipy.sparse.linalg as spla
"""

from yax._missing import module_getattr as _module_getattr  # noqa: E402
from yax.scipy import (  # noqa: F401
    cluster,
    fft,
    integrate,
    interpolate,
    linalg,  # noqa: F401,E402
    ndimage,
    optimize,
    signal,
    sparse,
    spatial,
    special,
    stats,
)

__getattr__ = _module_getattr(__name__, "jax.scipy")  # JAX names yax lacks
