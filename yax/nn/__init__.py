"""yax.nn: neural-network functions (jax.nn's API), built on yax.numpy and yax.lax.

    import yax.nn
    probs = yax.nn.softmax(logits, axis=-1)
"""

from yax._missing import module_getattr as _module_getattr  # noqa: E402
from yax.nn.functions import *  # noqa: F401,F403
from yax.nn.functions import __all__  # noqa: F401

__getattr__ = _module_getattr(__name__, "jax.nn")  # JAX names yax lacks
