"""yax.numpy contractions (being written)."""

__all__: list[str] = []
