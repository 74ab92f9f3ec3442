"""The persistent compilation cache: serialized executables on disk, shared between processes.

Off by default (like JAX's): it writes to a directory the user chose, and a shared machine should
not get files it did not ask for. Turn it on with `yax.config.update("compilation_cache_dir",
path)` or `YAX_COMPILATION_CACHE_DIR=path`; the test suite uses `<repo>/.yax_cache`.

An entry's key is a hash of the StableHLO module's text (without source locations) plus
everything else that changes the compiled program: jaxlib version, platform and its version,
device kind, compile options and the x64 flag. Every file is written to a temporary name and
renamed into place (atomic on POSIX), and carries a checksum of its payload and a digest of
the key it was written for, so concurrent processes see either a whole entry or none, and a
corrupt, truncated or foreign file (one copied under another entry's name) is ignored (and
recompiled over). Reading an entry touches its mtime; when the directory grows past
`compilation_cache_max_bytes` the least recently used files go. Executables with host
callbacks are never stored: their callables cannot be serialized.
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import threading
import warnings

import jaxlib

from yax.config import config

_MAGIC = b"YAXC2\0"
_HEADER = struct.Struct("<6s32sQ32s")  # magic, sha256 of the key, payload length, its sha256
_SUFFIX = ".yaxexe"
stats = {"hits": 0, "misses": 0, "writes": 0, "evictions": 0, "corrupt": 0}
_lock = threading.Lock()
_dir_bytes: dict = {}  # directory -> estimated total size since the last scan
_warned: set = set()


def cache_dir() -> str | None:
    return config.compilation_cache_dir or None


JAXLIB_VERSION = jaxlib.__version__  # for the keys of floors above, which may not import jaxlib


def entry_key(module, *, platform: str, client, device, compile_options) -> str:
    """A hex digest naming the executable `module` compiles to under these conditions."""
    return text_key(_text_without_locations(module), platform=platform, client=client,
                    device=device, compile_options=compile_options)


def text_key(text: bytes, *, platform: str, client, device, compile_options) -> str:
    """`entry_key` of a program given as bytes (its text or bytecode, without locations)."""
    h = hashlib.sha256()
    h.update(text)
    for part in (jaxlib.__version__, platform, str(getattr(client, "platform_version", "")),
                 str(getattr(device, "device_kind", "")), str(bool(config.enable_x64))):
        h.update(b"\0" + part.encode())
    h.update(b"\0" + compile_options.SerializeAsString())
    return h.hexdigest()


def _text_without_locations(module) -> bytes:
    """The module's text without its source locations: they change nothing XLA computes, and
    leaving them out lets programs that differ only in where they were written share an entry
    (an eager `sin` and `jit(jnp.sin)`, the same function defined on two lines). jax leaves
    them out of its keys too. (A few hundred microseconds on a training step's module, next
    to its compile of tens of milliseconds.)"""
    with module.context:
        return module.operation.get_asm(binary=True, enable_debug_info=False,
                                        assume_verified=True)


def _path(directory: str, key: str) -> str:
    return os.path.join(directory, key + _SUFFIX)


def load(key: str, *, counted: bool = True) -> bytes | None:
    """The serialized executable stored under `key`, or None (missing, truncated or corrupt).

    `counted`: the lookup counts in `stats` (not for yax's own background work)."""
    directory = cache_dir()
    if directory is None:
        return None
    path = _path(directory, key)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        _count("misses", counted)
        return None
    payload = _check(data, key)
    if payload is None:
        _count("corrupt", counted)
        _count("misses", counted)
        return None
    try:
        os.utime(path, None)  # least-recently-used order for eviction
    except OSError:
        pass
    _count("hits", counted)
    return payload


def _count(name: str, counted: bool) -> None:
    if counted:
        stats[name] += 1


def _check(data: bytes, key: str) -> bytes | None:
    """The payload of an entry file read for `key`, or None (damaged, or written for another)."""
    if len(data) < _HEADER.size:
        return None
    magic, key_digest, length, digest = _HEADER.unpack_from(data)
    payload = data[_HEADER.size:]
    if (magic != _MAGIC or key_digest != _key_digest(key) or length != len(payload)
            or hashlib.sha256(payload).digest() != digest):
        return None
    return payload


def _key_digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


def store(key: str, payload: bytes, *, counted: bool = True) -> None:
    """Write an entry atomically; any OS error (full disk, read-only directory) only warns once.

    `counted`: the write counts in `stats` (not for yax's own background work)."""
    directory = cache_dir()
    if directory is None:
        return
    data = _HEADER.pack(_MAGIC, _key_digest(key), len(payload),
                        hashlib.sha256(payload).digest()) + payload
    tmp = None
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, _path(directory, key))
        tmp = None
        _count("writes", counted)
    except OSError as e:
        if directory not in _warned:
            _warned.add(directory)
            warnings.warn(f"yax could not write to the compilation cache {directory!r} ({e}); "
                          f"compiled programs are not cached there", RuntimeWarning, stacklevel=3)
        return
    finally:
        if tmp is not None:
            try:
                os.remove(tmp)
            except OSError:
                pass
    _account(directory, len(data))


def _account(directory: str, added: int) -> None:
    limit = int(config.compilation_cache_max_bytes)
    with _lock:
        total = _dir_bytes.get(directory)
        total = _scan_size(directory) if total is None else total + added
        _dir_bytes[directory] = total
        if limit > 0 and total > limit:
            _dir_bytes[directory] = _evict(directory, limit)


def _entries(directory: str) -> list:
    out = []
    try:
        with os.scandir(directory) as it:
            for e in it:
                if e.name.endswith(_SUFFIX):
                    try:
                        st = e.stat()
                    except OSError:
                        continue  # removed by another process meanwhile
                    out.append((st.st_mtime, st.st_size, e.path))
    except OSError:
        pass
    return out


def _scan_size(directory: str) -> int:
    return sum(size for _, size, _ in _entries(directory))


def _evict(directory: str, limit: int) -> int:
    """Delete least recently used entries until the directory is at most 3/4 of `limit`."""
    entries = sorted(_entries(directory))
    total = sum(size for _, size, _ in entries)
    target = limit * 3 // 4
    for _, size, path in entries:
        if total <= target:
            break
        try:
            os.remove(path)
            stats["evictions"] += 1
        except OSError:
            pass  # another process got there first
        total -= size
    return total


def clear_memory_state() -> None:
    """Forget the size estimates (the files themselves stay)."""
    with _lock:
        _dir_bytes.clear()
