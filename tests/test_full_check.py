"""The full check (type and shape inference): onnx's full_check verdicts on
real, generated and mutated models, every defect at once with its location,
onnx's own checker tests through our adapter, the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import onnx
import pytest
from _type_mutations import MUTATIONS, mutants
from onnx import TensorProto, helper, numpy_helper

import onnxfast

from conftest import ROOT, corpus_models, infer_expected, onnx_test_sources, wheel_models


def _onnx_full_verdict(data: bytes) -> str | None:
    try:
        onnx.checker.check_model(data, full_check=True)
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    return None


def _records() -> list[dict]:
    return [json.loads(line) for line in infer_expected().read_text().splitlines()]


def test_full_verdicts_equal_onnx_on_every_corpus_and_wheel_model() -> None:
    records = [r for r in _records() if not r.get("stripped")]
    mismatches = []
    for r in records:
        ours = onnxfast.check(r["path"], full=True)
        if (r["full_check"] is None) != ours.ok:
            mismatches.append(
                f"{r['path']}: onnx={r['full_check']!r} ours={[str(d) for d in ours.errors][:2]}"
            )
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches[:10])
    assert len(records) > 2000


def test_full_verdicts_equal_onnx_on_type_and_shape_mutations() -> None:
    checked = invalid = 0
    per_mutation: dict[str, list[int]] = {m.__name__: [0, 0] for m in MUTATIONS}
    mismatches = []
    for path in corpus_models()[::2] + wheel_models():
        base = onnx.load(path, load_external_data=False)
        if _onnx_full_verdict(base.SerializeToString()) is not None:
            continue
        for what, model in mutants(base, seed=1):
            data = model.SerializeToString()
            try:
                onnx.checker.check_model(data)
            except Exception:
                continue  # structurally invalid: the structural tests cover it
            theirs = _onnx_full_verdict(data)
            ours = onnxfast.check(data, full=True)
            checked += 1
            invalid += theirs is not None
            stats = per_mutation[what.split(":")[0]]
            stats[0] += 1
            stats[1] += theirs is not None
            if (theirs is None) != ours.ok:
                mismatches.append(
                    f"{path.parent.name} / {what}: onnx={theirs!r}\n    ours={ours.errors[:1]}"
                )
    assert not mismatches, f"{len(mismatches)} of {checked} mismatch:\n" + "\n".join(
        mismatches[:15]
    )
    assert checked > 5000
    assert invalid > 0.4 * checked
    # Every kind of mutation was tried and found something onnx refuses.
    assert all(n > 0 and bad > 0 for n, bad in per_mutation.values()), per_mutation


def _model(nodes, inputs, outputs, initializers=(), opset=21, **graph_kw):
    graph = helper.make_graph(
        nodes, "main", inputs, outputs, initializer=list(initializers), **graph_kw
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def test_every_type_and_shape_defect_is_reported_at_once() -> None:
    vi = helper.make_tensor_value_info
    w = numpy_helper.from_array(np.ones((4, 3), dtype=np.int32), "w")
    shape = numpy_helper.from_array(np.array([-1, -1], dtype=np.int64), "shape")
    nodes = [helper.make_node("Relu", ["x"], ["side"], name="side")]
    nodes += [helper.make_node("Relu", [f"r{i - 1}" if i else "x"], [f"r{i}"]) for i in range(11)]
    nodes += [
        helper.make_node("MatMul", ["r10", "w"], ["mm_out"], name="mm"),
        helper.make_node("Reshape", ["x", "shape"], ["flat"], name="reshape"),
        helper.make_node("Transpose", ["x"], ["t"], name="transpose", perm=[0, 0]),
    ]
    outputs = [
        vi("side", TensorProto.FLOAT, [2, 5]),  # the graph makes [2, 4]
        vi("mm_out", TensorProto.FLOAT, ["p", "q"]),
        vi("flat", TensorProto.FLOAT, ["f0", "f1"]),
        vi("t", TensorProto.FLOAT, ["t0", "t1"]),
    ]
    model = _model(nodes, [vi("x", TensorProto.FLOAT, [2, 4])], outputs, [w, shape])
    data = model.SerializeToString()
    assert _onnx_full_verdict(data) is not None  # onnx reports the first one only
    assert onnxfast.check(data).ok  # the structural check sees nothing
    report = onnxfast.check(data, full=True)
    found = [(d.code, d.location) for d in report]
    assert found == [
        ("E713", "graph 'main' › node[0] 'side' (Relu) › output[0] 'side'"),
        ("E702", "graph 'main' › node[12] 'mm' (MatMul) › input[1] 'w'"),
        ("E723", "graph 'main' › node[13] 'reshape' (Reshape) › input[1] 'shape'"),
        ("E722", "graph 'main' › node[14] 'transpose' (Transpose) › attribute 'perm'"),
    ]
    assert report[1].message == (
        "tensor(int32) is not allowed for T, which input[0] 'r10' binds to tensor(float)"
    )
    assert "dimension 1 is inferred as 4 but declared as 5" in report[0].message
    assert not report.ok
    assert "invalid: 4 errors" in str(report)


def test_check_model_full_raises_and_accepts_onnx_spelling() -> None:
    vi = helper.make_tensor_value_info
    bad = _model(
        [helper.make_node("Add", ["x", "y"], ["z"])],
        [vi("x", TensorProto.FLOAT, [2]), vi("y", TensorProto.FLOAT, [3])],
        [vi("z", TensorProto.FLOAT, ["n"])],
    )
    onnxfast.check_model(bad)  # structurally valid
    with pytest.raises(onnxfast.CheckError) as info:
        onnxfast.check_model(bad, full=True)
    assert info.value.report.errors[0].code == "E720"
    with pytest.raises(onnxfast.CheckError):
        onnxfast.check_model(bad, full_check=True)


def test_onnx_checker_tests_pass_through_the_adapter() -> None:
    """onnx's checker tests with check_model answered by onnxfast: the ones
    that run the full check, then every one that calls check_model."""
    sources = onnx_test_sources()
    if sources is None:
        pytest.skip("PyPI is not reachable: cannot fetch onnx's sdist for its checker tests")
    script = ROOT / "scripts" / "onnx_checker_tests.py"
    for extra, least in (([], 10), (["--all"], 30)):
        result = subprocess.run(
            [sys.executable, str(script), str(sources / "checker_test.py"), "-q", *extra],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
        selected = int(result.stdout.split(" tests of checker_test.py selected")[0].split()[-1])
        assert selected >= least, result.stdout[-2000:]
        assert f"{selected} passed" in result.stdout


def test_cli_full_flag(tmp_path) -> None:
    vi = helper.make_tensor_value_info
    bad = _model(
        [helper.make_node("MatMul", ["x", "y"], ["z"])],
        [vi("x", TensorProto.FLOAT, [2, 3]), vi("y", TensorProto.FLOAT, [4, 5])],
        [vi("z", TensorProto.FLOAT, ["m", "n"])],
    )
    path = tmp_path / "bad.onnx"
    onnx.save(bad, path)
    run = [sys.executable, "-m", "onnxfast", "check"]
    plain = subprocess.run([*run, str(path)], capture_output=True, text=True)
    assert plain.returncode == 0, plain.stdout
    full = subprocess.run([*run, "--full", str(path)], capture_output=True, text=True)
    assert full.returncode == 1, full.stdout
    assert "error[E720]" in full.stdout
    assert "inner dimensions 3 and 4 differ" in full.stdout


def test_unknown_custom_operator_keeps_onnx_verdict_and_warns() -> None:
    """After an operator onnx cannot infer, onnx stops reporting inference
    errors in that graph: the model stays valid, and the defect after it is
    a warning (W791) naming the code it would have had."""
    vi = helper.make_tensor_value_info
    nodes = [
        helper.make_node("Mystery", ["x"], ["m"], domain="com.example", name="mystery"),
        helper.make_node("Relu", ["m"], ["r"], name="after_mystery"),
        helper.make_node("MatMul", ["x", "y"], ["mm"], name="mm"),
    ]
    graph = helper.make_graph(
        nodes,
        "main",
        [vi("x", TensorProto.FLOAT, [2, 3]), vi("y", TensorProto.FLOAT, [4, 5])],
        [vi("r", TensorProto.FLOAT, ["a", "b"]), vi("mm", TensorProto.FLOAT, ["p", "q"])],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.example", 1)],
    )
    data = model.SerializeToString()
    assert _onnx_full_verdict(data) is None
    report = onnxfast.check(data, full=True)
    assert report.ok
    found = [(d.code, d.severity, d.location) for d in report]
    assert found == [
        ("W790", "warning", "graph 'main' › node[0] 'mystery' (Mystery)"),
        ("W791", "warning", "graph 'main' › node[2] 'mm' (MatMul)"),
    ]
    assert "[E720;" in report[1].message
    # Without the unknown operator, the same MatMul is an error.
    del model.graph.node[:2]
    del model.graph.output[0]
    report = onnxfast.check(model, full=True)
    assert [d.code for d in report] == ["E720"]
    assert _onnx_full_verdict(model.SerializeToString()) is not None


@pytest.mark.parametrize("unknown_first", [True, False])
def test_a_failed_function_body_after_an_unknown_operator_fails_its_node_quietly(
    unknown_first,
) -> None:
    """A function body that fails (MeanVarianceNormalization of bool: its
    ReduceMean refuses the type) fails its node in onnx before the node's
    own type check; after an unknown operator that failure is hidden, and
    so is the type check it skipped. Found by scripts/diff_random_models.py:
    onnxfast ran the node's type check after the body and reported E701."""
    vi = helper.make_tensor_value_info
    nodes = [helper.make_node("MeanVarianceNormalization", ["x"], ["y"], name="mvn", axes=[0])]
    if unknown_first:
        nodes.insert(0, helper.make_node("Mystery", ["x"], ["m"], domain="com.example"))
    graph = helper.make_graph(
        nodes, "g", [vi("x", TensorProto.BOOL, [2, 3])], [vi("y", TensorProto.BOOL, [2, 3])]
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)]
    )
    data = model.SerializeToString()
    report = onnxfast.check(data, full=True)
    if not unknown_first:
        assert _onnx_full_verdict(data) is not None
        assert not report.ok
        assert {d.code for d in report.errors} == {"E701"}
        return
    assert _onnx_full_verdict(data) is None
    assert report.ok, list(report)
    hidden = [d for d in report if d.code == "W791"]
    assert hidden
    assert all("› function 'MeanVarianceNormalization' ›" in d.location for d in hidden)
    assert all("[E701;" in d.message for d in hidden)


@pytest.mark.parametrize("hidden_by", ["Mystery", None])
def test_defects_inside_a_subgraph_after_an_unknown_operator_are_hidden_as_onnx_hides_them(
    hidden_by,
) -> None:
    """A subgraph's failure reaches onnx as an inference error of its node
    (If), which an unknown operator earlier in the node's graph hides: even a
    defect onnx raises at once inside the subgraph (a type its operator does
    not allow). onnxfast warns (W791) where onnx is silent; without the
    unknown operator both refuse the model. (Found by
    scripts/diff_random_models.py.)"""
    vi = helper.make_tensor_value_info
    then_branch = helper.make_graph(
        [helper.make_node("Add", ["s", "s"], ["o"], name="string_add")],
        "then",
        [],
        [vi("o", TensorProto.STRING, None)],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Identity", ["s"], ["o"])],
        "else",
        [],
        [vi("o", TensorProto.STRING, None)],
    )
    nodes = [
        helper.make_node(
            "If", ["c"], ["y"], name="if", then_branch=then_branch, else_branch=else_branch
        )
    ]
    if hidden_by:
        nodes.insert(0, helper.make_node(hidden_by, ["c"], ["m"], domain="com.example"))
    graph = helper.make_graph(
        nodes,
        "main",
        [vi("c", TensorProto.BOOL, []), vi("s", TensorProto.STRING, [2])],
        [vi("y", TensorProto.STRING, [2])],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.example", 1)],
    )
    data = model.SerializeToString()
    infer = onnx.shape_inference.infer_shapes
    if not hidden_by:
        with pytest.raises(onnx.shape_inference.InferenceError, match="unsupported type"):
            infer(model, check_type=True, strict_mode=True)
        with pytest.raises(onnxfast.InferenceError, match="E701"):
            onnxfast.infer_shapes(data, strict=True)
        assert _onnx_full_verdict(data) is not None
        assert [d.code for d in onnxfast.check(data, full=True)] == ["E701"]
        return
    theirs = infer(model, check_type=True, strict_mode=True)
    ours = onnxfast.infer_shapes(data, strict=True).to_onnx()
    assert ours.graph.output == theirs.graph.output
    assert _onnx_full_verdict(data) is None
    report = onnxfast.check(data, full=True)
    assert report.ok
    hidden = [d for d in report if d.code == "W791"]
    assert len(hidden) == 1, list(report)
    assert "[E701;" in hidden[0].message
    assert "graph 'then' › node[0] 'string_add' (Add)" in hidden[0].location
