"""yax.scipy: the parts of SciPy's API that jax.scipy offers, built on yax.numpy and yax.lax.

    import yax.scipy.special as special
    import yax.scipy.stats.norm as norm
"""

from yax.scipy import (  # noqa: F401
    linalg,  # noqa: F401,E402
    ndimage,
    optimize,
    special,
    stats,
)
