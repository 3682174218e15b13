"""The Python classes' fields come from onnx.proto (build.rs generates the
table): every field and oneof of onnx's own descriptors is there, with
protobuf's semantics, on every class."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

import onnxfast

# onnxfast class -> onnx message (its `to_onnx` target).
CLASSES = {
    "Model": onnx.ModelProto,
    "Graph": onnx.GraphProto,
    "Node": onnx.NodeProto,
    "Attribute": onnx.AttributeProto,
    "ValueInfo": onnx.ValueInfoProto,
    "StringStringEntry": onnx.StringStringEntryProto,
    "OperatorSetId": onnx.OperatorSetIdProto,
    "TensorAnnotation": onnx.TensorAnnotation,
    "TrainingInfo": onnx.TrainingInfoProto,
    "Function": onnx.FunctionProto,
    "Tensor": onnx.TensorProto,
    "TensorSegment": onnx.TensorProto.Segment,
    "SparseTensor": onnx.SparseTensorProto,
    "TensorShape": onnx.TensorShapeProto,
    "Dimension": onnx.TensorShapeProto.Dimension,
    "Type": onnx.TypeProto,
    "TensorType": onnx.TypeProto.Tensor,
    "SparseTensorType": onnx.TypeProto.SparseTensor,
    "SequenceType": onnx.TypeProto.Sequence,
    "MapType": onnx.TypeProto.Map,
    "OptionalType": onnx.TypeProto.Optional,
    "OpaqueType": onnx.TypeProto.Opaque,
    "DeviceConfiguration": onnx.DeviceConfigurationProto,
    "NodeDeviceConfiguration": onnx.NodeDeviceConfigurationProto,
    "ShardingSpec": onnx.ShardingSpecProto,
    "IntIntListEntry": onnx.IntIntListEntryProto,
    "ShardedDim": onnx.ShardedDimProto,
    "SimpleShardedDim": onnx.SimpleShardedDimProto,
    "SequenceValue": onnx.SequenceProto,
    "MapValue": onnx.MapProto,
    "OptionalValue": onnx.OptionalProto,
}


def test_every_message_class_is_listed() -> None:
    classes = {
        name
        for name in dir(onnxfast._onnxfast)
        if hasattr(getattr(onnxfast._onnxfast, name), "SerializeToString")
    }
    assert classes == set(CLASSES)


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_every_onnx_field_is_an_attribute(name) -> None:
    cls = getattr(onnxfast._onnxfast, name)
    descriptor = CLASSES[name].DESCRIPTOR
    missing = [f.name for f in descriptor.fields if not hasattr(cls, f.name)]
    assert not missing, f"{name} lacks {missing}"
    for method in ("HasField", "WhichOneof", "SerializeToString", "to_onnx"):
        assert hasattr(cls, method), f"{name}.{method}"


def _sharded_model(dims: list[onnx.SimpleShardedDimProto]) -> onnx.ModelProto:
    spec = onnx.ShardingSpecProto(
        tensor_name="y",
        device=[0, 1],
        sharded_dim=[onnx.ShardedDimProto(axis=0, simple_sharding=dims)],
    )
    node = helper.make_node("Relu", ["x"], ["y"])
    node.device_configurations.append(
        onnx.NodeDeviceConfigurationProto(configuration_id="c", sharding_spec=[spec])
    )
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_oneof_members_follow_protobuf() -> None:
    # SimpleShardedDimProto's `dim` oneof had no WhichOneof before the
    # table was generated; each member, and none, read as onnx reads them.
    dims = [
        onnx.SimpleShardedDimProto(dim_value=4, num_shards=2),
        onnx.SimpleShardedDimProto(dim_param="batch", num_shards=2),
        onnx.SimpleShardedDimProto(num_shards=3),
    ]
    reference = _sharded_model(dims)
    ours = onnxfast.load(reference.SerializeToString())
    theirs_dims = reference.graph.node[0].device_configurations[0].sharding_spec[0]
    ours_dims = ours.graph.node[0].device_configurations[0].sharding_spec[0]
    for a, b in zip(
        ours_dims.sharded_dim[0].simple_sharding,
        theirs_dims.sharded_dim[0].simple_sharding,
        strict=True,
    ):
        assert a.WhichOneof("dim") == b.WhichOneof("dim")
        assert (a.dim_value, a.dim_param, a.num_shards) == (b.dim_value, b.dim_param, b.num_shards)
        for field in ("dim_value", "dim_param", "num_shards"):
            assert a.HasField(field) == b.HasField(field)


@pytest.mark.parametrize("name", ["Node", "Dimension", "Type", "SimpleShardedDim"])
def test_which_oneof_of_an_unknown_group_raises_as_protobuf_does(name) -> None:
    reference = _sharded_model([onnx.SimpleShardedDimProto(dim_value=1)])
    ours = onnxfast.load(reference.SerializeToString())
    node = ours.graph.node[0]
    instances = {
        "Node": (node, reference.graph.node[0]),
        "Dimension": (
            ours.graph.input[0].type.tensor_type.shape.dim[0],
            reference.graph.input[0].type.tensor_type.shape.dim[0],
        ),
        "Type": (ours.graph.input[0].type, reference.graph.input[0].type),
        "SimpleShardedDim": (
            node.device_configurations[0].sharding_spec[0].sharded_dim[0].simple_sharding[0],
            reference.graph.node[0]
            .device_configurations[0]
            .sharding_spec[0]
            .sharded_dim[0]
            .simple_sharding[0],
        ),
    }
    mine, theirs = instances[name]
    with pytest.raises(ValueError, match="no_such_group"):
        theirs.WhichOneof("no_such_group")
    with pytest.raises(ValueError, match="no oneof"):
        mine.WhichOneof("no_such_group")


def test_enum_fields_read_as_codes() -> None:
    attr = helper.make_attribute("perm", [1, 0])
    tensor = helper.make_tensor("w", TensorProto.FLOAT, [1], [1.0])
    tensor.data_location = TensorProto.EXTERNAL
    node = helper.make_node("Transpose", ["x"], ["y"])
    node.attribute.append(attr)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])],
        initializer=[tensor],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    ours = onnxfast.load(model.SerializeToString())
    assert ours.graph.node[0].attribute[0].type == onnx.AttributeProto.INTS
    assert ours.graph.initializer[0].data_location == TensorProto.EXTERNAL
