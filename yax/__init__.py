"""yax: composable transformations of numerical Python functions (a JAX-style system).

    import yax
    import yax.numpy as jnp
    f = yax.jit(lambda x: jnp.sin(x) * 2)
"""

from yax import errors  # noqa: F401
from yax.config import config  # noqa: F401
from yax.config import (  # noqa: F401  (jax's top-level option context managers)
    check_tracer_leaks, debug_infs, debug_key_reuse, debug_nans, default_matmul_precision,
    default_prng_impl, enable_checks, enable_custom_prng, enable_x64, explain_cache_misses,
    legacy_prng_key, log_compiles, no_tracing, numpy_dtype_promotion, numpy_rank_promotion,
    softmax_custom_jvp, threefry_partitionable, transfer_guard, transfer_guard_device_to_device,
    transfer_guard_device_to_host, transfer_guard_host_to_device)
from yax.interpreters import eager as _eager  # noqa: F401  (installs the eager trace)
from yax import lax  # noqa: F401

from yax import numpy  # noqa: E402,F401
from yax import tree_util  # noqa: E402,F401
from yax.runtime.array import Array  # noqa: E402,F401
from yax.transforms.api import (  # noqa: E402,F401
    block_until_ready, clear_caches, default_backend, default_device, device_count, device_get,
    device_put, devices, disable_jit, eval_shape, local_device_count, local_devices,
    process_count, process_index)
from yax.transforms.ad import (  # noqa: E402,F401
    grad, jvp, linear_transpose, linearize, value_and_grad, vjp)
from yax.transforms.jacobians import hessian, jacfwd, jacrev  # noqa: E402,F401
from yax.transforms.custom_derivatives import custom_jvp, custom_vjp  # noqa: E402,F401
from yax.transforms.checkpoint import checkpoint, checkpoint_name, remat  # noqa: E402,F401
from yax.transforms.residuals import print_saved_residuals, saved_residuals  # noqa: E402,F401
from yax.transforms.jit import jit  # noqa: E402,F401
from yax.transforms.vmap import vmap  # noqa: E402,F401
from yax.transforms.make_jaxpr import make_jaxpr  # noqa: E402,F401

from yax._version import __version__  # noqa: E402,F401
from yax import nn, scipy  # noqa: E402,F401
from yax import ad_checkpoint, checkpoint_policies  # noqa: E402,F401
from yax import ops, tree  # noqa: E402,F401
from yax import random  # noqa: E402,F401
from yax import example_libraries, mixed_precision  # noqa: E402,F401
from yax import dtypes, image  # noqa: E402,F401
from yax import debug, experimental, export  # noqa: E402,F401
from yax.experimental.callbacks import effects_barrier, pure_callback  # noqa: E402,F401
from yax.primitives.callbacks import ShapeDtypeStruct  # noqa: E402,F401
from yax.transforms.custom_gradient import closure_convert, custom_gradient  # noqa: E402,F401
from yax.transforms.tracing import ensure_compile_time_eval, named_scope, typeof  # noqa: E402,F401
from yax import distributed, sharding  # noqa: E402,F401
from yax.sharding import NamedSharding, P, make_mesh, reshard, set_mesh  # noqa: E402,F401
from yax.runtime.array import Shard  # noqa: E402,F401
from yax.transforms.array_creation import (  # noqa: E402,F401
    make_array_from_callback, make_array_from_single_device_arrays)
from yax.transforms.process_arrays import make_array_from_process_local_data  # noqa: E402,F401
from yax.transforms.pmap import pmap  # noqa: E402,F401
from yax.transforms.shard_map import shard_map  # noqa: E402,F401
import yax.primitives.collectives_exchange  # noqa: E402,F401  (registers ppermute, ...)
jacobian = jacrev

from yax._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__, "jax")  # JAX names yax lacks

from yax._alias import alias_jax  # noqa: E402,F401  (alias mode: `import jax` gives yax)
from yax import flatten_util, stages, typing  # noqa: E402,F401
from yax.runtime.backend import Device  # noqa: E402,F401
from yax import custom_batching  # noqa: E402,F401
from yax._jax_names.toplevel import (  # noqa: E402,F401
    copy_to_host_async,
    float0,
    host_count,
    host_id,
    host_ids,
    live_arrays,
    named_call,
    print_environment_info,
    process_indices,
)
from yax import ref  # noqa: E402,F401  (mutable array references)
from yax.ref import Ref, empty_ref, free_ref, freeze, new_ref  # noqa: E402,F401
