"""`yax.debug`: seeing inside compiled programs (as `jax.debug`).

  print(fmt, *args, ordered=False, **kwargs)   -- print run-time values from any transformation
  callback(fn, *args, ordered=False, **kwargs) -- call a Python function for its side effect
  check_consistency(f, *args)                  -- eager vs jit (and grad/vmap) agreement (yax)
  visualize_array_sharding(x)                  -- which device holds which block of x
  breakpoint()                                 -- a host-side pdb-style stop with run-time values
"""

from yax.debug import nans  # noqa: F401 (installs the debug_nans/debug_infs output checks)
from yax.debug.breakpoint import breakpoint  # noqa: A004 (jax.debug's name)
from yax.debug.consistency import ConsistencyReport, check_consistency, first_divergence
from yax.debug.printing import callback, debug_print
from yax.debug.visualize import visualize_array_sharding, visualize_sharding

print = debug_print  # noqa: A001  (jax.debug's name)

__all__ = ["print", "callback", "check_consistency", "first_divergence", "ConsistencyReport",
           "visualize_array_sharding", "breakpoint", "visualize_sharding"]
