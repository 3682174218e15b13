"""Small models for the edge and failure cases of every operator family's
type and shape inference rules, one module per family group.

Each module has `cases()`, a list of (name, model): a unique `group/what`
name and a model that onnx's full check (`check_model(full_check=True)`)
can judge; and `ONNX_CRASHES`, the names of cases left out because onnx
itself crashes or hangs on them (those modules also have `crash_cases()`).
No case says what to expect: the truth comes from running onnx
(tests/conftest.py `infer_case_dir`, tests/test_infer_cases.py, and the Rust
test rust/onnxfast-core/tests/infer_corpus.rs).
"""

from __future__ import annotations

import importlib
from types import ModuleType

FAMILIES = ("tensor", "nn", "math", "flow", "misc", "ml")


def family(name: str) -> ModuleType:
    """The module of a family group (one of FAMILIES)."""
    return importlib.import_module(f"{__name__}.{name}")
