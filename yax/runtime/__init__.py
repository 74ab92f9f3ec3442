"""The only part of yax that talks to XLA (through jax's PJRT client and jaxlib).

The narrow interface the rest of yax uses:
  backend:    `platform()`, `default_device()`, `devices()`
  transfer:   `device_put(np_array, device)`, `to_numpy(buffer)`
  executable: `compile_module(module, in_avals, out_avals, ..., host_callbacks=())` ->
              `Executable` (`.run(buffers)` is the fast call)
  compilation_cache: the persistent on-disk cache of serialized executables
  dispatch:   jaxlib's C++ jit dispatch object driven by yax (`AVAILABLE` where supported)
  lru:        the bounded, thread-safe cache used by jit, eager and rule caches
  array:      the `Array` type (a device buffer plus its aval)
  mesh, named_sharding, partition_spec: `Mesh`, the shardings and `PartitionSpec` (public as
              `yax.sharding`), which placement and the XLA bridge below need
  sharding_bridge: yax shardings <-> jaxlib's sharding objects
Nothing here imports from `yax.interpreters` or above.
"""
