"""The default memory budget (16 × the file size + 64 MiB) accepts valid
exporter-shaped graphs of a million nodes, because its projection follows
what decoding them would really allocate, and still refuses the
adversarial expansions of tests/_adversarial.py."""

from __future__ import annotations

import os
import re
import struct

import onnx
import pytest

import onnxfast

from _wire import key, ld, varint, vint


def _dim(value: int | str) -> bytes:
    return ld(1, ld(2, value.encode()) if isinstance(value, str) else vint(1, value))


def _value_info(name: str) -> bytes:
    shape = ld(2, _dim("b") + _dim(4) + _dim(4))
    return ld(1, name.encode()) + ld(2, ld(1, vint(1, 1) + shape))


def exporter_graph(nodes: int, *, value_info: bool, initializers: bool, doc: bool) -> bytes:
    """What tests/../benches/_common.py exporter_model builds with onnx's
    helpers, written straight to the wire (a million nodes in seconds):
    a chain of Transpose(perm) / LeakyRelu(alpha) nodes with short names,
    or Mul / Add with a 4-float initializer each, optionally a value_info
    and a doc string per node."""
    parts = []
    infos = []
    inits = []
    alpha = ld(1, b"alpha") + key(2, 5) + struct.pack("<f", 0.1) + vint(20, 1)
    perm = ld(1, b"perm") + b"".join(vint(8, v) for v in (0, 2, 1)) + vint(20, 7)
    floats = key(4, 2) + varint(16) + struct.pack("<4f", 0.5, 0.5, 0.5, 0.5)
    prev = b"x"
    for i in range(nodes):
        out = b"t%d" % i
        if initializers:
            w = b"w%d" % i
            inits.append(ld(5, vint(1, 4) + vint(2, 1) + floats + ld(8, w)))
            op, name = (b"Add", b"/l%d/add" % i) if i % 2 else (b"Mul", b"/l%d/mul" % i)
            attr = b""
            body = ld(1, prev) + ld(1, w)
        else:
            op, name, attr = (
                (b"LeakyRelu", b"/l%d/act" % i, ld(5, alpha))
                if i % 2
                else (b"Transpose", b"/l%d/t" % i, ld(5, perm))
            )
            body = ld(1, prev)
        body += ld(2, out) + ld(3, name) + ld(4, op) + attr
        if doc:
            body += ld(6, b"exported from layers.%d (torch.nn.Module)" % i)
        parts.append(ld(1, body))
        if value_info:
            infos.append(ld(13, _value_info(out.decode())))
        prev = out
    graph = (
        b"".join(parts)
        + ld(2, b"exported")
        + b"".join(inits)
        + ld(11, _value_info("x"))
        + ld(12, _value_info(prev.decode()))
        + b"".join(infos)
    )
    return vint(1, 10) + ld(8, ld(1, b"") + vint(2, 21)) + ld(7, graph)


SHAPES = {
    "attributes + value_info": {"value_info": True, "initializers": False, "doc": False},
    "initializers + doc strings": {"value_info": False, "initializers": True, "doc": True},
}


@pytest.mark.parametrize("shape", SHAPES)
def test_the_generator_writes_what_onnx_reads(shape) -> None:
    data = exporter_graph(300, **SHAPES[shape])
    reference = onnx.load_from_string(data)
    onnx.checker.check_model(reference, full_check=True)
    ours = onnxfast.load(data)
    assert ours.to_onnx() == reference
    assert len(ours.graph.node) == 300


def _rss() -> int:
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["VmRSS"].split()[0]) * 1024


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
@pytest.mark.parametrize("shape", SHAPES)
def test_a_million_exporter_nodes_load_within_the_default_budget(tmp_path, shape) -> None:
    n = 1_000_000
    path = tmp_path / "big.onnx"
    path.write_bytes(exporter_graph(n, **SHAPES[shape]))
    budget = 16 * path.stat().st_size + (64 << 20)
    before = _rss()
    model = onnxfast.load(path)  # the default budget
    graph = model.graph
    assert len(graph.node) == n
    # Loading indexes the lists; nothing is decoded until touched.
    assert _rss() - before < 32 << 20
    first, last = graph.node[0], graph.node[n - 1]
    if SHAPES[shape]["initializers"]:
        assert (first.op_type, last.op_type) == ("Mul", "Add")
        assert len(graph.initializer) == n
        assert list(graph.initializer[n - 1].float_data) == [0.5] * 4
        assert last.doc_string == f"exported from layers.{n - 1} (torch.nn.Module)"
    else:
        assert list(first.attribute[0].ints) == [0, 2, 1]
        assert last.attribute[0].f == pytest.approx(0.1)
        assert len(graph.value_info) == n
        assert graph.value_info[n - 1].name == f"t{n - 1}"
    # The projection (the whole tree, as if every element were touched) is
    # what a refusal reports: under the default budget, over the file size.
    with pytest.raises(onnxfast.DecodeError, match="budget") as refused:
        onnxfast.load(path, max_memory=path.stat().st_size)
    found = re.search(r"at least (\d+) MiB", str(refused.value))
    assert found, str(refused.value)
    projected = int(found.group(1)) << 20
    assert path.stat().st_size < projected < budget


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
def test_walking_names_decodes_nothing(tmp_path) -> None:
    """Node and tensor objects answer names, dims and types from their bytes:
    a walk reading only those allocates no decoded tree (which for this
    graph is ~180 MiB); reading another field decodes what it reads."""
    n = 200_000
    path = tmp_path / "walk.onnx"
    path.write_bytes(exporter_graph(n, value_info=False, initializers=True, doc=True))
    graph = onnxfast.load(path).graph

    def anonymous() -> int:  # the mapped file's pages aside
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f)
        return int(fields["RssAnon"].split()[0]) * 1024

    before = anonymous()
    names = sum(len(x.input) + len(x.output) + len(x.op_type) for x in graph.node)
    dims = sum(len(t.dims) + len(t.name) + t.data_type for t in graph.initializer)
    assert anonymous() - before < 16 << 20
    assert names > 3 * n
    assert dims > 2 * n
    assert graph.node[n - 1].doc_string == f"exported from layers.{n - 1} (torch.nn.Module)"
    assert list(graph.initializer[n - 1].float_data) == [0.5] * 4


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
def test_a_value_type_reads_only_its_written_back_entry(tmp_path) -> None:
    """`values[x].type` on a graph decoded on touch infers once, as
    onnxfast.infer_shapes does, and writes back only the entries asked
    about; it used to decode and write back the whole graph (+248 MiB of
    anonymous memory kept for this one, then ~97 MiB with the nodes
    inference decoded and kept; ~46 MiB since inference reads nodes
    without attributes from their bytes: decoding these again would add
    ~60 MiB)."""
    n = 200_000
    path = tmp_path / "typed.onnx"
    path.write_bytes(exporter_graph(n, value_info=False, initializers=True, doc=True))
    values = onnxfast.load(path).graph.values

    def anonymous() -> int:  # the mapped file's pages aside
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f)
        return int(fields["RssAnon"].split()[0]) * 1024

    before = anonymous()
    assert values[f"t{n // 2}"].shape == ["b", 4, 4]
    grown = anonymous() - before
    assert grown < 80 << 20, grown >> 20
    assert values[f"t{n - 1}"].shape == ["b", 4, 4]
    assert values["x"].shape == ["b", 4, 4]
    assert values[f"w{n - 7}"].shape == [4]
    assert values[f"w{n - 7}"].declared_type is None


@pytest.mark.parametrize(
    "bomb",
    [
        ld(7, b"\x0a\x00" * 5_000_000),  # 5M empty nodes in 10 MB
        ld(7, ld(1, b"\x2a\x00" * 3_000_000)),  # 3M empty attributes in one node
        ld(7, ld(13, b"") * 3_000_000),  # 3M empty value_info
    ],
    ids=["empty nodes", "empty attributes", "empty value_info"],
)
def test_expansions_are_still_refused_by_the_default_budget(bomb) -> None:
    with pytest.raises(onnxfast.DecodeError, match="budget"):
        onnxfast.load(bomb)
