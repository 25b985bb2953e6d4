"""A safetensors file's header (names, dtypes, shapes) read and checked without loading a tensor.

The format: 8 bytes, little-endian, the header's length N; then N bytes of JSON, an object mapping each tensor's
name to {"dtype", "shape", "data_offsets": [begin, end]} (plus an optional "__metadata__"); then the data. Reading
only the header lets a caller refuse a file whose tensors do not fit before a byte of weights is allocated.
"""
from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path

# A header names each tensor in ~100 bytes: 16 MiB is over 100 000 tensors, far more than any model here has. A
# larger length is a damaged or hostile file, refused before the JSON is read.
MAX_HEADER_BYTES = 16 * 2**20
DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1, "I64": 8, "I32": 4, "I16": 2,
               "I8": 1, "U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1}


class HeaderError(ValueError):
    """The bytes are not a well-formed safetensors header; the message says what is wrong."""


@dataclass(frozen=True)
class TensorInfo:
    dtype: str  # safetensors' name: "F32", "BF16", …
    shape: tuple[int, ...]

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def _header_length(prefix: bytes, file_size: int) -> int:
    if file_size < 8 or len(prefix) < 8:
        raise HeaderError(f"{file_size} bytes: too short for a safetensors file (it starts with an 8-byte length)")
    (length,) = struct.unpack("<Q", prefix[:8])
    if length > MAX_HEADER_BYTES:
        raise HeaderError(f"the header claims {length} bytes, over the {MAX_HEADER_BYTES // 2**20} MiB a header "
                          "may have; not a safetensors file, or damaged")
    if 8 + length > file_size:
        raise HeaderError(f"the header claims {length} bytes but the file has {file_size}; it is truncated")
    return length


def _is_count(value) -> bool:
    return type(value) is int and value >= 0  # not bool (a JSON true is no size)


def parse_header(header: bytes, data_size: int) -> dict[str, TensorInfo]:
    """The tensors a header describes, each checked to lie inside the data_size bytes that follow it."""
    try:
        table = json.loads(header.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise HeaderError(f"the header is not JSON ({str(error)[:120]})") from None
    if not isinstance(table, dict):
        raise HeaderError(f"the header is a JSON {type(table).__name__}, not an object")
    tensors = {}
    for name, entry in table.items():
        if name == "__metadata__":
            continue
        if not isinstance(entry, dict):
            raise HeaderError(f"{name!r}: not a tensor entry")
        dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
        if dtype not in DTYPE_BYTES:
            raise HeaderError(f"{name!r}: unknown dtype {str(dtype)[:20]!r}")
        if not isinstance(shape, list) or not all(_is_count(size) for size in shape):
            raise HeaderError(f"{name!r}: the shape is not a list of sizes")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_count(o) for o in offsets)
                and offsets[0] <= offsets[1] <= data_size):
            raise HeaderError(f"{name!r}: its data offsets do not lie inside the file")
        info = TensorInfo(dtype, tuple(shape))
        if offsets[1] - offsets[0] != info.numel * DTYPE_BYTES[dtype]:
            raise HeaderError(f"{name!r}: its shape {list(shape)[:8]} does not match its {offsets[1] - offsets[0]} "
                              "bytes of data")
        tensors[name] = info
    return tensors


def header_of_bytes(data: bytes) -> dict[str, TensorInfo]:
    """The checked header of a safetensors file held in memory."""
    length = _header_length(data[:8], len(data))
    return parse_header(data[8:8 + length], len(data) - 8 - length)


def header_of_file(path: str | Path) -> dict[str, TensorInfo]:
    """The checked header of a safetensors file on disk, reading 8 + its length bytes and nothing more."""
    path = Path(path)
    size = path.stat().st_size
    with path.open("rb") as handle:
        length = _header_length(handle.read(8), size)
        return parse_header(handle.read(length), size - 8 - length)
