"""yax.scipy.spatial: the parts of `scipy.spatial` that jax.scipy offers (`transform`)."""

from yax.scipy.spatial import transform  # noqa: F401
