"""The safety checks of `yax.export` and `DisabledSafetyCheck`, the way to skip one.

Two checks guard an export, as in jax.export:
- **custom calls**: a module may only contain `stablehlo.custom_call`s whose targets keep a
  compatibility guarantee (the CPU LAPACK typed-FFI kernels, the sharding markers, ...); any
  other target could change meaning or vanish in a later jaxlib, so `export` refuses it unless
  `DisabledSafetyCheck.custom_call(target)` is given;
- **platform**: `Exported.call` refuses to run on a platform the function was not exported for,
  unless `DisabledSafetyCheck.platform()` was given at export (the first platform's module then
  runs).
"""

from __future__ import annotations

import re

from yax import errors

# targets with a compatibility guarantee: the CPU LAPACK typed-FFI kernels (jaxlib keeps their
# ABI stable, and they are what yax's linalg lowers to), XLA's sharding markers and the custom
# calls StableHLO uses for shape assertions and dynamic ops
_STABLE_LAPACK = re.compile(
    r"lapack_[sdcz](potrf|geqrf|orgqr|ungqr|syevd|heevd|geev|gesdd|getrf|sytrd|hetrd|gehrd|"
    r"gees|trsm|gtsv)_ffi")
_STABLE_TARGETS = frozenset([
    "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement",
    "shape_assertion", "stablehlo.dynamic_reduce_window", "stablehlo.dynamic_rng_bit_generator",
    "stablehlo.dynamic_top_k", "stablehlo.dynamic_approx_top_k",
])


class DisabledSafetyCheck:
    """A safety check for `export(fun, disabled_checks=[...])` to skip.

    Make one with `DisabledSafetyCheck.platform()` (call on any platform) or
    `DisabledSafetyCheck.custom_call("target")` (allow that custom-call target). Instances
    compare equal by what they disable, hash, and print as `platform` / `custom_call:target`.

    Example:
      >>> chk = yax.export.DisabledSafetyCheck.custom_call("my_kernel")
      >>> chk.is_custom_call()
      'my_kernel'
    """

    __slots__ = ("_impl",)

    def __init__(self, _impl: str):
        if not isinstance(_impl, str) or not (_impl == "platform"
                                              or _impl.startswith("custom_call:")):
            raise ValueError(f"make a DisabledSafetyCheck with DisabledSafetyCheck.platform() or "
                             f".custom_call(target_name), not from {_impl!r}")
        self._impl = _impl

    @classmethod
    def platform(cls) -> DisabledSafetyCheck:
        """Allow calling the export on a platform it was not exported for."""
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> DisabledSafetyCheck:
        """Allow `stablehlo.custom_call`s to `target_name` in the exported module."""
        if not isinstance(target_name, str) or not target_name:
            raise TypeError(f"custom_call takes the target's name (a non-empty str), got "
                            f"{target_name!r}")
        return cls(f"custom_call:{target_name}")

    def is_custom_call(self) -> str | None:
        """The custom-call target this allows, or None (the platform check)."""
        return self._impl[len("custom_call:"):] if self._impl != "platform" else None

    def is_platform(self) -> bool:
        return self._impl == "platform"

    def __eq__(self, other):
        return isinstance(other, DisabledSafetyCheck) and other._impl == self._impl

    def __hash__(self):
        return hash((DisabledSafetyCheck, self._impl))

    def __str__(self):
        return self._impl

    __repr__ = __str__


def checks_of(disabled_checks) -> tuple:
    """The checks as a tuple, each one validated."""
    if isinstance(disabled_checks, DisabledSafetyCheck):
        disabled_checks = (disabled_checks,)
    out = tuple(disabled_checks)
    for c in out:
        if not isinstance(c, DisabledSafetyCheck):
            raise TypeError(f"disabled_checks takes DisabledSafetyCheck values (e.g. "
                            f"DisabledSafetyCheck.platform()), got {c!r}")
    return out


def allows_any_platform(disabled_checks) -> bool:
    return any(c.is_platform() for c in disabled_checks)


def _custom_call_targets(op, out: list) -> None:
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                if inner.operation.name == "stablehlo.custom_call":
                    out.append((str(inner.operation.attributes["call_target_name"]).strip('"'),
                                str(inner.location)))
                _custom_call_targets(inner.operation, out)


def check_custom_calls(module, disabled_checks, name: str) -> None:
    """An ExportError naming every custom call in `module` whose target has no compatibility
    guarantee and is not allowed by a `DisabledSafetyCheck.custom_call`."""
    allowed = {c.is_custom_call() for c in disabled_checks} - {None}
    found: list = []
    with module.context:
        _custom_call_targets(module.operation, found)
    bad = [(t, loc) for t, loc in found
           if t not in allowed and t not in _STABLE_TARGETS and not _STABLE_LAPACK.fullmatch(t)]
    if bad:
        shown = "; ".join(f"{t} at {loc}" for t, loc in bad[:5])
        targets = sorted({t for t, _ in bad})
        raise errors.ExportError(
            f"exporting {name}: the program uses custom calls with no compatibility guarantee "
            f"({shown}); if you know the targets will exist wherever the export runs, pass "
            f"disabled_checks=[" + ", ".join(f"DisabledSafetyCheck.custom_call({t!r})"
                                             for t in targets) + "]")
