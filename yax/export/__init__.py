"""`yax.export`: lower a function once, save it, and call it later, as `jax.export`.

    exp = yax.export.export(yax.jit(f))(yax.ShapeDtypeStruct((3,), "float32"))
    blob = exp.serialize(vjp_order=1)
    again = yax.export.deserialize(blob)
    again.call(x)            # eagerly, under jit, and under grad (vjp_order=1)

See docs/export.md for what is supported (symbolic dimensions are lowered per call shape and
cannot be serialized).
"""

from yax.export.exported import (  # noqa: F401
    CALLING_CONVENTION_VERSION,
    Exported,
    default_export_platform,
    deserialize,
    export,
)
from yax.export.symbolic import SymbolicDim, symbolic_shape  # noqa: F401

minimum_supported_calling_convention_version = CALLING_CONVENTION_VERSION
maximum_supported_calling_convention_version = CALLING_CONVENTION_VERSION
