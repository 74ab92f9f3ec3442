"""Run by tests/test_alias_mode.py as `python -m yax tests/alias_mode_child.py ARG`: checks
made from inside alias mode, printed as one JSON object (name -> value) for the test to read."""

from __future__ import annotations

import json
import sys

import jax  # alias mode: this is yax's facade
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree

import yax
from yax import _alias_facade
from yax.runtime import backend

checks = {"argv": sys.argv[1:], "name": jax.__name__, "version": jax.__version__,
          "version_info": list(jax.__version_info__),
          "jit_is_yax": jax.jit is yax.jit, "sin_is_yax": jnp.sin is yax.numpy.sin,
          "array_is_yax": type(jnp.ones(2)) is yax.Array,
          "grad": float(jax.jit(jax.grad(lambda x: jnp.sum(jnp.sin(x))))(jnp.zeros(3))[0]),
          "ravel": ravel_pytree({"a": jnp.ones((2, 2)), "b": jnp.zeros(3)})[0].shape[0]}

# no real jax module can be reached by name
checks["real_in_sys_modules"] = sorted(
    n for n, m in sys.modules.items()
    if (n == "jax" or n.startswith("jax.")) and not isinstance(m, _alias_facade.JaxFacade))
# the runtime still holds the real jax
checks["runtime_backend_module"] = backend._jax_backend.__name__
checks["runtime_backend_is_facade"] = isinstance(backend._jax_backend, _alias_facade.JaxFacade)

try:
    jnp.sinn  # noqa: B018
except AttributeError as err:
    checks["missing_attribute"] = str(err)
checks["hasattr_missing"] = hasattr(jax.numpy, "not_a_jax_name")
for module in ("jax.experimental.jax2tf", "jax._src.xla_bridge"):
    try:
        __import__(module)
        checks[module] = "imported"
    except ImportError as err:
        checks[module] = f"{type(err).__name__}: {err}"

# `from jax.X import name`: Python's own message would name neither yax nor what it offers
for statement in ("from jax.numpy import sinn", "from jax.experimental import jax2tf",
                  "from jax._src.compiler import anything"):
    try:
        exec(statement)
        checks[statement] = "imported"
    except ImportError as err:
        checks[statement] = f"{type(err).__name__}: {err}"
try:
    import jax.experimental.jax2tf  # noqa: F401
except ModuleNotFoundError as err:  # optional-dependency probes read the name
    checks["module_error_name"] = err.name

# the gradient-checkpointing tutorial's import of jax's test helpers
from jax._src import test_util as jtu  # noqa: E402

checks["create_mesh"] = [list(jtu.create_mesh((1,), ("x",)).shape.items()),
                         jtu.check_grads is yax.test_util.check_grads]

jax.jit = None  # a library patching the facade (chex's fake_jit does) leaves yax alone
checks["yax_jit_intact"] = yax.jit is not None and callable(yax.jit)
checks["interpreters_intact"] = yax.interpreters.__name__ == "yax.interpreters"
print("ALIAS-CHECKS " + json.dumps(checks))
