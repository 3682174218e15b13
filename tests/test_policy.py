"""Policies: every key refuses a violating model and accepts a compliant one,
in the main graph, in subgraphs and in functions; the reference totals
(nodes, parameters, external bytes) are computed from the model as onnx reads
it; policy files are refused with the key and line."""

from __future__ import annotations

import pickle
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxfast

from conftest import ROOT, SAMPLES

# ---------------------------------------------------------------- the model


def _rich_model(ir_version: int = 9) -> onnx.ModelProto:
    """A valid model with a bit of everything: an If with subgraphs (Abs in
    one branch, a Constant in the other), a call of a model-local function
    whose body holds an ai.onnx.ml operator, a Constant, metadata."""
    then_g = helper.make_graph(
        [helper.make_node("Abs", ["r"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])],
    )
    else_g = helper.make_graph(
        [
            helper.make_node(
                "Constant",
                [],
                ["k"],
                value=numpy_helper.from_array(np.ones(2, np.float32), "k"),
            ),
            helper.make_node("Add", ["r", "k"], ["e"]),
        ],
        "else",
        [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])],
    )
    fn = helper.make_function(
        "com.example",
        "MyFn",
        ["x"],
        ["y"],
        [
            helper.make_node("Sqrt", ["x"], ["s"]),
            helper.make_node("Normalizer", ["s"], ["y"], domain="ai.onnx.ml"),
        ],
        [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["X"], ["r"]),
            helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
            helper.make_node("MyFn", ["y"], ["z"], domain="com.example"),
            helper.make_node(
                "Constant",
                [],
                ["c"],
                value=numpy_helper.from_array(np.arange(3, dtype=np.float32)[:2], "c"),
            ),
            helper.make_node("Add", ["z", "c"], ["out"]),
        ],
        "main",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2])],
        [numpy_helper.from_array(np.array(True), "cond")],
    )
    model = helper.make_model(
        graph,
        opset_imports=[
            helper.make_opsetid("", 17),
            helper.make_opsetid("com.example", 1),
            helper.make_opsetid("ai.onnx.ml", 3),
        ],
        functions=[fn],
        ir_version=ir_version,
    )
    helper.set_model_props(model, {"license": "MIT"})
    return model


@pytest.fixture(scope="module")
def rich(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model = _rich_model()
    onnx.checker.check_model(model)  # valid: every finding below is the policy's
    path = tmp_path_factory.mktemp("policy") / "rich.onnx"
    onnx.save(model, path)
    return path


# ------------------------------------------------- references, from onnx


def _graphs(model: onnx.ModelProto) -> Iterator[tuple[str, Any]]:
    """(where, nodes holder) for the main graph, every subgraph and every
    function body, nested ones included."""
    stack: list[tuple[str, Any]] = [("graph", model.graph)]
    stack += [(f"function {f.name}", f) for f in model.functions]
    while stack:
        where, g = stack.pop()
        yield where, g
        for n in g.node:
            for a in n.attribute:
                subs = ([a.g] if a.HasField("g") else []) + list(a.graphs)
                stack += [(f"{where}/{n.op_type}.{a.name}", s) for s in subs]


def _nodes(model: onnx.ModelProto) -> Iterator[onnx.NodeProto]:
    for _, g in _graphs(model):
        yield from g.node


def _elements(dims: Any) -> int:
    return int(np.prod(list(dims), dtype=np.int64)) if len(dims) else 1


def _weights(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    for _, g in _graphs(model):
        yield from getattr(g, "initializer", ())
        for s in getattr(g, "sparse_initializer", ()):
            yield s.values
        for n in g.node:
            for a in n.attribute:
                if a.HasField("t"):
                    yield a.t
                yield from a.tensors
                if a.HasField("sparse_tensor"):
                    yield a.sparse_tensor.values
                for s in a.sparse_tensors:
                    yield s.values


def ref_nodes(model: onnx.ModelProto) -> int:
    return sum(1 for _ in _nodes(model))


def ref_parameters(model: onnx.ModelProto) -> int:
    return sum(_elements(t.dims) for t in _weights(model))


def ref_external_bytes(model: onnx.ModelProto) -> int:
    total = 0
    for t in _weights(model):
        if t.data_location == TensorProto.EXTERNAL:
            itemsize = helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
            total += _elements(t.dims) * itemsize
    return total


def ref_depth(model: onnx.ModelProto) -> int:
    return max(where.count("/") for where, _ in _graphs(model))


def codes(report: onnxfast.Report) -> list[str]:
    return [d.code for d in report]


def policy_findings(report: onnxfast.Report) -> list[onnxfast.Diagnostic]:
    return [d for d in report if d.code.startswith("P")]


# ----------------------------------------------------------- every key

#: key, a value the rich model breaks, a value it meets, the code, where.
CASES: list[tuple[str, Any, Any, str, str]] = [
    # Domain and operator rules, found inside a function body and a subgraph.
    (
        "allowed_domains",
        ["ai.onnx", "com.example"],
        ["", "com.example", "ai.onnx.ml"],
        "P001",
        "function 'com.example::MyFn' › node[1] (Normalizer)",
    ),
    (
        "denied_domains",
        ["ai.onnx.ml"],
        ["com.other"],
        "P002",
        "function 'com.example::MyFn' › node[1] (Normalizer)",
    ),
    (
        "allowed_ops",
        ["Relu", "If", "Add", "Constant", "com.example::MyFn", "Sqrt", "ai.onnx.ml::*"],
        ["Relu", "If", "Add", "Abs", "Constant", "com.example::MyFn", "Sqrt", "ai.onnx.ml::*"],
        "P003",
        "graph 'main' › node[1] (If) › attribute 'then_branch' › graph 'then' › node[0] (Abs)",
    ),
    ("denied_ops", ["ai.onnx::Abs"], ["Conv", "ai.onnx.ml::Scaler"], "P004", "graph 'then'"),
    ("denied_ops", ["ai.onnx.ml::*"], ["com.other::*"], "P004", "node[1] (Normalizer)"),
    ("denied_ops", ["Sqrt"], ["com.example::Sqrt"], "P004", "node[0] (Sqrt)"),
    # Opset imports: the model's and the function's.
    ("min_opset", 18, 17, "P005", "function 'com.example::MyFn' › opset_import[0]"),
    ("max_opset", {"ai.onnx": 16}, {"": 17}, "P006", "model › opset_import[0]"),
    ("max_opset", {"ai.onnx.ml": 2}, {"ai.onnx.ml": 3}, "P006", "opset_import[2] 'ai.onnx.ml'"),
    ("min_opset", {"com.example": 2}, {"com.example": 1}, "P005", "opset_import[1]"),
    ("min_ir_version", 10, 9, "P007", "model › ir_version"),
    ("max_ir_version", 8, 9, "P008", "model › ir_version"),
    ("max_subgraph_depth", 0, 1, "P012", "node[1] (If) › attribute 'then_branch'"),
    ("allow_functions", False, True, "P015", "function 'com.example::MyFn'"),
    ("required_metadata", ["license", "author"], ["license"], "P016", "model › metadata_props"),
]


@pytest.mark.parametrize(("key", "bad", "good", "code", "where"), CASES)
def test_each_key_refuses_and_accepts(
    rich: Path, key: str, bad: Any, good: Any, code: str, where: str
) -> None:
    baseline = onnxfast.check(rich)
    assert baseline.ok, str(baseline)

    refused = onnxfast.check(rich, policy={key: bad})
    assert not refused.ok
    found = policy_findings(refused)
    assert found, str(refused)
    assert {d.code for d in found} == {code}, str(refused)
    assert any(where in d.location for d in found), str(refused)
    assert all(d.severity == "error" for d in found)
    # The policy adds findings; it takes none of the checker's away.
    assert [d for d in refused if not d.code.startswith("P")] == list(baseline)

    accepted = onnxfast.check(rich, policy={key: good})
    assert accepted.ok, str(accepted)
    assert list(accepted) == list(baseline)


@pytest.mark.parametrize(
    ("key", "reference", "code"),
    [("max_nodes", ref_nodes, "P011"), ("max_parameters", ref_parameters, "P010")],
)
def test_totals_match_onnx(rich: Path, key: str, reference: Any, code: str) -> None:
    expected = reference(onnx.load(rich))
    assert expected > 0
    assert onnxfast.check(rich, policy={key: expected}).ok
    refused = onnxfast.check(rich, policy={key: expected - 1})
    assert codes(refused) == [code]
    assert f" {expected} " in refused[0].message
    assert refused[0].location == "model"


def test_file_size(rich: Path) -> None:
    size = rich.stat().st_size
    assert onnxfast.check(rich, policy={"max_file_bytes": size}).ok
    refused = onnxfast.check(rich, policy={"max_file_bytes": size - 1})
    assert codes(refused) == ["P009"]
    # From bytes, the size of the bytes.
    assert codes(onnxfast.check(rich.read_bytes(), policy={"max_file_bytes": 10})) == ["P009"]


def test_a_stream_is_read_no_further_than_max_file_bytes(rich: Path, tmp_path: Path) -> None:
    """A stream (a FIFO's path, a file object that is read) is held in
    memory: the policy's size bounds the read. Past it: P009 alone, the
    stream read up to the limit and no further; within it: the file's
    report."""
    import io
    import os
    import threading

    data = rich.read_bytes()
    size = len(data)
    stream = io.BytesIO(data)
    refused = onnxfast.check(stream, policy={"max_file_bytes": size - 1})
    assert codes(refused) == ["P009"]
    assert "stream is more than" in refused[0].message
    assert refused[0].location == "model"
    assert stream.tell() == size  # the limit and one byte more
    assert onnxfast.check(io.BytesIO(data), policy={"max_file_bytes": size}).ok
    if not hasattr(os, "mkfifo"):
        return
    fifo = tmp_path / "m.onnx"
    os.mkfifo(fifo)
    sent: list[int] = []

    def feed(total: int) -> None:
        """Writes zeros until `total` bytes or a broken pipe."""
        n = 0
        try:
            with open(fifo, "wb") as w:
                while n < total:
                    n += w.write(bytes(1 << 20))
        except BrokenPipeError:
            pass
        sent.append(n)

    writer = threading.Thread(target=feed, args=(256 << 20,))
    writer.start()
    refused = onnxfast.check(fifo, policy={"max_file_bytes": 1 << 20})
    writer.join()
    assert codes(refused) == ["P009"]
    assert sent[0] < 8 << 20  # stopped near the limit, not at 256 MiB
    writer = threading.Thread(target=lambda: fifo.write_bytes(data))
    writer.start()
    within = onnxfast.check(fifo, policy={"max_file_bytes": size})
    writer.join()
    assert within == onnxfast.check(rich, policy={"max_file_bytes": size})


def test_every_rule_at_once_and_as_a_file(rich: Path, tmp_path: Path) -> None:
    model = onnx.load(rich)
    policy = tmp_path / "policy.toml"
    policy.write_text(
        f"""
[policy]
allowed_domains = ["ai.onnx", "com.example", "ai.onnx.ml"]
denied_domains = ["com.microsoft"]
allowed_ops = ["Relu", "If", "Abs", "Add", "Constant", "com.example::MyFn", "Sqrt",
               "ai.onnx.ml::Normalizer"]
denied_ops = ["Loop", "com.microsoft::*"]
min_ir_version = 7
max_ir_version = 10
max_file_bytes = {rich.stat().st_size}
max_parameters = {ref_parameters(model)}
max_nodes = {ref_nodes(model)}
max_subgraph_depth = {ref_depth(model)}
allow_external_data = false
max_external_bytes = 0
allow_functions = true
required_metadata = ["license"]

[policy.min_opset]
"ai.onnx" = 13

[policy.max_opset]
"ai.onnx" = 21
"ai.onnx.ml" = 5
"""
    )
    report = onnxfast.check(rich, policy=policy)
    assert report.ok, str(report)
    assert not report.diagnostics
    assert onnxfast.check(rich, policy=onnxfast.Policy.load(policy)).ok
    onnxfast.check_model(rich, policy=policy)


def test_nested_subgraph_depth(tmp_path: Path) -> None:
    """Depth counts graphs inside graphs, also inside a function body; only
    the first level over the limit is reported."""
    inner = helper.make_graph(
        [helper.make_node("Neg", ["a"], ["i"])],
        "inner",
        [],
        [helper.make_tensor_value_info("i", TensorProto.FLOAT, [2])],
    )
    middle = helper.make_graph(
        [helper.make_node("If", ["cond"], ["m"], then_branch=inner, else_branch=inner)],
        "middle",
        [],
        [helper.make_tensor_value_info("m", TensorProto.FLOAT, [2])],
    )
    fn = helper.make_function(
        "com.example",
        "Deep",
        ["a", "cond"],
        ["o"],
        [helper.make_node("If", ["cond"], ["o"], then_branch=middle, else_branch=middle)],
        [helper.make_opsetid("", 17)],
    )
    graph = helper.make_graph(
        [helper.make_node("Deep", ["a", "cond"], ["o"], domain="com.example")],
        "main",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("o", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)],
        functions=[fn],
    )
    onnx.checker.check_model(model)
    depth = ref_depth(model)
    assert depth == 2
    path = tmp_path / "deep.onnx"
    onnx.save(model, path)
    assert onnxfast.check(path, policy={"max_subgraph_depth": depth}).ok
    refused = onnxfast.check(path, policy={"max_subgraph_depth": depth - 1})
    # then_branch and else_branch of `middle`, which is both branches of the outer If
    assert codes(refused) == ["P012"] * 4
    assert all("graph 'middle' › node[0] (If)" in d.location for d in refused)
    assert all(d.location.startswith("function 'com.example::Deep'") for d in refused)
    assert len(onnxfast.check(path, policy={"max_subgraph_depth": 0})) == 2


def test_external_data(tmp_path: Path) -> None:
    weights = np.arange(1000, dtype=np.float32).reshape(10, 100)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 10])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 100])],
        [numpy_helper.from_array(weights, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "ext.onnx"
    onnx.save(model, path, save_as_external_data=True, size_threshold=0, location="w.bin")
    expected = ref_external_bytes(onnx.load(path, load_external_data=False))
    assert expected == weights.nbytes

    assert onnxfast.check(path, policy={"allow_external_data": True}).ok
    refused = onnxfast.check(path, policy={"allow_external_data": False})
    assert codes(refused) == ["P013"]
    assert refused[0].location == "graph 'g' › initializer[0] 'w'"
    assert "'w'" in refused[0].message

    assert onnxfast.check(path, policy={"max_external_bytes": expected}).ok
    refused = onnxfast.check(path, policy={"max_external_bytes": expected - 1})
    assert codes(refused) == ["P014"]
    assert f" {expected} " in refused[0].message
    # A model without external data meets both.
    assert onnxfast.check(SAMPLES / "tiny_cnn.onnx", policy={"allow_external_data": False}).ok


def test_functions_of_models_onnx_does_not_check(tmp_path: Path) -> None:
    """onnx ignores the functions of IR < 8 models; the policy reads them."""
    model = _rich_model(ir_version=7)
    path = tmp_path / "ir7.onnx"
    onnx.save(model, path)
    baseline = onnxfast.check(path)
    refused = onnxfast.check(path, policy={"denied_ops": ["Sqrt"]})
    assert next(d for d in refused if d.code.startswith("P")).location.startswith(
        "function 'com.example::MyFn' › node[0] (Sqrt)"
    )
    assert [d for d in refused if not d.code.startswith("P")] == list(baseline)
    assert codes(onnxfast.check(path, policy={"allow_functions": False})).count("P015") == 1


def _chain(n: int, op: str, with_if: bool) -> onnx.ModelProto:
    nodes = [helper.make_node(op, [f"v{i}"], [f"v{i + 1}"]) for i in range(n)]
    if with_if:
        branch = helper.make_graph(
            [helper.make_node("Neg", [f"v{n}"], ["b"])],
            "branch",
            [],
            [helper.make_tensor_value_info("b", TensorProto.FLOAT, [4])],
        )
        nodes.append(
            helper.make_node("If", ["cond"], [f"v{n + 1}"], then_branch=branch, else_branch=branch)
        )
    last = f"v{n + 1}" if with_if else f"v{n}"
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info(last, TensorProto.FLOAT, [4])],
        [numpy_helper.from_array(np.array(True), "cond")]
        + [numpy_helper.from_array(np.ones(3, np.float32), f"w{i}") for i in range(n)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("with_if", [False, True])
def test_large_graphs_stream_and_count_once(tmp_path: Path, with_if: bool) -> None:
    """A large graph loaded from a path is checked in parallel runs (and, with
    a subgraph, checked again exactly after the fast path gives up): each node
    and weight is counted once, each violation reported once, in order."""
    model = _chain(5000, "Relu", with_if)
    path = tmp_path / "chain.onnx"
    onnx.save(model, path)
    nodes, params = ref_nodes(model), ref_parameters(model)
    for source in (path, onnxfast.load(path), model):
        report = onnxfast.check(source, policy={"max_nodes": nodes, "max_parameters": params})
        assert report.ok, str(report)
        report = onnxfast.check(
            source, policy={"max_nodes": nodes - 1, "max_parameters": params - 1}
        )
        assert codes(report) == ["P011", "P010"]
        assert f" {nodes} " in report[0].message
        assert f" {params} " in report[1].message
        report = onnxfast.check(source, policy={"denied_ops": ["Relu"]})
        assert report.error_count == 5000
        indices = [int(re.search(r"node\[(\d+)\]", d.location).group(1)) for d in report]
        assert indices == list(range(5000))
        report = onnxfast.check(source, policy={"denied_ops": ["Relu"]}, max_diagnostics=3)
        assert report.error_count == 5000
        assert report.omitted == 4997


def test_policy_with_full_and_strict(rich: Path) -> None:
    for options in ({"full": True}, {"strict": True}):
        baseline = onnxfast.check(rich, **options)
        refused = onnxfast.check(rich, policy={"denied_ops": ["Abs"]}, **options)
        assert codes(refused).count("P004") == 1
        assert [d for d in refused if d.code != "P004"] == list(baseline)


# ------------------------------------------------------------ the object


def test_policy_object() -> None:
    p = onnxfast.Policy(
        allowed_domains=["ai.onnx", "com.example"],
        denied_ops=["ai.onnx::Loop", "com.x::*"],
        max_opset=21,
        min_opset={"ai.onnx.ml": 2},
    )
    assert p.allowed_domains == ("", "com.example")
    assert p.denied_ops == ("Loop", "com.x::*")
    assert p.max_opset == {"": 21}
    assert p.min_opset == {"ai.onnx.ml": 2}
    assert p.allow_functions is True
    assert p.max_nodes is None
    assert pickle.loads(pickle.dumps(p)) == p
    assert onnxfast.Policy(**p.to_dict()) == p
    assert "Policy(" in repr(p)
    with pytest.raises(AttributeError):
        _ = p.no_such_key


@pytest.mark.parametrize(
    ("rules", "key", "words"),
    [
        ({"max_opsett": 3}, "max_opsett", "did you mean 'max_opset'"),
        ({"max_nodes": "10"}, "max_nodes", "must be an integer"),
        ({"max_nodes": True}, "max_nodes", "must be an integer"),
        ({"max_nodes": -1}, "max_nodes", "between 0"),
        ({"min_ir_version": 0}, "min_ir_version", "between 1"),
        ({"allowed_ops": "Conv"}, "allowed_ops", "list of strings"),
        ({"allowed_ops": ["com.x::"]}, "allowed_ops", "names no operator"),
        ({"denied_domains": [1]}, "denied_domains", "not a string"),
        ({"allow_functions": 1}, "allow_functions", "true or false"),
        ({"max_opset": "21"}, "max_opset", "integer"),
        ({"max_opset": {"ai.onnx": 0}}, "max_opset", "≥ 1"),
        ({"min_ir_version": 9, "max_ir_version": 8}, "max_ir_version", "below"),
        ({"min_opset": 18, "max_opset": 17}, "max_opset", "below min_opset"),
    ],
)
def test_bad_rules_are_refused(rules: dict[str, Any], key: str, words: str) -> None:
    with pytest.raises(onnxfast.PolicyError) as e:
        onnxfast.Policy(**rules)
    assert e.value.key.split(".")[0] == key
    assert words in str(e.value)
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize(
    ("text", "key", "line"),
    [
        ("[policy]\nmax_nodes = 3\nmax_nodez = 4\n", "max_nodez", 3),
        ("# rules\n[policy]\n\nallowed_ops = 'Conv'\n", "allowed_ops", 4),
        ("[policy]\nmax_nodes = 3\n[policy.max_opset]\n'ai.onnx' = 0\n", "max_opset.ai.onnx", 4),
        ("[policy]\nmax_opset = { 'com.x' = 'new' }\n", "max_opset.com.x", 2),
        ("[policy]\nmax_nodes = 3\n\n[other]\nx = 1\n", "other", 4),
        ("stray = 1\n[policy]\n", "stray", 1),
        ("[policy]\nmax_nodes = [\n", None, 3),
    ],
)
def test_policy_files_name_key_and_line(tmp_path: Path, text: str, key: str, line: int) -> None:
    path = tmp_path / "p.toml"
    path.write_text(text)
    with pytest.raises(onnxfast.PolicyError) as e:
        onnxfast.Policy.load(path)
    assert e.value.key == key
    assert e.value.line == line
    assert e.value.path == str(path)
    assert f"{path}:{line}" in str(e.value) or f"line {line}" in str(e.value)


def test_a_file_without_policy_table(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text("")
    with pytest.raises(onnxfast.PolicyError, match=r"no \[policy\] table"):
        onnxfast.Policy.load(path)
    with pytest.raises(TypeError):
        onnxfast.check(SAMPLES / "tiny_cnn.onnx", policy=42)


def test_readme_example_is_a_working_policy() -> None:
    """The README's complete example parses, and the sample model meets it."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", readme, re.S)
    assert blocks, "README has no TOML example"
    policy = onnxfast.Policy.from_toml(blocks[0], source="README.md")
    assert set(policy.to_dict()) == set(onnxfast._policy.KEYS)
    report = onnxfast.check(SAMPLES / "tiny_cnn.onnx", policy=policy)
    assert report.ok, str(report)
