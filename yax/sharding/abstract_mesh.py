"""The old home of `AbstractMesh`, now `yax.runtime.mesh.AbstractMesh` (the runtime floor,
where array types and placement use it); kept so that imports naming it work."""

from yax.runtime.mesh import AbstractMesh  # noqa: F401

__all__ = ["AbstractMesh"]
