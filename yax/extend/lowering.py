"""`jax.extend.lowering`: the MLIR context and rule context lowering rules work with.

yax lowers with jaxlib's MLIR bindings (the same ones jax uses), so `JaxIrContext` is an MLIR
context with the StableHLO, CHLO and Shardy dialects loaded, and `upstream_dialects` jaxlib's
package of MLIR dialect bindings.
"""

from __future__ import annotations

from jaxlib.mlir import dialects as upstream_dialects
from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jaxlib.mlir.dialects import chlo, sdy
from jaxlib.mlir.dialects import stablehlo as hlo

from yax.interpreters.lowering import RuleContext as LoweringRuleContext

__all__ = ["JaxIrContext", "LoweringRuleContext", "upstream_dialects"]


class JaxIrContext(ir.Context):
    """An MLIR context with the dialects yax's lowering emits registered and loaded."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        registry = ir.DialectRegistry()
        _jax_mlir_ext.register_dialects(registry)
        self.append_dialect_registry(registry)
        self.load_all_available_dialects()
        for dialect in (hlo, chlo, sdy):
            dialect.register_dialect(self)
