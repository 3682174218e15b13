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
