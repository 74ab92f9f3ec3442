"""yax.scipy.stats: statistical distributions (so far the normal, `yax.scipy.stats.norm`)."""

from yax._missing import module_getattr as _module_getattr  # noqa: E402
from yax.scipy.stats import norm  # noqa: F401

__getattr__ = _module_getattr(__name__, "jax.scipy.stats")  # JAX names yax lacks
