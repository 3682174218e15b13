"""infer_shapes(data_prop=True) against onnxruntime running the model: the
node corpus's models with each small integer constant (an initializer or a
Constant node's value) in turn changed (plus one, negated, zeroed, one value
more, one fewer), their declared output and value_info types removed, run by
onnxruntime on the corpus's own inputs.

- every static dim onnxfast gives a graph output is the dim of the array
  onnxruntime returns (data propagation follows values beyond onnx's steps:
  this is where those values are checked against a runtime, not against
  onnx, which leaves such dims unknown);
- no model that onnxfast's strict inference refuses with data_prop runs in
  onnxruntime: what the followed values prove inconsistent is a model the
  runtime refuses too (or aborts on).

onnxruntime runs in subprocesses (tests/_ort_outputs.py): one of these
variants aborts onnxruntime 1.32 (an assertion in std::clamp), and onnxfast
refuses it."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
from _ort_outputs import WORKER, run_groups
from onnx import numpy_helper

import onnxfast

from conftest import corpus_models


def _changed(values: np.ndarray) -> Iterator[tuple[str, np.ndarray]]:
    flat = values.reshape(-1)
    yield "plus one", (flat + 1).reshape(values.shape)
    yield "negated", (-flat).reshape(values.shape)
    yield "zeroed", np.zeros_like(values)
    if values.ndim <= 1:
        last = flat[-1:] if len(flat) else np.zeros(1, values.dtype)
        yield "one more", np.concatenate([flat, last])
        if len(flat):
            yield "one fewer", flat[:-1]


def _small_ints(model: onnx.ModelProto) -> Iterator[tuple[str, onnx.TensorProto]]:
    """(where, tensor) of each int32/int64 constant of at most 16 values."""
    for i, t in enumerate(model.graph.initializer):
        yield f"initializer {i}", t
    for i, node in enumerate(model.graph.node):
        if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
            yield f"node {i}", node.attribute[0].t


def _corpus_path(name: str) -> Path:
    return next(p for p in corpus_models() if p.parent.name == name)


def _feeds(path: Path, model: onnx.ModelProto | None = None) -> dict | None:
    """The corpus's first inputs for `model` (the one at `path` when not
    given), by graph input name."""
    if model is None:
        model = onnx.load(path)
    given = {t.name for t in model.graph.initializer}
    feeds = {}
    names = [v.name for v in model.graph.input if v.name not in given]
    for i, name in enumerate(names):
        pb = path.parent / "test_data_set_0" / f"input_{i}.pb"
        if not pb.exists():
            return None
        try:
            feeds[name] = numpy_helper.to_array(onnx.load_tensor(str(pb)))
        except (ValueError, TypeError):
            return None  # a sequence or optional input
    return feeds


def _variants() -> Iterator[tuple[str, str, bytes, dict]]:
    """(model name, label, untyped variant bytes, feeds)."""
    for path in corpus_models():
        model = onnx.load(path)
        chosen = [
            (k, where, tensor)
            for k, (where, tensor) in enumerate(_small_ints(model))
            if tensor.data_type in (6, 7) and np.prod(tensor.dims) <= 16
        ]
        feeds = _feeds(path, model) if chosen else None
        if feeds is None:
            continue
        for k, where, tensor in chosen:
            values = numpy_helper.to_array(tensor)
            for how, new in _changed(values):
                variant = onnx.ModelProto()
                variant.CopyFrom(model)
                target = list(_small_ints(variant))[k][1]
                target.CopyFrom(numpy_helper.from_array(new.astype(values.dtype), tensor.name))
                for out in variant.graph.output:
                    out.type.Clear()
                del variant.graph.value_info[:]
                label = f"{path.parent.name} {where} {how}"
                yield path.parent.name, label, variant.SerializeToString(), feeds


def _dims(vi: onnx.ValueInfoProto) -> list | None:
    tensor = vi.type.tensor_type
    if not tensor.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]


def test_data_prop_dims_are_the_runtimes_and_its_refusals_do_not_run() -> None:
    groups: dict[str, list] = {}
    ours: dict[str, dict] = {}
    theirs: dict[str, dict] = {}
    refused: dict[str, str] = {}
    for name, label, data, feeds in _variants():
        inferred = onnxfast.infer_shapes(data, data_prop=True).to_onnx()
        ours[label] = {o.name: _dims(o) for o in inferred.graph.output}
        try:
            onnxfast.infer_shapes(data, data_prop=True, strict=True)
        except onnxfast.InferenceError as e:
            refused[label] = str(e.report.errors[0])
        reference = onnx.shape_inference.infer_shapes(onnx.load_from_string(data), data_prop=True)
        theirs[label] = {o.name: _dims(o) for o in reference.graph.output}
        groups.setdefault(name, []).append((label, data, feeds))

    actual, aborted = run_groups(groups)
    contradicted, ran_refused, ran = [], [], 0
    static = {"onnxfast": 0, "onnx": 0}
    for label, shapes in actual.items():
        if shapes is None:
            continue
        ran += 1
        if label in refused:
            ran_refused.append(f"{label}: {refused[label]}")
        for lib, inferred in (("onnxfast", ours[label]), ("onnx", theirs[label])):
            for out, dims in inferred.items():
                if dims is None or out not in shapes:
                    continue
                static[lib] += sum(d is not None for d in dims)
                real = shapes[out]
                if len(dims) != len(real) or any(d not in (None, r) for d, r in zip(dims, real)):
                    contradicted.append(f"{label}: {lib} infers {out!r} {dims}, runs {real}")
    assert not contradicted, f"{len(contradicted)}:\n" + "\n".join(contradicted[:15])
    assert not ran_refused, f"{len(ran_refused)}:\n" + "\n".join(ran_refused[:15])
    # Every variant that aborted onnxruntime is one onnxfast refuses.
    assert all(label in refused for label in aborted), aborted
    assert ran >= 2000, ran
    assert len(refused) >= 2000, len(refused)
    # On the runs, more static output dims than onnx's data propagation gives.
    assert static["onnxfast"] > static["onnx"] >= 1000, static


def _aborting_variant() -> bytes:
    """The variant that aborts onnxruntime 1.32: a rotary embedding's
    expansion with its rotary dim's constant (node 5) negated, as declared."""
    path = _corpus_path("test_rotary_embedding_with_interleaved_rotary_dim_expanded")
    model = onnx.load(path)
    value = model.graph.node[5].attribute[0].t
    assert model.graph.node[5].op_type == "Constant"
    value.CopyFrom(numpy_helper.from_array(-numpy_helper.to_array(value), value.name))
    return model.SerializeToString()


def test_check_with_data_prop_refuses_a_model_that_aborts_onnxruntime(tmp_path: Path) -> None:
    """onnx's full check accepts it and so does onnxfast's; with data_prop
    the computed rotary dim (negative) gives a cos/sin cache of width 0 that
    cannot broadcast with the rotated half: E720. onnxruntime does not run
    it (1.32 aborts in std::clamp; a later one may refuse it)."""
    data = _aborting_variant()
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    assert onnxfast.check(data, full=True).ok
    report = onnxfast.check(data, data_prop=True)
    assert not report.ok
    assert {d.code for d in report.errors} == {"E720"}, report
    assert "do not broadcast" in report.errors[0].message
    items = tmp_path / "items.pkl"
    with open(items, "wb") as f:
        feeds = _feeds(_corpus_path("test_rotary_embedding_with_interleaved_rotary_dim_expanded"))
        pickle.dump([("aborting", data, feeds)], f)
    done = subprocess.run(
        [sys.executable, str(WORKER), str(items)], capture_output=True, text=True, check=False
    )
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode != 0 or results[-1]["shapes"] is None, results
    model_file = tmp_path / "m.onnx"
    model_file.write_bytes(data)
    cli = [sys.executable, "-m", "onnxfast", "check"]
    assert subprocess.run([*cli, str(model_file)], capture_output=True, check=False).returncode == 0
    refused = subprocess.run(
        [*cli, "--data-prop", str(model_file)], capture_output=True, text=True, check=False
    )
    assert refused.returncode == 1
    assert "E720" in refused.stdout


def test_check_with_data_prop_accepts_every_model_onnx_finds_valid() -> None:
    """Every corpus model onnx's full check accepts is valid for onnxfast's
    check with data_prop: following values refuses only what cannot run."""
    accepted, refused = 0, []
    for path in corpus_models():
        try:
            onnx.checker.check_model(onnx.load(path), full_check=True)
        except Exception:  # models onnx refuses are not this test's
            continue
        accepted += 1
        report = onnxfast.check(path, data_prop=True)
        if not report.ok:
            refused.append(f"{path.parent.name}: {report.errors[0]}")
    assert not refused, f"{len(refused)}:\n" + "\n".join(refused[:15])
    assert accepted > 1500, accepted
