"""`yax.debug`: seeing inside compiled programs (as `jax.debug`).

  print(fmt, *args, ordered=False, **kwargs)   -- print run-time values from any transformation
  callback(fn, *args, ordered=False, **kwargs) -- call a Python function for its side effect
"""

from yax.debug.printing import callback, debug_print

print = debug_print  # noqa: A001  (jax.debug's name)

__all__ = ["print", "callback"]
