"""onnxfast: load, decode and validate ONNX models fast and safely.

>>> import onnxfast
>>> model = onnxfast.load("model.onnx")          # memory-mapped, zero-copy
>>> model.graph.node[0].op_type
"""

from __future__ import annotations

import collections.abc

from . import errors
from ._check import Diagnostic, Report, check, check_model
from ._load import load, load_map, load_optional, load_sequence, load_tensor
from ._onnxfast import (
    Attribute,
    DeviceConfiguration,
    Dimension,
    Function,
    Graph,
    IntIntListEntry,
    MapType,
    MapValue,
    MemoryPlan,
    Model,
    Node,
    NodeDeviceConfiguration,
    OpaqueType,
    OperatorSetId,
    OptionalType,
    OptionalValue,
    RepeatedMessages,
    SequenceType,
    SequenceValue,
    ShardedDim,
    ShardingSpec,
    SimpleShardedDim,
    SparseTensor,
    SparseTensorType,
    StringStringEntry,
    Tensor,
    TensorAnnotation,
    TensorSegment,
    TensorShape,
    TensorType,
    TrainingInfo,
    Type,
    Value,
    ValueInfo,
    Values,
    __version__,
    evaluate_dim,
)
from ._policy import Policy
from ._shapes import infer_shapes, infer_shapes_path
from ._tensors import to_array
from .errors import (
    CheckError,
    DecodeError,
    ExternalDataError,
    InferenceError,
    InternalError,
    OnnxFastError,
    PolicyError,
    TensorError,
)

# `graph.values` is a read-only mapping of names to `Value`s.
collections.abc.Mapping.register(Values)

__all__ = [
    "Attribute",
    "CheckError",
    "DecodeError",
    "DeviceConfiguration",
    "Diagnostic",
    "Dimension",
    "ExternalDataError",
    "Function",
    "Graph",
    "InferenceError",
    "IntIntListEntry",
    "InternalError",
    "MapType",
    "MapValue",
    "MemoryPlan",
    "Model",
    "Node",
    "NodeDeviceConfiguration",
    "OnnxFastError",
    "OpaqueType",
    "OperatorSetId",
    "OptionalType",
    "OptionalValue",
    "Policy",
    "PolicyError",
    "RepeatedMessages",
    "Report",
    "SequenceType",
    "SequenceValue",
    "ShardedDim",
    "ShardingSpec",
    "SimpleShardedDim",
    "SparseTensor",
    "SparseTensorType",
    "StringStringEntry",
    "Tensor",
    "TensorAnnotation",
    "TensorError",
    "TensorSegment",
    "TensorShape",
    "TensorType",
    "TrainingInfo",
    "Type",
    "Value",
    "ValueInfo",
    "Values",
    "__version__",
    "check",
    "check_model",
    "errors",
    "evaluate_dim",
    "infer_shapes",
    "infer_shapes_path",
    "load",
    "load_map",
    "load_optional",
    "load_sequence",
    "load_tensor",
    "to_array",
]
