"""numpy glue for tensors: element dtypes and arrays over Rust-owned buffers.

The Rust side hands over a buffer owner (an object exposing
``__array_interface__`` over a memory-mapped slice or a Rust allocation); the
array built here keeps that owner alive through its ``.base`` chain.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

# TensorProto.DataType code -> numpy dtype, as onnx.helper.tensor_dtype_to_np_dtype.
DTYPES: dict[int, np.dtype[Any]] = {
    1: np.dtype(np.float32),
    2: np.dtype(np.uint8),
    3: np.dtype(np.int8),
    4: np.dtype(np.uint16),
    5: np.dtype(np.int16),
    6: np.dtype(np.int32),
    7: np.dtype(np.int64),
    8: np.dtype(object),
    9: np.dtype(np.bool_),
    10: np.dtype(np.float16),
    11: np.dtype(np.float64),
    12: np.dtype(np.uint32),
    13: np.dtype(np.uint64),
    14: np.dtype(np.complex64),
    15: np.dtype(np.complex128),
    16: np.dtype(ml_dtypes.bfloat16),
    17: np.dtype(ml_dtypes.float8_e4m3fn),
    18: np.dtype(ml_dtypes.float8_e4m3fnuz),
    19: np.dtype(ml_dtypes.float8_e5m2),
    20: np.dtype(ml_dtypes.float8_e5m2fnuz),
    21: np.dtype(ml_dtypes.uint4),
    22: np.dtype(ml_dtypes.int4),
    23: np.dtype(ml_dtypes.float4_e2m1fn),
    24: np.dtype(ml_dtypes.float8_e8m0fnu),
    25: np.dtype(ml_dtypes.uint2),
    26: np.dtype(ml_dtypes.int2),
    27: np.dtype(ml_dtypes.float6_e2m3fn),
    28: np.dtype(ml_dtypes.float6_e3m2fn),
}

_LITTLE = np.little_endian


def dtype_of(code: int) -> np.dtype[Any] | None:
    return DTYPES.get(code)


def dtype_name(dtype: Any) -> str:
    """Canonical name of anything numpy accepts as a dtype."""
    return np.dtype(dtype).name


def array(owner: Any, code: int, dims: list[int], copy: bool) -> np.ndarray:
    """An array of type `code` and shape `dims` over `owner`'s bytes."""
    flat = np.asarray(owner)
    result = flat.view(DTYPES[code]).reshape(dims)
    return result.copy() if copy else result


def converted(owner: Any, dtype: Any, dims: list[int]) -> np.ndarray:
    """An array of numpy `dtype` (float32 / int8) over a kernel's output."""
    return np.asarray(owner).view(dtype).reshape(dims)


def strings(values: list[str], dims: list[int]) -> np.ndarray:
    """A STRING tensor: an object array of str, as onnx's to_array gives."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out.reshape(dims)
