"""Runs onnx's own checker tests against onnxfast's full check.

    python scripts/onnx_checker_tests.py PATH/TO/checker_test.py [--all] [-q]

`checker_test.py` is tests/python/checker_test.py of onnx's repository (or of
its sdist), for the onnx release onnxfast follows. It is not part of this
repository: pass its path.

The tests call `onnx.checker.check_model`; this script runs them with that
function replaced by onnxfast's check (`onnxfast.check(model, full=...)`),
which raises what onnx raises for an invalid model: `InferenceError` when a
type or shape finding (E7…) is among the errors, `ValidationError`
otherwise. By default only the tests that run the full check
(`full_check=True`) are selected; `--all` runs every test that calls
`check_model`, except those whose expectation onnxfast departs from on purpose
(DELIBERATE below, documented in docs/checks.md).

Error messages are onnxfast's own, so a test's `pytest.raises(..., match=...)`
checks only the exception type here; the patterns that our message does not
match are listed at the end (they are not failures).

Exit status: pytest's (0 when every selected test passes).
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
from pathlib import Path
from typing import Any

import onnx
import onnx.checker
import onnx.shape_inference
import pytest
from _onnx_adapter import SwapPlugin

import onnxfast

_FULL = re.compile(r"check_model\([^()]*(full_check\s*=\s*True|,\s*True\s*\))")

# Tests whose expectation onnxfast departs from on purpose (docs/checks.md).
DELIBERATE = {
    "test_check_model_protobuf_size_over_limit_raises": (
        "onnx refuses in-memory protobufs over 2 GiB; onnxfast checks them"
    ),
}


def _selected(path: Path, everything: bool) -> list[str]:
    """pytest ids (`Class::test`) of the tests that call check_model (with
    the full check, unless `everything`)."""
    source = path.read_text()
    tree = ast.parse(source)
    ids = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}::")
            elif isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                text = ast.get_source_segment(source, node) or ""
                if "check_model(" in text and (everything or _FULL.search(text)):
                    ids.append(prefix + node.name)

    visit(tree.body, "")
    return ids


def _shim(
    model: Any,
    full_check: bool = False,
    skip_opset_compatibility_check: bool = False,
    check_custom_domain: bool = False,
) -> None:
    """onnx.checker.check_model, answered by onnxfast."""
    if isinstance(model, (str, os.PathLike)):
        target: Any = os.fspath(model)
    else:
        target = model
    report = onnxfast.check(
        target,
        full=full_check,
        skip_opset_compatibility_check=skip_opset_compatibility_check,
        check_custom_domain=check_custom_domain,
    )
    if report.ok:
        return
    text = str(report)
    if any(d.code.startswith("E7") for d in report.errors):
        raise onnx.shape_inference.InferenceError(text)
    raise onnx.checker.ValidationError(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="onnx's tests/python/checker_test.py")
    parser.add_argument("--all", action="store_true", help="every test calling check_model")
    parser.add_argument("-q", "--quiet", action="store_true")
    args = parser.parse_args(argv)

    def deliberate(test_id: str) -> bool:
        return test_id.rsplit("::", 1)[-1] in DELIBERATE

    names = [n for n in _selected(args.path, args.all) if not deliberate(n)]
    skipped = [n for n in _selected(args.path, True) if deliberate(n)]
    if not names:
        print(f"no test in {args.path} calls check_model", file=sys.stderr)
        return 2
    plugin = SwapPlugin(onnx.checker, "check_model", _shim)
    pytest_args = [
        *(f"{args.path}::{name}" for name in names),
        "-p",
        "no:cacheprovider",
        "--rootdir",
        str(args.path.parent),
        "-q" if args.quiet else "-v",
    ]
    status = pytest.main(pytest_args, plugins=[plugin])
    print(f"\n{len(names)} tests of {args.path.name} selected (onnx {onnx.__version__})")
    for name in skipped if args.all else []:
        print(f"  not run, a deliberate difference: {name}: {DELIBERATE[name.rsplit('::', 1)[-1]]}")
    plugin.print_mismatches()
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
