"""How an equation's name and params are shown when a jaxpr is printed, so that it reads as
jax 0.10.2 prints the same program. Printing only: the equation itself is unchanged.

jax sorts params by name with `name` first, leaves out params implied by the output type, and
shows a few params yax does not have at their only value in yax (`out_sharding=None`).
docs/differences.md lists these.
"""

from __future__ import annotations

PRINT_NAMES = {"pjit": "jit"}

# params yax keeps that jax does not show
_HIDDEN = {"scan": ("linear",), "broadcast_in_dim": ("shape",), "dot_general": ("precision",)}
# params jax has and yax does not (yax never shards inside these): shown at jax's default
_JAX_DEFAULTS = {"reduce_sum": {"out_sharding": None}, "reshape": {"sharding": None},
                 "iota": {"sharding": None}}


def print_name(name: str) -> str:
    return PRINT_NAMES.get(name, name)


def shown_params(name: str, params: dict, out_avals) -> list[tuple[str, object]]:
    """(key, value) pairs in the order jax prints them."""
    shown = {k: v for k, v in params.items() if k not in _HIDDEN.get(name, ())}
    shown.update(_JAX_DEFAULTS.get(name, {}))
    if name == "broadcast_in_dim" and shown.get("broadcast_dimensions") == ():
        del shown["broadcast_dimensions"]  # a scalar broadcast says nothing more than its type
    if name == "dot_general":
        _as_jax_dot(shown, out_avals)
    if name in ("custom_jvp_call", "custom_vjp_call") and hasattr(shown.get("rule"), "shown"):
        _as_jax_custom_call(shown)
    if name == "shard_map":
        _as_jax_shard_map(shown)
    return sorted(shown.items(), key=lambda kv: (kv[0] != "name", kv[0]))


def _as_jax_shard_map(shown: dict):
    """jax names no function and shows which axes the body makes manual (all in yax)."""
    shown.pop("name", None)
    if shown.get("mesh") is not None:
        shown["newly_manual_axes"] = frozenset(shown["mesh"].axis_names)


class _Lists(tuple):
    """A tuple of ints shown as jax shows dot_general's dimension numbers: `[1]`."""

    def __repr__(self):
        return "[" + ", ".join(str(d) for d in self) + "]"


def _as_jax_dot(shown: dict, out_avals):
    if "dimension_numbers" in shown:
        (lc, rc), (lb, rb) = shown["dimension_numbers"]
        shown["dimension_numbers"] = ((_Lists(lc), _Lists(rc)), (_Lists(lb), _Lists(rb)))
    if shown.get("preferred_element_type") is None and out_avals:
        shown["preferred_element_type"] = out_avals[0].dtype  # jax records the result type


class _FunctionName(str):
    """A user function shown by its name, as jax shows custom_jvp_call's `jvp=<lambda>`."""

    def __repr__(self):
        return str(self)


def _function_name(fun) -> _FunctionName:
    return _FunctionName(getattr(fun, "__name__", None) or str(fun))


def _as_jax_custom_call(shown: dict):
    """yax's (call_jaxpr, num_consts, rule) as jax's (name, call_jaxpr, jvp or fwd/bwd,
    symbolic_zeros): the user's functions by name."""
    rule = shown.pop("rule")
    if not shown.get("num_consts"):  # jax's custom calls take their consts as arguments
        shown.pop("num_consts", None)
    for key, fun in rule.shown.items():
        shown[key] = _function_name(fun)
    shown["symbolic_zeros"] = bool(getattr(rule, "symbolic_zeros", False))
