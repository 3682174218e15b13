"""The full check on the edge and failure cases of every operator family's
inference rules (tests/infer_cases): onnx's verdict on each, from running
onnx (conftest.infer_case_dir), is ours. The Rust test infer_corpus.rs also
compares every inferred type on them."""

from __future__ import annotations

import json
from pathlib import Path

import infer_cases

import onnxfast

from conftest import infer_case_dir

# The cases each family had when the suite was made (from the scripts its
# rules were written with): the suite may grow, never shrink.
MIN_CASES = {"tensor": 303, "nn": 456, "math": 170, "flow": 167, "misc": 145, "ml": 196}


def _records() -> list[dict]:
    expected = infer_case_dir().parent / "cases_expected.jsonl"
    return [json.loads(line) for line in expected.read_text().splitlines()]


def _family_and_name(record: dict) -> tuple[str, str]:
    path = Path(record["path"])
    return path.parent.name, path.stem.replace("__", "/")


def test_full_verdicts_equal_onnx_on_every_inference_case() -> None:
    records = [r for r in _records() if not r.get("stripped")]
    valid = dict.fromkeys(infer_cases.FAMILIES, 0)
    invalid = dict.fromkeys(infer_cases.FAMILIES, 0)
    mismatches = []
    for r in records:
        family, name = _family_and_name(r)
        theirs = r["full_check"]
        (valid if theirs is None else invalid)[family] += 1
        ours = onnxfast.check(r["path"], full=True)
        if (theirs is None) != ours.ok:
            our_errors = "\n          ".join(str(d) for d in ours.errors[:2])
            mismatches.append(
                f"{family} {name}:\n    onnx: {theirs or 'valid'}\n"
                f"    ours: {our_errors or 'valid'}"
            )
    assert not mismatches, f"{len(mismatches)} of {len(records)} differ:\n" + "\n".join(mismatches)
    assert len(records) >= sum(MIN_CASES.values())
    for family, least in MIN_CASES.items():
        assert valid[family] + invalid[family] >= least, family
        # Both verdicts occur in every family.
        assert valid[family] > 0, family
        assert invalid[family] > 0, family


def test_every_case_is_in_the_corpus_once() -> None:
    built = {
        (family, name)
        for family in infer_cases.FAMILIES
        for name, _ in infer_cases.family(family).cases()
    }
    recorded = [_family_and_name(r) for r in _records() if not r.get("stripped")]
    assert len(recorded) == len(set(recorded))
    assert set(recorded) == built


def test_cases_onnx_crashes_on_are_checked() -> None:
    """onnx crashes or hangs on these, so there is no verdict to compare
    with: ours must still give one."""
    for family in infer_cases.FAMILIES:
        module = infer_cases.family(family)
        crashes = getattr(module, "crash_cases", list)()
        assert sorted(name for name, _ in crashes) == sorted(module.ONNX_CRASHES)
        for name, model in crashes:
            report = onnxfast.check(model.SerializeToString(), full=True)
            assert isinstance(report.ok, bool), (family, name)
