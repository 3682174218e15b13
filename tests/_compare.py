"""Field-by-field comparison of onnxfast objects with onnx protobuf messages.

Walks the onnx message's protobuf descriptor recursively, so every field onnx
knows is compared, including ones added in later onnx releases.
"""

from __future__ import annotations

import math
import struct
from typing import Any

from google.protobuf.descriptor import FieldDescriptor

_FLOAT_TYPES = (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE)


def _same_float(a: float, b: float, single: bool) -> bool:
    if single:
        # Both sides hold float32 values; compare their bits (NaN payloads too).
        return struct.pack("<f", a) == struct.pack("<f", b)
    if math.isnan(a) and math.isnan(b):
        return struct.pack("<d", a) == struct.pack("<d", b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def assert_same(ours: Any, theirs: Any, path: str = "") -> None:
    """Asserts that `ours` (onnxfast) and `theirs` (onnx) hold the same values."""
    descriptor = theirs.DESCRIPTOR
    for field in descriptor.fields:
        name = field.name
        where = f"{path}.{name}" if path else name
        mine = getattr(ours, name)
        other = getattr(theirs, name)
        if field.is_repeated:
            assert len(mine) == len(other), f"{where}: length {len(mine)} != {len(other)}"
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                for i, (a, b) in enumerate(zip(mine, other)):
                    assert_same(a, b, f"{where}[{i}]")
            elif field.type in _FLOAT_TYPES:
                single = field.type == FieldDescriptor.TYPE_FLOAT
                for i, (a, b) in enumerate(zip(mine, other)):
                    assert _same_float(a, b, single), f"{where}[{i}]: {a!r} != {b!r}"
            else:
                assert list(mine) == list(other), f"{where}: {list(mine)[:8]} != {list(other)[:8]}"
            continue
        present = theirs.HasField(name)
        assert ours.HasField(name) == present, (
            f"{where}: HasField {ours.HasField(name)} != {present}"
        )
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            if present:
                assert mine is not None, f"{where}: None but onnx has it"
                assert_same(mine, other, where)
            else:
                assert mine is None, f"{where}: {mine!r} but onnx has no value"
        elif field.type in _FLOAT_TYPES:
            assert _same_float(mine, other, field.type == FieldDescriptor.TYPE_FLOAT), (
                f"{where}: {mine!r} != {other!r}"
            )
        else:
            assert mine == other, f"{where}: {mine!r} != {other!r}"
            assert type(mine) is type(other), f"{where}: {type(mine)} vs {type(other)}"
