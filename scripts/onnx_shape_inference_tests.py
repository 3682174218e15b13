"""Runs onnx's own shape-inference tests against onnxfast.infer_shapes.

    python scripts/onnx_shape_inference_tests.py PATH/TO/shape_inference_test.py [-q] [--json OUT]

`shape_inference_test.py` is tests/python/shape_inference_test.py of onnx's
repository (or of its sdist), for the onnx release onnxfast follows. It is
not part of this repository: pass its path.

The tests call `onnx.shape_inference.infer_shapes`; this script runs them
with that function answered by onnxfast: the model (or its bytes) goes
through `onnxfast.infer_shapes`, the result comes back as an
`onnx.ModelProto` (`.to_onnx()`, or bytes for bytes), and with
`strict_mode=True` a model with a defect raises onnx's `InferenceError` with
onnxfast's report as its message. onnx's checker, which the tests run on the
result, stays onnx's. `data_prop=True` is passed on (onnxfast follows more
values than onnx: a test expecting onnx's unknown dim where we know it
counts as "inferred values differ").

Error messages are onnxfast's own, so `pytest.raises(..., match=...)` checks
only the exception type here (the patterns our messages do not match are
listed, not failed).

At the end it prints the pass rate and the failures by class: values that
differ, a defect onnx finds and we do not, one we find and onnx does not,
data propagation, other errors. Exit status: 0 when it ran (whatever the
pass rate), 2 when the file has no test.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any

import onnx
import onnx.shape_inference
import pytest
from _onnx_adapter import SwapPlugin

import onnxfast

_real_infer_shapes = onnx.shape_inference.infer_shapes

# Tests whose expectation onnxfast departs from on purpose.
DELIBERATE = {
    "test_infer_shapes_rejects_cyclic_function": (
        "onnx raises for a recursive function even without strict_mode; onnxfast"
        " reports it (E729) and, not strict, returns the model with what it could infer"
    ),
}


def _shim(
    model: Any,
    check_type: bool = False,
    strict_mode: bool = False,
    data_prop: bool = False,
) -> Any:
    """onnx.shape_inference.infer_shapes, answered by onnxfast."""
    if isinstance(model, (str, os.PathLike)):
        # onnx refuses paths here (infer_shapes_path takes them); keep that.
        return _real_infer_shapes(model, check_type, strict_mode, data_prop)
    as_bytes = isinstance(model, bytes)
    result, report = onnxfast._shapes.infer_with_report(
        model, data_prop=data_prop, check_type=check_type
    )
    if strict_mode and not report.ok:
        raise onnx.shape_inference.InferenceError(str(report))
    proto = result.to_onnx()
    return proto.SerializeToString() if as_bytes else proto


class _Plugin(SwapPlugin):
    """Answers infer_shapes by onnxfast, relaxes `match=`, records outcomes."""

    def __init__(self) -> None:
        super().__init__(onnx.shape_inference, "infer_shapes", _shim)
        self.outcomes: dict[str, tuple[str, str]] = {}
        self.sources: dict[str, str] = {}
        self.schemas = {
            (s.name, s.since_version, s.domain) for s in onnx.defs.get_all_schemas_with_history()
        }

    def pytest_collection_modifyitems(self, items: list[Any]) -> None:
        for item in items:
            try:
                self.sources[item.nodeid] = inspect.getsource(item.function)
            except (OSError, TypeError):
                self.sources[item.nodeid] = ""

    def pytest_runtest_teardown(self, item: Any) -> None:
        # A test that fails while it has registered a schema of its own can
        # leave it behind (its cleanup stops at the first schema it cannot
        # remove), failing every later test's setup: remove what is new.
        for schema in onnx.defs.get_all_schemas_with_history():
            key = (schema.name, schema.since_version, schema.domain)
            if key not in self.schemas:
                with contextlib.suppress(onnx.defs.SchemaError):
                    onnx.defs.deregister_schema(*key)

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.when == "call" or (report.when == "setup" and not report.passed):
            text = str(report.longrepr) if report.failed else ""
            self.outcomes[report.nodeid] = (report.outcome, text)


def classify(text: str, source: str) -> str:
    """The class of a failure, from pytest's report of it and the test's source."""
    for name, why in DELIBERATE.items():
        if f"def {name}(" in source:
            return f"deliberate: {why}"
    if "register_schema" in source:
        return "operator schemas registered from Python at run time (onnx.defs.register_schema)"
    if "DID NOT RAISE" in text:
        return "onnx finds a defect, onnxfast does not"
    if "InferenceError" in text and "in _shim" in text:
        return "onnxfast finds a defect, onnx does not"
    if "AssertionError" in text or "assert " in text:
        return "inferred values differ"
    return "other error"


def _first_error_line(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.startswith("E   ")]
    return lines[0][4:].strip() if lines else (text.strip().splitlines() or ["?"])[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="onnx's tests/python/shape_inference_test.py")
    parser.add_argument("-q", "--quiet", action="store_true")
    parser.add_argument("--json", type=Path, help="write the outcome of every test here")
    parser.add_argument("-k", default=None, help="pytest's -k expression")
    args = parser.parse_args(argv)
    if not args.path.is_file():
        print(f"not a file: {args.path}", file=sys.stderr)
        return 2
    plugin = _Plugin()
    pytest_args = [
        str(args.path),
        "-p",
        "no:cacheprovider",
        "--rootdir",
        str(args.path.parent),
        "-q" if args.quiet else "-v",
        "--tb=short",
        "-W",
        "ignore",
    ]
    if args.k:
        pytest_args += ["-k", args.k]
    pytest.main(pytest_args, plugins=[plugin])
    outcomes = plugin.outcomes
    if not outcomes:
        print(f"no test ran from {args.path}", file=sys.stderr)
        return 2
    passed = sum(o == "passed" for o, _ in outcomes.values())
    skipped = sum(o == "skipped" for o, _ in outcomes.values())
    failed = {k: t for k, (o, t) in outcomes.items() if o == "failed"}
    ran = passed + len(failed)
    print(
        f"\nonnx {onnx.__version__} {args.path.name}: {passed} of {ran} passed "
        f"({100.0 * passed / max(ran, 1):.1f} %), {skipped} skipped"
    )
    classes: dict[str, list[str]] = collections.defaultdict(list)
    for test, text in failed.items():
        classes[classify(text, plugin.sources.get(test, ""))].append(
            f"{test}: {_first_error_line(text)[:160]}"
        )
    for name, tests in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(tests):4d}  {name}")
        if not args.quiet:
            for t in tests:
                print(f"          {t}")
    if not args.quiet:
        plugin.print_mismatches()
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "passed": passed,
                    "ran": ran,
                    "skipped": skipped,
                    "failures": {c: t for c, t in classes.items()},
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
