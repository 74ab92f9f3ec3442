"""yax.scipy.cluster (`jax.scipy.cluster`): vector quantization (`vq`)."""

from yax.scipy.cluster import vq  # noqa: F401

__all__ = ["vq"]
