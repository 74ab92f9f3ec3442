"""Builders for yax.scipy.stats' distribution modules.

A continuous location-scale family is given by its *standard* functions of z = (x - loc) / scale
and its shape parameters; `location_scale` turns them into the module-level functions JAX has
(`logpdf(x, *shape, loc=0, scale=1)`, `pdf`, `cdf`, `logcdf`, `sf`, `logsf`, `ppf`, `isf`),
promoting all arguments to one inexact dtype and broadcasting them. Densities gain -log(scale);
quantiles are mapped back by loc + scale * z.
"""

from __future__ import annotations

import yax.numpy as jnp
from yax.numpy._promote import check_arraylike, promote_arrays_inexact, promote_dtypes_inexact
from yax.runtime.values import to_array


def promote(name: str, *args) -> list:
    """All arguments in one inexact dtype, broadcast to one shape."""
    args = promote_arrays_inexact(name, *args)
    return list(jnp.broadcast_arrays(*args)) if len(args) > 1 else list(args)


def promote_dtypes(name: str, *args) -> list:
    """All arguments as arrays of one inexact dtype, shapes unchanged."""
    check_arraylike(name, *args)
    return [jnp.asarray(to_array(a) if type(a).__name__ == "TypedScalar" else a)
            for a in promote_dtypes_inexact(*args)]


def _split(name, n_shape, params, kwargs):
    if len(params) < n_shape:
        raise TypeError(f"{name} needs {n_shape} shape parameter(s), got {len(params)}")
    shape, rest = params[:n_shape], list(params[n_shape:])
    loc = rest.pop(0) if rest else kwargs.pop("loc", 0)
    scale = rest.pop(0) if rest else kwargs.pop("scale", 1)
    if rest or kwargs:
        raise TypeError(f"{name}: unexpected arguments {rest or list(kwargs)}")
    return shape, loc, scale


def location_scale(namespace: dict, dist: str, n_shape: int, **standard) -> None:
    """Define `dist`'s functions in `namespace` from its standard ones (keys: logpdf, cdf,
    logcdf, sf, logsf, ppf, isf; each a function of (z, *shape))."""
    names = []

    def density(kind):
        std = standard["logpdf"]

        def fn(x, *params, **kwargs):
            shape, loc, scale = _split(f"{dist}.{kind}", n_shape, params, kwargs)
            x, loc, scale, *shape = promote(f"{dist}.{kind}", x, loc, scale, *shape)
            out = std((x - loc) / scale, *shape) - jnp.log(scale)
            return out if kind == "logpdf" else jnp.exp(out)
        return fn

    def of_x(kind):
        std = standard[kind]

        def fn(x, *params, **kwargs):
            shape, loc, scale = _split(f"{dist}.{kind}", n_shape, params, kwargs)
            x, loc, scale, *shape = promote(f"{dist}.{kind}", x, loc, scale, *shape)
            return std((x - loc) / scale, *shape)
        return fn

    def quantile(kind):
        std = standard[kind]

        def fn(q, *params, **kwargs):
            shape, loc, scale = _split(f"{dist}.{kind}", n_shape, params, kwargs)
            q, loc, scale, *shape = promote(f"{dist}.{kind}", q, loc, scale, *shape)
            return loc + scale * std(q, *shape)
        return fn

    builders = {"logpdf": density, "pdf": density, "cdf": of_x, "logcdf": of_x, "sf": of_x,
                "logsf": of_x, "ppf": quantile, "isf": quantile}
    for kind, build in builders.items():
        source = "logpdf" if kind == "pdf" else kind
        if source not in standard:
            continue
        fn = build(kind)
        fn.__name__ = fn.__qualname__ = kind
        fn.__doc__ = (f"scipy.stats.{dist}.{kind}: arguments promoted to one inexact dtype and "
                      f"broadcast; location `loc` and scale `scale` after the "
                      f"{n_shape} shape parameter(s).")
        namespace[kind] = fn
        names.append(kind)
    namespace["__all__"] = names
