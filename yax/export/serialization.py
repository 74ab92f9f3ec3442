"""The blob format of `Exported.serialize()`: yax's own, versioned, checked on reading.

    offset 0   8 bytes   magic b"YAXEXPRT"
    offset 8   2 bytes   format version (little-endian uint16)
    offset 10  4 bytes   metadata length L (little-endian uint32)
    offset 14  L bytes   metadata: UTF-8 JSON
    then       the StableHLO portable-bytecode modules, back to back

The metadata lists each module's offset, length and SHA-256 (relative to the end of the
metadata), so truncation or corruption is found before any bytecode reaches MLIR. Pytree
structures are stored as nested tuples, lists, dicts with string keys and None, and nodes of
types registered for serialization (by name, with their auxdata as base64 bytes). Every
failure to read is an `ExportError` naming what is wrong.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from collections.abc import Callable
from typing import NamedTuple

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
    dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128,
    *dtypes.NARROW_INTS, *dtypes.NARROW_FLOATS)}


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


# --- pytree structures --------------------------------------------------------------------
# Tuples, lists, string-keyed dicts and None serialize natively. Other node types serialize
# once registered under a name (`register_pytree_node_serialization`, or
# `register_namedtuple_serialization` for namedtuples); the registration is looked up by type
# when writing and by name when reading.

class _Serialization(NamedTuple):
    name: str
    nodetype: type
    serialize_auxdata: Callable | None  # None: a namedtuple (its fields are the auxdata)
    deserialize_auxdata: Callable | None
    from_children: Callable | None


_BY_TYPE: dict[type, _Serialization] = {}
_BY_NAME: dict[str, _Serialization] = {}


def _is_namedtuple_type(t) -> bool:
    return isinstance(t, type) and issubclass(t, tuple) and hasattr(t, "_fields")


def _add_registration(reg: _Serialization):
    if reg.nodetype in _BY_TYPE:
        raise ValueError(f"duplicate serialization registration for type {reg.nodetype}: it "
                         f"was registered as {_BY_TYPE[reg.nodetype].name!r}")
    if reg.name in _BY_NAME:
        raise ValueError(f"duplicate serialization registration for serialized_name "
                         f"{reg.name!r}: it names {_BY_NAME[reg.name].nodetype}")
    _BY_TYPE[reg.nodetype] = _BY_NAME[reg.name] = reg
    return reg.nodetype


def register_pytree_node_serialization(nodetype, *, serialized_name: str, serialize_auxdata,
                                       deserialize_auxdata, from_children=None):
    """Let exports whose arguments or results contain `nodetype` nodes serialize.

    Args:
      nodetype: a pytree node type (registered with `yax.tree_util.register_pytree_node` first,
        unless `from_children` is given).
      serialized_name: the name written into the blob and looked up when reading it.
      serialize_auxdata: the node's auxdata (from its flatten function) -> bytes.
      deserialize_auxdata: those bytes -> the auxdata.
      from_children: `(auxdata, children) -> node` (default: the registered unflatten); it only
        serves to rebuild the tree structure.

    Returns:
      `nodetype`, so that this can decorate a class.

    Example:
      >>> yax.export.register_pytree_node_serialization(
      ...     Point, serialized_name="my.Point", serialize_auxdata=lambda aux: b"",
      ...     deserialize_auxdata=lambda b: None)
    """
    if _is_namedtuple_type(nodetype):
        raise ValueError("use register_namedtuple_serialization for a namedtuple type")
    if from_children is None:
        if not tree_util.is_tree_node(nodetype):
            raise ValueError(f"register {nodetype} with yax.tree_util.register_pytree_node "
                             f"before registering its serialization (or pass from_children)")
    if not isinstance(serialized_name, str) or not serialized_name:
        raise TypeError(f"serialized_name must be a non-empty str, got {serialized_name!r}")
    return _add_registration(_Serialization(serialized_name, nodetype, serialize_auxdata,
                                            deserialize_auxdata, from_children))


def register_namedtuple_serialization(nodetype, *, serialized_name: str):
    """Let exports whose arguments or results contain namedtuples of `nodetype` serialize; on
    reading, the registered type must have the same fields. Returns `nodetype`."""
    if not _is_namedtuple_type(nodetype):
        raise ValueError(f"register_namedtuple_serialization takes a collections.namedtuple "
                         f"type, got {nodetype!r}; use register_pytree_node_serialization")
    if not isinstance(serialized_name, str) or not serialized_name:
        raise TypeError(f"serialized_name must be a non-empty str, got {serialized_name!r}")
    return _add_registration(_Serialization(serialized_name, nodetype, None, None, None))


def encode_tree(treedef) -> object:
    """A JSON form of a treedef (see above for the node types it may hold)."""
    data = treedef.node_data()
    if data is None:
        return "*"
    nodetype, aux = data
    children = [encode_tree(c) for c in treedef.children()]
    if nodetype is type(None):
        return None
    if nodetype is tuple:
        return {"t": children}
    if nodetype is list:
        return {"l": children}
    if nodetype is dict and all(isinstance(k, str) for k in aux):
        return {"d": [[k, c] for k, c in zip(aux, children, strict=True)]}
    reg = _BY_TYPE.get(nodetype)
    if reg is None:
        raise errors.ExportError(
            f"cannot serialize a pytree containing {nodetype.__name__}: exported arguments and "
            f"results may nest tuples, lists, dicts with string keys and None, and node types "
            f"registered with yax.export.register_pytree_node_serialization (or "
            f"register_namedtuple_serialization for a namedtuple)")
    if reg.serialize_auxdata is None:
        return {"nt": [reg.name, list(nodetype._fields), children]}
    blob = reg.serialize_auxdata(aux)
    if not isinstance(blob, (bytes, bytearray)):
        raise errors.ExportError(f"serialize_auxdata of {reg.name!r} returned "
                                 f"{type(blob).__name__}, not bytes")
    return {"n": [reg.name, base64.b64encode(bytes(blob)).decode("ascii"), children]}


def decode_tree(doc):
    """The treedef `encode_tree` wrote."""
    try:
        return tree_util.tree_structure(_decode_node(doc))
    except errors.ExportError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        raise _bad(f"a pytree structure in the metadata is corrupt ({e})") from None


def _registered(name: str) -> _Serialization:
    reg = _BY_NAME.get(name)
    if reg is None:
        raise _bad(f"the pytree node type serialized as {name!r} is not registered here: call "
                   f"yax.export.register_pytree_node_serialization (or "
                   f"register_namedtuple_serialization) for it before deserializing")
    return reg


def _decode_custom(tag, items):
    name, payload, children = items
    reg = _registered(str(name))
    kids = [_decode_node(c) for c in children]
    if tag == "nt":
        if reg.serialize_auxdata is not None or list(reg.nodetype._fields) != list(payload):
            raise _bad(f"the namedtuple {name!r} was serialized with fields {list(payload)}, "
                       f"but the registered type has {getattr(reg.nodetype, '_fields', None)}")
        return reg.nodetype(*kids)
    if reg.serialize_auxdata is None:
        raise _bad(f"{name!r} was serialized as a custom node but is registered as a namedtuple")
    aux = reg.deserialize_auxdata(base64.b64decode(payload))
    if reg.from_children is not None:
        return reg.from_children(aux, kids)
    return tree_util._spec_of(reg.nodetype).unflatten(aux, kids)


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
    if tag in ("n", "nt"):
        return _decode_custom(tag, items)
    raise ValueError(f"unknown node tag {tag!r}")
