"""yax.nn: neural-network functions (jax.nn's API), built on yax.numpy and yax.lax.

    import yax.nn
    probs = yax.nn.softmax(logits, axis=-1)
"""

from yax.nn import activations as _activations  # noqa: E402
from yax.nn.activations import *  # noqa: F401,F403,E402
from yax.nn.functions import *  # noqa: F401,F403
from yax.nn.functions import __all__  # noqa: F401

__all__ = [*__all__, *_activations.__all__]
from yax.nn import initializers  # noqa: F401,E402
from yax.nn.attention import dot_product_attention  # noqa: F401,E402

__all__ = [*__all__, "dot_product_attention", "initializers"]

from yax._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__, "jax.nn")  # JAX names yax lacks
