"""`Model.save(..., save_as_external_data=True)`: the files onnx's save_model writes.

The reference is onnx itself: the model loaded with `onnx.load` (which
reads external data in) and saved with `onnx.save_model` and the same
arguments; both files must come out byte for byte the same.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from _rich_model import rich_model, weights_model
from onnx import TensorProto, helper, numpy_helper

import onnxfast
from onnxfast import ExternalDataError


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, str]:
    """The model inline, and saved by onnx with some of its tensors external."""
    root = tmp_path_factory.mktemp("sources")
    inline = root / "inline" / "m.onnx"
    inline.parent.mkdir()
    onnx.save_model(rich_model(), inline)
    external = root / "external" / "m.onnx"
    external.parent.mkdir()
    onnx.save_model(
        rich_model(),
        external,
        save_as_external_data=True,
        location="source.bin",
        size_threshold=2000,
        convert_attribute=True,
    )
    assert (external.parent / "source.bin").stat().st_size > 0
    return {"inline": str(inline), "external": str(external)}


def _onnx_saves(source: str, folder, **kwargs) -> tuple[bytes, bytes]:
    os.makedirs(folder)
    out = os.path.join(folder, "out.onnx")
    onnx.save_model(onnx.load(source), out, save_as_external_data=True, **kwargs)
    return _read_pair(out, kwargs["location"])


def _read_pair(model_path: str, location: str) -> tuple[bytes, bytes | None]:
    """The model file's bytes and the data file's (None: not written)."""
    with open(model_path, "rb") as m:
        model_bytes = m.read()
    data = os.path.join(os.path.dirname(model_path), location)
    if not os.path.exists(data):
        return model_bytes, None
    with open(data, "rb") as d:
        return model_bytes, d.read()


@pytest.mark.parametrize("source", ["inline", "external"])
@pytest.mark.parametrize("size_threshold", [0, 1024, 4096, 1 << 40])
@pytest.mark.parametrize("convert_attribute", [False, True])
def test_files_are_onnxs_byte_for_byte(
    sources, tmp_path, source, size_threshold, convert_attribute
) -> None:
    kwargs = {
        "location": "weights.bin",
        "size_threshold": size_threshold,
        "convert_attribute": convert_attribute,
    }
    theirs = _onnx_saves(sources[source], tmp_path / "onnx", **kwargs)
    ours_dir = tmp_path / "ours"
    ours_dir.mkdir()
    written = onnxfast.load(sources[source]).save(
        ours_dir / "out.onnx", save_as_external_data=True, **kwargs
    )
    ours = _read_pair(str(ours_dir / "out.onnx"), "weights.bin")
    assert written == len(ours[0])
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    # Nothing else is left in the folder (no temporary files), and no data
    # file when no tensor moved (as onnx).
    files = ["out.onnx"] + (["weights.bin"] if theirs[1] is not None else [])
    assert sorted(os.listdir(ours_dir)) == files
    assert (theirs[1] is None) == (size_threshold == 1 << 40)


def test_saved_elsewhere_is_self_contained(sources, tmp_path) -> None:
    """A lazily loaded model saved to another folder: onnx loads and checks it
    there, with every array as in the source."""
    out = tmp_path / "elsewhere" / "deep" / "model.onnx"
    out.parent.mkdir(parents=True)
    model = onnxfast.load(sources["external"])
    model.save(out, save_as_external_data=True)
    assert (out.parent / "model.onnx.data").exists()  # the default location
    onnx.checker.check_model(str(out), full_check=True)
    saved, source = onnx.load(str(out)), onnx.load(sources["external"])
    # Equal but for `data_location`, which onnx.load leaves present (DEFAULT)
    # on the tensors it read in: a different set in each file.
    assert _without_data_location(saved) == _without_data_location(source)
    # The source model object is unchanged: still lazy, still external.
    assert model.graph.initializers["big"].is_external


def _without_data_location(model: onnx.ModelProto) -> onnx.ModelProto:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)

    def graph(g: onnx.GraphProto) -> None:
        for t in g.initializer:
            t.ClearField("data_location")
        nodes(g.node)

    def nodes(ns) -> None:
        for n in ns:
            for a in n.attribute:
                if a.HasField("t"):
                    a.t.ClearField("data_location")
                for sub in [a.g] if a.HasField("g") else list(a.graphs):
                    graph(sub)

    graph(copy.graph)
    for f in copy.functions:
        nodes(f.node)
    return copy


def test_inferred_model_saved_with_external_data(sources, tmp_path) -> None:
    out = tmp_path / "inferred" / "m.onnx"
    out.parent.mkdir()
    inferred = onnxfast.infer_shapes(sources["external"])
    inferred.save(out, save_as_external_data=True, location="w.bin", size_threshold=0)
    saved = onnx.load(str(out))
    assert {v.name for v in saved.graph.value_info} == {v.name for v in inferred.graph.value_info}
    source = onnx.load(sources["external"])
    for a, b in zip(saved.graph.initializer, source.graph.initializer, strict=True):
        np.testing.assert_array_equal(numpy_helper.to_array(a), numpy_helper.to_array(b))
    # size_threshold=0: every initializer with raw_data is in w.bin (the one
    # with typed data, float_data, stays).
    unloaded = onnx.load(str(out), load_external_data=False)
    external = [
        t.name
        for t in unloaded.graph.initializer
        if onnx.external_data_helper.uses_external_data(t)
    ]
    assert external == ["small", "edge_under", "edge_at", "big", "half"]


def test_saving_over_the_source_and_its_data_file(sources, tmp_path) -> None:
    """The data file replaced is the one the loaded model reads (mapped or
    through its open file): the old bytes stay readable until the new file
    is complete, and the result is what onnx writes from the same model."""
    expected = _onnx_saves(sources["inline"], tmp_path / "ref", location="m.bin", size_threshold=0)
    for mmap in (True, False):
        folder = tmp_path / f"over-{mmap}"
        folder.mkdir()
        path = folder / "out.onnx"
        onnx.save_model(
            onnx.load(sources["inline"]), path, save_as_external_data=True, location="m.bin"
        )
        model = onnxfast.load(path, mmap=mmap)
        model.save(path, save_as_external_data=True, location="m.bin", size_threshold=0)
        assert _read_pair(str(path), "m.bin") == expected
        assert sorted(os.listdir(folder)) == ["m.bin", "out.onnx"]


def test_eager_load_is_onnx_load(sources) -> None:
    """`load_external_data=True` leaves each tensor it inlines as onnx.load
    does (data_location DEFAULT, present)."""
    ours = onnxfast.load(sources["external"], load_external_data=True).to_onnx()
    assert ours == onnx.load(sources["external"])


@pytest.mark.parametrize(
    ("location", "message"),
    [
        ("/tmp/w.bin", "absolute"),
        ("../w.bin", "'..'"),
        ("", "empty"),
        ("m.onnx", "the model file itself"),
        ("./m.onnx", "the model file itself"),
    ],
)
def test_bad_locations_are_refused_before_writing(sources, tmp_path, location, message) -> None:
    model = onnxfast.load(sources["inline"])
    with pytest.raises(ValueError, match=message):
        model.save(tmp_path / "m.onnx", save_as_external_data=True, location=location)
    assert os.listdir(tmp_path) == []


def test_options_without_save_as_external_data_are_refused(sources, tmp_path) -> None:
    model = onnxfast.load(sources["inline"])
    for kwargs in (
        {"location": "w.bin"},
        {"size_threshold": 0},
        {"convert_attribute": True},
        {"all_tensors_to_one_file": False},
    ):
        with pytest.raises(ValueError, match="save_as_external_data=True"):
            model.save(tmp_path / "m.onnx", **kwargs)
    assert os.listdir(tmp_path) == []


def test_unreadable_external_data_writes_nothing(tmp_path) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
    t.data_location = TensorProto.EXTERNAL
    entry = t.external_data.add()
    entry.key, entry.value = "location", "missing.bin"
    graph = helper.make_graph(
        [helper.make_node("Relu", ["w"], ["y"])],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        initializer=[t],
    )
    onnx.save_model(helper.make_model(graph), folder / "m.onnx")
    out = tmp_path / "out"
    out.mkdir()
    model = onnxfast.load(folder / "m.onnx")
    with pytest.raises(ExternalDataError, match="does not exist") as info:
        model.save(out / "m.onnx", save_as_external_data=True)
    assert info.value.tensor == "w"
    assert os.listdir(out) == []


@pytest.mark.parametrize("case", ["external", "inline", "inferred"])
def test_copying_weights_does_not_keep_them_mapped(tmp_path, case) -> None:
    """The weights are written from the source's maps and each one's pages
    are released once written: peak RSS growth stays far below the 96 MiB
    copied (it was all of it before), whether they come from an external
    file or from the model file, moved to a data file or kept inline (an
    inferred model saved as onnx's infer_shapes_path would)."""
    from _adversarial import reset_peak, rss

    src = tmp_path / "src" / "m.onnx"
    src.parent.mkdir()
    inits = weights_model(src, save_as_external_data=case == "external", location="w.bin")
    for f in src.parent.iterdir():  # in the page cache, as a model just read
        f.read_bytes()
    out = tmp_path / "out" / "m.onnx"
    out.parent.mkdir()
    model = onnxfast.infer_shapes(src) if case == "inferred" else onnxfast.load(src)
    base, _ = rss()
    reset_peak()
    if case == "inferred":
        model.save(out)
    else:
        model.save(out, save_as_external_data=True, location="copy.bin")
    _, peak = rss()
    assert peak - base < 24 << 20
    saved = onnx.load(str(out))
    for t, ref in zip(saved.graph.initializer, inits, strict=True):
        assert t.raw_data == ref.raw_data


def test_external_sparse_values_are_written_inline(tmp_path) -> None:
    """onnx.load leaves a sparse tensor's external values external (its
    saved copy would name a file that is not there); onnxfast reads them in,
    so the copy is self-contained and onnx reads the same values."""
    values = numpy_helper.from_array(np.arange(1, 301, dtype=np.float32), "sparse_values")
    src = tmp_path / "src"
    src.mkdir()
    (src / "sparse.bin").write_bytes(values.raw_data)
    values.ClearField("raw_data")
    values.data_location = TensorProto.EXTERNAL
    entry = values.external_data.add()
    entry.key, entry.value = "location", "sparse.bin"
    sparse = helper.make_sparse_tensor(
        values, numpy_helper.from_array(np.arange(300, dtype=np.int64) * 3, "i"), [900]
    )
    graph = helper.make_graph(
        [helper.make_node("Identity", ["sparse_values"], ["y"])],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [900])],
    )
    graph.sparse_initializer.append(sparse)
    onnx.save_model(helper.make_model(graph), src / "m.onnx")
    out = tmp_path / "out" / "m.onnx"
    out.parent.mkdir()
    onnxfast.load(src / "m.onnx").save(out, save_as_external_data=True, size_threshold=0)
    saved = onnx.load(str(out))
    got = saved.graph.sparse_initializer[0].values
    assert not onnx.external_data_helper.uses_external_data(got)
    np.testing.assert_array_equal(numpy_helper.to_array(got), np.arange(1, 301, dtype=np.float32))


def test_every_corpus_model_saves_as_onnx_does(tmp_path) -> None:
    """The node corpus and the onnx wheel's models (about 2,000), saved with
    every tensor with raw_data moved out (attribute tensors too): the same
    two files as onnx's, byte for byte."""
    from conftest import corpus_models, wheel_models

    paths = [*corpus_models(), *wheel_models()]
    assert len(paths) > 1800
    theirs_dir, ours_dir = tmp_path / "onnx", tmp_path / "ours"
    kwargs = {"location": "w.bin", "size_threshold": 0, "convert_attribute": True}
    differ = []
    for path in paths:
        for d in (theirs_dir, ours_dir):
            if d.exists():
                for f in d.iterdir():
                    f.unlink()
            else:
                d.mkdir()
        onnx.save_model(
            onnx.load(path), theirs_dir / "m.onnx", save_as_external_data=True, **kwargs
        )
        onnxfast.load(path).save(ours_dir / "m.onnx", save_as_external_data=True, **kwargs)
        names = sorted(os.listdir(theirs_dir))
        if sorted(os.listdir(ours_dir)) != names or any(
            (theirs_dir / n).read_bytes() != (ours_dir / n).read_bytes() for n in names
        ):
            differ.append(str(path))
    assert differ == []


def test_plain_save_elsewhere_warns_of_data_it_leaves_behind(sources, tmp_path) -> None:
    """A plain save keeps the external locations (as onnx does for data it
    did not load); saved where those files are not, the copy could not find
    its weights: an ExternalDataWarning says so and how to fix it."""
    import shutil
    import warnings

    from onnxfast.errors import ExternalDataWarning

    model = onnxfast.load(sources["external"])
    out = tmp_path / "elsewhere" / "m.onnx"
    out.parent.mkdir()
    with pytest.warns(ExternalDataWarning, match="'source.bin'.*save_as_external_data=True"):
        model.save(out)
    assert out.exists()  # written as before
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # The data file copied beside it: nothing to say.
        shutil.copy(os.path.join(os.path.dirname(sources["external"]), "source.bin"), out.parent)
        model.save(out)
        # Beside the source's data, and a model without external data.
        model.save(os.path.join(os.path.dirname(sources["external"]), "again.onnx"))
        onnxfast.load(sources["inline"]).save(tmp_path / "inline.onnx")
    assert onnx.load(str(out)) == onnx.load(sources["external"])
    # A text model names its data as a binary one does: the same warning.
    text = tmp_path / "text" / "m.json"
    text.parent.mkdir()
    with pytest.warns(ExternalDataWarning, match="'source.bin'"):
        model.save(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.save(out.parent / "m.json")  # beside its copied data file


def test_alignment_places_large_tensors_at_multiples(tmp_path) -> None:
    """alignment=4096: each moved tensor of 4096 bytes or more starts on a
    page (zeros before it), smaller ones stay packed; onnx reads the same
    values and onnxruntime runs the model with the same result."""
    import onnxruntime as ort

    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 48)).astype(np.float32)  # 12,288 bytes
    b = rng.standard_normal((48, 30)).astype(np.float32)  # 5,760 bytes
    bias = rng.standard_normal(30).astype(np.float32)  # 120 bytes
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "a"], ["h"]),
            helper.make_node("MatMul", ["h", "b"], ["hb"]),
            helper.make_node("Add", ["hb", "bias"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 30])],
        initializer=[
            numpy_helper.from_array(bias, "bias"),
            numpy_helper.from_array(a, "a"),
            numpy_helper.from_array(b, "b"),
        ],
    )
    src = tmp_path / "src.onnx"
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), src)
    out = tmp_path / "aligned" / "m.onnx"
    out.parent.mkdir()
    onnxfast.load(src).save(
        out, save_as_external_data=True, location="w.bin", size_threshold=0, alignment=4096
    )
    unloaded = onnx.load(str(out), load_external_data=False)
    offsets = {
        t.name: {e.key: e.value for e in t.external_data} for t in unloaded.graph.initializer
    }
    assert offsets["bias"] == {"location": "w.bin", "offset": "0", "length": "120"}
    assert offsets["a"]["offset"] == "4096"
    assert offsets["b"]["offset"] == str(4096 + 3 * 4096)
    data = (out.parent / "w.bin").read_bytes()
    assert len(data) == 4096 * 4 + b.nbytes
    assert data[120:4096] == bytes(4096 - 120)
    assert [numpy_helper.to_array(t).tobytes() for t in onnx.load(str(out)).graph.initializer] == [
        bias.tobytes(),
        a.tobytes(),
        b.tobytes(),
    ]
    x = rng.standard_normal((2, 64)).astype(np.float32)
    expected = ort.InferenceSession(str(src)).run(None, {"x": x})[0]
    got = ort.InferenceSession(str(out)).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, expected)
    model = onnxfast.load(src)
    for bad in (3, 0, 1 << 31):
        with pytest.raises(ValueError, match="power of two"):
            model.save(tmp_path / "x.onnx", save_as_external_data=True, alignment=bad)
    with pytest.raises(ValueError, match="save_as_external_data=True"):
        model.save(tmp_path / "x.onnx", alignment=4096)
    assert not (tmp_path / "x.onnx").exists()


def _folder_files(folder) -> dict[str, bytes]:
    """The files of `folder` (not its folders), each with its content."""
    return {
        n: (folder / n).read_bytes() for n in sorted(os.listdir(folder)) if (folder / n).is_file()
    }


@pytest.mark.parametrize("source", ["inline", "external"])
@pytest.mark.parametrize("size_threshold", [0, 1024, 1 << 40])
@pytest.mark.parametrize("convert_attribute", [False, True])
def test_file_per_tensor_is_onnxs_byte_for_byte(
    sources, tmp_path, source, size_threshold, convert_attribute
) -> None:
    """`all_tensors_to_one_file=False`: a data file per tensor, named after
    it, and the model file: the files onnx writes, byte for byte."""
    kwargs = {
        "all_tensors_to_one_file": False,
        "size_threshold": size_threshold,
        "convert_attribute": convert_attribute,
    }
    theirs_dir, ours_dir = tmp_path / "onnx", tmp_path / "ours"
    theirs_dir.mkdir()
    ours_dir.mkdir()
    onnx.save_model(
        onnx.load(sources[source]), theirs_dir / "m.onnx", save_as_external_data=True, **kwargs
    )
    onnxfast.load(sources[source]).save(ours_dir / "m.onnx", save_as_external_data=True, **kwargs)
    theirs, ours = _folder_files(theirs_dir), _folder_files(ours_dir)
    assert list(ours) == list(theirs)
    assert ours == theirs
    moved = size_threshold < 1 << 40
    assert (len(ours) > 1) == moved


# Tensor names onnx would write as files of other folders, fail on, or
# overwrite the model with; and names it takes as they are.
_HOSTILE_NAMES = [
    "w",
    "a/b",
    "W",
    "c:d",
    "",
    "x y",
    "é",
    "w",
    "a" * 300,
    "..",
    ".",
    "../escape",
    "m.onnx",
    "M.ONNX",
    "taken",
    ".m.onnx.1.tmp",
    "a\nb",
    "m.onnx.0.data",
]


def _named_weights(names: list[str]) -> onnx.ModelProto:
    inits = [
        numpy_helper.from_array(np.arange(300, dtype=np.float32) + i, name=n)
        for i, n in enumerate(names)
    ]
    graph = helper.make_graph(
        [helper.make_node("Identity", ["w"], ["y"])],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [300])],
        initializer=inits,
    )
    return helper.make_model(graph)


def test_file_per_tensor_keeps_every_file_in_the_folder(tmp_path) -> None:
    """Tensor names that are not plain file names of the model's folder (or
    name the model file, a folder, or a temporary file) get
    `<model>.<k>.data`; names equal but for case share one file; a file
    already there is replaced, not appended to. onnx and onnxfast load back
    every array."""
    source = tmp_path / "src" / "m.onnx"
    source.parent.mkdir()
    model = _named_weights(_HOSTILE_NAMES)
    onnx.save_model(model, source)
    out = tmp_path / "out"
    (out / "taken").mkdir(parents=True)
    (out / "x y").write_bytes(b"stale" * 1000)
    onnxfast.load(source).save(
        out / "m.onnx", save_as_external_data=True, all_tensors_to_one_file=False
    )
    files = sorted(os.listdir(out))
    fallbacks = [f"m.onnx.{k}.data" for k in range(12)]
    assert files == sorted(["m.onnx", "taken", "w", "x y", "é", *fallbacks])
    assert os.listdir(out / "taken") == []
    assert (out / "x y").stat().st_size == 1200
    assert (out / "w").stat().st_size == 3 * 1200
    saved = onnx.load(str(out / "m.onnx"), load_external_data=False)
    locations = [
        {e.key: e.value for e in t.external_data}["location"] for t in saved.graph.initializer
    ]
    assert locations == [
        "w",
        "m.onnx.0.data",
        "w",
        "m.onnx.1.data",
        "m.onnx.2.data",
        "x y",
        "é",
        "w",
        *fallbacks[3:12],
        # Its own name, taken by the first fallback: shared.
        "m.onnx.0.data",
    ]
    expected = [numpy_helper.to_array(t) for t in model.graph.initializer]
    theirs = onnx.load(str(out / "m.onnx"))
    ours = onnxfast.load(out / "m.onnx")
    for i, want in enumerate(expected):
        np.testing.assert_array_equal(numpy_helper.to_array(theirs.graph.initializer[i]), want)
        np.testing.assert_array_equal(onnxfast.to_array(ours.graph.initializer[i]), want)
    # Saving the same model again gives the same files.
    again = tmp_path / "again"
    again.mkdir()
    (again / "taken").mkdir()
    onnxfast.load(source).save(
        again / "m.onnx", save_as_external_data=True, all_tensors_to_one_file=False
    )
    assert _folder_files(again) == _folder_files(out)


def test_file_per_tensor_options(sources, tmp_path) -> None:
    """`location` names the one data file: refused beside
    all_tensors_to_one_file=False. A file object with its path as its name
    gets the data files beside it."""
    model = onnxfast.load(sources["inline"])
    with pytest.raises(ValueError, match="all_tensors_to_one_file=False"):
        model.save(
            tmp_path / "m.onnx",
            save_as_external_data=True,
            all_tensors_to_one_file=False,
            location="w.bin",
        )
    assert os.listdir(tmp_path) == []
    with open(tmp_path / "m.onnx", "wb") as f:
        model.save(f, save_as_external_data=True, all_tensors_to_one_file=False, size_threshold=0)
    names = {t.name for t in onnx.load(sources["inline"]).graph.initializer if t.raw_data}
    assert names <= set(os.listdir(tmp_path))
    onnx.checker.check_model(str(tmp_path / "m.onnx"), full_check=True)


@pytest.mark.parametrize("mmap", [True, False])
def test_file_per_tensor_over_its_own_files(sources, tmp_path, mmap) -> None:
    """A model with a file per tensor, saved over itself (after inference,
    as a pipeline annotates a model in place): the files it reads are
    replaced only once the new ones are complete; the result is what onnx
    writes, and the loaded object still reads its old weights."""
    kwargs = {"all_tensors_to_one_file": False, "size_threshold": 0}
    reference, folder = tmp_path / "ref", tmp_path / "over"
    for d in (reference, folder):
        d.mkdir()
        onnx.save_model(
            onnx.load(sources["inline"]), d / "m.onnx", save_as_external_data=True, **kwargs
        )
    before = onnx.load(str(reference / "m.onnx"))
    model = onnxfast.load(folder / "m.onnx", mmap=mmap)
    model.save(folder / "m.onnx", save_as_external_data=True, **kwargs)
    assert _folder_files(folder) == _folder_files(reference)
    for t in before.graph.initializer:
        np.testing.assert_array_equal(
            model.graph.initializers[t.name].numpy(), numpy_helper.to_array(t, str(reference))
        )


@pytest.mark.skipif(os.name != "posix", reason="non-UTF-8 file names are POSIX's")
def test_a_model_file_name_that_is_not_utf8(tmp_path) -> None:
    """Locations are UTF-8 text in the model: a data file named after a
    model file whose name is not UTF-8 cannot be named; the error says so
    and how to save (before: "is not a file path", even with a location)."""
    onnx.save_model(rich_model(), tmp_path / "source.onnx")
    model = onnxfast.load(tmp_path / "source.onnx")
    target = str(tmp_path / os.fsdecode(b"\xffmodel.onnx"))
    with pytest.raises(ValueError, match=r"not UTF-8.*pass location="):
        model.save(target, save_as_external_data=True)
    with pytest.raises(ValueError, match="not UTF-8"):
        model.save(target, save_as_external_data=True, all_tensors_to_one_file=False)
    model.save(target, save_as_external_data=True, location="w.bin", size_threshold=0)
    saved = onnxfast.load(target)
    for ours, theirs in zip(saved.graph.initializer, model.graph.initializer):
        assert np.array_equal(ours.numpy(), theirs.numpy())
    assert any(t.data_location == onnx.TensorProto.EXTERNAL for t in saved.graph.initializer)


def test_a_location_through_a_linked_folder_is_refused(tmp_path) -> None:
    """location='sub/w.bin' where sub is a symbolic link: the data would go
    wherever the link points, and onnxfast.load refuses to read through it;
    the save refuses it too, and writes nothing. A real folder works."""
    onnx.save_model(rich_model(), tmp_path / "source.onnx")
    model = onnxfast.load(tmp_path / "source.onnx")
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "sub").symlink_to(elsewhere)
    with pytest.raises(ValueError, match="sub is a symbolic link"):
        model.save(out / "m.onnx", save_as_external_data=True, location="sub/w.bin")
    assert sorted(os.listdir(out)) == ["sub"]
    assert os.listdir(elsewhere) == []
    (out / "real").mkdir()
    model.save(out / "m.onnx", save_as_external_data=True, location="real/w.bin", size_threshold=0)
    saved = onnxfast.load(out / "m.onnx")
    for ours, theirs in zip(saved.graph.initializer, model.graph.initializer):
        assert np.array_equal(ours.numpy(), theirs.numpy())
