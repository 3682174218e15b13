"""Names of TensorProto.DataType codes (onnx 1.23)."""

from __future__ import annotations

DATA_TYPE_NAMES: dict[int, str] = {
    0: "UNDEFINED",
    1: "FLOAT",
    2: "UINT8",
    3: "INT8",
    4: "UINT16",
    5: "INT16",
    6: "INT32",
    7: "INT64",
    8: "STRING",
    9: "BOOL",
    10: "FLOAT16",
    11: "DOUBLE",
    12: "UINT32",
    13: "UINT64",
    14: "COMPLEX64",
    15: "COMPLEX128",
    16: "BFLOAT16",
    17: "FLOAT8E4M3FN",
    18: "FLOAT8E4M3FNUZ",
    19: "FLOAT8E5M2",
    20: "FLOAT8E5M2FNUZ",
    21: "UINT4",
    22: "INT4",
    23: "FLOAT4E2M1",
    24: "FLOAT8E8M0",
    25: "UINT2",
    26: "INT2",
    27: "FLOAT6E2M3",
    28: "FLOAT6E3M2",
}


def data_type_name(code: int) -> str:
    return DATA_TYPE_NAMES.get(code, f"<{code}>")


#: Bits an element of each data type takes as stored (sub-byte types packed,
#: as onnx packs them); absent for STRING and UNDEFINED, whose size is not
#: fixed.
DATA_TYPE_BITS: dict[int, int] = {
    1: 32,
    2: 8,
    3: 8,
    4: 16,
    5: 16,
    6: 32,
    7: 64,
    9: 8,
    10: 16,
    11: 64,
    12: 32,
    13: 64,
    14: 64,
    15: 128,
    16: 16,
    17: 8,
    18: 8,
    19: 8,
    20: 8,
    21: 4,
    22: 4,
    23: 4,
    24: 8,
    25: 2,
    26: 2,
    27: 6,
    28: 6,
}


def tensor_bytes(elem_type: int, dims: list[int | None] | None) -> int | None:
    """Bytes a tensor of `elem_type` and `dims` takes as stored (packed for
    sub-byte types, rounded up to a byte); None when a dim or the element
    size is not known."""
    bits = DATA_TYPE_BITS.get(elem_type)
    if bits is None or dims is None or any(d is None or d < 0 for d in dims):
        return None
    count = 1
    for d in dims:
        count *= d  # type: ignore[operator]
    return (count * bits + 7) // 8
