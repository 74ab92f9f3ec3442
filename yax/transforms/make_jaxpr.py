"""`make_jaxpr`: show the program a function stages, as a printable closed jaxpr."""

from __future__ import annotations

import functools

from yax import tree_util
from yax.core.trace import current_trace
from yax.interpreters import ref_state
from yax.interpreters.staging import trace_to_jaxpr
from yax.primitives.mesh_axes import bind_mesh_axes
from yax.runtime.values import leaf_aval
from yax.transforms._args import normalize_argnums


class _AxisEnv:
    """`axis_env`'s (name, size) pairs in the form a mesh binds its axes: collectives over
    those names are staged as equations, as inside the pmap/shard_map that would bind them."""

    def __init__(self, pairs):
        self.shape = {}
        for name, size in pairs:
            if not isinstance(size, int) or size < 1:
                raise ValueError(f"make_jaxpr: axis_env sizes are positive ints, got {size!r} "
                                 f"for axis {name!r}")
            self.shape[name] = size
        self.axis_names = tuple(self.shape)


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape: bool = False):
    """Return a function that traces `fun` on its arguments and returns the ClosedJaxpr.

    `axis_env`: (axis name, size) pairs bound while tracing, as jax's: collectives such as
    `lax.psum(x, name)` then appear as equations instead of failing as unbound names.

    Example:
      >>> print(yax.make_jaxpr(lambda x: yax.numpy.sin(x) * 2)(1.0))
      { lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = mul b 2.0:f32[] in (c,) }
    """
    static = set(normalize_argnums(static_argnums))
    env = _AxisEnv(axis_env or ())

    @functools.wraps(fun)
    def traced(*args, **kwargs):
        dyn = [a for i, a in enumerate(args) if i not in static]
        leaves, in_tree = tree_util.tree_flatten((tuple(dyn), kwargs))
        out_tree_box = []

        is_ref = [isinstance(x, ref_state.Ref) for x in leaves]

        def flat_fun(*flat):
            # Refs (arguments or closed over) are staged as values of type Ref{...}, as jax
            # shows them: reads and writes are get/swap/addupdate equations
            ref_state.allow_refs(current_trace(), stage=True)
            flat, _ = ref_state.box_args(list(flat), is_ref)
            dyn_args, dyn_kwargs = tree_util.tree_unflatten(in_tree, flat)
            it = iter(dyn_args)
            full = [a if i in static else next(it) for i, a in enumerate(args)]
            out = fun(*full, **dyn_kwargs)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            out_tree_box.append(out_tree)
            return out_leaves

        in_avals = [ref_state.AbstractRef(x._aval) if r else leaf_aval(x)
                    for x, r in zip(leaves, is_ref)]
        with bind_mesh_axes(env):
            closed = trace_to_jaxpr(flat_fun, in_avals, name=getattr(fun, "__name__", "fun"),
                                    dce=False)
        if return_shape:
            return closed, tree_util.tree_unflatten(out_tree_box[0], closed.out_avals)
        return closed

    return traced
