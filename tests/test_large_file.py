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


def _write_sparse_checkable_model(path, shape_type: int) -> None:
    """A valid model over 2 GiB: a 2.25 GiB initializer (a hole in the file)
    read by Shape, and a Relu; graph output `s` is declared `shape_type`."""
    init = TensorProto(name="big", data_type=TensorProto.UINT8, dims=[BIG]).SerializeToString()
    init_prefix = init + key(9, 2) + varint(BIG)
    vi = helper.make_tensor_value_info
    graph_tail = b"".join(
        [
            ld(1, helper.make_node("Shape", ["big"], ["s"], name="shape").SerializeToString()),
            ld(1, helper.make_node("Relu", ["x"], ["y"], name="relu").SerializeToString()),
            ld(2, b"big_graph"),
            ld(11, vi("x", TensorProto.FLOAT, [4]).SerializeToString()),
            ld(12, vi("y", TensorProto.FLOAT, [4]).SerializeToString()),
            ld(12, vi("s", shape_type, [1]).SerializeToString()),
        ]
    )
    graph_head = key(5, 2) + varint(len(init_prefix) + BIG) + init_prefix
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


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
def test_full_check_of_a_model_over_2gib_reads_no_weight(tmp_path) -> None:
    good, bad = tmp_path / "good.onnx", tmp_path / "bad.onnx"
    try:
        _write_sparse_checkable_model(good, TensorProto.INT64)
        _write_sparse_checkable_model(bad, TensorProto.INT32)
    except OSError as e:  # pragma: no cover - filesystems without sparse files
        pytest.skip(f"cannot write a sparse file here: {e}")
    before = _rss()
    report = onnxfast.check(good, full=True)
    assert report.ok, str(report)
    assert onnxfast.check(onnxfast.load(good), full=True).ok
    report = onnxfast.check(bad, full=True)
    assert [(d.code, d.location) for d in report] == [
        ("E711", "graph 'big_graph' › node[0] 'shape' (Shape) › output[0] 's'")
    ]
    # The 2.25 GiB initializer was never read.
    assert _rss() - before < 256 << 20
