"""`pjit`: a jitted function applied under another transformation, as one primitive.

Its param `jaxpr` is a const-free closed jaxpr; its operands are the captured values followed by
the function's flattened arguments. Eagerly it compiles `jaxpr` once and runs it; when lowered
inside a larger program it becomes a call to a private function (lowered once per module).
Transformation rules (jvp, partial evaluation, transpose, batching) come with their issues and
keep the inner program staged.
"""

from __future__ import annotations

from yax import errors
from yax.config import config
from yax.core.primitive import Primitive
from yax.interpreters import lowering
from yax.runtime import backend, executable
from yax.runtime.array import Array

pjit_p = Primitive("pjit", multiple_results=True)


def _pjit_abstract_eval(*avals, jaxpr, name):
    expected = jaxpr.in_avals
    if len(avals) != len(expected) or any(
            a.shape != e.shape or a.dtype != e.dtype for a, e in zip(avals, expected)):
        got = ", ".join(a.str_short() for a in avals)
        want = ", ".join(a.str_short() for a in expected)
        raise errors.InputMismatchError(f"pjit {name}: operands ({got}) do not match the traced "
                                        f"program's parameters ({want})")
    return list(jaxpr.out_avals)


def _pjit_lower(ctx, *args, jaxpr, name):
    return lowering.call_function(ctx.module_ctx, jaxpr, name, list(args))


_compiled: dict = {}


def compile_closed_jaxpr(jaxpr, *, donated=()) -> executable.Executable:
    """Compile a const-free closed jaxpr for the current platform (cached per jaxpr object)."""
    platform = backend.platform()
    key = (jaxpr, platform, tuple(donated), config.enable_x64)
    exe = _compiled.get(key)
    if exe is None:
        mctx = lowering.lower_module(jaxpr.jaxpr, platform=platform, consts=jaxpr.consts,
                                     consts_as_args=False, donated=donated)
        exe = executable.compile_module(mctx.module, jaxpr.in_avals, jaxpr.out_avals,
                                        platform=platform)
        _compiled[key] = exe
    return exe


def _pjit_impl(*arrays, jaxpr, name):
    exe = compile_closed_jaxpr(jaxpr)
    bufs = exe([a.buffer for a in arrays])
    return [Array(b, aval) for b, aval in zip(bufs, jaxpr.out_avals, strict=True)]


pjit_p.abstract_eval = _pjit_abstract_eval
pjit_p.lower = _pjit_lower
pjit_p.impl = _pjit_impl
