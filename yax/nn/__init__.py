"""yax.nn: neural-network functions (jax.nn's API), built on yax.numpy and yax.lax.

    import yax.nn
    probs = yax.nn.softmax(logits, axis=-1)
"""

from yax.nn.functions import *  # noqa: F401,F403
from yax.nn.functions import __all__  # noqa: F401
