"""`make_array_from_process_local_data`: a global sharded Array from each process's own rows."""

from __future__ import annotations

import numpy as np

from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.runtime import backend, transfer
from yax.runtime.array import Array
from yax.runtime.named_sharding import ShardingError


def make_array_from_process_local_data(sharding, local_data, global_shape=None) -> Array:
    """A global Array sharded as `sharding` whose blocks on this process come from `local_data`.

    Each process passes the part of the global array its devices hold: along every dimension,
    the blocks its devices own, concatenated in order (e.g. with a batch sharded over all
    devices of 2 processes, process 0 passes the first half of the rows, process 1 the second).
    Along a dimension this process holds whole, `local_data` is that whole dimension; replicas
    must pass identical data. In a single-process run `local_data` is the whole array.

    Args:
      sharding: a NamedSharding over a mesh that may span several processes.
      local_data: this process's rows (a NumPy array or anything `np.asarray` accepts).
      global_shape: the global shape; default: inferred assuming every process holds equal
        parts (each sharded dimension scaled by how many of its blocks live elsewhere).

    Returns:
      An Array of shape `global_shape` whose addressable shards are this process's blocks.

    Example (2 processes, 2 devices each, 8 rows in all):
      >>> mesh = yax.make_mesh((4,), ("batch",))
      >>> rows = np.arange(4.0)[:, None] + 4 * yax.process_index()
      >>> x = make_array_from_process_local_data(NamedSharding(mesh, P("batch")), rows)
      >>> x.shape
      (8, 1)
    """
    local = np.asarray(local_data)
    dt = dtypes.canonicalize(local.dtype)
    local = local.astype(dt, copy=False)
    here = backend.process_index()
    if global_shape is None:
        global_shape = _infer_global_shape(sharding, local.shape, here)
    global_shape = tuple(int(s) for s in global_shape)
    if len(global_shape) != local.ndim:
        raise ShardingError(f"global_shape {global_shape} has {len(global_shape)} dimensions but "
                            f"the process-local data has shape {local.shape}")
    all_map = sharding.devices_indices_map(global_shape)
    mine = {d: idx for d, idx in all_map.items() if getattr(d, "process_index", 0) == here}
    offsets = [_local_offsets(mine, i, global_shape[i], local.shape[i])
               for i in range(local.ndim)]
    devices = [d for d in sharding._device_order() if d in mine]
    blocks = []
    for d in devices:
        local_idx = tuple(_to_local(s, dim, off)
                          for s, dim, off in zip(mine[d], global_shape, offsets))
        blocks.append(transfer.device_put(np.ascontiguousarray(local[local_idx]), d))
    buf = transfer.assemble(global_shape, dt, sharding, blocks)
    return Array(buf, ShapedArray(global_shape, dt, False))


def _starts(index_map: dict, dim: int, size: int) -> list:
    return sorted({s.indices(size)[0] for s in (idx[dim] for idx in index_map.values())})


def _infer_global_shape(sharding, local_shape, here) -> tuple:
    """Scale each dimension by (blocks in all) / (blocks here); needs a uniform split."""
    probe = tuple(max(1, int(s)) * sharding.mesh.size for s in local_shape)
    all_map = sharding.devices_indices_map(probe)
    mine = {d: idx for d, idx in all_map.items() if getattr(d, "process_index", 0) == here}
    out = []
    for i, s in enumerate(local_shape):
        total, held = len(_starts(all_map, i, probe[i])), len(_starts(mine, i, probe[i]))
        if total % held:
            raise ShardingError(f"cannot infer the global shape of dimension {i}: this process "
                                f"holds {held} of its {total} blocks; pass global_shape")
        out.append(s * (total // held))
    return tuple(out)


def _local_offsets(mine: dict, dim: int, global_size: int, local_size: int) -> dict:
    """global block start -> where that block starts in the local data along `dim`."""
    starts = _starts(mine, dim, global_size)
    if local_size == global_size:
        return {s: s for s in starts}
    block = len(range(*next(iter(mine.values()))[dim].indices(global_size)))
    if block * len(starts) != local_size:
        raise ShardingError(
            f"the process-local data has {local_size} entries along dimension {dim}, but this "
            f"process's devices hold {len(starts)} block(s) of {block} of the global "
            f"{global_size}; pass {block * len(starts)} entries or the right global_shape")
    return {s: k * block for k, s in enumerate(starts)}


def _to_local(s: slice, size: int, offsets: dict) -> slice:
    start, stop, _ = s.indices(size)
    begin = offsets[start]
    return slice(begin, begin + (stop - start))
