"""Calling Python from inside programs: `pure_callback`, `io_callback`, `effects_barrier`.

Each traces to one `callback` primitive (yax/primitives/callbacks.py), which works eagerly, under
`jit`, `vmap`, inside `scan`/`cond`/`while_loop` bodies, and checks every result against the
declared shapes and dtypes.
"""

from __future__ import annotations

from yax import errors, tree_util
from yax.primitives.callbacks import HostCallback, bind_callback, result_aval


def _defined_at(fn) -> str | None:
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    return f"{code.co_filename}:{code.co_firstlineno}"


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def host_callback(fn, args, kwargs, result_shape_dtypes, *, effect: str, ordered=False,
                  vmap_method=None):
    """Stage `fn(*args, **kwargs)` as a callback returning `result_shape_dtypes` (a pytree)."""
    result_leaves, result_tree = tree_util.tree_flatten(result_shape_dtypes)
    result_avals = [result_aval(r) for r in result_leaves]
    arg_leaves, arg_tree = tree_util.tree_flatten((args, kwargs))
    name = _name(fn)

    def flat_fn(*arrays):
        call_args, call_kwargs = tree_util.tree_unflatten(arg_tree, arrays)
        out = fn(*call_args, **call_kwargs)
        leaves, tree = tree_util.tree_flatten(out)
        if len(leaves) != result_tree.num_leaves:  # as JAX, only the leaves must match
            raise errors.CallbackResultError(
                f"the host callback `{name}` returned a value of structure {tree}, but "
                f"result_shape_dtypes declares {result_tree}")
        return leaves

    cb = HostCallback(flat_fn, name, _defined_at(fn))
    outs = bind_callback(cb, arg_leaves, result_avals, effect=effect, ordered=ordered,
                         vmap_method=vmap_method)
    return tree_util.tree_unflatten(result_tree, outs)


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
    """Call a pure Python function on the host from inside a (possibly compiled) program.

    Args:
      callback: a function of NumPy arrays (the pytree structure of `args`/`kwargs` is kept)
        returning arrays matching `result_shape_dtypes`. It must have no side effects: an unused
        call may be removed, and identical calls merged.
      result_shape_dtypes: a pytree of `yax.ShapeDtypeStruct` (or arrays) declaring the results.
      vmap_method: how `vmap` batches the call -- "sequential" (once per batch element),
        "expand_dims" (once, unbatched operands get a leading axis of size 1) or "broadcast_all"
        (once, every operand broadcast to the batch size). Without it, vmap is an error.
      sharding: accepted for JAX compatibility; yax runs callbacks on one device.

    Returns:
      The callback's results as arrays (a pytree like `result_shape_dtypes`). A result of the
      wrong shape or dtype is a `CallbackResultError`; an exception in the callback is a
      `CallbackError` naming it. There is no derivative: wrap it in `custom_jvp`/`custom_vjp`.

    Example:
      >>> f = lambda x: yax.pure_callback(np.sin, yax.ShapeDtypeStruct(x.shape, x.dtype), x)
      >>> yax.jit(f)(jnp.zeros(2))
      Array([0., 0.], dtype=float32)
    """
    del sharding
    return host_callback(callback, args, kwargs, result_shape_dtypes, effect="pure",
                         vmap_method=vmap_method)


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered: bool = False,
                **kwargs):
    """Call a Python function with side effects on the host (it is never removed or
    duplicated). With `ordered=True` the calls of a program run in program order (and vmap of it
    is an error); unordered calls are batched one call per batch element. No derivative.

    Args and returns as `pure_callback` (`result_shape_dtypes` may be None for no results).
    """
    del sharding
    return host_callback(callback, args, kwargs, result_shape_dtypes, effect="io",
                         ordered=ordered)


def effects_barrier() -> None:
    """Wait until every host callback issued so far has run. yax runs programs that hold
    callbacks synchronously, so they have all run when this is called; kept for JAX code."""
    return None


__all__ = ["pure_callback", "io_callback", "effects_barrier"]
