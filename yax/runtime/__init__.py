"""The only part of yax that talks to XLA (through jax's PJRT client and jaxlib).

The narrow interface the rest of yax uses:
  backend:    `platform()`, `default_device()`, `devices()`
  transfer:   `device_put(np_array, device)`, `to_numpy(buffer)`
  executable: `compile_module(module, in_avals, out_avals, ...)` -> `Executable`
  array:      the `Array` type (a device buffer plus its aval)
"""
