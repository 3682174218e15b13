"""Checker: onnx.checker.check_model's verdicts on real and mutated models,
every defect reported at once with its location, and the strict extras."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from _mutations import mutants
from onnx import AttributeProto, TensorProto, helper, numpy_helper

import onnxfast

from conftest import SAMPLES, corpus_models, wheel_models


def _onnx_verdict(data: bytes) -> str | None:
    try:
        onnx.checker.check_model(data)
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    return None


def test_verdict_parity_on_every_shipped_and_generated_model() -> None:
    mismatches = []
    paths = corpus_models() + wheel_models()
    for path in paths:
        theirs = _onnx_verdict(path.read_bytes())
        ours = onnxfast.check(path)
        if (theirs is None) != ours.ok:
            mismatches.append(f"{path}: onnx={theirs!r} ours={[str(d) for d in ours.errors][:2]}")
    assert not mismatches, "\n".join(mismatches[:10])
    assert len(paths) > 2000


def test_verdict_parity_on_mutated_models() -> None:
    checked = invalid = 0
    mismatches = []
    for path in corpus_models()[::3] + wheel_models()[::3]:
        base = onnx.load(path, load_external_data=False)
        for what, model in mutants(base, seed=0):
            data = model.SerializeToString()
            theirs = _onnx_verdict(data)
            ours = onnxfast.check(data)
            checked += 1
            invalid += theirs is not None
            if (theirs is None) != ours.ok:
                mismatches.append(
                    f"{path.parent.name} / {what}: onnx={theirs!r} ours={ours.errors[:1]}"
                )
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches[:10])
    assert checked > 20000
    assert invalid > 0.8 * checked


def test_every_defect_is_reported_with_its_location() -> None:
    report = onnxfast.check(SAMPLES / "broken.onnx")
    assert not report.ok
    found = [(d.code, d.location) for d in report]
    assert found == [
        ("E212", "graph 'tiny_cnn' › node[1] 'pool1' (MaxPool) › input[0] 'r1'"),
        ("E212", "graph 'tiny_cnn' › node[3] 'conv2' (Conv) › input[0] 'p_1'"),
        ("E405", "graph 'tiny_cnn' › node[4] 'relu2' (Rellu)"),
    ]
    assert report[1].suggestion == "did you mean 'p1'?"
    assert report[2].suggestion == "did you mean 'Relu'?"
    assert report[0].suggestion == (
        "'r1' is produced later, by node[2] 'relu1' (Relu): the nodes are not in topological order"
    )
    text = str(report)
    assert text.count("error[E") == 3
    assert text.endswith("invalid: 3 errors")
    back = json.loads(report.to_json())
    assert back["ok"] is False
    assert [d["code"] for d in back["diagnostics"]] == ["E212", "E212", "E405"]


def _long_chain(nodes: int = 1500, *, branch_at: int | None = None) -> onnx.ModelProto:
    """A chain of Add / Relu / LeakyRelu nodes, long enough for the checker's
    parallel path (512 nodes and more); optionally an If node whose branches
    read outer names, at `branch_at`."""
    made = []
    prev = "x"
    for i in range(nodes):
        out = f"t{i}"
        if branch_at == i:
            branches = {
                key: helper.make_graph(
                    [helper.make_node(op, [prev], [f"{key}_out"])],
                    key,
                    [],
                    [helper.make_tensor_value_info(f"{key}_out", TensorProto.FLOAT, None)],
                )
                for key, op in (("then_branch", "Neg"), ("else_branch", "Abs"))
            }
            made.append(helper.make_node("If", ["c"], [out], name=f"n{i}", **branches))
        elif i % 3 == 0:
            made.append(helper.make_node("Add", [prev, "b"], [out], name=f"n{i}"))
        elif i % 3 == 1:
            made.append(helper.make_node("Relu", [prev], [out], name=f"n{i}"))
        else:
            made.append(helper.make_node("LeakyRelu", [prev], [out], name=f"n{i}", alpha=0.1))
        prev = out
    vi = helper.make_tensor_value_info
    inputs = [vi("x", TensorProto.FLOAT, [4]), vi("c", TensorProto.BOOL, [])]
    b = helper.make_tensor("b", TensorProto.FLOAT, [4], [1.0, 2.0, 3.0, 4.0])
    return _model(made, inputs, [vi(prev, TensorProto.FLOAT, [4])], [b])


@pytest.mark.parametrize("branch_at", [None, 700])
def test_verdict_parity_on_mutated_long_graphs(branch_at) -> None:
    """Graphs of 512+ nodes take a parallel path (SSA proven beside the
    node checks); every mutation must still get onnx's verdict."""
    base = _long_chain(branch_at=branch_at)
    assert _onnx_verdict(base.SerializeToString()) is None
    assert onnxfast.check(base).ok
    mismatches = []
    checked = 0
    for seed in range(3):
        for what, model in mutants(base, seed=seed):
            data = model.SerializeToString()
            theirs = _onnx_verdict(data)
            ours = onnxfast.check(data)
            checked += 1
            if (theirs is None) != ours.ok:
                mismatches.append(f"{what}: onnx={theirs!r} ours={ours.errors[:1]}")
    assert not mismatches, "\n".join(mismatches[:10])
    assert checked > 80


def test_long_graph_reports_every_defect_in_node_order() -> None:
    model = _long_chain()
    nodes = model.graph.node
    nodes[700].input[0] = "t_699"  # undefined (a typo of t699)
    nodes[900].output[0] = "t100"  # assigned twice
    nodes[1000].op_type = "Rellu"  # unknown operator (a node-local finding)
    nodes[1200].input[0], nodes[1201].input[0] = "t1201", "t1199"  # out of order
    model.graph.output[0].name = "nowhere"
    report = _same_verdict(model)
    found = [(d.code, d.location.split(" › ", 1)[1]) for d in report]
    assert found == [
        ("E212", "node[700] 'n700' (Relu) › input[0] 't_699'"),
        ("E213", "node[900] 'n900' (Add) › output[0] 't100'"),
        ("E212", "node[901] 'n901' (Relu) › input[0] 't900'"),  # t900 is gone
        ("E405", "node[1000] 'n1000' (Rellu)"),
        ("E212", "node[1200] 'n1200' (Add) › input[0] 't1201'"),
        ("E214", "output[0] 'nowhere'"),
    ]
    assert report[0].suggestion == "did you mean 't699'?"
    assert report[3].suggestion == "did you mean 'Relu'?"
    assert "produced later, by node[1201]" in report[4].suggestion


def test_check_model_raises_check_error_with_the_report() -> None:
    with pytest.raises(onnxfast.CheckError) as info:
        onnxfast.check_model(SAMPLES / "broken.onnx")
    assert isinstance(info.value, ValueError)
    assert len(info.value.report.errors) == 3
    onnxfast.check_model(SAMPLES / "tiny_cnn.onnx")  # valid: no exception
    onnxfast.check_model(onnx.load(SAMPLES / "tiny_cnn.onnx"))  # an onnx.ModelProto too
    assert onnxfast.check(onnxfast.load(SAMPLES / "tiny_cnn.onnx")).ok


def _model(nodes, inputs=(), outputs=(), initializers=(), opset=21, ir=10, **graph_kw):
    graph = helper.make_graph(
        nodes, "g", list(inputs), list(outputs), initializer=list(initializers), **graph_kw
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir
    return model


def _same_verdict(model: onnx.ModelProto) -> onnxfast.Report:
    data = model.SerializeToString()
    report = onnxfast.check(data)
    assert (_onnx_verdict(data) is None) == report.ok, (report, _onnx_verdict(data))
    return report


X = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
Y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])


@pytest.mark.parametrize(
    ("model", "codes"),
    [
        (_model([helper.make_node("Relu", ["x"], ["y"], domain="ai.onnx")], [X], [Y]), ["E403"]),
        (
            _model(
                [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "m2"])],
                [X, *(helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in "sbmv")],
                [Y],
                opset=15,
            ),
            ["E408"],
        ),
        (
            _model(
                [helper.make_node("LayerNormalization", ["x", "s"], ["y"], anything_goes=3)],
                [X, helper.make_tensor_value_info("s", TensorProto.FLOAT, [2])],
                [Y],
                opset=17,
            ),
            [],
        ),
        (_model([helper.make_node("Relu", ["x"], ["y"], __private=1)], [X], [Y]), []),
        (_model([helper.make_node("Relu", ["x"], ["y"], _private=1)], [X], [Y]), ["E410"]),
        (_model([helper.make_node("Upsample", ["x", "x"], ["y"])], [X], [Y], opset=21), ["E406"]),
        (_model([helper.make_node("Gelu", ["x"], ["y"])], [X], [Y], opset=13), ["E405"]),
        (
            _model(
                [
                    helper.make_node(
                        "Loop", ["", ""], ["y"], body=helper.make_graph([], "b", [], [])
                    )
                ],
                [],
                [Y],
            ),
            [],
        ),
        (_model([], [X], [X], ir=2, opset=1), ["E106"]),
    ],
    ids=[
        "ai.onnx-domain",
        "bn-2-outputs",
        "layernorm-17-any-attr",
        "dunder-attr",
        "underscore-attr",
        "deprecated",
        "too-new",
        "loop-optional-empty",
        "ir2-opsets",
    ],
)
def test_onnx_quirks(model, codes) -> None:
    report = _same_verdict(model)
    assert [d.code for d in report.errors] == codes


@pytest.mark.parametrize("count", [3, 16, 17, 40])
def test_repeated_attributes_are_found_among_few_and_many(count) -> None:
    """A repeated attribute name is an error (as in onnx) wherever it is,
    in a node of few attributes (compared one by one) or many (a set)."""
    node = helper.make_node(
        "LayerNormalization", ["x", "s"], ["y"], **{f"a{i}": i for i in range(count - 1)}
    )
    node.attribute.insert(count // 2, helper.make_attribute("a0", 7))
    model = _model(
        [node], [X, helper.make_tensor_value_info("s", TensorProto.FLOAT, [2])], [Y], opset=17
    )
    report = _same_verdict(model)
    assert [(d.code, d.location) for d in report.errors] == [
        ("E404", "graph 'g' › node[0] (LayerNormalization) › attribute 'a0'")
    ]
    del model.graph.node[0].attribute[count // 2]
    assert _same_verdict(model).ok


def test_subgraphs_see_outer_scope_and_report_nested_locations() -> None:
    then_g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)],
    )
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["nowhere"], ["e"])],
        "else",
        [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
    )
    cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    model = _model(
        [
            helper.make_node(
                "If", ["c"], ["y"], name="branch", then_branch=then_g, else_branch=else_g
            )
        ],
        [cond, X],
        [Y],
    )
    report = _same_verdict(model)
    assert [d.code for d in report.errors] == ["E212"]
    assert report[0].location == (
        "graph 'g' › node[0] 'branch' (If) › attribute 'else_branch' › "
        "graph 'else' › node[0] (Neg) › input[0] 'nowhere'"
    )


def test_functions() -> None:
    fn = helper.make_function(
        "local",
        "Twice",
        ["a"],
        ["b"],
        [helper.make_node("Relu", ["a"], ["b"])],
        [helper.make_opsetid("", 21)],
    )
    loop = helper.make_function(
        "local",
        "Loop1",
        ["a"],
        ["b"],
        [helper.make_node("Loop1", ["a"], ["b"], domain="local")],
        [helper.make_opsetid("local", 1)],
    )
    graph = helper.make_graph(
        [helper.make_node("Twice", ["x"], ["y"], domain="local")], "g", [X], [Y]
    )
    ok = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("local", 1)],
        functions=[fn],
    )
    assert _same_verdict(ok).ok
    cyclic = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("local", 1)],
        functions=[fn, loop],
    )
    report = _same_verdict(cyclic)
    assert [d.code for d in report.errors] == ["E603"]
    old_fn = helper.make_function(
        "local",
        "Old",
        ["a"],
        ["b"],
        [helper.make_node("Relu", ["a"], ["b"])],
        [helper.make_opsetid("", 13)],
    )
    mismatch = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("local", 1)],
        functions=[fn, old_fn],
    )
    assert [d.code for d in _same_verdict(mismatch).errors] == ["E612"]


def test_strict_adds_checks_onnx_lacks(tmp_path) -> None:
    long_raw = TensorProto(name="long", data_type=TensorProto.FLOAT, dims=[1], raw_data=b"\0" * 8)
    odd_type = TensorProto(name="odd", data_type=99, dims=[1], raw_data=b"\0")
    unused = helper.make_tensor("unused", TensorProto.FLOAT, [1], [1.0])
    ext = TensorProto(
        name="ext", data_type=TensorProto.FLOAT, dims=[4], data_location=TensorProto.EXTERNAL
    )
    for k, v in (("location", "w.bin"), ("offset", "8"), ("length", "16")):
        e = ext.external_data.add()
        e.key, e.value = k, v
    (tmp_path / "w.bin").write_bytes(b"\0" * 16)  # 8 + 16 > 16: out of bounds
    nodes = [
        helper.make_node("Relu", ["x"], ["y"]),
        helper.make_node("Neg", ["x"], ["dead"]),
        helper.make_node("Identity", ["long"], ["l2"]),
        helper.make_node("Identity", ["odd"], ["o2"]),
        helper.make_node("Identity", ["ext"], ["e2"]),
    ]
    model = _model(
        nodes,
        [X],
        [Y],
        [long_raw, odd_type, unused, ext],
        value_info=[helper.make_value_info("v", onnx.TypeProto())],
    )
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    assert onnxfast.check(path).ok  # onnx accepts all of these
    strict = onnxfast.check(path, strict=True)
    codes = sorted(d.code for d in strict)
    assert codes == ["S901", "S902", "S903", "S904", "W905", "W906", "W906", "W906", "W906"], strict
    assert not strict.ok
    assert {d.severity for d in strict if d.code.startswith("W")} == {"warning"}


def test_strict_reports_a_negative_dim_value() -> None:
    """Paddle2ONNX declares dynamic dims as -1 (onnx accepts it and its
    inference carries it on): strict mode reports each declaration, in
    subgraphs and element types too; onnx's verdict stands without it."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, -3])
    seq = helper.make_value_info(
        "s", helper.make_sequence_type_proto(helper.make_tensor_type_proto(1, [4, -1]))
    )
    inner = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, [-1, 3])],
    )
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("ReduceMax", ["r"], ["m"], keepdims=0),
        helper.make_node("Cast", ["m"], ["c"], to=TensorProto.BOOL),
        helper.make_node("If", ["c"], ["y"], then_branch=inner, else_branch=inner),
        helper.make_node("SequenceConstruct", ["x"], ["s"]),
    ]
    model = _model(nodes, [x], [y], [], value_info=[seq])
    onnx.checker.check_model(model)
    assert onnxfast.check(model).ok
    strict = onnxfast.check(model, strict=True)
    found = [d.location for d in strict if d.code == "S908"]
    assert found == [
        "graph 'g' › input[0] 'x'",
        "graph 'g' › output[0] 'y'",
        "graph 'g' › value_info[0] 's'",
        "graph 'g' › node[3] (If) › attribute 'else_branch' › graph 'then' › output[0] 't'",
        "graph 'g' › node[3] (If) › attribute 'then_branch' › graph 'then' › output[0] 't'",
    ], found
    assert next(str(d).splitlines()[0] for d in strict if d.code == "S908") == (
        "error[S908]: 'x' declares dim 0 as -1, which is no size (a dynamic dim has a "
        "dim_param or no value)"
    )


def test_checking_a_path_reads_no_weights(tmp_path) -> None:
    n = 64 << 20  # 256 MiB of float32, sparse on disk
    head = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[n]).SerializeToString()
    from _wire import key, varint

    tensor = head + key(9, 2) + varint(n * 4)
    graph_head = key(5, 2) + varint(len(tensor) + n * 4) + tensor
    node = helper.make_node("Relu", ["w"], ["y"]).SerializeToString()
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [n]).SerializeToString()
    tail = (
        key(1, 2)
        + varint(len(node))
        + node
        + key(2, 2)
        + varint(1)
        + b"g"
        + key(12, 2)
        + varint(len(out))
        + out
    )
    opset = helper.make_opsetid("", 21).SerializeToString()
    model_head = (
        key(1, 0)
        + varint(10)
        + key(8, 2)
        + varint(len(opset))
        + opset
        + key(7, 2)
        + varint(len(graph_head) + n * 4 + len(tail))
        + graph_head
    )
    path = tmp_path / "big.onnx"
    with open(path, "wb") as f:
        f.write(model_head)
        f.seek(n * 4, 1)
        f.write(tail)

    def rss() -> int:
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f)
        return int(fields["VmRSS"].split()[0]) * 1024

    onnxfast.check(SAMPLES / "tiny_cnn.onnx")  # warm up
    before = rss()
    report = onnxfast.check(path)
    assert report.ok, report
    assert rss() - before < 32 << 20
    assert np.dtype(np.float32).itemsize * n > 200 << 20


def test_full_check_of_attribute_nodes_keeps_none_of_them(tmp_path) -> None:
    """The full check of a graph whose nodes each carry an attribute (what
    exporters write) reads them from the file's bytes: its peak RSS growth
    stays far below the nodes' decoded size (~350 bytes each: 20 MiB here,
    the growth before inference read attributes from the bytes), and its
    verdict is onnx's."""
    from _adversarial import reset_peak, rss

    n = 60_000
    nodes, prev = [], "x"
    for i in range(n):
        out = f"t{i}"
        if i % 2:
            nodes.append(helper.make_node("Transpose", [prev], [out], perm=[1, 0]))
        else:
            nodes.append(helper.make_node("LeakyRelu", [prev], [out], alpha=0.1))
        prev = out
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    path = tmp_path / "attributes.onnx"
    onnx.save(model, path)
    onnx.checker.check_model(str(path), full_check=True)
    onnxfast.check_model(SAMPLES / "tiny_cnn.onnx", full=True)  # warm up
    base, _ = rss()
    reset_peak()
    onnxfast.check_model(path, full=True)
    _, peak = rss()
    assert peak - base < 14 << 20


def test_attributes_of_old_ir_versions() -> None:
    attr = AttributeProto(name="alpha", f=0.5)  # no type: IR 1 style
    node = onnx.NodeProto(op_type="LeakyRelu", input=["x"], output=["y"], attribute=[attr])
    model = _model([node], [X], [Y], ir=1, opset=1)
    del model.opset_import[:]
    report = _same_verdict(model)
    assert not report.ok  # schema type FLOAT vs UNDEFINED, as onnx


@pytest.mark.parametrize("full", [False, True])
def test_verdict_counts_findings_that_were_not_kept(full) -> None:
    """A gate must never say "valid" for an invalid model: the verdict and the
    counts cover every finding, whatever max_diagnostics keeps."""
    everything = onnxfast.check(SAMPLES / "broken.onnx", full=full)
    total = len(everything)
    assert total == everything.error_count + everything.warning_count >= 3
    for cap in range(total + 2):
        report = onnxfast.check(SAMPLES / "broken.onnx", max_diagnostics=cap, full=full)
        assert not report.ok, cap
        assert len(report) == min(cap, total)
        assert report.omitted == total - len(report)
        assert (report.error_count, report.warning_count) == (
            everything.error_count,
            everything.warning_count,
        )
        assert report.summary().startswith(f"invalid: {everything.error_count} errors")
        assert report.to_dict()["errors"] == everything.error_count
        assert [d.code for d in report] == [d.code for d in everything][:cap]


def test_an_initializer_that_is_not_an_input_up_to_ir_3_is_reported_once() -> None:
    """Up to IR version 3 an initializer must be a graph input (onnx: "W in
    initializer but not in graph input"; onnxruntime 1.0's mul_1.onnx): one
    finding at the initializer, none at each node that reads it."""
    w = numpy_helper.from_array(np.ones((3, 2), np.float32), "W")
    nodes = [
        helper.make_node("Mul", ["X", "W"], ["Y"]),
        helper.make_node("Add", ["Y", "W"], ["Z"]),
    ]
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [3, 2])
    z = helper.make_tensor_value_info("Z", TensorProto.FLOAT, [3, 2])
    model = _model(nodes, [x], [z], [w], opset=7, ir=3)
    with pytest.raises(
        onnx.checker.ValidationError, match="W in initializer but not in graph input"
    ):
        onnx.checker.check_model(model)
    report = _same_verdict(model)
    assert [(d.code, d.location) for d in report] == [("E209", "graph 'g' › initializer[0] 'W'")]
