"""yax.scipy.integrate: `trapezoid`, the composite trapezoidal rule (as jax.scipy.integrate)."""

from yax.numpy import trapezoid

__all__ = ["trapezoid"]
