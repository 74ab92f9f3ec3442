"""The blob format of `Exported.serialize()`: yax's own, versioned, checked on reading.

    offset 0   8 bytes   magic b"YAXEXPRT"
    offset 8   2 bytes   format version (little-endian uint16)
    offset 10  4 bytes   metadata length L (little-endian uint32)
    offset 14  L bytes   metadata: UTF-8 JSON
    then       the StableHLO portable-bytecode modules, back to back

The metadata lists each module's offset, length and SHA-256 (relative to the end of the
metadata), so truncation or corruption is found before any bytecode reaches MLIR. Pytree
structures are stored as nested tuples, lists, dicts with string keys and None; other nodes
cannot be serialized. Every failure to read is an `ExportError` naming what is wrong.
"""

from __future__ import annotations

import hashlib
import json
import struct

import numpy as np

from yax import errors, tree_util
from yax.core import dtypes
from yax.core.avals import ShapedArray
from yax.export import symbolic

MAGIC = b"YAXEXPRT"
FORMAT_VERSION = 1
_HEADER = struct.Struct("<8sHI")

_DTYPES = {np.dtype(d).name: np.dtype(d) for d in (
    dtypes.bool_, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8,
    dtypes.uint16, dtypes.uint32, dtypes.uint64, dtypes.bfloat16, dtypes.float16,
    dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)}


def pack(meta: dict, modules: list[bytes]) -> bytearray:
    """The blob holding `meta` (JSON-able) and `modules`."""
    table, offset = [], 0
    for m in modules:
        table.append({"offset": offset, "length": len(m),
                      "sha256": hashlib.sha256(m).hexdigest()})
        offset += len(m)
    body = json.dumps({"meta": meta, "modules": table}, sort_keys=True).encode()
    out = bytearray(_HEADER.pack(MAGIC, FORMAT_VERSION, len(body)))
    out += body
    for m in modules:
        out += m
    return out


def _bad(problem: str) -> errors.ExportError:
    return errors.ExportError(f"cannot deserialize: {problem}")


def unpack(blob) -> tuple[dict, list[bytes]]:
    """`(meta, modules)` of a blob written by `pack`; an ExportError for anything else."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise TypeError(f"deserialize takes the bytes of Exported.serialize(), got "
                        f"{type(blob).__name__}")
    data = bytes(blob)
    if len(data) < _HEADER.size:
        raise _bad(f"{len(data)} bytes is shorter than the {_HEADER.size}-byte header "
                   f"(truncated, or not a yax export)")
    magic, version, length = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise _bad("the data does not start with yax's export header (a foreign blob, e.g. "
                   "one serialized by jax, or not an export at all)")
    if version != FORMAT_VERSION:
        raise _bad(f"format version {version}; this yax reads version {FORMAT_VERSION}"
                   + (" (written by a newer yax)" if version > FORMAT_VERSION else ""))
    end = _HEADER.size + length
    if end > len(data):
        raise _bad(f"the metadata needs {length} bytes but only {len(data) - _HEADER.size} "
                   f"follow the header (truncated)")
    try:
        doc = json.loads(data[_HEADER.size:end].decode())
        meta, table = doc["meta"], doc["modules"]
        slices = [(int(t["offset"]), int(t["length"]), str(t["sha256"])) for t in table]
    except (ValueError, KeyError, TypeError) as e:
        raise _bad(f"the metadata is corrupt ({type(e).__name__}: {e})") from None
    payload = data[end:]
    modules = []
    for i, (offset, size, digest) in enumerate(slices):
        if offset < 0 or size < 0 or offset + size > len(payload):
            raise _bad(f"module {i} lies past the end of the data (truncated)")
        m = payload[offset:offset + size]
        if hashlib.sha256(m).hexdigest() != digest:
            raise _bad(f"module {i} does not match its checksum (corrupt)")
        modules.append(m)
    return meta, modules


def encode_aval(aval) -> list:
    """`[dims, dtype]`; a symbolic dimension is its text (`"2*b + 1"`), as jax prints it."""
    return [[d if isinstance(d, int) else str(d) for d in aval.shape], aval.dtype.name]


def decode_aval(doc, scope=None) -> ShapedArray:
    shape, dt = doc
    dims = []
    for d in shape:
        if isinstance(d, str):
            d = symbolic.parse_dim(d, scope)
        elif type(d) is not int or d < 0:
            raise _bad(f"dimension {d!r} in the metadata is not a size or an expression")
        dims.append(d)
    return ShapedArray(tuple(dims), decode_dtype(dt))


def decode_dtype(name) -> np.dtype:
    if name not in _DTYPES:
        raise _bad(f"unknown dtype {name!r} in the metadata")
    return _DTYPES[name]


def encode_tree(treedef) -> object:
    """A JSON form of a treedef of tuples, lists, string-keyed dicts and None."""
    return _encode_node(tree_util.tree_unflatten(treedef, [_LEAF] * treedef.num_leaves))


class _LeafMarker:
    pass


_LEAF = _LeafMarker()


def _encode_node(node):
    if node is _LEAF:
        return "*"
    if node is None:
        return None
    if type(node) is tuple:
        return {"t": [_encode_node(c) for c in node]}
    if type(node) is list:
        return {"l": [_encode_node(c) for c in node]}
    if type(node) is dict and all(isinstance(k, str) for k in node):
        return {"d": [[k, _encode_node(v)] for k, v in node.items()]}
    raise errors.ExportError(f"cannot serialize a pytree containing {type(node).__name__}: "
                             f"exported arguments and results may nest tuples, lists, dicts "
                             f"with string keys and None")


def decode_tree(doc):
    """The treedef `encode_tree` wrote."""
    try:
        return tree_util.tree_structure(_decode_node(doc))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        raise _bad(f"a pytree structure in the metadata is corrupt ({e})") from None


def _decode_node(doc):
    if doc == "*":
        return 0
    if doc is None:
        return None
    (tag, items), = doc.items()
    if tag == "t":
        return tuple(_decode_node(c) for c in items)
    if tag == "l":
        return [_decode_node(c) for c in items]
    if tag == "d":
        return {str(k): _decode_node(v) for k, v in items}
    raise ValueError(f"unknown node tag {tag!r}")
