"""yax.lax shape operations (filled in by its issue)."""

__all__: list[str] = []
