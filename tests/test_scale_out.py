"""docs/scale-out.md's Dask recipe, run as written on a LocalCluster over 200
corpus models and compared with checking them one by one in this process."""

from __future__ import annotations

import pickle
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import onnxfast

from conftest import ROOT, SAMPLES, corpus_models

RECIPE = ROOT / "docs" / "scale-out.md"


def recipe() -> dict[str, Any]:
    """The functions the document defines (its first Python block)."""
    blocks = re.findall(r"```python\n(.*?)```", RECIPE.read_text(), re.S)
    namespace: dict[str, Any] = {"__name__": "scale_out_recipe"}
    exec(compile(blocks[0], str(RECIPE), "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """200 corpus models (every n-th, so every operator family is there),
    the two samples and a file that is not ONNX, in a tree of folders."""
    models = corpus_models()
    step = max(1, len(models) // 200)
    picked = models[::step][:200]
    assert len(picked) == 200
    root = tmp_path_factory.mktemp("scale-out")
    for i, m in enumerate(picked):
        target = root / f"part{i % 4}" / m.parent.name / "model.onnx"
        target.parent.mkdir(parents=True)
        shutil.copy(m, target)
    shutil.copy(SAMPLES / "broken.onnx", root / "broken.onnx")
    shutil.copy(SAMPLES / "tiny_cnn.onnx", root / "tiny_cnn.onnx")
    (root / "garbage.onnx").write_bytes(b"\x0a\xff\xff\xff\xff\xff not a model")
    return root


def test_report_and_policy_pickle() -> None:
    report = onnxfast.check(SAMPLES / "broken.onnx", max_diagnostics=1)
    back = pickle.loads(pickle.dumps(report))
    assert back == report
    assert back.ok is False
    assert back.omitted == report.omitted > 0
    assert [d.code for d in back] == [d.code for d in report]
    policy = onnxfast.Policy(denied_ops=["Softmax"], max_opset={"ai.onnx": 21})
    assert pickle.loads(pickle.dumps(policy)) == policy


def test_dask_recipe_matches_serial(folder: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    ns = recipe()
    policy = onnxfast.Policy(denied_ops=["Softmax"], max_nodes=8)
    paths = sorted(str(p) for p in folder.rglob("*.onnx"))
    assert len(paths) == 203
    serial = [ns["check_one"](p, policy=policy) for p in paths]
    readable = [p for p in paths if not p.endswith("garbage.onnx")][:20]

    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        rows = ns["check_all"](client, folder, policy=policy)
        # A Report can come back from a task as it is.
        reports = client.gather(client.map(onnxfast.check, readable, policy=policy, pure=False))

    assert rows == serial
    assert reports == [onnxfast.check(p, policy=policy) for p in readable]
    by_path = {r["path"]: r for r in rows}
    assert not by_path[str(folder / "tiny_cnn.onnx")]["ok"]
    assert by_path[str(folder / "broken.onnx")]["codes"]["E212"] == 2
    assert by_path[str(folder / "garbage.onnx")]["unreadable"].startswith("DecodeError")
    assert by_path[str(folder / "tiny_cnn.onnx")]["codes"] == {"P004": 1, "P011": 1}
    assert sum(1 for r in rows if r["codes"].get("P004")) > 1
    summary = ns["by_code"](rows)
    assert ("F001", 1, 1) in summary
    assert sum(n for _, n, _ in summary) == sum(sum(r["codes"].values()) for r in rows)
