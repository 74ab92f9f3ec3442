"""Which yax module stands for each jax module in alias mode (yax/_alias.py).

Every jax name alias mode serves is listed here; nothing is derived by guessing. ALIASES maps
public jax modules to yax modules; SOURCE_SHIMS lists the few `jax._src` paths libraries reach
into, whose names are built in yax/_alias_src.py (and listed in docs/ecosystem.md).
"""

from __future__ import annotations

# The jax release whose API yax follows: alias mode reports it as `jax.__version__` and
# `jax.__version_info__`, so libraries' version checks take the branch written for it.
JAX_VERSION = "0.10.2"

_SAME_NAME = (
    "numpy", "numpy.linalg", "numpy.fft", "lax", "lax.linalg", "random", "nn", "nn.initializers",
    "scipy", "scipy.special", "scipy.linalg", "scipy.signal", "scipy.ndimage", "scipy.optimize",
    "scipy.stats", "tree_util", "tree", "dtypes", "errors", "debug", "sharding", "experimental",
    "experimental.checkify", "experimental.shard_map", "extend", "extend.core",
    "extend.linear_util", "extend.source_info_util", "ad_checkpoint", "test_util", "image",
    "ops", "example_libraries", "example_libraries.optimizers", "example_libraries.stax",
    "distributed", "typing", "flatten_util", "stages", "checkpoint_policies", "monitoring",
    "scipy.fft", "scipy.integrate", "extend.lowering", "dlpack", "experimental.pjit",
    "profiler", "custom_batching", "experimental.multihost_utils",
    "experimental.profiler", "scipy.cluster", "scipy.cluster.vq",
    "scipy.interpolate", "ref",
)

_STATS = (
    "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
    "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "multinomial",
    "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t", "truncnorm", "uniform",
    "vonmises", "wrapcauchy",
)

ALIASES: dict[str, str] = {
    "jax": "yax",
    **{f"jax.{name}": f"yax.{name}" for name in _SAME_NAME},
    **{f"jax.scipy.stats.{name}": f"yax.scipy.stats.{name}" for name in _STATS},
    # jax modules whose yax counterpart lives under another name (yax's own
    # yax.interpreters.* are internal interpreters, not these registries)
    "jax.core": "yax._jax_names.core",
    "jax.api_util": "yax._jax_names.api_util",
    # on the top floor: it builds keys with yax.random, above yax.extend's floor
    "jax.extend.random": "yax._jax_names.extend_random",
    "jax.experimental.ode": "yax._jax_names.ode",  # built on yax.numpy (above experimental)
    "jax.experimental.rnn": "yax._jax_names.rnn",
    "jax.experimental.layout": "yax._jax_names.layout",
    "jax.experimental.hijax": "yax._jax_names.hijax",
    "jax.custom_derivatives": "yax._jax_names.custom_derivatives",
    "jax.interpreters": "yax._jax_names.interpreters",
    "jax.interpreters.ad": "yax._jax_names.interpreters.ad",
    "jax.interpreters.batching": "yax._jax_names.interpreters.batching",
    "jax.interpreters.mlir": "yax._jax_names.interpreters.mlir",
    "jax.interpreters.partial_eval": "yax._jax_names.interpreters.partial_eval",
}

# `jax._src` paths that optax, chex, equinox and flax import (names in yax/_alias_src.py).
SOURCE_SHIMS: tuple[str, ...] = (
    "jax._src",
    "jax._src.traceback_util",
    "jax._src.dispatch",
    "jax._src.dtypes",
    "jax._src.tree_util",
    "jax._src.checkify",
    "jax._src.state",
    "jax._src.state.types",
    "jax._src.core",
    "jax._src.compiler",
    # imported by jax's tutorials on primitives and custom interpreters
    "jax._src.util",
    "jax._src.api",
    "jax._src.lax",
    "jax._src.lax.lax",
    "jax._src.lib",
    "jax._src.lib.mlir",
    "jax._src.lib.mlir.ir",
    "jax._src.lib.mlir.dialects",
    "jax._src.lib.mlir.dialects.hlo",
    # imported by the gradient-checkpointing tutorial (`create_mesh`)
    "jax._src.test_util",
)
