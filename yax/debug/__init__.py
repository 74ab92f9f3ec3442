"""`yax.debug`: seeing inside compiled programs (as `jax.debug`).

  print(fmt, *args, ordered=False, **kwargs)   -- print run-time values from any transformation
  callback(fn, *args, ordered=False, **kwargs) -- call a Python function for its side effect
  check_consistency(f, *args)                  -- eager vs jit (and grad/vmap) agreement (yax)
"""

from yax.debug.consistency import ConsistencyReport, check_consistency, first_divergence
from yax.debug.printing import callback, debug_print

print = debug_print  # noqa: A001  (jax.debug's name)

__all__ = ["print", "callback", "check_consistency", "first_divergence", "ConsistencyReport"]
