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


def wheel_model_dirs() -> list[Path]:
    data = Path(onnx.__file__).parent / "backend" / "test" / "data"
    return [data / sub for sub in ("light", "simple", "pytorch-converted", "pytorch-operator")]


def _script_module(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def infer_expected() -> Path:
    """onnx's verdicts and inferred types for the corpus and the wheel's models
    (scripts/gen_infer_expected.py), written once under tests/.corpus; the Rust
    test rust/onnxfast-core/tests/infer_corpus.rs reads the same file."""
    out = CORPUS_DIR / "infer_expected.jsonl"
    if not out.exists():
        _script_module("gen_infer_expected").generate(out, [node_corpus(), *wheel_model_dirs()])
    return out


def infer_case_dir() -> Path:
    """The models of tests/infer_cases (edge and failure cases of every
    operator family's inference rules), written once under tests/.corpus as
    cases/<family>/<case name, `/` as `__`>.onnx, with onnx's verdicts and
    inferred types for them in cases_expected.jsonl beside that folder
    (scripts/gen_infer_expected.py; the Rust test infer_corpus.rs reads it
    too). DONE holds a hash of the cases: both are rewritten when it changes."""
    import hashlib
    import shutil

    import infer_cases

    out = CORPUS_DIR / "cases"
    expected = CORPUS_DIR / "cases_expected.jsonl"
    built = {family: infer_cases.family(family).cases() for family in infer_cases.FAMILIES}
    digest = hashlib.sha256()
    for family, cases in built.items():
        for name, model in cases:
            digest.update(f"{family}/{name}\n".encode())
            digest.update(model.SerializeToString(deterministic=True))
    done = out / "DONE"
    if done.exists() and done.read_text().strip() == digest.hexdigest() and expected.exists():
        return out
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(expected.parent / (expected.name + ".stripped"), ignore_errors=True)
    for family, cases in built.items():
        (out / family).mkdir(parents=True)
        for name, model in cases:
            path = out / family / (name.replace("/", "__") + ".onnx")
            path.write_bytes(model.SerializeToString(deterministic=True))
    _script_module("gen_infer_expected").generate(expected, [out])
    done.write_text(digest.hexdigest() + "\n")
    return out


def onnx_test_sources() -> Path | None:
    """tests/python of onnx's sdist for the installed release (downloaded once
    from PyPI into tests/.corpus), or None when PyPI cannot be reached."""
    import hashlib
    import re
    import tarfile
    import urllib.request

    version = onnx.__version__
    target = ROOT / "tests" / ".corpus" / f"onnx-src-{version}"
    done = target / "DONE"
    if done.exists():
        return target / "tests" / "python"
    try:
        index = urllib.request.urlopen("https://pypi.org/simple/onnx/", timeout=60).read().decode()
        pattern = rf'href="([^"]*/onnx-{re.escape(version)}\.tar\.gz)#sha256=([0-9a-f]+)"'
        link = re.search(pattern, index)
        if link is None:
            return None
        data = urllib.request.urlopen(link.group(1), timeout=300).read()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != link.group(2):
        raise AssertionError("onnx sdist checksum mismatch")
    archive = target / "sdist.tar.gz"
    target.mkdir(parents=True, exist_ok=True)
    archive.write_bytes(data)
    prefix = f"onnx-{version}/tests/python/"
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if member.name.startswith(prefix) and member.isfile() and member.name.endswith(".py"):
                name = "tests/python/" + member.name[len(prefix) :]
                if ".." in Path(name).parts:
                    continue
                member.name = name
                source = tar.extractfile(member)
                if source is not None:
                    (target / name).parent.mkdir(parents=True, exist_ok=True)
                    (target / name).write_bytes(source.read())
    archive.unlink()
    done.write_text(version + "\n")
    return target / "tests" / "python"
