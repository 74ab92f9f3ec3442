"""yax.experimental.multihost_utils (`jax.experimental.multihost_utils`): moving data between
the processes of a multi-process program.

yax runs as one process (`yax.process_count() == 1`), where each of these has its one-process
meaning: every process is the source, the gather has one entry, the barrier is immediate, and a
process's local data is the whole global array. With more processes they raise.
"""

from __future__ import annotations

import numpy as np

from yax import tree_util
from yax.runtime import backend
from yax.runtime.named_sharding import NamedSharding
from yax.runtime.partition_spec import PartitionSpec
from yax.transforms.api import device_put

__all__ = ["assert_equal", "broadcast_one_to_all", "global_array_to_host_local_array",
           "host_local_array_to_global_array", "process_allgather", "sync_global_devices"]


def _one_process(what: str) -> None:
    if backend.process_count() != 1:
        raise NotImplementedError(f"multihost_utils.{what} with {backend.process_count()} "
                                  "processes: yax runs programs in one process")


def broadcast_one_to_all(in_tree, is_source: bool | None = None):
    """The source process's values on every process (as NumPy arrays)."""
    del is_source  # the one process is the source
    _one_process("broadcast_one_to_all")
    return tree_util.tree_map(np.asarray, in_tree)


def process_allgather(in_tree, tiled: bool = False):
    """Every process's values, stacked on a new leading axis (concatenated with `tiled`), as
    NumPy arrays."""
    _one_process("process_allgather")

    def gather(x):
        x = np.asarray(x)
        return x if tiled else x[None]
    return tree_util.tree_map(gather, in_tree)


def sync_global_devices(name: str) -> None:
    """A barrier across the processes (immediate with one)."""
    _one_process("sync_global_devices")
    del name


def assert_equal(in_tree, fail_message: str = "") -> None:
    """Check that every process holds the same values; an AssertionError if not."""
    gathered = process_allgather(in_tree, tiled=True)
    mine = tree_util.tree_map(lambda x: np.atleast_1d(np.asarray(x)), in_tree)
    if not tree_util.tree_all(tree_util.tree_map(
            lambda a, b: bool(np.all(np.equal(a, b))), mine, gathered)):
        raise AssertionError(f"{fail_message}. Expected: {gathered}; got: {in_tree}.")


def _specs(pspecs, tree):
    return tree_util.tree_broadcast(pspecs, tree, is_leaf=lambda x: isinstance(x, PartitionSpec)
                                    or x is None)


def host_local_array_to_global_array(local_inputs, global_mesh, pspecs):
    """Arrays of this process's data laid out on `global_mesh` by `pspecs` (a PartitionSpec
    or a pytree prefix of them). With one process the local data is the whole array."""
    _one_process("host_local_array_to_global_array")
    specs = _specs(pspecs, local_inputs)
    return tree_util.tree_map(
        lambda x, spec: device_put(x, NamedSharding(global_mesh, spec or PartitionSpec())),
        local_inputs, specs)


def global_array_to_host_local_array(global_inputs, global_mesh, pspecs):
    """This process's part of each global array, laid out on its local devices (with one
    process: the whole array)."""
    return host_local_array_to_global_array(global_inputs, global_mesh, pspecs)
