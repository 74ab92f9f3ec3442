"""A jaxpr type checker, run after every transformation when YAX_CHECKS=1 (config.enable_checks).

Checks that every var is defined once before use, literals are scalars, and each equation's
output avals are what its primitive's abstract-eval rule gives for its input avals.
"""

from __future__ import annotations

from yax.core.ir import Jaxpr, Literal, subjaxprs
from yax.errors import JaxprTypeError  # noqa: F401  (re-exported)


def check_jaxpr(jaxpr: Jaxpr) -> None:
    """Raise JaxprTypeError where `jaxpr` (or a sub-program of it) is malformed."""
    defined = set()

    def define(v, where):
        if v in defined:
            raise JaxprTypeError(f"variable {v} defined twice ({where})")
        defined.add(v)

    def read(a, where):
        if isinstance(a, Literal):
            if a.aval.shape != ():
                raise JaxprTypeError(f"non-scalar literal {a} ({where})")
            return
        if a not in defined:
            raise JaxprTypeError(f"variable {a} used before definition ({where})")

    for v in jaxpr.constvars + jaxpr.invars:
        define(v, "binders")
    for i, eqn in enumerate(jaxpr.eqns):
        where = f"equation {i}: {eqn.primitive.name}"
        for a in eqn.inputs:
            read(a, where)
        expected = eqn.primitive.out_avals([a.aval for a in eqn.inputs], eqn.params)
        got = [v.aval for v in eqn.outvars]
        if [(e.shape, e.dtype) for e in expected] != [(g.shape, g.dtype) for g in got]:
            raise JaxprTypeError(f"{where}: outputs typed {[g.str_short() for g in got]} but the "
                                 f"rule gives {[e.str_short() for e in expected]}")
        for sub in subjaxprs(eqn):  # every branch and body, tuples of branches included
            check_jaxpr(getattr(sub, "jaxpr", sub))
        for v in eqn.outvars:
            define(v, where)
    for v in jaxpr.outvars:
        read(v, "outputs")
