"""Turning user arguments into flat leaves and avals (shared by jit and make_jaxpr)."""

from __future__ import annotations

from yax import errors, tree_util
from yax.runtime.values import leaf_aval


def non_array_argument_error(fun, args, kwargs, static_pos) -> TypeError:
    """The error for a jit argument leaf that is not an array, naming its pytree path as the
    user wrote it (`d['name']`, `args[1][0]`) and the fix."""
    try:
        import inspect
        params = [p.name for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    named = [(params[i] if i < len(params) else f"args[{i}]", a)
             for i, a in enumerate(args) if i not in static_pos]
    named += [(k, v) for k, v in kwargs.items()]
    for name, value in named:
        for path, leaf in tree_util.tree_flatten_with_path(value)[0]:
            try:
                leaf_aval(leaf)
            except TypeError:
                fname = getattr(fun, "__name__", "the function")
                where = name + tree_util.keystr(path)
                return TypeError(
                    f"{fname} was called with a non-array value of type {type(leaf).__name__} "
                    f"at {where}: jit traces its array arguments, so every leaf must be an array "
                    f"or a scalar. Mark that argument static (static_argnums/static_argnames) "
                    f"or pass it through a closure instead")
    return TypeError("a jit argument is not an array; pass arrays, scalars or pytrees of them")


def normalize_argnums(argnums, nargs: int | None = None) -> tuple[int, ...]:
    if argnums is None:
        return ()
    if isinstance(argnums, int):
        argnums = (argnums,)
    out = []
    for i in argnums:
        if not isinstance(i, int):
            raise TypeError(f"argnums must be ints, got {i!r}")
        if nargs is not None and i < 0:
            i += nargs
        out.append(i)
    return tuple(out)


def check_hashable_static(value, what: str) -> None:
    try:
        hash(value)
    except TypeError as e:
        raise errors.StaticArgumentError(
            f"static argument {what} of type {type(value).__name__} is not hashable ({e}); static "
            f"arguments key the jit cache. Pass a hashable value (a tuple instead of a list, a "
            f"frozen dataclass), or make the argument a regular traced argument.") from None
