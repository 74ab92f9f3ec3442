"""yax.numpy creation (being written)."""

__all__: list[str] = []
