"""onnx's serialization formats.

onnxfast reads and writes the binary protobuf format itself. onnx's text
formats (textproto, json, onnxtxt) are read and written through the onnx
package, as ``onnx.load`` and ``onnx.save_model`` do: a model is converted
between its binary form and the text in memory, so these are for small
models (a test case, a readable diff), not for weights.
"""

from __future__ import annotations

import os
from typing import Any

from . import _onnxfast
from .errors import DecodeError

# onnx's registry (onnx/serialization.py): each format and its extensions.
FORMATS: dict[str, frozenset[str]] = {
    "protobuf": frozenset({".onnx", ".pb"}),
    "textproto": frozenset({".txtpb", ".textproto", ".prototxt", ".pbtxt"}),
    "json": frozenset({".json", ".onnxjson"}),
    "onnxtxt": frozenset({".onnxtxt", ".onnxtext"}),
}

# Parsing text takes many times its size in memory (peak RSS growth measured
# on a 111 MiB textproto: 12.3x, on a 64 MiB json: 3.9x): a text is read when
# this many times its size fits the memory budget, max_memory or by default
# 1 GiB (a text of 64 MiB).
TEXT_COST = 16
TEXT_BUDGET = 1 << 30


def file_path(f: Any) -> str | None:
    """The path of `f`: a path itself, or a file object's `name`."""
    if isinstance(f, (str, os.PathLike)):
        return os.fsdecode(f)
    name = getattr(f, "name", None)  # an int for a descriptor's file
    if isinstance(name, (str, bytes, os.PathLike)):
        return os.fsdecode(name)
    return None


def stream_file(f: Any) -> tuple[str | None, tuple[int, int] | None]:
    """What file object `f` writes to: its path, which is its `name` when
    that names the file `f` writes to (an open file's; not sys.stdout's
    "<stdout>"), and the file's (device, inode) from its descriptor; None
    for what it does not have."""
    try:
        own = os.fstat(f.fileno())
        identity: tuple[int, int] | None = (own.st_dev, own.st_ino)
    except (AttributeError, OSError, TypeError, ValueError):
        identity = None
    name = getattr(f, "name", None)
    if not isinstance(name, (str, bytes, os.PathLike)):
        return None, identity
    path = os.fsdecode(name)
    try:
        named = os.stat(path)
    except (OSError, ValueError):
        return None, identity
    # Without a descriptor to compare with, a name that exists is taken.
    if identity is not None and identity != (named.st_dev, named.st_ino):
        return None, identity
    return path, identity


def resolve(fmt: str | None, f: Any) -> str:
    """The format to read or write `f` in: `fmt` when given, else from the
    extension of `f`'s path as onnx infers it, else protobuf."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}")
        return fmt
    path = file_path(f)
    if path is not None:
        ext = os.path.splitext(path)[1]
        for name, extensions in FORMATS.items():
            if ext in extensions:
                return name
    return "protobuf"


def _serializer(fmt: str) -> Any:
    try:
        import onnx.serialization
    except ImportError as e:
        raise ImportError(
            f"the {fmt} format is read and written by the onnx package "
            f"(pip install 'onnxfast[onnx]'): {e}"
        ) from e
    return onnx.serialization.registry.get(fmt)


def load_text(f: Any, fmt: str, max_memory: int | None, message: str = "ModelProto") -> bytes:
    """The binary encoding of the `message` (an onnx message class's name)
    `f` holds in text format `fmt`."""
    import onnx

    budget = TEXT_BUDGET if max_memory is None else max_memory
    limit = budget // TEXT_COST
    where = file_path(f) or "the model"

    def refuse(size: str) -> DecodeError:
        return DecodeError(
            f"{where}: {size} bytes of {fmt} text would take up to {TEXT_COST}x that to "
            f"parse, over the memory budget of {budget} bytes (pass a larger max_memory, "
            "or save the model in the protobuf format)",
            offset=0,
            path="",
            reason=f"{fmt} text over {limit} bytes",
            text_format=fmt,
        )

    if isinstance(f, (str, os.PathLike)):
        size = os.path.getsize(f)
        if size > limit:
            raise refuse(str(size))
        with open(f, "rb") as file:
            # Bounded: a pipe's size is 0, a file may have grown since.
            text = file.read(limit + 1)
        if len(text) > limit:
            raise refuse(f"more than {limit}")
    elif isinstance(f, (bytes, bytearray, memoryview)):
        text = bytes(f)
        if len(text) > limit:
            raise refuse(str(len(text)))
    else:
        text = f.read(limit + 1)  # no more than that is read
        if not isinstance(text, (bytes, bytearray)):
            raise TypeError(f"file object must be opened in binary mode, read() gave {type(text)}")
        if len(text) > limit:
            raise refuse(f"more than {limit}")
    serializer = _serializer(fmt)
    try:
        proto = serializer.deserialize_proto(bytes(text), getattr(onnx, message)())
    except Exception as e:  # onnx's parsers raise their own classes
        raise DecodeError(
            f"{where}: not a {message} in {fmt} format: {e}",
            offset=0,
            path="",
            reason=str(e),
            text_format=fmt,
        ) from e
    return bytes(proto.SerializeToString())


def _text(proto: Any, fmt: str) -> bytes:
    """`proto` in text format `fmt`, as onnx writes it (UTF-8)."""
    data = _serializer(fmt).serialize_proto(proto)
    return data.encode("utf-8") if isinstance(data, str) else data


def text_of(encoded: bytes, fmt: str) -> bytes:
    """The ModelProto `encoded` (binary) in text format `fmt`: what
    Model.save writes for a text format with external data, once the
    weights are moved out."""
    import onnx

    return _text(onnx.ModelProto.FromString(encoded), fmt)


def save_text(model: Any, f: Any, fmt: str) -> int:
    """Writes `model` (an onnxfast Model) to `f` in text format `fmt`, as
    onnx.save_model does; to a path through a temporary file renamed into
    place (a FIFO or a device is written into). Returns the bytes written."""
    data = _text(model.to_onnx(), fmt)
    if not isinstance(f, (str, bytes, os.PathLike)):
        f.write(data)
        return len(data)
    # As the binary format's writer writes a file: one implementation of
    # links, FIFOs and devices, the temporary file and what it keeps.
    return int(_onnxfast._write_file(os.fsdecode(f), data))
