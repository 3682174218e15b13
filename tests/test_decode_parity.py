"""Every model of the node-test corpus and of the onnx wheel decodes with every
field equal to onnx's (compared through onnx's own protobuf descriptors), and
so does every test-data file (TensorProto, SequenceProto, MapProto,
OptionalProto)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import onnx

import onnxfast

from _compare import assert_same
from conftest import corpus_models, corpus_pb_files, wheel_models, wheel_pb_files

_ONNX_TYPES = {
    "tensor": onnx.TensorProto,
    "sequence": onnx.SequenceProto,
    "map": onnx.MapProto,
    "optional": onnx.OptionalProto,
}
_LOADERS = {
    "tensor": onnxfast.load_tensor,
    "sequence": onnxfast.load_sequence,
    "map": onnxfast.load_map,
    "optional": onnxfast.load_optional,
}


def _check_models(paths: list[Path]) -> int:
    failures = []
    for path in paths:
        theirs = onnx.load(path, load_external_data=False)
        ours = onnxfast.load(path)
        try:
            assert_same(ours, theirs)
        except AssertionError as e:
            failures.append(f"{path}: {e}")
    assert not failures, f"{len(failures)} models differ:\n" + "\n".join(failures[:20])
    return len(paths)


def test_node_corpus_models_match_onnx() -> None:
    assert _check_models(corpus_models()) > 1800


def test_wheel_models_match_onnx() -> None:
    assert _check_models(wheel_models()) > 100


@cache
def _declared_kinds(model_path: Path) -> dict[str, str]:
    """'input_0' -> 'tensor' | 'sequence' | 'map' | 'optional', from the graph."""
    graph = onnx.load(model_path, load_external_data=False).graph
    kinds = {}
    for prefix, infos in (("input", graph.input), ("output", graph.output)):
        for i, info in enumerate(infos):
            which = info.type.WhichOneof("value")
            kinds[f"{prefix}_{i}"] = {
                "map_type": "map",
                "sequence_type": "sequence",
                "optional_type": "optional",
            }.get(which, "tensor")
    return kinds


def test_node_corpus_test_data_matches_onnx() -> None:
    files = corpus_pb_files()
    assert len(files) > 6000
    failures = []
    seen = set()
    for pb in files:
        kind = _declared_kinds(pb.parent.parent / "model.onnx")[pb.stem]
        seen.add(kind)
        data = pb.read_bytes()
        theirs = _ONNX_TYPES[kind].FromString(data)
        ours = _LOADERS[kind](pb)
        try:
            assert_same(ours, theirs)
            assert _LOADERS[kind](data) == ours, "loading the bytes differs from loading the path"
        except AssertionError as e:
            failures.append(f"{pb}: {e}")
    assert not failures, "\n".join(failures[:20])
    assert {"tensor", "sequence", "optional"} <= seen


def test_wheel_test_data_matches_onnx() -> None:
    files = wheel_pb_files()
    assert len(files) > 100
    for pb in files:
        assert_same(onnxfast.load_tensor(pb), onnx.TensorProto.FromString(pb.read_bytes()))


def _varied_nodes(count: int, prefix: str) -> list[onnx.NodeProto]:
    """Nodes covering every NodeProto field and list length: none, inline
    (<= 2 inputs, 1 output) and spilled lists; short (inline) and long names;
    the rarely set fields (doc_string, overload, metadata_props,
    device_configurations) on some nodes only; attributes."""
    from onnx import helper

    made = []
    for i in range(count):
        n_in, n_out = i % 5, 1 + i % 3
        long = f"/model/layers.{i}/self_attn/q_proj/MatMul_output_0"
        node = helper.make_node(
            ["Add", "Concat", "Split", "MyOp"][i % 4],
            [f"{prefix}i{i}_{k}" if k % 2 else long + str(k) for k in range(n_in)],
            [f"{prefix}o{i}_{k}" for k in range(n_out)],
            name=(f"{prefix}n{i}" if i % 3 else long + "é"),
            domain=["", "ai.onnx", "custom.domain.with.a.rather.long.name"][i % 3],
        )
        if i % 7 == 0:
            node.doc_string = f"doc {i} " * (i % 4)
        if i % 11 == 0:
            node.overload = f"ov{i}"
        if i % 13 == 0:
            entry = node.metadata_props.add()
            entry.key, entry.value = f"k{i}", f"v{i}"
        if i % 17 == 0:
            config = node.device_configurations.add()
            config.configuration_id = f"cfg{i}"
            config.pipeline_stage = i
        if i % 5 == 0:
            node.attribute.append(helper.make_attribute("axis", i % 3))
        made.append(node)
    return made


def test_every_node_field_and_list_shape_matches_onnx() -> None:
    """Nodes keep short names inline, two inputs and one output inline, and
    their rare fields out of line; whatever the shape, every field must read
    as onnx reads it: main-graph nodes (scanned and decoded on the fast path,
    in parallel above 2,048 nodes), a subgraph's and a function's nodes
    (generic path)."""
    from onnx import TensorProto, helper

    vi = helper.make_tensor_value_info
    body = helper.make_graph(
        _varied_nodes(40, "b"), "body", [], [vi("bo0_0", TensorProto.FLOAT, [1])]
    )
    nodes = _varied_nodes(3000, "")
    nodes[1].attribute.append(helper.make_attribute("then_branch", body))
    graph = helper.make_graph(nodes, "g", [vi("x", TensorProto.FLOAT, [1])], [])
    function = helper.make_function(
        "custom.domain", "F", ["a"], ["b"], _varied_nodes(40, "f"), [helper.make_opsetid("", 21)]
    )
    model = helper.make_model(graph, functions=[function])
    data = model.SerializeToString()
    assert_same(onnxfast.load(data), onnx.ModelProto.FromString(data))
    # A prost re-encoding of a node (the hand-written encoder) parses back equal.
    ours = onnxfast.load(data)
    for i in (0, 1, 7, 11, 13, 17, 2999):
        again = onnx.NodeProto.FromString(ours.graph.node[i].SerializeToString())
        assert again == model.graph.node[i], i


def _fields_read_from_bytes_match(ours: onnxfast.Model, theirs: onnx.ModelProto) -> None:
    """A main-graph element's object answers its names (and a tensor's type
    and dims) from the element's bytes until something decodes it; each
    object here is fresh, so every answer is read from the bytes."""
    nodes, inits, infos = ours.graph.node, ours.graph.initializer, ours.graph.value_info
    for i, node in enumerate(theirs.graph.node):
        assert nodes[i].name == node.name, i
        assert nodes[i].op_type == node.op_type, i
        assert nodes[i].domain == node.domain, i
        assert nodes[i].input == list(node.input), i
        assert nodes[i].output == list(node.output), i
    for i, tensor in enumerate(theirs.graph.initializer):
        assert inits[i].name == tensor.name, i
        assert inits[i].data_type == tensor.data_type, i
        assert inits[i].dims == list(tensor.dims), i
        assert inits[i].shape == tuple(tensor.dims), i
        if tensor.data_type:
            assert inits[i].dtype == onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type), i
    for i, info in enumerate(theirs.graph.value_info):
        assert infos[i].name == info.name, i


def test_fields_read_from_bytes_match_onnx() -> None:
    paths = corpus_models() + wheel_models()
    for path in paths:
        theirs = onnx.load(path, load_external_data=False)
        _fields_read_from_bytes_match(onnxfast.load(path), theirs)
    assert len(paths) > 1900


def test_fields_read_from_bytes_follow_protobuf_merging() -> None:
    """Fields given twice (the last singular string wins, repeated ones
    append), dims packed and not, long and non-ASCII names, fields of other
    types between them: read from the bytes as protobuf parses them."""
    from _wire import ld, vint

    long = "a/very/long/name/" * 10 + "é"
    node = (
        ld(1, b"x")
        + ld(4, b"Relu")
        + ld(3, b"first")
        + ld(5, ld(1, b"alpha") + vint(20, 1))
        + ld(2, b"y")
        + ld(3, long.encode())
        + ld(1, b"x2")
        + ld(7, b"ai.onnx")
        + ld(6, b"doc" * 50)
        + ld(4, b"Abs")
    )
    tensor = (
        vint(1, 2)
        + ld(8, b"w")
        + vint(2, 1)
        + ld(1, bytes([3, 4]))
        + ld(9, bytes(96))
        + ld(8, long.encode())
        + vint(2, 1)
    )
    info = ld(1, b"v1") + ld(1, b"v2")
    graph = ld(1, node) * 3000 + ld(5, tensor) * 3000 + ld(13, info)
    data = vint(1, 9) + ld(8, vint(2, 21)) + ld(7, graph)
    _fields_read_from_bytes_match(onnxfast.load(data), onnx.ModelProto.FromString(data))
