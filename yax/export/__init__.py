"""`yax.export`: lower a function once, save it, and call it later, as `jax.export`.

    exp = yax.export.export(yax.jit(f))(yax.ShapeDtypeStruct((3,), "float32"))
    blob = exp.serialize(vjp_order=1)
    again = yax.export.deserialize(blob)
    again.call(x)            # eagerly, under jit, and under grad (vjp_order=1)

Symbolic shapes (`symbolic_shape("b, 4")`, dimension expressions such as `2*b`) lower to one
module with dynamic dimensions, refined to static shapes per call; see docs/export.md.
`DisabledSafetyCheck` relaxes the custom-call and platform checks (safety.py); custom pytree
nodes in the argument/result structures serialize once registered (serialization.py).
"""

from yax.export.exported import (  # noqa: F401
    CALLING_CONVENTION_VERSION,
    Exported,
    default_export_platform,
    deserialize,
    export,
)
from yax.export.safety import DisabledSafetyCheck  # noqa: F401
from yax.export.serialization import (  # noqa: F401
    register_namedtuple_serialization,
    register_pytree_node_serialization,
)
from yax.export.symbolic import (  # noqa: F401
    InconclusiveDimensionOperation,
    SymbolicDim,
    SymbolicScope,
    is_symbolic_dim,
    symbolic_args_specs,
    symbolic_shape,
)

minimum_supported_calling_convention_version = CALLING_CONVENTION_VERSION
maximum_supported_calling_convention_version = CALLING_CONVENTION_VERSION
