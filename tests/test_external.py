"""External data: lazy, zero-copy, identical to onnx, and safe against hostile models."""

from __future__ import annotations

import os
import shutil
import threading
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxfast
from onnxfast import ExternalDataError

SECRET = b"TOP-SECRET-OUTSIDE-BYTES" * 2  # 48 bytes, 12 float32


def _model_with_external(tmp_path, location="weights.bin", n=12, extra=None, data=None):
    """A model whose one initializer 'w' (float32[n]) is stored in `location`."""
    folder = tmp_path / "model"
    folder.mkdir(exist_ok=True)
    t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[n])
    t.data_location = TensorProto.EXTERNAL
    entries = [("location", location), *list(extra or [])]
    for k, v in entries:
        e = t.external_data.add()
        e.key, e.value = k, v
    graph = helper.make_graph(
        [helper.make_node("Relu", ["w"], ["y"])],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])],
        initializer=[t],
    )
    model = helper.make_model(graph)
    path = folder / "m.onnx"
    path.write_bytes(model.SerializeToString())
    if data is not None and location and not location.startswith("/"):
        target = folder / location
        if not target.exists() and ".." not in location:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    return path


def _values(n=12) -> np.ndarray:
    return np.arange(n, dtype=np.float32) * 1.5


@pytest.fixture
def saved_by_onnx(tmp_path):
    """A real model saved by onnx with external data in one file."""
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((64, 32)).astype(np.float32), "a"),
        numpy_helper.from_array(rng.integers(-5, 5, (17,)).astype(np.int64), "b"),
        numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float16), "c"),
        numpy_helper.from_array(np.array([1, 2, 3], dtype=np.int32), "small"),
    ]
    graph = helper.make_graph(
        [helper.make_node("Identity", ["a"], ["y"])],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 32])],
        initializer=inits,
    )
    path = tmp_path / "saved" / "model.onnx"
    path.parent.mkdir()
    onnx.save_model(
        helper.make_model(graph),
        path,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="model.data",
        size_threshold=64,
    )
    return path


def test_values_match_onnx_and_are_zero_copy(saved_by_onnx) -> None:
    theirs = onnx.load(saved_by_onnx)
    ours = onnxfast.load(saved_by_onnx)
    external = [t for t in ours.graph.initializer if t.is_external]
    assert {t.name for t in external} == {"a", "b", "c"}
    for t, ref in zip(ours.graph.initializer, theirs.graph.initializer):
        arr = t.numpy()
        expected = numpy_helper.to_array(ref)
        assert arr.dtype == expected.dtype
        assert arr.tobytes() == expected.tobytes()
        if t.is_external:
            assert not arr.flags.writeable
            assert np.shares_memory(arr, t.numpy())  # one shared map
    info = ours.graph.initializers["a"].external_info
    assert info.location == "model.data"
    assert info.length == 64 * 32 * 4
    assert ours.graph.initializers["small"].external_info is None
    files = ours.external_files()
    assert len(files) == 1
    assert files[0].location == "model.data"
    assert files[0].size == (saved_by_onnx.parent / "model.data").stat().st_size
    assert files[0].tensors == ["a", "b", "c"]
    assert files[0].error is None


def test_mmap_false_and_eager_load_give_identical_arrays(saved_by_onnx) -> None:
    lazy = onnxfast.load(saved_by_onnx)
    read = onnxfast.load(saved_by_onnx, mmap=False)
    eager = onnxfast.load(saved_by_onnx, load_external_data=True)
    for a, b, c in zip(lazy.graph.initializer, read.graph.initializer, eager.graph.initializer):
        assert a.numpy().tobytes() == b.numpy().tobytes() == c.numpy().tobytes()
        assert not c.is_external
        assert len(c.external_data) == 0
    # the eager model is self-contained: onnx sees inline data
    inline = eager.to_onnx()
    assert all(not t.external_data for t in inline.graph.initializer)
    onnx.checker.check_model(inline)


def test_lazy_nothing_is_opened_at_load(tmp_path) -> None:
    path = _model_with_external(tmp_path, "missing.bin")
    model = onnxfast.load(path)  # no error: the file is not touched yet
    with pytest.raises(ExternalDataError, match="does not exist") as info:
        model.graph.initializer[0].numpy()
    assert info.value.tensor == "w"
    assert info.value.location == "missing.bin"
    with pytest.raises(ExternalDataError):
        onnxfast.load(path, load_external_data=True)


@pytest.mark.parametrize(
    ("location", "rule"),
    [
        ("/etc/passwd", "absolute"),
        ("\\\\server\\share\\w.bin", "absolute"),
        ("//server/share/w.bin", "absolute"),
        ("C:\\weights.bin", "drive"),
        ("c:weights.bin", "drive"),
        ("../outside.bin", r"'\.\.'"),
        ("sub/../../outside.bin", r"'\.\.'"),
        ("sub\\..\\..\\outside.bin", r"'\.\.'"),
        ("w\x00.bin", "NUL"),
        ("", "empty"),
    ],
)
@pytest.mark.parametrize("source", ["path", "bytes", "bytes-relative-base"])
def test_refused_locations(tmp_path, monkeypatch, location, rule, source) -> None:
    (tmp_path / "outside.bin").write_bytes(SECRET)
    path = _model_with_external(tmp_path, location)
    if source == "path":
        model = onnxfast.load(path)
    elif source == "bytes":
        monkeypatch.chdir(path.parent)
        model = onnxfast.load(path.read_bytes())  # base: the current directory
    else:
        monkeypatch.chdir(tmp_path)
        model = onnxfast.load(path.read_bytes(), base_dir="model")
    tensor = model.graph.initializer[0]
    with pytest.raises(ExternalDataError, match=rule):
        tensor.numpy()
    with pytest.raises(ExternalDataError, match=rule):
        tensor.external_info  # noqa: B018
    assert model.external_files()[0].error is not None


def test_relative_and_empty_base_dirs_resolve_to_the_current_directory(
    tmp_path, monkeypatch
) -> None:
    path = _model_with_external(tmp_path, data=_values().tobytes())
    monkeypatch.chdir(path.parent)
    assert onnxfast.load("m.onnx").graph.initializer[0].numpy().tolist() == _values().tolist()
    data = path.read_bytes()
    model = onnxfast.load(data)  # base = cwd, pinned now
    monkeypatch.chdir(tmp_path)  # moving away later does not change it
    assert model.graph.initializer[0].numpy().tolist() == _values().tolist()
    assert (
        onnxfast.load(data, base_dir="model").graph.initializer[0].numpy().tolist()
        == _values().tolist()
    )
    with pytest.raises(ExternalDataError, match="does not exist"):  # "" = cwd = tmp_path
        onnxfast.load(data, base_dir="").graph.initializer[0].numpy()
    monkeypatch.chdir(path.parent)
    assert (
        onnxfast.load(data, base_dir="").graph.initializer[0].numpy().tolist() == _values().tolist()
    )


def test_symlinked_file_is_refused(tmp_path) -> None:
    (tmp_path / "outside.bin").write_bytes(SECRET)
    path = _model_with_external(tmp_path, "weights.bin")
    os.symlink(tmp_path / "outside.bin", path.parent / "weights.bin")
    with pytest.raises(ExternalDataError, match="symbolic link"):
        onnxfast.load(path).graph.initializer[0].numpy()
    # even a symlink pointing inside the folder is refused
    (path.parent / "real.bin").write_bytes(_values().tobytes())
    os.unlink(path.parent / "weights.bin")
    os.symlink("real.bin", path.parent / "weights.bin")
    with pytest.raises(ExternalDataError, match="symbolic link"):
        onnxfast.load(path).graph.initializer[0].numpy()


def test_symlinked_parent_folder_is_refused(tmp_path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "w.bin").write_bytes(SECRET)
    path = _model_with_external(tmp_path, "sub/w.bin")
    os.symlink(outside, path.parent / "sub")
    with pytest.raises(ExternalDataError, match=r"symbolic link|not a folder"):
        onnxfast.load(path).graph.initializer[0].numpy()


def test_hardlink_is_refused_unless_allowed(tmp_path) -> None:
    (tmp_path / "outside.bin").write_bytes(_values().tobytes())
    path = _model_with_external(tmp_path, "weights.bin")
    os.link(tmp_path / "outside.bin", path.parent / "weights.bin")
    with pytest.raises(ExternalDataError, match="hard link"):
        onnxfast.load(path).graph.initializer[0].numpy()
    allowed = onnxfast.load(path, allow_hardlinks=True)
    assert allowed.graph.initializer[0].numpy().tolist() == _values().tolist()


def test_fifo_is_refused_without_blocking(tmp_path) -> None:
    path = _model_with_external(tmp_path, "weights.bin")
    os.mkfifo(path.parent / "weights.bin")
    result: list[BaseException] = []

    def attempt() -> None:
        try:
            onnxfast.load(path).graph.initializer[0].numpy()
        except BaseException as e:
            result.append(e)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=5)
    assert not worker.is_alive(), "opening a FIFO blocked"
    assert isinstance(result[0], ExternalDataError)
    assert "FIFO" in str(result[0])


def test_devices_and_folders_are_refused(tmp_path) -> None:
    path = _model_with_external(tmp_path, "weights.bin")
    os.symlink("/dev/zero", path.parent / "weights.bin")
    with pytest.raises(ExternalDataError, match="symbolic link"):
        onnxfast.load(path).graph.initializer[0].numpy()
    os.unlink(path.parent / "weights.bin")
    (path.parent / "weights.bin").mkdir()
    with pytest.raises(ExternalDataError, match="folder"):
        onnxfast.load(path).graph.initializer[0].numpy()
    os.rmdir(path.parent / "weights.bin")
    if os.geteuid() == 0:  # only root may create device nodes
        os.mknod(
            path.parent / "weights.bin", 0o600 | 0o020000, os.makedev(1, 5)
        )  # char device (/dev/zero)
        with pytest.raises(ExternalDataError, match="character device"):
            onnxfast.load(path).graph.initializer[0].numpy()


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        ([("offset", "100")], "offset 100 is past the end"),
        ([("offset", "8"), ("length", "48")], "past the end of the file"),
        ([("length", "52")], "past the end of the file"),
        ([("offset", "-1")], "non-negative decimal"),
        ([("offset", "0x10")], "non-negative decimal"),
        ([("length", "+48")], "non-negative decimal"),
        ([("length", " 48")], "non-negative decimal"),
        ([("offset", "18446744073709551616")], "does not fit in 64 bits"),
        ([("offset", "18446744073709551615"), ("length", "2")], "overflows"),
        ([("length", "44")], "length is 44 bytes, but the dims and data_type need 48"),
        ([("offset", "4")], "rest of the file"),
        ([("offset", "0"), ("offset", "4")], "appears more than once"),
        ([("location", "other.bin")], "appears more than once"),
    ],
)
def test_offset_length_and_key_rules(tmp_path, extra, match) -> None:
    path = _model_with_external(tmp_path, "weights.bin", extra=extra, data=_values().tobytes())
    with pytest.raises(ExternalDataError, match=match):
        onnxfast.load(path).graph.initializer[0].numpy()


def test_unknown_keys_are_ignored_with_a_warning(tmp_path) -> None:
    path = _model_with_external(
        tmp_path,
        "weights.bin",
        extra=[("basepath", "/etc"), ("length", "48")],
        data=_values().tobytes(),
    )
    with pytest.warns(onnxfast.errors.ExternalDataWarning, match="basepath"):
        arr = onnxfast.load(path).graph.initializer[0].numpy()
    assert arr.tolist() == _values().tolist()


def test_checksum_is_verified_on_request(tmp_path) -> None:
    import hashlib

    data = _values().tobytes()
    good = hashlib.sha1(data).hexdigest()
    path = _model_with_external(tmp_path, "weights.bin", extra=[("checksum", good)], data=data)
    assert (
        onnxfast.load(path, verify_checksum=True).graph.initializer[0].numpy().tolist()
        == _values().tolist()
    )
    bad = _model_with_external(tmp_path, "weights.bin", extra=[("checksum", "0" * 40)], data=data)
    onnxfast.load(bad).graph.initializer[0].numpy()  # not verified unless asked
    with pytest.raises(ExternalDataError, match="checksum mismatch"):
        onnxfast.load(bad, verify_checksum=True).graph.initializer[0].numpy()


@pytest.mark.parametrize("mmap", [True, False])
def test_race_between_file_and_symlink_never_leaks(tmp_path, mmap) -> None:
    """A thread keeps swapping weights.bin between a real file and a symlink to
    a secret outside the folder; reads either succeed with the real bytes or
    are refused, never returning the secret."""
    (tmp_path / "outside.bin").write_bytes(SECRET)
    path = _model_with_external(tmp_path, "weights.bin")
    folder = path.parent
    real = _values().tobytes()
    (folder / "real.bin").write_bytes(real)
    stop = threading.Event()

    def swapper() -> None:
        link = folder / "link.tmp"
        copy = folder / "copy.tmp"
        while not stop.is_set():
            try:
                os.symlink(tmp_path / "outside.bin", link)
                os.replace(link, folder / "weights.bin")
                shutil.copyfile(folder / "real.bin", copy)
                os.replace(copy, folder / "weights.bin")
            except OSError:
                pass

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    outcomes = {"ok": 0, "refused": 0}
    deadline = time.monotonic() + 3
    try:
        while time.monotonic() < deadline:
            try:
                data = onnxfast.load(path, mmap=mmap).graph.initializer[0].numpy().tobytes()
            except ExternalDataError:
                outcomes["refused"] += 1
                continue
            assert data != SECRET
            assert data == real
            outcomes["ok"] += 1
    finally:
        stop.set()
        thread.join()
    assert outcomes["ok"] + outcomes["refused"] > 50


def test_many_weights_view_without_reading(tmp_path) -> None:
    """Viewing 256 MiB of external weights maps pages, it does not read them."""
    n = 64
    size = 4 << 20  # 4 MiB each
    data_path = tmp_path / "big" / "weights.bin"
    data_path.parent.mkdir()
    with open(data_path, "wb") as f:
        f.truncate(n * size)  # sparse: no pages to read
    inits = []
    for i in range(n):
        t = TensorProto(name=f"w{i}", data_type=TensorProto.FLOAT, dims=[size // 4])
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "weights.bin"), ("offset", str(i * size)), ("length", str(size))):
            e = t.external_data.add()
            e.key, e.value = k, v
        inits.append(t)
    model = helper.make_model(helper.make_graph([], "g", [], [], initializer=inits))
    path = data_path.parent / "m.onnx"
    path.write_bytes(model.SerializeToString())

    def rss() -> int:
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f)
        return int(fields["VmRSS"].split()[0]) * 1024

    loaded = onnxfast.load(path)
    loaded.graph.initializer[0].numpy()  # warm imports
    before = rss()
    arrays = [t.numpy() for t in loaded.graph.initializer]
    grown = rss() - before
    assert sum(a.nbytes for a in arrays) == n * size
    assert grown < 16 << 20, f"RSS grew by {grown >> 20} MiB"
    assert all(np.shares_memory(arrays[0], a) is False or a is arrays[0] for a in arrays)
