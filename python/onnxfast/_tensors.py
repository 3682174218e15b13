"""onnx-style spellings of the tensor API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from ._onnxfast import Tensor


def to_array(tensor: Tensor, *, copy: bool | None = None, dtype: Any = None) -> np.ndarray:
    """``onnx.numpy_helper.to_array`` for an onnxfast :class:`Tensor`.

    Same dtype, shape and values as onnx; a read-only zero-copy view when the
    stored bytes already are the array (see :meth:`Tensor.numpy`).
    """
    return tensor.numpy(copy=copy, dtype=dtype)
