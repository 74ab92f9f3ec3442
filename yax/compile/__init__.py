"""Turning jaxprs into executables (floor 2, beside the interpreters).

  compiler:   `compile_jaxpr(closed_jaxpr, placement=None, donated=())`, the one road from a
              closed jaxpr to an executable (lowering, then the runtime's compile through the
              persistent cache); `lower_jaxpr` for the module alone
  placement:  where a program runs: shardings, its mesh and devices, argument placement
  run:        run a closed jaxpr on concrete Arrays (compiled once per jaxpr)
  cache:      the bounded caches of compiled programs, all emptied by `yax.clear_caches()`
  when_eager: one compiled program per static configuration of a function
May import core, runtime and interpreters; nothing above.
"""
