"""onnx's text formats (textproto, json, onnxtxt): `load` and `Model.save`
read and write them as `onnx.load` and `onnx.save_model` do, chosen by the
file's extension or by `format=`."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import onnx
import pytest
from _rich_model import rich_model

import onnxfast
from onnxfast import DecodeError

# One extension of each text format (onnx's registry has more).
TEXT = {"textproto": ".txtpb", "json": ".json", "onnxtxt": ".onnxtxt"}
# onnxtxt is lossy in onnx itself (doc strings, some attribute forms): the
# comparisons below are with what onnx reads back from its own file.
LOSSLESS = ("textproto", "json")


@pytest.fixture(autouse=True)
def _quiet_onnxtxt():
    # onnx warns that its onnxtxt format is experimental, on each use.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The onnxtxt format is experimental")
        yield


@pytest.fixture(scope="module")
def model_path(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("formats") / "m.onnx"
    onnx.save_model(rich_model(), path)
    return str(path)


@pytest.mark.parametrize("fmt", list(TEXT))
def test_saved_text_is_onnxs(model_path, tmp_path, fmt) -> None:
    """By extension and by `format=`, to a path and to a stream: the bytes
    onnx.save_model writes."""
    reference = tmp_path / ("onnx" + TEXT[fmt])
    onnx.save_model(onnx.load(model_path), reference)
    expected = reference.read_bytes()
    model = onnxfast.load(model_path)
    ours = tmp_path / ("ours" + TEXT[fmt])
    assert model.save(ours) == len(expected)
    assert ours.read_bytes() == expected
    stream = io.BytesIO()
    model.save(stream, format=fmt)
    assert stream.getvalue() == expected
    # `format=` wins over the extension, both ways.
    odd = tmp_path / "odd.onnx"
    model.save(odd, format=fmt)
    assert odd.read_bytes() == expected
    binary = tmp_path / ("binary" + TEXT[fmt])
    model.save(binary, format="protobuf")
    assert binary.read_bytes() == Path(model_path).read_bytes()
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["onnx" + TEXT[fmt], "ours" + TEXT[fmt], "odd.onnx", "binary" + TEXT[fmt]]
    )


@pytest.mark.parametrize("fmt", list(TEXT))
def test_loaded_text_is_onnxs(model_path, tmp_path, fmt) -> None:
    """From a path (by extension), from bytes and from a stream (by
    `format=`): the model onnx.load reads from the same text."""
    path = tmp_path / ("m" + TEXT[fmt])
    onnx.save_model(onnx.load(model_path), path)
    expected = onnx.load(str(path))
    if fmt in LOSSLESS:
        assert expected == onnx.load(model_path)
    assert onnxfast.load(path).to_onnx() == expected
    text = path.read_bytes()
    assert onnxfast.load(text, format=fmt).to_onnx() == expected
    assert onnxfast.load(io.BytesIO(text), format=fmt).to_onnx() == expected
    with open(path, "rb") as f:  # an open file: its name's extension
        assert onnxfast.load(f).to_onnx() == expected


def test_text_models_resolve_external_data_beside_them(tmp_path) -> None:
    """A json model naming external data: its tensors are read from the
    json file's folder, as onnx.load reads them."""
    onnx.save_model(rich_model(), tmp_path / "m.json", save_as_external_data=True, location="w.bin")
    ours = onnxfast.load(tmp_path / "m.json", load_external_data=True).to_onnx()
    assert ours == onnx.load(str(tmp_path / "m.json"))
    lazy = onnxfast.load(tmp_path / "m.json")
    big = lazy.graph.initializers["big"]
    assert big.is_external
    assert (
        big.numpy().tobytes()
        == onnx.numpy_helper.to_array(
            onnx.load(str(tmp_path / "m.json")).graph.initializer[4]
        ).tobytes()
    )


@pytest.mark.parametrize("fmt", list(TEXT))
@pytest.mark.parametrize("one_file", [True, False])
def test_text_saved_with_external_data_is_onnxs(model_path, tmp_path, fmt, one_file) -> None:
    """`save_as_external_data=True` with a text format: the data files and
    the text model onnx.save_model writes, byte for byte, to a path and to
    an open file; read back by both libraries."""
    kwargs = {"save_as_external_data": True, "size_threshold": 0, "convert_attribute": True}
    if one_file:
        kwargs["location"] = "w.bin"
    else:
        kwargs["all_tensors_to_one_file"] = False
    theirs, ours, opened = tmp_path / "onnx", tmp_path / "ours", tmp_path / "opened"
    for folder in (theirs, ours, opened):
        folder.mkdir()
    name = "m" + TEXT[fmt]
    onnx.save_model(onnx.load(model_path), theirs / name, **kwargs)
    model = onnxfast.load(model_path)
    written = model.save(ours / name, **kwargs)
    with open(opened / name, "wb") as f:
        model.save(f, format=fmt, **kwargs)
    expected = {n: (theirs / n).read_bytes() for n in sorted(os.listdir(theirs))}
    assert len(expected) == 2 if one_file else len(expected) > 2
    for folder in (ours, opened):
        assert {n: (folder / n).read_bytes() for n in sorted(os.listdir(folder))} == expected
    assert written == len(expected[name])
    if fmt in LOSSLESS:
        back = onnxfast.load(ours / name, load_external_data=True).to_onnx()
        assert back == onnx.load(str(theirs / name))


@pytest.mark.parametrize("fmt", LOSSLESS)
def test_values_load_from_text(tmp_path, fmt) -> None:
    """load_tensor (as onnx.load_tensor) and the other value loaders take
    `format=` and the extension: the same message as onnx parses."""
    import numpy as np
    from onnx import numpy_helper

    tensor = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), name="t")
    values = {
        "tensor": (onnxfast.load_tensor, tensor),
        "sequence": (onnxfast.load_sequence, numpy_helper.from_list([np.ones(2), np.zeros(3)])),
        "map": (
            onnxfast.load_map,
            numpy_helper.from_dict({1: np.ones(2, dtype=np.int64), 2: np.zeros(2, dtype=np.int64)}),
        ),
        "optional": (onnxfast.load_optional, numpy_helper.from_optional(np.ones(3))),
    }
    for kind, (loader, proto) in values.items():
        path = tmp_path / (kind + TEXT[fmt])
        if kind == "tensor":
            onnx.save_tensor(proto, path)  # by its extension, as onnx does
        else:
            text = onnx.serialization.registry.get(fmt).serialize_proto(proto)
            path.write_bytes(text if isinstance(text, bytes) else text.encode())
        for f in (path, str(path)):
            assert loader(f).SerializeToString() == proto.SerializeToString(), kind
        odd = tmp_path / (kind + ".bin")
        odd.write_bytes(path.read_bytes())
        assert loader(odd, format=fmt).SerializeToString() == proto.SerializeToString()
        with pytest.raises(DecodeError):
            loader(odd)  # by its extension, protobuf: the text is not that
    loaded = onnxfast.load_tensor(tmp_path / ("tensor" + TEXT[fmt]))
    assert np.array_equal(loaded.numpy(), numpy_helper.to_array(tensor))
    assert np.array_equal(
        numpy_helper.to_array(onnx.load_tensor(str(tmp_path / ("tensor" + TEXT[fmt])))),
        loaded.numpy(),
    )


def test_check_and_infer_read_text_paths(model_path, tmp_path) -> None:
    """check, infer_shapes and the command line take a text model's path."""
    path = tmp_path / "m.json"
    onnx.save_model(onnx.load(model_path), path)
    assert onnxfast.check(path).ok
    inferred = onnxfast.infer_shapes(path)
    reference = onnx.shape_inference.infer_shapes(onnx.load(str(path)))
    assert [v.name for v in inferred.graph.value_info] == [
        v.name for v in reference.graph.value_info
    ]
    done = subprocess.run(
        [sys.executable, "-m", "onnxfast", "check", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("json", b'{"irVersion": "8", "graph": {"node": [{"opType": 7}]}}'),
        ("json", b"{not json"),
        ("textproto", b"ir_version: 8\ngraph { nodes { } }"),
        ("onnxtxt", b"<ir_version: 8> agraph (float x) => (y) { y = "),
    ],
    ids=["json-schema", "json-syntax", "textproto", "onnxtxt"],
)
def test_bad_text_is_a_decode_error(tmp_path, fmt, text) -> None:
    """onnx's parsers' errors come as onnxfast's DecodeError, naming the file."""
    path = tmp_path / ("bad" + TEXT[fmt])
    path.write_bytes(text)
    with pytest.raises(DecodeError, match=f"bad{TEXT[fmt]}: not a ModelProto in {fmt} format"):
        onnxfast.load(path)
    with pytest.raises(DecodeError, match=f"{fmt} format"):
        onnxfast.load(text, format=fmt)


def test_text_size_is_bounded(model_path, tmp_path) -> None:
    """Text costs many times its size to parse (a textproto measured 12x):
    a text over max_memory / 16 (1 GiB / 16 by default) is refused before
    it is read, from a path, bytes or a stream."""
    path = tmp_path / "m.json"
    onnx.save_model(onnx.load(model_path), path)
    size = path.stat().st_size
    tight = size * 16 - 1
    with pytest.raises(DecodeError, match=f"{size} bytes of json text .* budget of {tight}"):
        onnxfast.load(path, max_memory=tight)
    text = path.read_bytes()
    with pytest.raises(DecodeError, match=f"{size} bytes of json text"):
        onnxfast.load(text, format="json", max_memory=tight)
    with pytest.raises(DecodeError, match=f"more than {tight // 16} bytes of json text"):
        onnxfast.load(io.BytesIO(text), format="json", max_memory=tight)
    assert onnxfast.load(path, max_memory=size * 16).to_onnx() == onnx.load(str(path))
    # The default budget (1 GiB): a text of 64 MiB.
    from onnxfast import _formats

    assert _formats.TEXT_BUDGET // _formats.TEXT_COST == 64 << 20


def test_format_mistakes_are_value_errors(model_path, tmp_path) -> None:
    model = onnxfast.load(model_path)
    with pytest.raises(ValueError, match="unknown format 'yaml'"):
        model.save(tmp_path / "m.onnx", format="yaml")
    with pytest.raises(ValueError, match="unknown format 'yaml'"):
        onnxfast.load(model_path, format="yaml")
    assert os.listdir(tmp_path) == []
    # The binary format under a text extension is read as text, as onnx
    # does: a decode error that names the format.
    binary = tmp_path / "binary.json"
    binary.write_bytes(Path(model_path).read_bytes())
    with pytest.raises(DecodeError, match="json format"):
        onnxfast.load(binary)
    assert onnxfast.load(binary, format="protobuf").to_onnx() == onnx.load(model_path)


@pytest.mark.parametrize("fmt", ["protobuf", "json"])
def test_a_link_at_the_temporary_name_is_not_written_through(model_path, tmp_path, fmt) -> None:
    """Saving to a path writes a temporary file beside it: a link planted
    under that name (in a folder others can write to) is replaced, never
    written through to its target."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    name = "m" + (TEXT.get(fmt) or ".onnx")
    temp = f".{name}.{os.getpid()}.{threading.get_native_id()}.tmp"  # this thread's
    os.symlink(victim, tmp_path / temp)
    onnxfast.load(model_path).save(tmp_path / name)
    assert victim.read_bytes() == b"keep"
    assert onnx.load(str(tmp_path / name)) == onnx.load(model_path)
    assert sorted(os.listdir(tmp_path)) == sorted([name, "victim"])
