"""Binding dimension variables at call time: an export with symbolic shapes is called with
concrete arrays, so each variable is solved from the argument shapes (a dimension `b`, `2*b` or
`b + 1` determines `b`), then every dimension and every constraint of the shapes' scope is
checked, with an ExportError that names the argument and the disagreeing dimension.
"""

from __future__ import annotations

from yax import errors
from yax.export.symbolic import SymbolicScope, evaluate, is_symbolic_dim


def bind_dimensions(in_avals, shapes, name: str) -> dict:
    """The value of every dimension variable, solved from the arguments' concrete shapes (a
    dimension `b` or `k*b + c` of a single variable determines it); then every dimension is
    checked: a clear ExportError where a rank, a constant or an expression disagrees."""
    env: dict = {}
    where: dict = {}
    pending = []
    for i, (aval, shape) in enumerate(zip(in_avals, shapes, strict=True)):
        if len(shape) != len(aval.shape):
            raise errors.ExportError(f"exported function {name}: argument {i} has shape "
                                     f"{tuple(shape)} but was exported for {aval.str_short()}")
        for d, n in zip(aval.shape, shape, strict=True):
            if is_symbolic_dim(d):
                pending.append((i, d, n, tuple(shape), aval))
    for i, d, n, shape, aval in pending:  # solve single-variable linear dimensions
        lin = linear(d)
        if lin is None:
            continue
        var, k, c = lin
        if var in env:
            continue
        if (n - c) % k or (n - c) // k < 1:
            raise errors.ExportError(
                f"exported function {name}: argument {i} has shape {shape}, but dimension "
                f"'{d}' of {aval.str_short()} cannot be {n} for an integer {var} >= 1")
        env[var] = (n - c) // k
        where[var] = (i, shape)
    for aval in in_avals:
        for d in aval.shape:
            if is_symbolic_dim(d):
                missing = d.variables() - set(env)
                if missing:
                    raise errors.ExportError(
                        f"exported function {name}: dimension variable(s) "
                        f"{', '.join(sorted(missing))} cannot be found from the argument shapes "
                        f"(each needs an argument dimension of the form k*v + c)")
    for i, (aval, shape) in enumerate(zip(in_avals, shapes, strict=True)):
        for d, n in zip(aval.shape, shape, strict=True):
            want = evaluate(d, env)
            if want != n:
                if is_symbolic_dim(d):
                    vs = ", ".join(f"{v} = {env[v]} (from argument {where[v][0]} of shape "
                                   f"{where[v][1]})" for v in sorted(d.variables()) if v in where)
                    raise errors.ExportError(
                        f"exported function {name}: inconsistent binding of dimension "
                        f"variables: argument {i} has shape {tuple(shape)}, where dimension "
                        f"'{d}' should be {want} since {vs}")
                raise errors.ExportError(f"exported function {name}: argument {i} has shape "
                                         f"{tuple(shape)} but was exported for "
                                         f"{aval.str_short()}")
    scope = scope_of(in_avals)
    if scope is not None:
        scope.check(env, name)
    return env


def scope_of(avals) -> SymbolicScope | None:
    """The one constraint scope of the avals' dimensions (None if they have none)."""
    scopes = {id(d._scope): d._scope for a in avals for d in a.shape
              if is_symbolic_dim(d) and d._scope is not None}
    if len(scopes) > 1:
        raise errors.ExportError("Invalid mixing of symbolic scopes: the arguments' dimensions "
                                 "come from symbolic_shape calls with different constraints")
    return next(iter(scopes.values()), None)


def linear(d):
    """`(var, k, c)` when `d == k*var + c` with k > 0, else None."""
    var, k, c = None, 0, 0
    for mono, coeff in d._terms.items():
        if mono == ():
            c = coeff
        elif len(mono) == 1 and isinstance(mono[0][0], str) and mono[0][1] == 1 and var is None:
            var, k = mono[0][0], coeff
        else:
            return None
    return (var, k, c) if var is not None and k > 0 else None


def refine(shape, env: dict) -> tuple:
    return tuple(evaluate(d, env) for d in shape)


def variables_of(avals) -> list:
    names: set = set()
    for a in avals:
        for d in a.shape:
            if is_symbolic_dim(d):
                names |= d.variables()
    return sorted(names)
