"""The Python object model: onnx field names and values, laziness, conveniences."""

from __future__ import annotations

import gc
import io
import os
import pathlib

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnxfast

from conftest import SAMPLES, wheel_models


@pytest.fixture(scope="module")
def rich_model() -> onnx.ModelProto:
    """A model using most message kinds: subgraphs, functions, sparse tensors, training info."""
    then_g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["t_out"])],
        "then",
        [],
        [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, None)],
    )
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e_out"])],
        "else",
        [],
        [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, ["N", 3])],
    )
    w = helper.make_tensor(
        "w", TensorProto.FLOAT, [2, 3], np.arange(6, dtype=np.float32).tobytes(), raw=True
    )
    sparse = helper.make_sparse_tensor(
        helper.make_tensor("sv", TensorProto.FLOAT, [2], [1.5, 2.5]),
        helper.make_tensor("si", TensorProto.INT64, [2], [1, 4]),
        [2, 3],
    )
    nodes = [
        helper.make_node(
            "If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g
        ),
        helper.make_node(
            "Custom",
            ["y", "w"],
            ["z"],
            name="custom",
            domain="my.domain",
            alpha=0.5,
            count=3,
            mode="fast",
            sizes=[1, 2, 3],
            scales=[0.25, 0.5],
            names=["a", "b"],
            tensor=w,
        ),
        helper.make_node("Relu", ["z"], ["out"], name="relu"),
        helper.make_node("Relu", ["z"], ["out2"], name="relu2"),
    ]
    graph = helper.make_graph(
        nodes,
        "main",
        [
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3]),
        ],
        [
            helper.make_tensor_value_info("out", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("out2", TensorProto.FLOAT, [None, 3]),
        ],
        initializer=[w],
        sparse_initializer=[sparse],
        value_info=[helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
    )
    seq_vi = helper.make_tensor_sequence_value_info("s", TensorProto.INT64, [4])
    graph.value_info.append(seq_vi)
    func = helper.make_function(
        "my.domain",
        "Fn",
        ["a"],
        ["b"],
        [helper.make_node("Relu", ["a"], ["b"])],
        [helper.make_opsetid("", 18)],
        attributes=["k"],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("my.domain", 1)],
        functions=[func],
        producer_name="tests",
    )
    helper.set_model_props(model, {"author": "me", "license": "none"})
    train = onnx.TrainingInfoProto()
    train.algorithm.CopyFrom(helper.make_graph([], "algo", [], []))
    b = train.update_binding.add()
    b.key, b.value = "w", "w_new"
    model.training_info.append(train)
    return model


@pytest.fixture(scope="module")
def model(rich_model):
    return onnxfast.load(rich_model.SerializeToString())


def test_field_names_and_values(model, rich_model) -> None:
    assert model.ir_version == rich_model.ir_version
    assert model.producer_name == "tests"
    assert model.opset_import[0].domain == ""
    assert model.opset_import[0].version == 18
    assert model.opsets == {"": 18, "my.domain": 1}
    assert model.metadata_props[0].key == "author"
    node = model.graph.node[1]
    assert node.op_type == "Custom"
    assert node.domain == "my.domain"
    assert node.input == ["y", "w"]
    assert node.output == ["z"]
    attr = node.attribute[0]
    assert attr.name == "alpha"
    assert attr.type == onnx.AttributeProto.FLOAT
    assert attr.f == 0.5
    assert model.functions[0].name == "Fn"
    assert model.functions[0].attribute == ["k"]
    assert model.training_info[0].update_binding[0].value == "w_new"
    assert model.training_info[0].initialization is None
    assert model.graph.sparse_initializer[0].values.float_data == [1.5, 2.5]


def test_absent_messages_are_none_and_shapes_distinguish_rank(model) -> None:
    out = model.graph.output[0]
    assert out.type.tensor_type.shape is None  # unknown rank
    cond = model.graph.input[0]
    assert cond.type.tensor_type.shape is not None
    assert len(cond.type.tensor_type.shape.dim) == 0  # a scalar
    assert cond.type.sequence_type is None
    dims = model.graph.output[1].type.tensor_type.shape.dim
    assert dims[0].HasField("dim_value") is False
    assert dims[0].HasField("dim_param") is False
    assert dims[0].WhichOneof("value") is None
    assert dims[1].dim_value == 3
    x_dims = model.graph.input[1].type.tensor_type.shape.dim
    assert x_dims[0].dim_param == "N"
    assert x_dims[0].dim_value == 0
    seq = model.graph.value_info[1].type
    assert seq.WhichOneof("value") == "sequence_type"
    assert seq.sequence_type.elem_type.tensor_type.elem_type == TensorProto.INT64
    assert model.graph.node[0].attribute[0].t is None


def test_repeated_fields_are_sequences(model) -> None:
    nodes = model.graph.node
    assert len(nodes) == 4
    assert nodes[-1].name == "relu2"
    assert [n.name for n in nodes[1:3]] == ["custom", "relu"]
    assert [n.name for n in nodes[::-2]] == ["relu2", "custom"]
    assert [n.op_type for n in nodes] == ["If", "Custom", "Relu", "Relu"]
    with pytest.raises(IndexError):
        nodes[4]
    with pytest.raises(IndexError):
        nodes[-5]
    with pytest.raises(TypeError):
        nodes["a"]
    assert nodes == model.graph.node
    assert nodes[0] == model.graph.node[0]
    assert nodes[0] != nodes[1]
    assert "4 Node" in repr(nodes)


def test_attrs_match_onnx_helper(model, rich_model) -> None:
    for ours, theirs in zip(model.graph.node, rich_model.graph.node):
        expected = {a.name: helper.get_attribute_value(a) for a in theirs.attribute}
        got = ours.attrs
        assert set(got) == set(expected)
        for name, value in expected.items():
            mine = got[name]
            if isinstance(value, (onnx.TensorProto, onnx.GraphProto)):
                assert mine.to_onnx() == value
            else:
                assert mine == value, name
    custom = model.graph.node[1].attrs
    assert custom["mode"] == b"fast"
    assert custom["names"] == [b"a", b"b"]
    assert custom["sizes"] == [1, 2, 3]
    assert isinstance(custom["tensor"], onnxfast.Tensor)
    assert isinstance(model.graph.node[0].attrs["then_branch"], onnxfast.Graph)
    assert model.graph.node[0].attribute[0].value.name == "else"


def test_old_attributes_without_type_infer_their_kind() -> None:
    attr = onnx.AttributeProto(name="k", i=7)  # IR 1 style: no `type`
    node = onnx.NodeProto(op_type="X", input=["a"], output=["b"], attribute=[attr])
    model = onnx.ModelProto(ir_version=1, graph=onnx.GraphProto(node=[node]))
    ours = onnxfast.load(model.SerializeToString())
    assert ours.graph.node[0].attribute[0].type == 0
    assert ours.graph.node[0].attrs == {"k": 7}


def test_graph_conveniences(model) -> None:
    g = model.graph
    assert list(g.initializers) == ["w"]
    assert g.initializers["w"].dims == [2, 3]
    assert g.producer("z").name == "custom"
    assert g.producer("x") is None
    assert [n.name for n in g.consumers("z")] == ["relu", "relu2"]
    assert g.consumers("nothing") == []


def test_reprs_are_readable(model) -> None:
    assert repr(model).startswith("Model(ir_version=")
    assert "main" in repr(model.graph)
    assert repr(model.graph.node[1]).startswith("Node(name='custom', op_type='Custom'")
    assert "FLOAT" in repr(model.graph.input[1])
    assert repr(model.graph.initializer[0]) == "Tensor(name='w', data_type=FLOAT, dims=[2, 3])"


def test_repr_escapes_control_characters() -> None:
    node = onnx.NodeProto(op_type="Relu\x1b[31m", input=["a"], output=["b"])
    model = onnxfast.load(onnx.ModelProto(graph=onnx.GraphProto(node=[node])).SerializeToString())
    assert "\x1b" not in repr(model.graph.node[0])


def test_to_onnx_is_exact(model, rich_model) -> None:
    assert model.to_onnx() == rich_model
    assert model.graph.to_onnx() == rich_model.graph
    assert model.graph.node[1].to_onnx() == rich_model.graph.node[1]
    assert (
        model.graph.input[1].type.tensor_type.to_onnx()
        == rich_model.graph.input[1].type.tensor_type
    )


def test_read_only(model) -> None:
    with pytest.raises(AttributeError):
        model.ir_version = 3
    with pytest.raises(AttributeError):
        model.graph.node[0].name = "x"


def test_sources(tmp_path, rich_model) -> None:
    data = rich_model.SerializeToString()
    path = tmp_path / "m.onnx"
    path.write_bytes(data)
    expected = onnxfast.load(data)
    assert onnxfast.load(str(path)) == expected
    assert onnxfast.load(path) == expected
    assert onnxfast.load(pathlib.PurePath(path)) == expected
    assert onnxfast.load(bytearray(data)) == expected
    assert onnxfast.load(memoryview(data)) == expected
    assert onnxfast.load(io.BytesIO(data)) == expected
    with open(path, "rb") as f:
        assert onnxfast.load(f) == expected
    assert onnxfast.load(rich_model) == expected
    assert onnxfast.load(path, mmap=False) == expected
    with pytest.raises(TypeError):
        onnxfast.load(12)
    with pytest.raises(TypeError, match="binary"):
        onnxfast.load(io.StringIO("text"))


def test_root_serialization_is_the_source() -> None:
    data = onnx.helper.make_model(onnx.helper.make_graph([], "g", [], [])).SerializeToString()
    model = onnxfast.load(data)
    assert model.SerializeToString() == data


def test_model_outlives_its_source_objects(tmp_path, rich_model) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(rich_model.SerializeToString())
    node = onnxfast.load(path).graph.node[1]  # the model object is gone
    path.unlink()
    assert node.attrs["tensor"].raw_data == np.arange(6, dtype=np.float32).tobytes()


def test_objects_are_not_tracked_by_the_cycle_collector(model) -> None:
    """Message and value objects hold no Python object, so they cannot be
    part of a cycle: untracked, a program keeping 200,000 of them does not
    have the collector traverse them over and over (4-5x the time to make
    them, see benches/README.md)."""
    g = model.graph
    values = g.values
    relu = values["out2"].producer[0]
    found = [
        model,
        g,
        *g.node,
        *g.initializer,
        *g.input,
        *g.value_info,
        g.node[1].attribute[0],
        values["x"],
        relu,
        *[n for n, _ in values["x"].consumers],
        *values.values(),
        *[v for _, v in values.items()],
        values.get("x"),
    ]
    assert not [o for o in found if gc.is_tracked(o)]
    assert (relu.op_type, relu.name) == ("Relu", "relu2")


@pytest.mark.parametrize("path", wheel_models()[:5], ids=lambda p: p.name)
def test_real_models(path) -> None:
    ours = onnxfast.load(path)
    theirs = onnx.load(path)
    assert len(ours.graph.node) == len(theirs.graph.node)
    assert ours.to_onnx() == theirs


def test_errors_module() -> None:
    assert onnxfast.errors.DecodeError is onnxfast.DecodeError
    for name in ("DecodeError", "TensorError", "ExternalDataError", "CheckError", "InternalError"):
        assert issubclass(getattr(onnxfast, name), onnxfast.OnnxFastError)
    assert issubclass(onnxfast.CheckError, ValueError)


def test_long_lists_iterate_in_order_while_decoding_ahead(tmp_path) -> None:
    """Iterating a long decode-on-touch list decodes ahead of the iterator on
    the thread pool: several iterators at once, one stopped early, a random
    access meanwhile, all see onnx's elements in onnx's order."""
    import threading

    n = 6000
    nodes = [
        helper.make_node("Relu" if i % 3 else "Transpose", [f"t{i}"], [f"t{i + 1}"], name=f"n{i}")
        for i in range(n)
    ]
    inits = [
        helper.make_tensor(f"w{i}", TensorProto.FLOAT, [i % 5], [0.5] * (i % 5)) for i in range(n)
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info(f"t{n}", TensorProto.FLOAT, [2])],
        initializer=inits,
    )
    reference = helper.make_model(graph)
    path = tmp_path / "long.onnx"
    onnx.save(reference, path)
    expected = [(x.name, x.op_type, list(x.input), list(x.output)) for x in reference.graph.node]
    expected_dims = [list(t.dims) for t in reference.graph.initializer]
    model = onnxfast.load(path)
    seen: dict[int, list] = {}

    def walk(k: int) -> None:
        seen[k] = [(x.name, x.op_type, list(x.input), list(x.output)) for x in model.graph.node]

    early = iter(model.graph.node)
    assert next(early).name == "n0"
    assert model.graph.node[n - 1].name == f"n{n - 1}"
    threads = [threading.Thread(target=walk, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    dims = [list(t.dims) for t in model.graph.initializer]
    for t in threads:
        t.join()
    assert all(seen[k] == expected for k in range(4))
    assert dims == expected_dims
    assert next(early).name == "n1"


def test_shared_texts_are_read_right_however_many() -> None:
    """op_type, domain, attribute names and dimension symbols are handed out
    from a per-thread cache of Python strings: 300 distinct op types and
    200 domains (more than its slots: texts replace each other) read right,
    twice, from several threads; an equal text read again is the same
    object."""
    import threading

    nodes = [
        helper.make_node(
            f"Op{i % 300}",
            [f"v{i}"],
            [f"v{i + 1}"],
            domain=f"custom.d{i % 200}" if i % 3 else "",
            **{f"attr_{i % 150}": i},
        )
        for i in range(1200)
    ]
    dims = [f"sym{i}" for i in range(150)]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("v0", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("v1200", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 21)]
        + [helper.make_opsetid(f"custom.d{k}", 1) for k in range(200)],
    )
    ours = onnxfast.load(model.SerializeToString())
    want = [(n.op_type, n.domain, [a.name for a in n.attribute]) for n in model.graph.node]
    want_dims = [d.dim_param for d in model.graph.input[0].type.tensor_type.shape.dim]

    def read() -> tuple[list, list]:
        got = [(n.op_type, n.domain, [a.name for a in n.attribute]) for n in ours.graph.node]
        shape = ours.graph.input[0].type.tensor_type.shape
        return got, [d.dim_param for d in shape.dim]

    for _ in range(2):
        assert read() == (want, want_dims)
    results = []
    threads = [threading.Thread(target=lambda: results.append(read())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [(want, want_dims)] * 4
    first, again = ours.graph.node[0], ours.graph.node[300]
    assert first.op_type == again.op_type == "Op0"
    assert first.op_type is again.op_type
    assert [o.domain for o in ours.opset_import] == [o.domain for o in model.opset_import]


def test_check_loads_as_load_does_with_mmap_and_format(tmp_path) -> None:
    """check(..., mmap=False) reads the file (the same report); format=
    decides how a path is read, whatever its name (a binary model named
    .json is text to onnx and to load by default)."""
    import shutil

    valid, broken = SAMPLES / "tiny_cnn.onnx", SAMPLES / "broken.onnx"
    for path in (valid, broken):
        assert onnxfast.check(path, mmap=False) == onnxfast.check(path)
    with pytest.raises(onnxfast.CheckError) as raised:
        onnxfast.check_model(broken, mmap=False)
    assert raised.value.report == onnxfast.check(broken)
    named = tmp_path / "model.json"
    shutil.copy(valid, named)
    with pytest.raises(onnxfast.DecodeError, match="json"):
        onnxfast.check(named)
    assert onnxfast.check(named, format="protobuf") == onnxfast.check(valid)
    onnxfast.check_model(named, format="protobuf", mmap=False)


def test_path_likes_that_give_bytes_are_paths(tmp_path) -> None:
    """os.scandir(b"...") gives entries whose os.fspath() is bytes: a path,
    as onnx.load takes it (they were decoded as the model's bytes: a
    DecodeError at byte 0). Saving takes them, and plain bytes, as paths,
    as open() does (the extension choosing the format)."""
    import os
    import shutil

    shutil.copy(SAMPLES / "tiny_cnn.onnx", tmp_path / "m.onnx")
    (entry,) = [e for e in os.scandir(bytes(tmp_path)) if e.name == b"m.onnx"]
    assert isinstance(os.fspath(entry), bytes)
    expected = onnx.load(entry)
    assert onnxfast.load(entry).to_onnx() == expected
    assert onnxfast.check(entry, full=True) == onnxfast.check(tmp_path / "m.onnx", full=True)
    assert (
        onnxfast.infer_shapes(entry).to_onnx()
        == onnxfast.infer_shapes(tmp_path / "m.onnx").to_onnx()
    )

    class BytesPath:
        def __init__(self, path: bytes) -> None:
            self.path = path

        def __fspath__(self) -> bytes:
            return self.path

    model = onnxfast.load(entry)
    model.save(BytesPath(bytes(tmp_path / "copy.onnx")))
    assert onnx.load(tmp_path / "copy.onnx") == expected
    model.save(bytes(tmp_path / "copy.json"))
    assert onnx.load(tmp_path / "copy.json", format="json") == expected
    onnxfast.infer_shapes_path(entry, BytesPath(bytes(tmp_path / "typed.onnx")))
    assert onnx.load(tmp_path / "typed.onnx") == onnxfast.infer_shapes(entry).to_onnx()


def test_a_path_with_a_nul_is_a_value_error_as_open_gives(tmp_path) -> None:
    """open() refuses a path with a NUL byte with ValueError('embedded null
    byte'), and so does onnx.load; onnxfast said OSError (EINVAL), and a save
    printed the NUL into its message."""
    bad = str(tmp_path / "a\0b.onnx")
    with pytest.raises(ValueError, match="embedded null byte"):
        onnx.load(bad)
    model = onnxfast.load(SAMPLES / "tiny_cnn.onnx")
    for call in (
        lambda: onnxfast.load(bad),
        lambda: onnxfast.check(bad),
        lambda: onnxfast.load_tensor(bad),
        lambda: model.save(bad),
        lambda: model.save(os.fsencode(bad)),
    ):
        with pytest.raises(ValueError, match="embedded null byte"):
            call()
