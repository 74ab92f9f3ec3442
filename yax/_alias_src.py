"""The few `jax._src` names libraries import, served in alias mode only (listed, with what each
stands for, in docs/ecosystem.md so that the dependency on jax's internals stays visible).

Each entry of `_BUILDERS` makes the names of one `jax._src` path from yax's own objects. A
name not listed raises an AttributeError naming it, like every other name alias mode lacks.
"""

from __future__ import annotations

import functools
import importlib
import math
import typing
import unittest

import numpy as np

from yax import dtypes as yax_dtypes
from yax._jax_names import core as jax_core
from yax._pytree import registry as _pytree_registry
from yax.experimental import checkify as _checkify
from yax.experimental.callbacks import effects_barrier
from yax.extend import source_info_util
from yax.runtime import mesh
from yax.transforms import api


def api_boundary(fun=None, **_options):
    """jax marks its API entry points so that tracebacks can hide its frames; yax filters
    frames by file instead (yax/errors.py), so the mark changes nothing."""
    if fun is None:
        return functools.partial(api_boundary, **_options)
    return fun


def _traceback_util() -> dict:
    return {"api_boundary": api_boundary,
            "register_exclusion": source_info_util.register_exclusion}


def _dispatch() -> dict:
    # equinox waits for ordered effects (host callbacks) with it
    return {"wait_for_tokens": effects_barrier}


class ExtendedDType:
    """Base of jax's extended dtypes (flax.linen's fp8 metadata dtype subclasses it, giving
    `type` and `name`). yax computes with none of them: such a dtype raises where it is used."""

    type: type
    name: str

    def __str__(self):
        return self.name


def _dtypes() -> dict:
    names = {n: getattr(yax_dtypes, n) for n in dir(yax_dtypes) if not n.startswith("_")}
    names.update(ExtendedDType=ExtendedDType, DType=np.dtype)
    return names


def _tree_util() -> dict:
    # flax.nnx asks `type(x) in _registry` to know whether x is a registered pytree node
    return {"_registry": _pytree_registry._registry}


def _checkify_names() -> dict:
    names = {n: getattr(_checkify, n) for n in dir(_checkify) if not n.startswith("_")}
    # flax.nnx annotates with them: jax's `Out` is a TypeVar; its `JaxException` is the type of
    # the members of `user_checks` etc., which in yax are ErrorCategory values
    names.update(Out=typing.TypeVar("Out"), JaxException=_checkify.ErrorCategory)
    return names


class AbstractRef:
    """jax's mutable array references; yax has none, so nothing is an AbstractRef."""


def _state_types() -> dict:
    return {"AbstractRef": AbstractRef}


def _core() -> dict:
    return {n: getattr(jax_core, n) for n in jax_core.__all__}


def _public(module_name: str) -> dict:
    module = importlib.import_module(module_name)
    return {n: getattr(module, n) for n in dir(module) if not n.startswith("_")}


def create_mesh(mesh_shape, axis_names, iota_order: bool = False, axis_types=None):
    """jax's test helper: a mesh of the first prod(mesh_shape) devices (in id order with
    `iota_order`, else as `make_mesh` lays them out); unittest's SkipTest when there are
    fewer devices, as in jax's test suite."""
    size = math.prod(mesh_shape)
    devices = api.devices()
    if len(devices) < size:
        raise unittest.SkipTest(f"Test requires {size} global devices; found {len(devices)}")
    if iota_order:
        ordered = np.array(devices[:size]).reshape(mesh_shape)
        return mesh.Mesh(ordered, tuple(axis_names), axis_types=axis_types)
    return mesh.make_mesh(tuple(mesh_shape), tuple(axis_names), axis_types=axis_types)


def _test_util() -> dict:
    names = _public("yax.test_util")
    names["create_mesh"] = create_mesh
    return names


# jax's tutorials "How JAX primitives work" (which writes its lowering with jaxlib's StableHLO
# bindings, as yax does) and "Writing custom interpreters" import these
_TUTORIAL_BUILDERS = {
    "jax._src.util": lambda: _public("yax._jax_names.util"),
    "jax._src.api": lambda: _public("yax"),
    "jax._src.lax": dict,  # its module `lax` is the facade below
    "jax._src.lax.lax": lambda: _public("yax.lax"),
    "jax._src.lib": dict,
    "jax._src.lib.mlir": dict,  # its modules `ir` and `dialects`
    "jax._src.lib.mlir.ir": lambda: _public("jaxlib.mlir.ir"),
    "jax._src.lib.mlir.dialects": dict,  # its module `hlo`
    "jax._src.lib.mlir.dialects.hlo": lambda: _public("jaxlib.mlir.dialects.stablehlo"),
    # the gradient-checkpointing tutorial: `from jax._src import test_util as jtu`
    "jax._src.test_util": _test_util,
}


_BUILDERS = {
    "jax._src": dict,
    "jax._src.traceback_util": _traceback_util,
    "jax._src.dispatch": _dispatch,
    "jax._src.dtypes": _dtypes,
    "jax._src.tree_util": _tree_util,
    "jax._src.checkify": _checkify_names,
    "jax._src.state": dict,
    "jax._src.state.types": _state_types,
    "jax._src.core": _core,
    # chex imports it at import time (for `restrict_backends`, which patches jax's compiler):
    # the module exists, its names do not
    "jax._src.compiler": dict,
    **_TUTORIAL_BUILDERS,
}


def names(jax_name: str) -> dict:
    """The names alias mode serves for the `jax._src` module `jax_name`."""
    return _BUILDERS[jax_name]()


# names added to public facades: jax has them where yax has nothing to offer but a type no value
# belongs to (flax.nnx's version probes pick `jax.experimental.MutableArray` for jax's refs)
_EXTRAS = {
    "jax.experimental": lambda: {"MutableArray": AbstractRef},
}


def extra_names(jax_name: str) -> dict:
    """Names alias mode adds to the facade of the public jax module `jax_name`."""
    builder = _EXTRAS.get(jax_name)
    return builder() if builder is not None else {}
