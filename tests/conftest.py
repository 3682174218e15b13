"""Shared fixtures: the onnx node-test corpus and the models of the onnx wheel."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import onnx
import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS_DIR = Path(__file__).resolve().parent / ".corpus" / f"onnx-{onnx.__version__}"


def _gen_module():
    spec = importlib.util.spec_from_file_location(
        "gen_node_corpus", ROOT / "scripts" / "gen_node_corpus.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_node_corpus"] = module
    spec.loader.exec_module(module)
    return module


def node_corpus() -> Path:
    """The generated node-test corpus (built once, cached under tests/.corpus)."""
    return _gen_module().generate(CORPUS_DIR)


def corpus_models() -> list[Path]:
    return sorted(node_corpus().glob("*/model.onnx"))


def corpus_pb_files() -> list[Path]:
    return sorted(node_corpus().glob("*/test_data_set_*/*.pb"))


def wheel_models() -> list[Path]:
    """Models shipped in the onnx wheel (light, simple, pytorch-*)."""
    data = Path(onnx.__file__).parent / "backend" / "test" / "data"
    found: list[Path] = []
    for sub in ("light", "simple", "pytorch-converted", "pytorch-operator"):
        found.extend(sorted((data / sub).rglob("*.onnx")))
    return found


def wheel_pb_files() -> list[Path]:
    data = Path(onnx.__file__).parent / "backend" / "test" / "data"
    found: list[Path] = []
    for sub in ("light", "simple", "pytorch-converted", "pytorch-operator"):
        found.extend(sorted((data / sub).rglob("*.pb")))
    return found


@pytest.fixture(scope="session")
def corpus() -> Path:
    return node_corpus()


SAMPLES = ROOT / "samples"
