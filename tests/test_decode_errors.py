"""Malformed input raises DecodeError naming the byte offset and field path."""

from __future__ import annotations

import random

import onnx
import pytest

import onnxfast
from onnxfast import DecodeError, OnnxFastError

from _wire import key, ld, varint, vint
from conftest import wheel_models


def _model_bytes() -> bytes:
    return next(p for p in wheel_models() if "squeezenet" in p.name).read_bytes()


def test_decode_error_is_a_value_error_and_onnxfast_error() -> None:
    assert issubclass(DecodeError, ValueError)
    assert issubclass(DecodeError, OnnxFastError)


def test_length_past_end_names_path_and_offsets() -> None:
    raw = key(9, 2) + varint(4096) + b"\x01\x02"
    tensor = ld(8, b"w") + raw
    node = ld(4, b"Constant") + ld(5, ld(1, b"value") + ld(5, tensor))
    graph = ld(1, ld(4, b"Relu")) + ld(1, node)
    data = vint(1, 8) + ld(7, graph)
    with pytest.raises(DecodeError) as info:
        onnxfast.load(data)
    err = info.value
    assert err.path == "graph.node[1].attribute[0].t.raw_data"
    assert err.offset == len(data) - 2 - len(varint(4096))
    assert "length 4096 runs past the end" in str(err)
    assert f"byte {err.offset}" in str(err)
    assert str(err).startswith("graph.node[1].attribute[0].t.raw_data")


def test_every_truncation_of_a_real_model_is_refused_or_decodes() -> None:
    data = _model_bytes()
    # Cut points all over the file (and every byte of its first kilobyte).
    cuts = list(range(1, 1024)) + list(range(1024, len(data), max(1, len(data) // 2000)))
    refused = 0
    for cut in cuts:
        prefix = data[:cut]
        try:
            onnxfast.load(prefix)
        except DecodeError as e:
            refused += 1
            assert 0 <= e.offset <= cut
            assert e.reason
        else:
            # A cut exactly between two fields is a valid (smaller) message,
            # and onnx agrees it parses.
            onnx.ModelProto.FromString(prefix)
    assert refused > len(cuts) // 2


def test_bit_flips_never_crash() -> None:
    data = bytearray(_model_bytes())
    rng = random.Random(1234)
    outcomes = {"ok": 0, "error": 0}
    for _ in range(3000):
        flipped = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(min(len(flipped), 4096))
            flipped[pos] ^= 1 << rng.randrange(8)
        try:
            model = onnxfast.load(bytes(flipped))
            # Whatever decoded must be readable.
            repr(model)
            if model.graph is not None:
                for node in model.graph.node:
                    node.attrs  # noqa: B018
            outcomes["ok"] += 1
        except DecodeError as e:
            assert e.path is not None
            outcomes["error"] += 1
    assert outcomes["error"] > 0


def test_wrong_wire_type() -> None:
    with pytest.raises(DecodeError) as info:
        onnxfast.load(vint(7, 3))  # graph sent as a varint
    assert info.value.path == "graph"
    assert info.value.offset == 0
    assert "wire type 0 (varint)" in str(info.value)


def test_wrong_wire_type_deep() -> None:
    node = ld(1, b"x") + key(5, 0) + varint(1)  # attribute as a varint
    data = ld(7, ld(1, node))
    with pytest.raises(DecodeError) as info:
        onnxfast.load(data)
    assert info.value.path == "graph.node[0].attribute[0]"


def test_over_long_varint() -> None:
    data = key(1, 0) + b"\xff" * 10 + b"\x01"
    with pytest.raises(DecodeError) as info:
        onnxfast.load(data)
    assert info.value.path == "ir_version"
    assert info.value.offset == 1
    assert "varint" in str(info.value)


def test_truncated_varint() -> None:
    with pytest.raises(DecodeError) as info:
        onnxfast.load(key(1, 0) + b"\x80\x80")
    assert info.value.path == "ir_version"
    assert "runs past the end of the buffer" in str(info.value)


def test_invalid_wire_types_and_field_numbers() -> None:
    with pytest.raises(DecodeError, match="invalid wire type 7"):
        onnxfast.load(key(50, 7))
    with pytest.raises(DecodeError, match="invalid field number 0"):
        onnxfast.load(b"\x00")
    with pytest.raises(DecodeError, match="end-group"):
        onnxfast.load(key(50, 4))


def test_invalid_utf8_names_the_string_field() -> None:
    node = ld(4, b"Re\xfflu")
    data = ld(7, ld(1, ld(1, b"x")) + ld(1, node))
    with pytest.raises(DecodeError) as info:
        onnxfast.load(data)
    assert info.value.path == "graph.node[1].op_type"
    assert "UTF-8" in str(info.value)


def test_packed_length_not_multiple_of_width() -> None:
    tensor = ld(4, b"\x00" * 5)  # float_data, packed, 5 bytes
    with pytest.raises(DecodeError) as info:
        onnxfast.load_tensor(tensor)
    assert info.value.path == "float_data"
    assert "multiple" in str(info.value)


def test_unknown_fields_are_skipped() -> None:
    base = onnx.helper.make_model(
        onnx.helper.make_graph([onnx.helper.make_node("Relu", ["x"], ["y"])], "g", [], [])
    ).SerializeToString()
    extra = vint(200, 5) + ld(201, b"future") + key(202, 5) + b"\0\0\0\0" + key(203, 1) + b"\0" * 8
    extra += key(204, 3) + vint(1, 1) + key(204, 4)
    model = onnxfast.load(base + extra)
    assert model.graph.node[0].op_type == "Relu"
    # The source bytes (with the unknown fields) are what to_onnx() parses.
    assert model.SerializeToString() == base + extra


def test_nesting_limit() -> None:
    def nested_type(levels: int) -> bytes:
        # TypeProto.sequence_type.elem_type... alternating two messages a level.
        inner = b""
        for i in reversed(range(levels)):
            inner = ld(4 if i % 2 == 0 else 1, inner)
        return inner

    # ValueInfoProto.type at depth 3 (model > graph > input > type): 96 more levels.
    def model(levels: int) -> bytes:
        return ld(7, ld(11, ld(1, b"x") + ld(2, nested_type(levels))))

    onnxfast.load(model(100 - 3))
    with pytest.raises(DecodeError, match="nested deeper than 100"):
        onnxfast.load(model(101 - 3))


def test_missing_file_is_file_not_found(tmp_path) -> None:
    with pytest.raises(FileNotFoundError) as info:
        onnxfast.load(tmp_path / "missing.onnx")
    assert info.value.filename == str(tmp_path / "missing.onnx")


def test_directory_is_an_os_error(tmp_path) -> None:
    with pytest.raises(IsADirectoryError):
        onnxfast.load(tmp_path)


def test_memory_bomb_is_refused_before_allocating() -> None:
    # 10 MB of empty NodeProtos: ~2 bytes each on the wire, ~240 in memory.
    graph = b"\x0a\x00" * 5_000_000
    with pytest.raises(DecodeError, match="budget"):
        onnxfast.load(ld(7, graph))


def test_faults_in_parallel_decoded_nodes_name_the_first_bad_node() -> None:
    """Graphs of 2,048+ nodes decode their nodes on several threads straight
    into the node list; a bad node must still give the exact error (the
    first fault in file order) and a good graph every node, in order."""
    from onnx import TensorProto, helper

    made = [
        helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"n{i:05d}") for i in range(6000)
    ]
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        made, "g", [vi("t0", TensorProto.FLOAT, [1])], [vi("t6000", TensorProto.FLOAT, [1])]
    )
    data = helper.make_model(graph).SerializeToString()
    model = onnxfast.load(data)
    assert [n.name for n in model.graph.node] == [f"n{i:05d}" for i in range(6000)]
    assert model.graph.node[5999].output == ["t6000"]
    bad = data.replace(b"n04000", b"n\xff4000"[:6]).replace(b"n03000", b"n0\xfe000"[:6])
    with pytest.raises(DecodeError) as info:
        onnxfast.load(bad)
    assert info.value.path == "graph.node[3000].name"
    assert "UTF-8" in str(info.value)


def test_non_ascii_names_decode_like_onnx() -> None:
    """Node strings take an ASCII fast path; other valid UTF-8 must come out
    exactly as onnx gives it."""
    from onnx import TensorProto, helper

    names = ["é", "relu_ñ✓", "名前", "\U0001f600x", "a" * 300 + "ß"]
    made = [helper.make_node("Relu", [f"in_{n}"], [f"out_{n}"], name=n) for n in names]
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(made, "g", [vi("x", TensorProto.FLOAT, [1])], [])
    data = helper.make_model(graph).SerializeToString()
    ours = onnxfast.load(data).graph.node
    theirs = onnx.ModelProto.FromString(data).graph.node
    assert [(n.name, n.input, n.output) for n in ours] == [
        (n.name, list(n.input), list(n.output)) for n in theirs
    ]
