"""Compile once, across processes: a jitted call whose function and inputs are unchanged since an
earlier process skips tracing and lowering too, not only XLA's compile.

When `config.compilation_cache_dir` is set (and `compilation_cache_skip_tracing` is on), an
eagerly compiled single-device entry is also written as a *program entry*: the serialized
executable plus what running it needs without a jaxpr (parameter and result avals, the captured
constants, the output pytree). Its key hashes the function (`compile.fingerprint`: code,
closure, globals it reads), the jit options, the arguments' pytree, avals and static values, the
config key, and the versions of Python, yax (with its source files in a checkout), jaxlib and
the device. A miss in a new process looks the key up before tracing; a hit deserializes the
executable into a `LoadedEntry`.

Any doubt falls back to the normal path: a function the fingerprint refuses, a pytree or aval it
cannot write down, a multi-device program, host callbacks, debug modes. An entry is validated
before use: the file's checksum (`runtime.compilation_cache`), then its own header (format,
the key it was written for, the versions) and that its avals agree with the call's; a corrupt,
truncated or foreign file is recompiled over, never executed. A `LoadedEntry` has no jaxpr (a
stub one with the avals): a call under a transformation, `.lower()` or `eval_shape` re-traces.
A hit does not run the Python function, so its trace-time side effects (print, counters) do not
happen; the fingerprint refuses functions that write globals or outer variables.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys

import numpy as np

from yax import tree_util
from yax.compile.fingerprint import function_digest, value_digest, yax_source_identity
from yax.config import config
from yax.core.avals import ShapedArray
from yax.core.ir import ClosedJaxpr, Jaxpr, Var, subjaxprs
from yax.runtime import backend, compilation_cache, executable, values
from yax.transforms.jit_entry import Entry

_FORMAT = b"YAXPROG2"
_LEN = struct.Struct("<I")
stats = {"hits": 0, "misses": 0, "writes": 0, "refused": 0, "rejected": 0}


class LoadedEntry(Entry):
    """An entry deserialized from the program cache: runnable, with a stub jaxpr (avals only)."""

    __slots__ = ()


def enabled() -> bool:
    return bool(config.compilation_cache_dir and config.compilation_cache_skip_tracing
                and not (config.debug_nans or config.debug_infs or config.disable_jit))


def key_for(fn, in_tree, avals, statics, cfg, arg_sh, device_override) -> str | None:
    """The program entry's key for this call, or None (not cacheable across processes)."""
    if (fn._sharded or device_override is not None or any(s is not None for s in arg_sh)
            or fn._inline):
        return None
    if not all(type(a) is ShapedArray for a in avals):
        return None
    tree = encode_tree(in_tree)
    digest = function_digest(fn._fun)
    if tree is None or digest is None:
        stats["refused"] += 1
        return None
    h = hashlib.sha256(_FORMAT)
    for part in _environment():
        h.update(part.encode() + b"\0")
    h.update(digest)
    h.update(json.dumps([tree, [_aval(a) for a in avals], repr(cfg),
                         sorted(fn._static_argnums), sorted(fn._static_argnames),
                         sorted(fn._donate_argnums), sorted(fn._donate_argnames),
                         repr(sorted((fn._compiler_options or {}).items()))]).encode())
    for where, value in statics:
        d = value_digest(value)
        if d is None:
            stats["refused"] += 1
            return None
        h.update(repr(where).encode() + b"\0" + d)
    return h.hexdigest()


def _environment() -> tuple:
    platform = backend.platform()
    device = backend.default_device(platform)
    client = backend.client(platform)
    return (sys.version, yax_source_identity(), compilation_cache.JAXLIB_VERSION, platform,
            str(getattr(client, "platform_version", "")), str(device.device_kind),
            str(device.id), os.environ.get("XLA_FLAGS", ""),
            os.environ.get("LIBTPU_INIT_ARGS", ""))


def _versions() -> list:
    """Written in each entry and checked on load (the key already hashes them: this catches a
    file copied under another entry's name)."""
    # yax._version is on the package's top floor, above this module's: read when needed
    from yax._version import __version__
    return [__version__, compilation_cache.JAXLIB_VERSION, sys.version]


def _aval(a) -> list:
    return [list(a.shape), a.dtype.name, bool(a.weak_type)]


def _unaval(row) -> ShapedArray:
    shape, dtype, weak = row
    return ShapedArray(tuple(shape), np.dtype(dtype), weak)


# --- pytree structures written down: tuples, lists, dicts with str keys, None, leaves ---------

def encode_tree(treedef):
    """A JSON-able description of `treedef`, or None (a node type it cannot write down)."""
    try:
        obj = tree_util.tree_unflatten(treedef, list(range(treedef.num_leaves)))
        enc = _enc(obj)
        if tree_util.tree_structure(_dec(enc)) != treedef:
            return None
        return enc
    except Exception:
        return None


def _enc(obj):
    t = type(obj)
    if t is int:
        return obj
    if obj is None:
        return ["n"]
    if t is tuple or t is list:
        return ["t" if t is tuple else "l", [_enc(x) for x in obj]]
    if t is dict and all(type(k) is str for k in obj):
        return ["d", [[k, _enc(v)] for k, v in obj.items()]]
    raise TypeError(t)


def _dec(enc):
    if type(enc) is int:
        return enc
    tag = enc[0]
    if tag == "n":
        return None
    if tag == "t":
        return tuple(_dec(x) for x in enc[1])
    if tag == "l":
        return [_dec(x) for x in enc[1]]
    if tag == "d":
        return {k: _dec(v) for k, v in enc[1]}
    raise ValueError(tag)


# --- writing and reading entries ------------------------------------------------------------

def store(key: str, entry: Entry, compiler_options=None, fresh: bool = True) -> None:
    """Write `entry` (compiled) under `key` when it can run from disk alone.

    `fresh`: its executable was compiled in this process. One that XLA's cache deserialized is
    not serialized again (on XLA:CPU that loses its kernels: the copy fails to run); the bytes
    XLA's cache holds for it are copied instead."""
    exe = entry.exe
    if (exe is None or entry.placement is not None or exe.host_callbacks or entry.has_refs
            or len(exe.devices) != 1 or _has_mesh(entry.jaxpr.jaxpr)):
        return  # (an entry threading Refs needs them, which a later process does not have)
    in_avals, out_avals = entry.jaxpr.in_avals, entry.out_avals
    if not all(type(a) is ShapedArray for a in (*in_avals, *out_avals)):
        return
    out_tree = encode_tree(entry.out_tree)
    if out_tree is None:
        return
    try:
        consts = [np.asarray(c) for c in entry.consts]
        blob = exe.xla_executable.serialize() if fresh else _xla_cache_bytes(entry,
                                                                               compiler_options)
    except Exception:
        return
    if blob is None:
        return
    blobs = [blob]
    if any(c.dtype.hasobject for c in consts):
        return
    blobs += [np.ascontiguousarray(c).tobytes() for c in consts]
    header = {"key": key, "versions": _versions(), "in": [_aval(a) for a in in_avals],
              "out": [_aval(a) for a in out_avals], "out_tree": out_tree,
              "donated": list(entry.donated), "blobs": [len(b) for b in blobs],
              "consts": [[list(c.shape), c.dtype.name] for c in consts]}
    raw = json.dumps(header).encode()
    compilation_cache.store(key, _FORMAT + _LEN.pack(len(raw)) + raw + b"".join(blobs))
    stats["writes"] += 1


def _xla_cache_bytes(entry, compiler_options) -> bytes | None:
    """The serialized executable XLA's cache holds for `entry` (lowered again for its key)."""
    platform = backend.platform()
    device = backend.default_device(platform)
    options = executable._compile_options((device,), False,
                                          tuple(sorted((compiler_options or {}).items())))
    key = compilation_cache.entry_key(entry.lower().module, platform=platform,
                                      client=backend.client(platform), device=device,
                                      compile_options=options)
    return compilation_cache.load(key)


def _has_mesh(jaxpr) -> bool:
    """Programs naming a mesh (shard_map, sharding constraints) compile through the SPMD
    partitioner with options this module does not rebuild: they are not stored."""
    for eqn in jaxpr.eqns:
        if "mesh" in eqn.params:
            return True
        for sub in subjaxprs(eqn):
            if _has_mesh(getattr(sub, "jaxpr", sub)):
                return True
    return False


def load(key: str, avals, donated, compiler_options=None) -> LoadedEntry | None:
    """The entry stored under `key`, validated against this call, or None."""
    payload = compilation_cache.load(key)  # None when missing, truncated or corrupt
    if payload is None:
        stats["misses"] += 1
        return None
    try:
        entry = _decode(key, payload, avals, donated, compiler_options)
    except Exception:  # foreign, stale or damaged in a way the checksum could not see
        entry = None
    if entry is None:
        stats["rejected"] += 1
        return None
    stats["hits"] += 1
    return entry


def _decode(key, payload, avals, donated, compiler_options):
    if not payload.startswith(_FORMAT):
        return None
    at = len(_FORMAT)
    (n,) = _LEN.unpack_from(payload, at)
    at += _LEN.size
    header = json.loads(payload[at:at + n])
    at += n
    if header["key"] != key or header["versions"] != _versions():
        return None
    if tuple(header["donated"]) != tuple(donated):
        return None
    in_avals = [_unaval(r) for r in header["in"]]
    out_avals = [_unaval(r) for r in header["out"]]
    n_consts = len(header["consts"])
    if len(in_avals) != n_consts + len(avals) or in_avals[n_consts:] != list(avals):
        return None
    sizes = header["blobs"]
    if len(sizes) != 1 + n_consts or at + sum(sizes) != len(payload):
        return None
    blobs = []
    for size in sizes:
        blobs.append(payload[at:at + size])
        at += size
    consts = []
    for (shape, dtype), blob, aval in zip(header["consts"], blobs[1:], in_avals):
        c = np.frombuffer(blob, dtype=np.dtype(dtype)).reshape(shape)
        if c.shape != aval.shape or c.dtype != aval.dtype:
            return None
        consts.append(c)
    out_tree = tree_util.tree_structure(_dec(header["out_tree"]))
    if out_tree.num_leaves != len(out_avals):
        return None
    exe = _deserialize(blobs[0], in_avals, out_avals, compiler_options)
    stub = ClosedJaxpr(Jaxpr([], [Var(a) for a in in_avals], [], [Var(a) for a in out_avals]),
                       [])
    entry = LoadedEntry(stub, consts, out_tree, tuple(donated), None)
    entry.const_bufs = [values.to_array(c).buffer for c in consts]
    entry.execute = exe.run
    entry.exe = exe
    return entry


def _deserialize(blob, in_avals, out_avals, compiler_options):
    platform = backend.platform()
    device = backend.default_device(platform)
    client = backend.client(platform)
    # the options `executable.compile_module` compiled it with (one device, no mesh)
    options = executable._compile_options((device,), False,
                                          tuple(sorted((compiler_options or {}).items())))
    raw = client.deserialize_executable(blob, executable._xc.DeviceList((device,)), options)
    executable.stats["cache_loads"] += 1
    return executable.Executable(raw, in_avals, out_avals, device, platform)
