"""Shape refinement: a module with dynamic (`?`) dimensions becomes one with static shapes.

At call time the argument shapes are known, so StableHLO's own passes, which jaxlib registers
publicly (`stablehlo.register_stablehlo_passes`), rewrite the module: `refine-arguments` gives
`main` the concrete argument types, `refine-shapes` propagates them through every op (folding
the `get_dimension_size` arithmetic into constants), and `canonicalize-dynamism` turns the
dynamic ops whose shape operands became constants back into their static forms. The result is
an ordinary static module, compiled like any other (and cached per shape by the caller).
"""

from __future__ import annotations

import re

from jaxlib.mlir import ir, passmanager
from jaxlib.mlir.dialects import stablehlo

from yax import errors
from yax.interpreters import mlir

_DYNAMIC = re.compile(r"tensor<[^>]*\?")
_registered: list = []  # [True] once the passes are registered, [error text] if they cannot be


def _register() -> None:
    if not _registered:
        try:
            stablehlo.register_stablehlo_passes()
            _registered.append(True)
        except Exception as e:  # noqa: BLE001  a jaxlib without the passes: say so at call time
            _registered.append(f"{type(e).__name__}: {e}")
    if _registered[0] is not True:
        raise errors.ExportError(f"this jaxlib cannot refine symbolic shapes (registering the "
                                 f"StableHLO passes failed: {_registered[0]})")


def refine(bytecode: bytes, in_avals, target_version: str, name: str) -> bytes:
    """Portable bytecode of the module `bytecode` specialised to the static `in_avals`."""
    _register()
    ctx = mlir.make_context()
    with ctx, ir.Location.unknown():
        module = stablehlo.deserialize_portable_artifact(ctx, bytecode)
        types = ",".join(str(mlir.aval_type(a)) for a in in_avals)
        pipeline = (f"builtin.module(stablehlo-refine-arguments{{types='{types}'}},"
                    f"stablehlo-refine-shapes,func.func(stablehlo-canonicalize-dynamism))")
        try:
            passmanager.PassManager.parse(pipeline).run(module.operation)
        except Exception as e:  # noqa: BLE001  MLIR reports failures with assorted types
            raise errors.ExportError(f"exported function {name}: refining its symbolic shapes "
                                     f"for arguments ({types}) failed: {e}") from None
        if _DYNAMIC.search(str(module)):
            raise errors.ExportError(f"exported function {name}: shapes remain dynamic after "
                                     f"refinement for arguments ({types})")
        return stablehlo.serialize_portable_artifact(module, target_version)
