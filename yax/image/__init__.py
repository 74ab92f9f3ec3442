"""yax.image: image resizing as jax.image has it (`resize`, `scale_and_translate`,
`ResizeMethod`)."""

from yax.image._scale import ResizeMethod, resize, scale_and_translate  # noqa: F401

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
