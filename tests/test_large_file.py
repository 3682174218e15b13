"""A single .onnx file larger than 2 GiB loads (protobuf's C++ limit is not ours).

The file is sparse: a 2.25 GiB initializer whose bytes are a hole, so the test
needs no real disk space and reads no weight pages.
"""

from __future__ import annotations

import os

import pytest
from onnx import TensorProto, helper

import onnxfast

from _wire import key, ld, varint

BIG = (2 << 30) + (256 << 20)  # 2.25 GiB


def _write_sparse_model(path) -> None:
    head = TensorProto(name="big", data_type=TensorProto.UINT8, dims=[BIG])
    tensor_prefix = head.SerializeToString() + key(9, 2) + varint(BIG)
    tensor_len = len(tensor_prefix) + BIG
    graph_tail = b"".join(
        [
            ld(
                1, helper.make_node("Relu", ["x"], ["y"], name="after_the_hole").SerializeToString()
            ),
            ld(2, b"big_graph"),
            ld(11, helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]).SerializeToString()),
            ld(12, helper.make_tensor_value_info("y", TensorProto.FLOAT, [4]).SerializeToString()),
        ]
    )
    graph_head = ld(1, helper.make_node("Identity", ["a"], ["b"]).SerializeToString())
    graph_head += key(5, 2) + varint(tensor_len) + tensor_prefix
    graph_len = len(graph_head) + BIG + len(graph_tail)
    model_head = (
        key(1, 0)
        + varint(10)
        + ld(8, helper.make_opsetid("", 21).SerializeToString())
        + key(7, 2)
        + varint(graph_len)
        + graph_head
    )
    with open(path, "wb") as f:
        f.write(model_head)
        f.seek(BIG, os.SEEK_CUR)
        f.write(graph_tail)


def test_model_over_2gib_loads(tmp_path) -> None:
    path = tmp_path / "big.onnx"
    try:
        _write_sparse_model(path)
    except OSError as e:  # pragma: no cover - filesystems without sparse files
        pytest.skip(f"cannot write a sparse file here: {e}")
    size = path.stat().st_size
    assert size > 2 << 30
    model = onnxfast.load(path)
    graph = model.graph
    assert graph.name == "big_graph"
    assert [n.name for n in graph.node] == ["", "after_the_hole"]
    assert graph.node[1].op_type == "Relu"
    big = graph.initializer[0]
    assert big.name == "big"
    assert big.dims == [BIG]
    assert big.data_type == TensorProto.UINT8
    assert graph.output[0].type.tensor_type.shape.dim[0].dim_value == 4
