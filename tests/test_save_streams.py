"""`Model.save(f)` to binary file objects, as `onnx.save_model(proto, f)` takes
them: the bytes onnx writes, through whatever `write()` the object has."""

from __future__ import annotations

import contextlib
import io
import os
import stat
import threading
from pathlib import Path

import onnx
import pytest
from _rich_model import rich_model, weights_model
from onnx import helper

import onnxfast

from conftest import SAMPLES


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, str]:
    """The model inline, and saved by onnx with some of its tensors external."""
    root = tmp_path_factory.mktemp("stream_sources")
    (root / "inline").mkdir()
    (root / "external").mkdir()
    inline, external = root / "inline" / "m.onnx", root / "external" / "m.onnx"
    onnx.save_model(rich_model(), inline)
    onnx.save_model(
        rich_model(), external, save_as_external_data=True, location="w.bin", size_threshold=2000
    )
    return {"inline": str(inline), "external": str(external)}


class Trickle(io.RawIOBase):
    """A raw stream that takes at most `step` bytes a call (as a pipe or a
    socket may), counting its calls."""

    def __init__(self, step: int) -> None:
        self.step, self.data, self.calls = step, bytearray(), 0

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        self.calls += 1
        n = min(len(b), self.step)
        self.data += bytes(b[:n])
        return n


class Silent:
    """A duck-typed writer whose write() returns None (counts nothing)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, b: bytes) -> None:
        self.parts.append(b)


@pytest.mark.parametrize("source", ["inline", "external"])
def test_streams_get_onnxs_bytes(sources, tmp_path, source) -> None:
    """A BytesIO, an unbuffered file, a raw stream taking a few bytes a call
    and a writer that returns None all get what onnx.save_model writes to a
    BytesIO (onnx keeps external locations as they are, as we do)."""
    path = sources[source]
    theirs = io.BytesIO()
    onnx.save_model(onnx.load(path, load_external_data=False), theirs)
    model = onnxfast.load(path)
    ours = io.BytesIO()
    assert model.save(ours) == len(theirs.getvalue())
    assert ours.getvalue() == theirs.getvalue()
    trickle = Trickle(step=1000)
    model.save(trickle)
    assert bytes(trickle.data) == theirs.getvalue()
    assert trickle.calls > len(theirs.getvalue()) // 1000
    silent = Silent()
    model.save(silent)
    assert b"".join(silent.parts) == theirs.getvalue()
    # Named (an open file): saved elsewhere than the external data, it warns.
    with open(tmp_path / "raw.onnx", "wb", buffering=0) as raw:
        if source == "external":
            with pytest.warns(onnxfast.errors.ExternalDataWarning, match="w.bin"):
                model.save(raw)
        else:
            model.save(raw)
    assert (tmp_path / "raw.onnx").read_bytes() == theirs.getvalue()
    # Written at the stream's position, after what it holds.
    prefixed = io.BytesIO()
    prefixed.write(b"head")
    model.save(prefixed)
    assert prefixed.getvalue() == b"head" + theirs.getvalue()


def test_an_inferred_model_streams_its_encoding(sources) -> None:
    """A model that is not its source's bytes (inferred: value_info added)
    streams what SerializeToString gives."""
    inferred = onnxfast.infer_shapes(sources["inline"])
    out = io.BytesIO()
    inferred.save(out)
    assert out.getvalue() == inferred.SerializeToString()
    assert onnx.load_from_string(out.getvalue()) == inferred.to_onnx()


@pytest.mark.parametrize("source", ["inline", "external"])
def test_open_files_take_external_data_beside_them(sources, tmp_path, source) -> None:
    """An open file's name is its path: the data file goes beside it, as
    onnx.save_model does with a file object; both files are onnx's."""
    kwargs = {"location": "weights.bin", "size_threshold": 1024, "convert_attribute": True}
    (tmp_path / "onnx").mkdir()
    (tmp_path / "ours").mkdir()
    with open(tmp_path / "onnx" / "m.onnx", "wb") as f:
        onnx.save_model(onnx.load(sources[source]), f, save_as_external_data=True, **kwargs)
    with open(tmp_path / "ours" / "m.onnx", "wb") as f:
        written = onnxfast.load(sources[source]).save(f, save_as_external_data=True, **kwargs)
    for name in ("m.onnx", "weights.bin"):
        assert (tmp_path / "ours" / name).read_bytes() == (tmp_path / "onnx" / name).read_bytes()
    assert written == (tmp_path / "ours" / "m.onnx").stat().st_size
    assert sorted(os.listdir(tmp_path / "ours")) == ["m.onnx", "weights.bin"]


def test_external_data_needs_a_folder(sources) -> None:
    """A stream without a path has no folder for the data file: refused
    before anything is written (onnx writes a model naming data it never
    writes)."""
    out = io.BytesIO()
    with pytest.raises(ValueError, match="folder"):
        onnxfast.load(sources["inline"]).save(out, save_as_external_data=True)
    assert out.getvalue() == b""


class Failing(io.RawIOBase):
    """Takes `budget` bytes, then raises its own error."""

    def __init__(self, budget: int) -> None:
        self.budget = budget

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        if self.budget < len(b):
            raise ConnectionResetError("the peer went away")
        self.budget -= len(b)
        return len(b)


def test_writes_that_raise_reach_the_caller(sources, tmp_path) -> None:
    """The stream's own exception is raised as it is; a data file being
    written beside it is not left behind."""
    model = onnxfast.load(sources["inline"])
    with pytest.raises(ConnectionResetError, match="went away"):
        model.save(Failing(budget=10))
    (tmp_path / "out").mkdir()
    target = tmp_path / "out" / "m.onnx"
    target.touch()
    # A stream that fails, named as an open file is: the data file's folder.
    failing = Failing(budget=10)
    failing.name = str(target)  # type: ignore[attr-defined]
    with pytest.raises(ConnectionResetError):
        model.save(failing, save_as_external_data=True, size_threshold=0)
    assert os.listdir(tmp_path / "out") == ["m.onnx"]  # the empty file made above
    assert target.stat().st_size == 0


class Liar(io.RawIOBase):
    def __init__(self, answer) -> None:
        self.answer = answer

    def writable(self) -> bool:
        return True

    def write(self, b):
        return self.answer(len(b))


@pytest.mark.parametrize(
    "answer", [lambda n: n + 1, lambda n: -1, lambda n: "all"], ids=["more", "negative", "text"]
)
def test_nonsense_write_counts_are_errors(sources, answer) -> None:
    with pytest.raises(OSError, match=r"write\(\) of \d+ bytes returned"):
        onnxfast.load(sources["inline"]).save(Liar(answer))


def test_a_stream_on_the_mapped_source_is_refused(sources, tmp_path) -> None:
    """Opening the model's own file for writing truncates it under the map;
    the save is refused with how to do it instead (reading the truncated
    map would fault). Read into memory (mmap=False), the same save works."""
    path = tmp_path / "m.onnx"
    path.write_bytes(Path(sources["inline"]).read_bytes())
    original = path.read_bytes()
    model = onnxfast.load(path)
    with open(path, "r+b") as f, pytest.raises(ValueError, match="mapped from"):
        model.save(f)
    assert path.read_bytes() == original
    model = onnxfast.load(path, mmap=False)
    with open(path, "wb") as f:
        model.save(f)
    assert path.read_bytes() == original


def test_not_a_path_nor_a_stream() -> None:
    model = onnxfast.load(helper.make_model(helper.make_graph([], "g", [], [])))
    with pytest.raises(TypeError, match="cannot save to int"):
        model.save(3)


def test_streaming_does_not_hold_the_model_in_memory(tmp_path) -> None:
    """96 MiB of weights streamed to an open file: chunks of at most 4 MiB
    are copied for write(), one at a time, and the map's pages released, so
    peak RSS growth stays far below the size written (onnx builds it whole)."""
    from _adversarial import reset_peak, rss

    src = tmp_path / "m.onnx"
    weights_model(src)
    src.read_bytes()  # in the page cache, as a model just read
    model = onnxfast.load(src)
    base, _ = rss()
    reset_peak()
    with open(tmp_path / "copy.onnx", "wb") as f:
        written = model.save(f)
    _, peak = rss()
    assert peak - base < 24 << 20
    assert written == src.stat().st_size
    assert (tmp_path / "copy.onnx").read_bytes() == src.read_bytes()


def test_a_name_that_is_not_the_streams_file_is_no_folder(sources, tmp_path, monkeypatch) -> None:
    """sys.stdout's name is "<stdout>", and an open file's name can name
    another file than the one it writes: neither places a data file."""
    model = onnxfast.load(sources["inline"])
    monkeypatch.chdir(tmp_path)
    out = io.BytesIO()
    out.name = "<stdout>"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="folder"):
        model.save(out, save_as_external_data=True)
    (tmp_path / "other.onnx").write_bytes(b"")
    with open(tmp_path / "real.onnx", "wb") as f:
        renamed = io.FileIO(f.fileno(), "wb", closefd=False)
        renamed.name = str(tmp_path / "other.onnx")  # open() names its files so
        with pytest.raises(ValueError, match="folder"):
            model.save(renamed, save_as_external_data=True)
    assert sorted(os.listdir(tmp_path)) == ["other.onnx", "real.onnx"]


def _reading(path: Path) -> tuple[list[bytes], threading.Thread]:
    """What a thread reads from the FIFO at `path` (see `_read`)."""
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(path.read_bytes()), daemon=True)
    reader.start()
    return got, reader


def _read(path: Path, got: list[bytes], reader: threading.Thread) -> bytes:
    """What the reader of `_reading` got; if no writer came (the FIFO was
    replaced), the reader is let go and the test fails instead of hanging."""
    reader.join(timeout=60)
    if reader.is_alive() or not got:
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"nothing was written into the FIFO {path}")
    return got[0]


SAVES = {
    "protobuf": {},
    "json": {"format": "json"},
    "external data": {"save_as_external_data": True, "location": "w.bin"},
}


@pytest.mark.parametrize("how", list(SAVES))
def test_a_link_is_followed_as_onnx_follows_it(sources, tmp_path, how) -> None:
    """Saving to a symbolic link writes the file it names, link after link
    (a dangling link's target is created); the links stay. Before, the
    last link was replaced by a file and its target left as it was."""
    model = onnxfast.load(sources["inline"])
    for lib in ("onnx", "onnxfast"):
        folder = tmp_path / lib
        (folder / "real").mkdir(parents=True)
        (folder / "real" / "m.onnx").write_bytes(b"old")
        (folder / "first.onnx").symlink_to("real/m.onnx")
        (folder / "link.onnx").symlink_to("first.onnx")
        (folder / "dangling.onnx").symlink_to("real/new.onnx")
        for name in ("link.onnx", "dangling.onnx"):
            # A data file each (onnx appends to one already there).
            options = {
                **SAVES[how],
                **({"location": f"{name}.bin"} if "location" in SAVES[how] else {}),
            }
            if lib == "onnx":
                onnx.save_model(onnx.load(sources["inline"]), folder / name, **options)
            else:
                model.save(folder / name, **options)
        assert (folder / "link.onnx").is_symlink()
        assert (folder / "dangling.onnx").is_symlink()
    names = {str(p.relative_to(tmp_path / "onnx")) for p in (tmp_path / "onnx").rglob("*")}
    assert {
        str(p.relative_to(tmp_path / "onnxfast")) for p in (tmp_path / "onnxfast").rglob("*")
    } == names
    for name in names - {"real"}:
        theirs = (tmp_path / "onnx" / name).read_bytes()
        assert (tmp_path / "onnxfast" / name).read_bytes() == theirs, name


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("how", list(SAVES))
def test_a_fifo_is_written_into_not_replaced(sources, tmp_path, how) -> None:
    """A FIFO at the path gets the bytes onnx writes into it, and stays a
    FIFO (before, a file took its place and its reader got nothing)."""
    model = onnxfast.load(sources["inline"])
    read = {}
    for lib in ("onnx", "onnxfast"):
        (tmp_path / lib).mkdir()
        fifo = tmp_path / lib / "m.onnx"
        os.mkfifo(fifo)
        got, reader = _reading(fifo)
        if lib == "onnx":
            onnx.save_model(onnx.load(sources["inline"]), fifo, **SAVES[how])
        else:
            model.save(fifo, **SAVES[how])
        read[lib] = _read(fifo, got, reader)
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert read["onnxfast"] == read["onnx"]
    if how == "external data":
        assert (tmp_path / "onnxfast" / "w.bin").read_bytes() == (
            tmp_path / "onnx" / "w.bin"
        ).read_bytes()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mknod needs root")
@pytest.mark.parametrize("how", list(SAVES))
def test_a_device_is_written_into_not_replaced(sources, tmp_path, how) -> None:
    """A device node at the path (here a copy of /dev/null's) is written
    into: before, a save as root to /dev/null put a file in its place."""
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    written = onnxfast.load(sources["inline"]).save(null, **SAVES[how])
    assert written > 0
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    assert os.lstat(null).st_rdev == os.makedev(1, 3)


@pytest.mark.skipif(not os.path.exists("/dev/stdout"), reason="needs /dev/stdout")
@pytest.mark.parametrize("fmt", ["protobuf", "json"])
def test_dev_stdout_on_a_pipe_gets_onnxs_bytes(sources, fmt) -> None:
    """/dev/stdout is a link to /proc/self/fd/1, whose link names a pipe
    as "pipe:[N]": written through the path, as open() writes it (before,
    the save looked for a folder to put a temporary file in)."""
    import subprocess
    import sys

    script = {
        "onnx": "import onnx, sys; onnx.save_model(onnx.load(sys.argv[1]), '/dev/stdout', "
        "format=sys.argv[2])",
        "onnxfast": "import onnxfast, sys; onnxfast.load(sys.argv[1]).save('/dev/stdout', "
        "format=sys.argv[2])",
    }
    out = {}
    for lib, code in script.items():
        proc = subprocess.run(
            [sys.executable, "-c", code, sources["inline"], fmt],
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        out[lib] = proc.stdout
    assert out["onnxfast"] == out["onnx"]
    assert len(out["onnx"]) > 0


def test_failed_saves_raise_oserrors_with_number_and_file(sources, tmp_path) -> None:
    """As open() raises them (errno, strerror, filename), so a caller can
    tell a full disk (here: a file size limit, EFBIG) from a missing
    folder; the target is left as it was, no temporary file remains."""
    import errno
    import subprocess
    import sys

    model = onnxfast.load(sources["inline"])
    with pytest.raises(IsADirectoryError) as raised:
        model.save(tmp_path)
    assert (raised.value.errno, raised.value.filename) == (errno.EISDIR, str(tmp_path))
    missing = tmp_path / "missing" / "m.onnx"
    with pytest.raises(FileNotFoundError) as raised:
        model.save(missing)
    assert (raised.value.errno, raised.value.filename) == (errno.ENOENT, str(missing))
    # A file size limit of 20,000 bytes in a child process (Python ignores
    # SIGXFSZ: writes past it fail with EFBIG).
    (tmp_path / "target.onnx").write_bytes(b"old")
    script = """
import errno, os, resource, sys
import onnxfast
resource.setrlimit(resource.RLIMIT_FSIZE, (20000, resource.RLIM_INFINITY))
model = onnxfast.load(sys.argv[1])
for options in ({}, {"save_as_external_data": True, "location": "w.bin", "size_threshold": 0}):
    try:
        model.save("target.onnx", **options)
    except OSError as e:
        print(e.errno == errno.EFBIG, os.path.basename(e.filename))
"""
    proc = subprocess.run(
        [sys.executable, "-c", script, sources["inline"]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["True target.onnx", "True w.bin"]
    assert (tmp_path / "target.onnx").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["target.onnx"]


@pytest.mark.parametrize("fmt", ["protobuf", "json"])
def test_threads_saving_to_one_path_do_not_share_a_temporary_file(sources, tmp_path, fmt) -> None:
    """Each save writes its own temporary file, named for its process and
    thread: with one name a process, a second thread's save removed the
    first one's file as it wrote (FileNotFoundError, or a torn file)."""
    small = SAMPLES / "tiny_cnn.onnx"
    models = [onnxfast.load(sources["inline"]), onnxfast.load(small)]
    expected = {
        onnx.load(sources["inline"]).SerializeToString(),
        onnx.load(small).SerializeToString(),
    }
    target = tmp_path / ("m.json" if fmt == "json" else "m.onnx")
    failures: list[BaseException] = []

    def save(model: onnxfast.Model) -> None:
        for _ in range(15):
            try:
                model.save(target)
            except BaseException as e:
                failures.append(e)

    threads = [threading.Thread(target=save, args=(m,)) for m in models * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert onnx.load(target, format=fmt).SerializeToString() in expected
    assert sorted(os.listdir(tmp_path)) == [target.name]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="lchown needs root")
@pytest.mark.parametrize("fmt", ["protobuf", "json"])
def test_a_link_planted_in_a_shared_sticky_folder_is_not_followed(sources, tmp_path, fmt) -> None:
    """In a sticky folder anyone can write to (/tmp), a link that neither
    this user nor the folder's owner made is not followed (the kernel's
    fs.protected_symlinks refuses open() the same way): PermissionError,
    its target untouched. A link of this user's there is followed."""
    import errno

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    planted = shared / "m.onnx"
    planted.symlink_to(victim)
    os.lchown(planted, 1234, 1234)
    model = onnxfast.load(sources["inline"])
    with pytest.raises(PermissionError) as refused:
        model.save(planted, format=fmt)
    assert (refused.value.errno, refused.value.filename) == (errno.EACCES, str(planted))
    assert victim.read_bytes() == b"keep"
    ours = shared / "ours.onnx"
    ours.symlink_to(victim)
    model.save(ours, format=fmt)
    assert onnx.load(victim, format=fmt) == onnx.load(sources["inline"])


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
@pytest.mark.parametrize("fmt", ["protobuf", "json"])
def test_a_saved_over_file_keeps_its_permissions_and_owner(sources, tmp_path, fmt) -> None:
    """A save replaces the file through a new one: it used to get the
    default permissions (0o644 with umask 022), so a private model saved
    over became readable by everyone. It now gets the old file's mode (and,
    as root, its owner), as onnx's write in place leaves them; a data file
    saved over too; a new file gets the default, as open() gives it."""
    model = onnxfast.load(sources["inline"])
    target = tmp_path / "m.onnx"
    target.write_bytes(b"old")
    target.chmod(0o600)
    (tmp_path / "w.bin").write_bytes(b"old")
    (tmp_path / "w.bin").chmod(0o640)
    if os.geteuid() == 0:
        os.chown(target, 1234, 4321)
    model.save(target, format=fmt)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    if os.geteuid() == 0:
        assert (target.stat().st_uid, target.stat().st_gid) == (1234, 4321)
    model.save(target, format=fmt, save_as_external_data=True, location="w.bin", size_threshold=0)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "w.bin").stat().st_mode) == 0o640
    umask = os.umask(0o022)
    os.umask(umask)
    model.save(tmp_path / "new.onnx", format=fmt)
    assert stat.S_IMODE((tmp_path / "new.onnx").stat().st_mode) == 0o666 & ~umask
