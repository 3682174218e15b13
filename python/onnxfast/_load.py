"""Entry points that turn paths, bytes and file objects into message objects."""

from __future__ import annotations

import io
import os
import stat
from typing import IO, TYPE_CHECKING, Any, Union

from . import _formats, _onnxfast
from .errors import DecodeError

if TYPE_CHECKING:
    from ._onnxfast import MapValue, Model, OptionalValue, SequenceValue, Tensor

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes], Any]


def _resolve(
    f: Source, base_dir: str | os.PathLike[str] | None, kind: str, max_memory: int | None
) -> tuple[Any, Any]:
    """Returns what the decoder takes (a path or a bytes object) and the base dir
    (a file object is read, at most `max_memory` bytes when given; more is a
    DecodeError of the `kind` of message decoded)."""
    if isinstance(f, (str, os.PathLike)):
        # A path-like may give bytes (os.scandir(b"...")'s entries): a
        # path still, not the model's bytes.
        path = os.fsdecode(f)
        if "\0" in path:
            raise ValueError("embedded null byte")  # as open() says it
        return path, base_dir
    if isinstance(f, bytes):
        return f, base_dir
    if isinstance(f, (bytearray, memoryview)):
        # Mutable buffers could change under the decoded tree: one copy.
        return bytes(f), base_dir
    serialize = getattr(f, "SerializeToString", None)
    if callable(serialize) and hasattr(f, "DESCRIPTOR"):
        # An onnx protobuf message.
        return serialize(), base_dir
    if callable(getattr(f, "read", None)):
        return _read_stream(f, max_memory, kind), _named_dir(f, base_dir)
    raise TypeError(
        f"cannot load from {type(f).__name__}: expected a path, bytes, a binary file "
        "object or an onnx protobuf message"
    )


# How much a read of a file object under a memory budget asks for at a time.
_READ_CHUNK = 1 << 24


def _read_stream(f: Any, limit: int | None, kind: str) -> bytes:
    """Everything file object `f` gives from its position; with a `limit`,
    a DecodeError (of the `kind` of message decoded) once it gives more than
    `limit` bytes (read no further)."""
    parts: list[bytes] = []
    total = 0
    while True:
        data = f.read() if limit is None else f.read(min(_READ_CHUNK, limit + 1 - total))
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"file object must be opened in binary mode, read() gave {type(data)}")
        if limit is None:
            return bytes(data) if not isinstance(data, bytes) else data
        if not data:
            return b"".join(parts)
        parts.append(bytes(data))
        total += len(data)
        if total > limit:
            where = _formats.file_path(f) or f"the {type(f).__name__}"
            reason = (
                f"{where} is a stream (read into memory, not mapped) longer than the memory "
                f"budget of {limit} bytes (raise max_memory, or save the model to a file, "
                "which is mapped)"
            )
            root = _TEXT_MESSAGES.get(kind, "ModelProto")
            raise DecodeError(
                f"{root} (byte {limit}): {reason}",
                offset=limit,
                path="",
                reason=reason,
                stream_limit=limit,
            )


def _named_dir(f: Any, base_dir: str | os.PathLike[str] | None) -> Any:
    """`base_dir`, else the folder of `f`'s path (a path, or a file object's
    `name`), when it has one."""
    path = _formats.file_path(f) if base_dir is None else None
    return base_dir if path is None else os.path.dirname(path) or "."


# What open(path, "rb") (or "r+b", or buffering=0) returns: the bytes read()
# gives are the file's own. Other objects with a descriptor (a GzipFile,
# whose fileno() is the compressed file's; a text file; a subclass that may
# change what it reads) are read.
_PLAIN_FILES = (io.BufferedReader, io.BufferedRandom)


def _mappable(f: Any) -> tuple[int, int] | None:
    """The descriptor and position of a plain binary file object open for
    reading on a regular file (which can be mapped instead of read), else
    None."""
    if os.name != "posix":
        return None
    plain = type(f) is io.FileIO or (
        type(f) in _PLAIN_FILES and type(getattr(f, "raw", None)) is io.FileIO
    )
    if not plain:
        return None
    try:
        if not f.readable():
            return None
        fd = f.fileno()
        if not isinstance(fd, int) or not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return fd, f.tell()
    except (AttributeError, OSError, ValueError):
        # No descriptor (BytesIO, a socket's file, a closed file): read it.
        return None


def _decode(
    kind: str,
    f: Source,
    base_dir: str | os.PathLike[str] | None,
    mmap: bool,
    max_memory: int | None,
    max_stream: int | None = None,
    **external: bool,
) -> Any:
    """Decodes `f` as a `kind` message; a stream is read up to the smaller
    of `max_memory` and `max_stream`."""
    mapped = _mappable(f) if mmap else None
    if mapped is None:
        limits = [n for n in (max_memory, max_stream) if n is not None]
        source, base = _resolve(f, base_dir, kind, min(limits) if limits else None)
        offset = 0
    else:
        # An open file: mapped from its position, as a path is, not read
        # into memory (its descriptor is the source).
        (source, offset), base = mapped, _named_dir(f, base_dir)
    try:
        return _onnxfast.decode_message(
            source,
            kind=kind,
            base_dir=os.fsdecode(base) if base is not None else None,
            mmap=mmap,
            max_memory=max_memory,
            offset=offset,
            max_stream=max_stream,
            **external,
        )
    finally:
        if mapped is not None:
            f.seek(0, os.SEEK_END)  # type: ignore[union-attr]  # as read() leaves it


def load(
    f: Source,
    *,
    base_dir: str | os.PathLike[str] | None = None,
    mmap: bool = True,
    max_memory: int | None = None,
    load_external_data: bool = False,
    allow_hardlinks: bool = False,
    verify_checksum: bool = False,
    format: str | None = None,
) -> Model:
    """Loads an ONNX model.

    Args:
        f: a path (a regular file is memory-mapped; a FIFO or a pipe, such
            as ``/dev/stdin`` fed by one or a shell's ``<(...)``, is read to
            its end; a device such as ``/dev/zero`` is refused with an
            ``OSError``), ``bytes`` (used in place, zero-copy),
            ``bytearray``/``memoryview`` (copied once), a binary file object
            (what ``open(path, "rb")`` gives on a regular file is mapped
            from its position, as a path is; others, such as
            ``io.BytesIO``, a pipe or a ``GzipFile``, are read once; either
            is left at its end, as ``read()`` leaves it), or an
            ``onnx.ModelProto``.
        base_dir: folder where external data is resolved. Defaults to the
            model file's folder for paths and named file objects, and to the
            current directory otherwise (pinned at load time).
        mmap: map files (default) or read them into memory: the model file
            at load, external data with positional reads when accessed. A
            mapped file must not be truncated or rewritten while the model is
            alive (the process would get SIGBUS); use mmap=False in pipelines
            that cannot guarantee that.
        max_memory: refuse files whose decoded form would need more bytes
            than this; defaults to 16 × the file size + 64 MiB. A stream (a
            pipe, a FIFO, a file object that is not mapped) is read into
            memory: when given, it is also the most bytes read from one
            (a ``DecodeError`` past it); without it, a stream is read whole.
        load_external_data: read every external tensor now and make it
            inline (raw_data), as onnx.load does; the default reads (maps)
            each external file lazily, on the first access to its data.
        allow_hardlinks: accept external files with more than one hard link
            (refused by default: a hard link can expose a file from outside
            the model's folder).
        verify_checksum: check each external tensor's SHA-1 `checksum`
            (when present) whenever its data is read.
        format: ``"protobuf"`` (the binary format, read by onnxfast), or
            one of onnx's text formats, ``"textproto"``, ``"json"`` or
            ``"onnxtxt"``, parsed by onnx (it must be installed) and then
            decoded from its binary form: a copy, for small models, and
            not covered by onnxfast's hostile-input guarantees (onnxtxt is
            parsed by onnx's C++ parser). By default, as ``onnx.load``
            does, from the extension of the path (or of a file object's
            ``name``): ``.txtpb``/``.textproto``/``.prototxt``/``.pbtxt``,
            ``.json``/``.onnxjson``, ``.onnxtxt``/``.onnxtext``; any other
            is protobuf. Parsing text takes up to 12 times its size in
            memory: a text over ``max_memory`` / 16 (by default 64 MiB) is
            refused before it is read.

    Raises:
        FileNotFoundError: the path does not exist.
        DecodeError: the bytes are not a well-formed ModelProto; the message
            names the byte offset and the field path.
        ExternalDataError: with load_external_data=True, an external tensor
            could not be read or was refused (see Tensor.numpy()).
    """
    f, base_dir = _from_text(f, format, "ModelProto", base_dir, max_memory)
    return _decode(
        "model",
        f,
        base_dir,
        mmap,
        max_memory,
        load_external_data=load_external_data,
        allow_hardlinks=allow_hardlinks,
        verify_checksum=verify_checksum,
    )


def _load_within(
    f: Source, max_stream: int | None, *, mmap: bool = True, format: str | None = None
) -> Model:
    """`load(f, mmap=mmap, format=format)`, reading no more than
    `max_stream` bytes of a stream (a pipe, a FIFO, a file object that is
    read) when given: past it, a DecodeError with `stream_limit`. What
    `check` reads (under a policy's max_file_bytes)."""
    f, base_dir = _from_text(f, format, "ModelProto", None, None)
    return _decode("model", f, base_dir, mmap, None, max_stream)


def _from_text(
    f: Source,
    format: str | None,
    message: str,
    base_dir: str | os.PathLike[str] | None,
    max_memory: int | None,
) -> tuple[Source, Any]:
    """`f` and the folder its external data is relative to, as `_decode`
    takes them: in one of onnx's text formats (`format`, else by `f`'s
    extension), the binary encoding of the `message` it holds (and the
    folder `f` names, since bytes name none); else both as given."""
    fmt = _formats.resolve(format, f)
    if fmt == "protobuf":
        return f, base_dir
    return _formats.load_text(f, fmt, max_memory, message), _named_dir(f, base_dir)


def _load_value(kind: str, f: Source, mmap: bool, format: str | None) -> Any:
    """A serialized message other than a model, in `format` (see `load`)."""
    f, base_dir = _from_text(f, format, _TEXT_MESSAGES[kind], None, None)
    return _decode(kind, f, base_dir, mmap, None)


# The onnx class each kind of message is parsed into from text.
_TEXT_MESSAGES = {
    "tensor": "TensorProto",
    "sequence": "SequenceProto",
    "map": "MapProto",
    "optional": "OptionalProto",
}


def load_tensor(f: Source, *, mmap: bool = True, format: str | None = None) -> Tensor:
    """Loads a serialized ``TensorProto`` (e.g. a ``.pb`` test-data file).

    ``format``: as in `load` (``"protobuf"``, or one of onnx's text
    formats, by default from the extension), as ``onnx.load_tensor`` takes
    it."""
    return _load_value("tensor", f, mmap, format)


def load_sequence(f: Source, *, mmap: bool = True, format: str | None = None) -> SequenceValue:
    """Loads a serialized ``SequenceProto`` (``format``: see `load_tensor`)."""
    return _load_value("sequence", f, mmap, format)


def load_map(f: Source, *, mmap: bool = True, format: str | None = None) -> MapValue:
    """Loads a serialized ``MapProto`` (``format``: see `load_tensor`)."""
    return _load_value("map", f, mmap, format)


def load_optional(f: Source, *, mmap: bool = True, format: str | None = None) -> OptionalValue:
    """Loads a serialized ``OptionalProto`` (``format``: see `load_tensor`)."""
    return _load_value("optional", f, mmap, format)
