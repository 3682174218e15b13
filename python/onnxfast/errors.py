"""Exceptions raised by onnxfast.

Every error onnxfast raises on purpose is an :class:`OnnxFastError`; the
subclasses carry structured attributes (offsets, field paths, tensor names)
in addition to a readable message. A missing file is a plain
:class:`FileNotFoundError`, as with :func:`open`.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CheckError",
    "DecodeError",
    "ExternalDataError",
    "ExternalDataWarning",
    "InferenceError",
    "InternalError",
    "OnnxFastError",
    "PolicyError",
    "TensorError",
]


class OnnxFastError(Exception):
    """Base class of every onnxfast error."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        for key, value in details.items():
            setattr(self, key, value)


class DecodeError(OnnxFastError, ValueError):
    """The bytes are not a well-formed protobuf message of the expected type.

    Attributes:
        offset: byte offset of the faulty field or value in the buffer.
        path: field path from the root message, e.g.
            ``graph.node[41].attribute[2].t.raw_data`` (empty at top level).
        reason: what is wrong, without the location.
        text_format: for a model read in one of onnx's text formats
            ("textproto", "json", "onnxtxt"), that format (then ``offset``
            is 0: onnx's parser gives no byte offset); absent otherwise.
        stream_limit: for a stream (a pipe, a FIFO, a file object that is
            read) refused for going on past a limit (``max_memory``), that
            limit: its bytes up to it were read, no more; absent otherwise.
    """

    offset: int
    path: str
    reason: str


class TensorError(OnnxFastError, ValueError):
    """A tensor's data does not match its declared type and shape.

    Attributes:
        tensor: the tensor's name.
        reason: what is wrong.
    """

    tensor: str
    reason: str


class ExternalDataError(OnnxFastError):
    """External tensor data could not be read, or was refused as unsafe.

    Attributes:
        tensor: the tensor's name.
        location: the ``location`` key as written in the model.
        reason: the rule that was broken.
    """

    tensor: str
    location: str
    reason: str


class ExternalDataWarning(UserWarning):
    """External data entries that onnxfast ignores (keys outside the spec), or
    external data a model saved by ``Model.save`` would not find (its files
    are not in the saved model's folder)."""


class CheckError(OnnxFastError, ValueError):
    """The checker found errors; ``report`` holds every diagnostic."""

    report: Any


class InferenceError(CheckError):
    """Shape inference found errors (``infer_shapes(..., strict=True)``);
    ``report`` holds every diagnostic (codes E7…, see docs/checks.md)."""


class PolicyError(OnnxFastError, ValueError):
    """A policy cannot be read: not TOML, an unknown key, a wrong type or an
    out-of-range value.

    Attributes:
        path: the policy file (or ``"<string>"``, ``"<arguments>"``).
        key: the key at fault (``max_opset.com.microsoft`` inside a table),
            or None for a syntax error.
        line: its line in the file, when known.
    """

    path: str
    key: str | None
    line: int | None


class InternalError(OnnxFastError):
    """A bug in onnxfast (a Rust panic was caught). Please report it."""
