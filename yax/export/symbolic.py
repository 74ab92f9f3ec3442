"""Symbolic dimensions for `yax.export`: `symbolic_shape("2*b, b + 1")` -> `(2*b, b + 1)`.

A dimension expression is a polynomial with integer coefficients over *atoms*: dimension
variables (each stands for an integer >= 1) and `floordiv(e, k)` / `mod(e, k)` of an expression
by a positive constant. Expressions normalise on construction (a constant one is a plain
`int`), so shape code written for ints runs on them: `+ - *`, `//` and `%` by constants,
`==` (True exactly when the two polynomials are identical, as jax's), and `< <= > >=` decided
from the atoms' bounds, raising `InconclusiveDimensionOperation` when the bounds cannot decide
(e.g. `b >= 2`, `a >= b`).
"""

from __future__ import annotations

import ast
import itertools
import math
import operator

import numpy as np

from yax import errors, tree_util
from yax.core.avals import ShapedArray
from yax.primitives.callbacks import ShapeDtypeStruct
from yax.primitives.dim_as_value import dimension_as_value

# defined in yax.errors (jax.errors and jax.extend.core name the same class)
InconclusiveDimensionOperation = errors.InconclusiveDimensionOperation


def _inconclusive(what: str) -> InconclusiveDimensionOperation:
    return InconclusiveDimensionOperation(
        f"Symbolic dimension {what} is inconclusive.\nThis error arises for comparison "
        f"operations with shapes that are non-constant, and the result of the operation "
        f"cannot be represented as a boolean value for all values of the symbolic dimensions "
        f"involved (dimension variables range over integers >= 1).")


# An atom is a variable name (str) or ("floordiv" | "mod", DimExpr-or-int, k). A monomial is a
# sorted tuple of (atom, power); the constant monomial is (). Terms map monomial -> coefficient.

def _atom_key(atom):
    return (0, atom) if isinstance(atom, str) else (1, atom[0], str(atom[1]), atom[2])


def _atom_str(atom) -> str:
    return atom if isinstance(atom, str) else f"{atom[0]}({atom[1]}, {atom[2]})"


def _atom_bounds(atom) -> tuple:
    if isinstance(atom, str):
        return 1, math.inf
    if atom[0] == "mod":
        return 0, atom[2] - 1
    lo, hi = _bounds(atom[1])
    return math.floor(lo / atom[2]) if lo != -math.inf else -math.inf, (
        math.floor(hi / atom[2]) if hi != math.inf else math.inf)


def _mono_mul(m1, m2):
    powers = dict(m1)
    for a, p in m2:
        powers[a] = powers.get(a, 0) + p
    return tuple(sorted(powers.items(), key=lambda ap: _atom_key(ap[0])))


def _mul(x, y):
    return 0 if x == 0 or y == 0 else x * y  # a zero bound times an infinite one is zero


def _mono_bounds(mono) -> tuple:
    lo, hi = 1, 1
    for atom, p in mono:
        a_lo, a_hi = _atom_bounds(atom)
        if a_lo < 0:  # only floordivs of possibly-negative expressions: give up on bounds
            return -math.inf, math.inf
        lo, hi = _mul(lo, a_lo ** p), _mul(hi, a_hi ** p)
    return lo, hi


def _bounds(e) -> tuple:
    if isinstance(e, int):
        return e, e
    lo = hi = 0
    for mono, c in e._terms.items():
        m_lo, m_hi = _mono_bounds(mono)
        t_lo, t_hi = (_mul(c, m_lo), _mul(c, m_hi)) if c > 0 else (_mul(c, m_hi), _mul(c, m_lo))
        lo, hi = lo + t_lo, hi + t_hi
    return lo, hi


class DimExpr:
    """A non-constant dimension expression (see the module docstring); immutable, hashable."""

    __slots__ = ("_terms", "_hash", "_scope")
    _yax_symbolic_dim = True  # duck-typed marker read by ShapedArray / ShapeDtypeStruct

    def __init__(self, terms: dict, scope: SymbolicScope | None = None):
        self._terms = terms
        self._scope = scope  # its constraints decide comparisons; not part of equality
        self._hash = hash(tuple(sorted(terms.items(), key=lambda t: str(t[0]))))

    # --- construction -------------------------------------------------------------------
    @staticmethod
    def var(name: str, scope: SymbolicScope | None = None) -> DimExpr:
        return DimExpr({((name, 1),): 1}, scope)

    @staticmethod
    def _make(terms: dict):
        terms = {m: c for m, c in terms.items() if c != 0}
        if not terms:
            return 0
        if set(terms) == {()}:
            return terms[()]
        return DimExpr(terms)

    # --- arithmetic ---------------------------------------------------------------------
    def __add__(self, other):
        if _coerce(other) is NotImplemented:
            return _value_op(operator.add, self, other)
        other = _coerce(other)
        terms = dict(self._terms)
        for m, c in _terms_of(other).items():
            terms[m] = terms.get(m, 0) + c
        return _scoped(DimExpr._make(terms), self, other)

    def __radd__(self, other):
        if _coerce(other) is NotImplemented:
            return _value_op(operator.add, other, self)
        return self + other

    def __neg__(self):
        return _scoped(DimExpr._make({m: -c for m, c in self._terms.items()}), self)

    def __sub__(self, other):
        if _coerce(other) is NotImplemented:
            return _value_op(operator.sub, self, other)
        return self + (-_coerce(other))

    def __rsub__(self, other):
        if _coerce(other) is NotImplemented:
            return _value_op(operator.sub, other, self)
        return (-self) + _coerce(other)

    def __mul__(self, other):
        if _coerce(other) is NotImplemented:
            return _value_op(operator.mul, self, other)
        other = _coerce(other)
        terms: dict = {}
        for m1, c1 in self._terms.items():
            for m2, c2 in _terms_of(other).items():
                m = _mono_mul(m1, m2)
                terms[m] = terms.get(m, 0) + c1 * c2
        return _scoped(DimExpr._make(terms), self, other)

    def __rmul__(self, other):
        if _coerce(other) is NotImplemented:
            return _value_op(operator.mul, other, self)
        return self * other

    def __truediv__(self, other):  # a number, as jax: the dimension used as a value
        return _value_op(operator.truediv, self, other)

    def __rtruediv__(self, other):
        return _value_op(operator.truediv, other, self)

    def __floordiv__(self, other):
        return self._divmod(other, "floordiv")

    def __mod__(self, other):
        return self._divmod(other, "mod")

    def __divmod__(self, other):
        return self // other, self % other

    def _divmod(self, other, kind):
        if _coerce(other) is NotImplemented:
            return _value_op(operator.floordiv if kind == "floordiv" else operator.mod, self,
                             other)
        other = _coerce(other)
        if not isinstance(other, int):
            raise _inconclusive(f"division '{self}' {'//' if kind == 'floordiv' else '%'} "
                                f"'{other}' (yax divides only by constants)")
        if other <= 0:
            raise errors.ExportError(f"symbolic dimension {self} divided by {other}: only "
                                     f"positive constant divisors are supported")
        if all(c % other == 0 for c in self._terms.values()):  # exact: stays a polynomial
            if kind == "mod":
                return 0
            return _scoped(DimExpr._make({m: c // other for m, c in self._terms.items()}), self)
        return DimExpr({(((kind, self, other), 1),): 1}, self._scope)

    def __rfloordiv__(self, other):
        raise _inconclusive(f"division '{other}' // '{self}'")

    def __rmod__(self, other):
        raise _inconclusive(f"division '{other}' % '{self}'")

    def __pow__(self, p):
        if not isinstance(p, int) or p < 0:
            return NotImplemented
        out = 1
        for _ in range(p):
            out = out * self
        return out

    # --- comparisons --------------------------------------------------------------------
    def __eq__(self, other):
        other = _coerce(other)
        if other is NotImplemented:
            return False
        # identical polynomials (terms are normalised: no zero coefficients); no scope check
        return isinstance(other, DimExpr) and self._terms == other._terms

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return self._hash

    def _ge(self, other, shown: str) -> bool:
        other = _coerce(other)
        if other is NotImplemented:
            raise TypeError(f"cannot compare symbolic dimension {self} with {other!r}")
        decided = _decide_ge0(self - other)
        if decided is None:
            raise _inconclusive(f"comparison {shown}")
        return decided

    def __ge__(self, other):
        return self._ge(other, f"'{self}' >= '{other}'")

    def __gt__(self, other):
        return self._ge(_add1(other), f"'{self}' > '{other}'")

    def __le__(self, other):
        return _DimCompare(other)._ge_of(self, f"'{self}' <= '{other}'")

    def __lt__(self, other):
        return _DimCompare(other)._ge_of(self + 1, f"'{self}' < '{other}'")

    # --- conversions --------------------------------------------------------------------
    def __int__(self):
        raise _inconclusive(f"'{self}' used where an integer is needed (int())")

    def __index__(self):
        raise _inconclusive(f"'{self}' used where an integer is needed (an index)")

    def __bool__(self):
        return True  # a dimension is >= 1 or a nonzero polynomial

    def __float__(self):
        raise _inconclusive(f"'{self}' used where a number is needed (float())")

    def evaluate(self, env: dict) -> int:
        """The value for concrete `env` (name -> int)."""
        total = 0
        for mono, c in self._terms.items():
            v = c
            for atom, p in mono:
                v *= _eval_atom(atom, env) ** p
            total += v
        return total

    def atoms(self) -> set:
        out = set()
        for mono in self._terms:
            for atom, _ in mono:
                out.add(atom)
                if not isinstance(atom, str):
                    out |= _atoms_of(atom[1])
        return out

    def variables(self) -> set:
        return {a for a in self.atoms() if isinstance(a, str)}

    # --- printing, as jax prints: "2*b + 1", "b*c", "b^2", "floordiv(b, 2)" -------------
    def __str__(self):
        def mono_str(mono):
            return "*".join(_atom_str(a) + (f"^{p}" if p > 1 else "") for a, p in mono)
        items = sorted(self._terms.items(),
                       key=lambda t: (-sum(p for _, p in t[0]), mono_str(t[0])))
        out = ""
        for mono, c in items:
            body = mono_str(mono)
            if not body:
                text = str(abs(c))
            elif abs(c) == 1:
                text = body
            else:
                text = f"{abs(c)}*{body}"
            if not out:
                out = text if c > 0 else f"- {text}"
            else:
                out += (" + " if c > 0 else " - ") + text
        return out

    __repr__ = __str__

    def __reduce__(self):
        return (_rebuild, (str(self),))  # (the scope's constraints are not kept)


class _DimCompare:
    """`other >= expr` for an `other` that may be an int (reflected comparisons)."""

    def __init__(self, other):
        self.other = other

    def _ge_of(self, expr, shown):
        other = _coerce(self.other)
        if other is NotImplemented:
            raise TypeError(f"cannot compare symbolic dimension {expr} with {self.other!r}")
        diff = other - expr
        if isinstance(diff, int):
            return diff >= 0
        decided = _decide_ge0(diff)
        if decided is None:
            raise _inconclusive(f"comparison {shown}")
        return decided


def _add1(x):
    return x + 1


def _value_op(op, x, y):
    """`op` with a dimension used as a value (jax's `dimension_as_value`): with an array, a
    tracer or a float the result is an array computed from the argument shapes at run time."""
    if isinstance(x, (bool, np.bool_)) or isinstance(y, (bool, np.bool_)):
        return NotImplemented
    return op(dimension_as_value(x) if isinstance(x, DimExpr) else x,
              dimension_as_value(y) if isinstance(y, DimExpr) else y)


def _scoped(result, *operands):
    """`result` carrying the one scope of its operands (an error for two different ones)."""
    scopes = {id(o._scope): o._scope for o in operands
              if isinstance(o, DimExpr) and o._scope is not None}
    if len(scopes) > 1:
        raise errors.ExportError(
            "Invalid mixing of symbolic scopes: the dimensions come from symbolic_shape calls "
            "with different constraints; pass scope= to share one")
    if isinstance(result, DimExpr) and scopes:
        result._scope = next(iter(scopes.values()))
    return result


def _decide_ge0(e):
    """True if `e >= 0` for every value of the variables (>= 1, and the scope's constraints),
    False if `e < 0` for all, None when that depends on the values."""
    if isinstance(e, int):
        return e >= 0
    lo, hi = _bounds(e)
    if lo >= 0:
        return True
    if hi < 0:
        return False
    known = e._scope._nonneg if e._scope is not None else []
    # e = c + r with c a combination of the constraints (each >= 0) with coefficients 0..2 and
    # r >= 0 by bounds: enough to chain them (a >= b and b >= 2 give a >= 2, a + b >= 4)
    coeffs = (itertools.product(range(3), repeat=len(known)) if len(known) <= 5 else
              ([int(i == j) for i in range(len(known))] for j in range(len(known))))
    for ks in coeffs:
        c = sum((k * ci for k, ci in zip(ks, known, strict=True) if k), 0)
        if _bounds(e - c)[0] >= 0:
            return True
        if _bounds(-e - 1 - c)[0] >= 0:  # -e - 1 >= c >= 0, so e < 0
            return False
    return None


class SymbolicScope:
    """Dimension variables that share constraints (`jax.export.SymbolicScope`).

    A constraint is `"e1 >= e2"` or `"e1 <= e2"` over dimension expressions; comparisons of
    the scope's dimensions use them (`a >= b` is decided under `"a >= b"`), and a call of an
    export checks that the argument shapes satisfy them. Equality constraints are refused.
    """

    def __init__(self, constraints=()):
        if isinstance(constraints, str):
            raise TypeError("constraints must be a sequence of strings, such as ('a >= b',)")
        self.constraints = tuple(str(c) for c in constraints)
        self._nonneg = []  # the constraints as expressions known to be >= 0
        for c in self.constraints:
            self._nonneg.append(_parse_constraint(c))

    def __repr__(self):
        return f"SymbolicScope(constraints={list(self.constraints)})"

    def check(self, env: dict, name: str) -> None:
        """An ExportError if a binding of the variables violates a constraint."""
        for text, e in zip(self.constraints, self._nonneg, strict=True):
            if evaluate(e, env) < 0:
                vals = ", ".join(f"{v} = {env[v]}" for v in sorted(_variables_of(e)))
                raise errors.ExportError(f"exported function {name}: the argument shapes give "
                                         f"{vals}, which violates the constraint '{text}'")


def _variables_of(e) -> set:
    return e.variables() if isinstance(e, DimExpr) else set()


def _parse_constraint(text: str):
    """`e1 - e2` (known >= 0) for `"e1 >= e2"`, `e2 - e1` for `"e1 <= e2"`."""
    try:
        node = ast.parse(text.replace("^", "**"), mode="eval").body
    except SyntaxError:
        node = None
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
        raise errors.ExportError(f"symbolic constraint {text!r}: expected 'e1 >= e2' or "
                                 f"'e1 <= e2' over dimension expressions")
    op = node.ops[0]
    lhs, rhs = _eval_node(node.left, text), _eval_node(node.comparators[0], text)
    if isinstance(op, ast.GtE):
        return lhs - rhs
    if isinstance(op, ast.LtE):
        return rhs - lhs
    if isinstance(op, (ast.Gt, ast.Lt)):
        return (lhs - rhs - 1) if isinstance(op, ast.Gt) else (rhs - lhs - 1)
    raise errors.ExportError(f"symbolic constraint {text!r}: only >=, <=, > and < constraints "
                             f"are supported by yax (jax's equality constraints are not)")


def _rebuild(text):
    return parse_dim(text)


def _coerce(x):
    if isinstance(x, DimExpr):
        return x
    if isinstance(x, (bool, np.bool_)):
        return NotImplemented
    try:
        return operator.index(x)
    except TypeError:
        return NotImplemented


def _terms_of(x) -> dict:
    return x._terms if isinstance(x, DimExpr) else {(): x}


def _atoms_of(x) -> set:
    return x.atoms() if isinstance(x, DimExpr) else set()


def _eval_atom(atom, env) -> int:
    if isinstance(atom, str):
        return env[atom]
    v = evaluate(atom[1], env)
    return v // atom[2] if atom[0] == "floordiv" else v % atom[2]


def evaluate(d, env: dict) -> int:
    return d.evaluate(env) if isinstance(d, DimExpr) else int(d)


def is_symbolic_dim(d) -> bool:
    """Whether `d` (a dimension of a shape) is symbolic, i.e. a dimension expression such as
    `b` or `2*b + 1` from `symbolic_shape`, rather than an integer."""
    return isinstance(d, DimExpr)


def is_symbolic(shape) -> bool:
    return any(isinstance(d, DimExpr) for d in shape)


SymbolicDim = DimExpr  # the public name older yax code used


# --- parsing ------------------------------------------------------------------------------

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


def _eval_node(node, spec, scope=None):
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        return DimExpr.var(node.id, scope)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval_node(node.left, spec, scope),
                                      _eval_node(node.right, spec, scope))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        return _eval_node(node.left, spec, scope) ** _eval_node(node.right, spec, scope)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _eval_node(node.operand, spec, scope)
        return -v if isinstance(node.op, ast.USub) else v
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("floordiv", "mod") and len(node.args) == 2 and not node.keywords):
        a, k = (_eval_node(x, spec, scope) for x in node.args)
        return a // k if node.func.id == "floordiv" else a % k
    raise errors.ExportError(f"symbolic_shape({spec!r}): cannot parse {ast.unparse(node)!r}: a "
                             f"dimension is an integer, a name, or an expression of them with "
                             f"+, -, *, ^, // and % (by constants), floordiv() and mod()")


def _parse_expr(text: str, spec: str):
    try:
        tree = ast.parse(text.replace("^", "**"), mode="eval")
    except SyntaxError:
        raise errors.ExportError(f"symbolic_shape({spec!r}): cannot parse {text!r}") from None
    return tree.body


def parse_dim(text: str, scope: SymbolicScope | None = None):
    """One dimension from its text (`"2*b + 1"`)."""
    return _eval_node(_parse_expr(text, text), text, scope)


def symbolic_shape(spec: str, *, constraints=(), scope=None) -> tuple:
    """Parse `"b, 2*b + 1"` into a shape of dimension expressions, for `ShapeDtypeStruct`.

    Example:
      >>> symbolic_shape("b, 2*b, 4")
      (b, 2*b, 4)
    """
    if constraints:
        if scope is not None:
            raise errors.ExportError("symbolic_shape: pass constraints or scope, not both (the "
                                     "constraints belong to the scope)")
        scope = SymbolicScope(constraints)
    if not isinstance(spec, str):
        raise TypeError(f"symbolic_shape takes a string such as 'b, 4', got {type(spec).__name__}")
    body = spec.strip()
    if not body:
        return ()
    if body.startswith("(") and body.endswith(")"):
        body = body[1:-1].strip()
    body = body.rstrip().rstrip(",")
    node = _parse_expr(f"({body},)", spec)
    elts = node.elts if isinstance(node, ast.Tuple) else [node]
    dims = []
    for e in elts:
        d = _eval_node(e, spec, scope)
        if isinstance(d, int) and d < 0:
            raise errors.ExportError(f"symbolic_shape({spec!r}): dimension {d} is negative")
        dims.append(d)
    return tuple(dims)


def symbolic_args_specs(args, shapes_specs, *, constraints=(), scope=None):
    """ShapeDtypeStructs for the pytree `args` (arrays or structs), each with the symbolic
    shape `shapes_specs` gives (one spec string for every arg, or a matching pytree of them);
    `_` in a spec keeps that dimension of the argument."""
    leaves, tree = tree_util.tree_flatten(args)
    specs = ([shapes_specs] * len(leaves) if isinstance(shapes_specs, str) or shapes_specs is None
             else tree_util.tree_leaves(shapes_specs, is_leaf=lambda s: s is None))
    if len(specs) != len(leaves):
        raise errors.ExportError(f"symbolic_args_specs: {len(specs)} specs for {len(leaves)} "
                                 f"arguments")
    out = []
    for x, spec in zip(leaves, specs, strict=True):
        shape = tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)
        if spec is None:
            out.append(ShapeDtypeStruct(shape, x.dtype))
            continue
        parts = [p.strip() for p in spec.strip().strip("()").split(",") if p.strip()]
        if len(parts) != len(shape):
            raise errors.ExportError(f"symbolic_args_specs: spec {spec!r} has {len(parts)} "
                                     f"dimensions, the argument has shape {shape}")
        text = ", ".join(str(s) if p == "_" else p for p, s in zip(parts, shape, strict=True))
        if constraints and scope is None:  # one scope for all the arguments' dimensions
            scope = SymbolicScope(constraints)
        out.append(ShapeDtypeStruct(symbolic_shape(text, scope=scope), x.dtype))
    return tree_util.tree_unflatten(tree, out)


def shape_str(shape) -> str:
    return ",".join(str(d) for d in shape)


class SymbolicShapedArray(ShapedArray):
    """Kept for compatibility: ShapedArray itself now holds symbolic dimensions."""

    __slots__ = ()
