"""`load(f)` of an open file: mapped from its position, as a path is, instead
of read into memory; other file objects are read, as before. The reference
is onnx.load of the same bytes. And what a mapped model keeps mapped when
its weights' names are read."""

from __future__ import annotations

import io
import os
import threading

import numpy as np
import onnx
import pytest
from _rich_model import rich_model, weights_model
from onnx import numpy_helper

import onnxfast
from onnxfast import DecodeError


@pytest.fixture(scope="module")
def model_path(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("load_files")
    onnx.save_model(rich_model(), folder / "m.onnx", save_as_external_data=True, location="w.bin")
    return str(folder / "m.onnx")


def test_open_file_is_onnxs_model(model_path) -> None:
    """Mapped, its external data found beside its name, left at its end."""
    expected = onnx.load(model_path)
    with open(model_path, "rb") as f:
        model = onnxfast.load(f, load_external_data=True)
        assert f.tell() == os.path.getsize(model_path)
    assert model.to_onnx() == expected
    with open(model_path, "rb") as f:
        lazy = onnxfast.load(f)
    # The file object is closed; the map and the external files live on.
    big = lazy.graph.initializers["big"]
    np.testing.assert_array_equal(big.numpy(), numpy_helper.to_array(expected.graph.initializer[4]))
    assert not big.numpy().flags.writeable


def test_model_after_other_bytes(model_path, tmp_path) -> None:
    """Read from the file's position: what read() would give."""
    data = open(model_path, "rb").read()  # noqa: SIM115 (closed at once)
    path = tmp_path / "m.onnx"
    path.write_bytes(b"preamble" + data)
    with open(path, "rb") as f:
        assert f.read(8) == b"preamble"
        model = onnxfast.load(f, base_dir=os.path.dirname(model_path))
        assert f.tell() == len(data) + 8
    assert model.to_onnx() == onnx.load_from_string(data)
    assert model.SerializeToString() == data
    # At the end already: an empty message, as onnx reads b"".
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        assert onnxfast.load(f).to_onnx() == onnx.ModelProto()


def test_a_bad_file_is_an_error_and_consumed(tmp_path) -> None:
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"\x0a\xff\xff\xff\xff\x0f")
    with open(path, "rb") as f:
        with pytest.raises(DecodeError, match="byte"):
            onnxfast.load(f)
        assert f.tell() == 6


def test_open_file_is_not_read_into_memory(tmp_path) -> None:
    """96 MiB of weights: loading the open file and reading every weight's
    view keeps peak RSS growth far below the file's size (read(), as
    before, held all of it)."""
    from _adversarial import reset_peak, rss

    path = tmp_path / "m.onnx"
    weights_model(path)
    path.read_bytes()  # in the page cache
    base, _ = rss()
    reset_peak()
    with open(path, "rb") as f:
        model = onnxfast.load(f)
    arrays = [model.graph.initializers[f"w{i}"].numpy() for i in range(24)]
    _, peak = rss()
    assert peak - base < 24 << 20
    assert [int(a[-1]) for a in arrays] == list(range(24))


@pytest.mark.parametrize(
    "read",
    [
        lambda m: [t.name for t in m.graph.initializer],
        lambda m: m.graph.initializers,
        lambda m: m.graph.values["y"].producer,
        lambda m: [(t.name, t.dims, t.data_type) for t in m.graph.initializer],
        lambda m: onnxfast.check(m, full=True),
    ],
    ids=["names", "initializers", "values", "headers", "full-check"],
)
def test_reading_names_does_not_map_the_weights(tmp_path, read) -> None:
    """Each header read faults in the page-cache folio it is in (2 MiB where
    the file is cached in huge folios, as on this machine): the weights'
    pages are released after, names included, so a walk over 48 tensors
    keeps peak RSS growth far below their 96 MiB (a walk of names kept
    ~100 MiB of a 1.5 GB model mapped before)."""
    from _adversarial import reset_peak, rss

    path = tmp_path / "m.onnx"
    names = [t.name for t in weights_model(path, scales=True)]
    path.read_bytes()  # in the page cache
    model = onnxfast.load(path)
    base, _ = rss()
    reset_peak()
    read(model)
    _, peak = rss()
    assert peak - base < 16 << 20
    assert [t.name for t in model.graph.initializer] == names


def test_files_without_a_map_are_read(model_path) -> None:
    """BytesIO, a pipe, mmap=False: read() as before, the same model."""
    data = open(model_path, "rb").read()  # noqa: SIM115 (closed at once)
    expected = onnx.load_from_string(data)
    folder = os.path.dirname(model_path)
    assert onnxfast.load(io.BytesIO(data), base_dir=folder).to_onnx() == expected
    with open(model_path, "rb") as f:
        assert onnxfast.load(f, mmap=False).to_onnx() == expected
    read_end, write_end = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(write_end, data), os.close(write_end)))
    writer.start()
    with os.fdopen(read_end, "rb") as pipe:
        assert onnxfast.load(pipe, base_dir=folder).to_onnx() == expected
    writer.join()


def test_file_objects_that_transform_are_read(model_path, tmp_path) -> None:
    """A GzipFile has the compressed file's descriptor, a text file its
    own: neither is mapped; the gzip stream is read (decompressed), the
    text file refused as before."""
    import gzip

    data = open(model_path, "rb").read()  # noqa: SIM115 (closed at once)
    with gzip.open(tmp_path / "m.onnx.gz", "wb") as z:
        z.write(data)
    folder = os.path.dirname(model_path)
    with gzip.open(tmp_path / "m.onnx.gz", "rb") as z:
        assert z.fileno() >= 0  # a descriptor, of the compressed bytes
        model = onnxfast.load(z, base_dir=folder)
    assert model.to_onnx() == onnx.load_from_string(data)
    with open(model_path, encoding="latin-1") as text, pytest.raises(TypeError, match="binary"):
        onnxfast.load(text)


def test_a_write_only_file_fails_as_read_does(tmp_path) -> None:
    with open(tmp_path / "w.onnx", "wb") as f, pytest.raises(io.UnsupportedOperation):
        onnxfast.load(f)


def test_saving_onto_the_mapped_open_file_is_refused(model_path, tmp_path) -> None:
    """A model mapped through a file object knows its file too."""
    path = tmp_path / "m.onnx"
    path.write_bytes(open(model_path, "rb").read())  # noqa: SIM115 (closed at once)
    with open(path, "rb") as f:
        model = onnxfast.load(f)
    with open(path, "r+b") as f, pytest.raises(ValueError, match="mapped from"):
        model.save(f)


def _write_into(path: str | os.PathLike[str], data: bytes) -> threading.Thread:
    """A thread writing `data` into the FIFO at `path` (it waits for the
    reader); a reader that stops early ends it (broken pipe)."""

    def write() -> None:
        try:
            with open(path, "wb") as fifo:
                fifo.write(data)
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=write)
    writer.start()
    return writer


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_paths_of_pipes_are_read_not_taken_for_empty_files(model_path, tmp_path) -> None:
    """A FIFO, or a pipe's /dev/fd/N (what a shell's `<(...)` passes),
    reports a size of 0: it is read to its end, mapped or not. Before, it
    was taken for an empty file: a model with no graph, no error."""
    data = open(model_path, "rb").read()  # noqa: SIM115 (closed at once)
    expected = onnx.load_from_string(data)
    folder = os.path.dirname(model_path)
    fifo = tmp_path / "m.onnx"
    os.mkfifo(fifo)
    for mmap in (True, False):
        writer = _write_into(fifo, data)
        assert onnxfast.load(fifo, base_dir=folder, mmap=mmap).to_onnx() == expected
        writer.join()
    read_end, write_end = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(write_end, data), os.close(write_end)))
    writer.start()
    try:
        assert onnxfast.load(f"/dev/fd/{read_end}", base_dir=folder).to_onnx() == expected
    finally:
        writer.join()
        os.close(read_end)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_stream_longer_than_max_memory_is_refused(model_path, tmp_path) -> None:
    """A stream is read into memory: max_memory bounds it, for a path (a
    FIFO) and a file object alike. Its bytes up to the limit are read, no
    more; exactly the limit loads."""
    data = open(model_path, "rb").read()  # noqa: SIM115 (closed at once)
    folder = os.path.dirname(model_path)
    fifo = tmp_path / "m.onnx"
    os.mkfifo(fifo)
    limit = len(data) - 1
    writer = _write_into(fifo, data)
    with pytest.raises(DecodeError, match="stream") as refused:
        onnxfast.load(fifo, max_memory=limit)
    writer.join()
    assert refused.value.offset == limit
    assert str(fifo) in refused.value.reason
    assert f"memory budget of {limit} bytes" in refused.value.reason
    stream = io.BytesIO(data)
    with pytest.raises(DecodeError, match="stream") as refused:
        onnxfast.load(stream, max_memory=limit)
    assert refused.value.offset == limit
    assert stream.tell() == limit + 1  # no further
    writer = _write_into(fifo, data)
    exact = onnxfast.load(fifo, base_dir=folder, max_memory=len(data))
    writer.join()
    assert exact.to_onnx() == onnx.load_from_string(data)
    assert onnxfast.load(io.BytesIO(data), base_dir=folder, max_memory=len(data)) == exact


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_text_model_from_a_fifo_is_read_within_its_budget(tmp_path) -> None:
    """A FIFO's size is 0, so the text budget's check before reading passes:
    the read itself stops past the limit."""
    fifo = tmp_path / "m.json"
    os.mkfifo(fifo)
    writer = _write_into(fifo, b" " * 5000)
    with pytest.raises(DecodeError, match="more than 1000 bytes of json"):
        onnxfast.load(fifo, max_memory=16 * 1000)
    writer.join()


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("mmap", [True, False])
def test_devices_are_refused(mmap) -> None:
    """/dev/zero has no end (read, it took memory without bound; mapped, its
    size 0 made an empty model): a device is not a model file."""
    import errno

    with pytest.raises(OSError, match="a character device, not a model file") as refused:
        onnxfast.load("/dev/zero", mmap=mmap)
    assert refused.value.errno == errno.EINVAL
    assert refused.value.filename == "/dev/zero"


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs procfs")
def test_files_that_report_no_size_are_read() -> None:
    """/proc's files have size 0 and hold text: read, they are not ONNX
    (before, they were taken for empty files: an empty model)."""
    with pytest.raises(DecodeError, match="wire type"):
        onnxfast.load("/proc/self/status")


# A file on a file system that cannot map its files (sysfs): what a FUSE
# mount with direct I/O also gives (mmap fails with ENODEV).
SYSFS_FOLDER = "/sys/kernel/mm/transparent_hugepage"
SYSFS_FILE = "enabled"


def _unmappable() -> bytes | None:
    """The content of SYSFS_FILE, if it is there and cannot be mapped."""
    import errno
    import mmap

    path = os.path.join(SYSFS_FOLDER, SYSFS_FILE)
    try:
        with open(path, "rb") as f:
            try:
                mmap.mmap(f.fileno(), os.fstat(f.fileno()).st_size, prot=mmap.PROT_READ)
            except OSError as e:
                return f.read() if e.errno == errno.ENODEV else None
    except OSError:
        return None
    return None


@pytest.mark.skipif(_unmappable() is None, reason="needs a file that cannot be mapped (sysfs)")
def test_files_that_cannot_be_mapped_are_read() -> None:
    """A model file, or an external data file, on a file system without
    maps: read (before, "No such device"). The model file's bytes give
    onnx's model; the external tensor's bytes are the file's."""
    path = os.path.join(SYSFS_FOLDER, SYSFS_FILE)
    assert onnxfast.load(path).to_onnx() == onnx.load(path)
    content = _unmappable()
    assert content
    tensor = onnx.TensorProto(name="w", data_type=onnx.TensorProto.UINT8, dims=[len(content)])
    tensor.data_location = onnx.TensorProto.EXTERNAL
    for key, value in (("location", SYSFS_FILE), ("offset", "0"), ("length", str(len(content)))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Identity", ["w"], ["y"])],
        "g",
        [],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.UINT8, [len(content)])],
        [tensor],
    )
    data = onnx.helper.make_model(graph).SerializeToString()
    for mmap in (True, False):
        model = onnxfast.load(data, base_dir=SYSFS_FOLDER, mmap=mmap)
        assert model.graph.initializer[0].numpy().tobytes() == content
