"""`jax.custom_derivatives`: custom differentiation rules (yax/transforms/custom_derivatives.py)
under jax's module name."""

from __future__ import annotations

from yax._missing import module_getattr
from yax.primitives.custom_derivatives import custom_jvp_call_p  # noqa: F401
from yax.transforms import custom_derivatives as _custom
from yax.transforms.custom_derivatives import custom_jvp, custom_vjp  # noqa: F401
from yax.transforms.custom_gradient import closure_convert, custom_gradient  # noqa: F401

_missing = module_getattr(__name__, "jax.custom_derivatives")


def __getattr__(name: str):
    value = getattr(_custom, name, None)  # the rest of yax's custom-derivative names
    if value is None or name.startswith("_"):
        return _missing(name)
    return value
