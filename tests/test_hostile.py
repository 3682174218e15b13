"""Hostile input: every adversarial case ends in an OnnxFastError or a valid
model, within the memory bound, quickly; panics become InternalError;
threads are safe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from _adversarial import nested_if

import onnxfast

from conftest import SAMPLES, corpus_models

HERE = Path(__file__).resolve().parent


def test_adversarial_corpus_in_a_fresh_process(tmp_path) -> None:
    out = tmp_path / "results.json"
    proc = subprocess.run(
        [sys.executable, str(HERE / "_adversarial.py"), str(SAMPLES / "tiny_cnn.onnx"), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=HERE,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(out.read_text())
    assert len(results) > 100
    problems = []
    for r in results:
        bound = 16 * r["size"] + (64 << 20)
        if r["outcome"].startswith("UNEXPECTED"):
            problems.append(f"{r['case']}: {r['outcome']}")
        if r["peak_growth"] > bound:
            problems.append(
                f"{r['case']}: peak RSS growth {r['peak_growth'] >> 20} MiB > {bound >> 20} MiB"
            )
        if r["seconds"] > 2.0:  # hang detector, not a benchmark
            problems.append(f"{r['case']}: took {r['seconds']:.1f} s")
    assert not problems, "\n".join(problems)
    by_case = {r["case"]: r["outcome"] for r in results}
    assert by_case["nesting at the limit (33 Ifs, depth 100)"].startswith(
        ("valid", "invalid")
    )  # decoded
    assert "nested deeper than 100" in by_case["nesting past the limit (depth 101)"]
    assert "nested deeper than 100" in by_case["nesting bomb (10,000 levels)"]
    assert "budget" in by_case["memory bomb: 10 MB of empty nodes"]
    assert by_case["300k undefined inputs (diagnostics bomb)"].startswith("invalid (10000+")


def test_nesting_limit_in_process() -> None:
    deepest = onnxfast.load(nested_if(33, False))  # a graph at message depth 100
    g = deepest.graph
    for _ in range(33):
        g = g.node[0].attribute[0].g
    assert g.name == "g"
    assert len(g.node) == 0
    # Values at every level: "c", read by each If, is defined nowhere.
    g = deepest.graph
    for _ in range(33):
        values = g.values
        assert list(values) == ["o"]
        assert values["o"].producer[0].op_type == "If"
        assert "c" not in values
        g = g.node[0].attribute[0].g
    assert len(g.values) == 0
    with pytest.raises(onnxfast.DecodeError) as info:
        onnxfast.load(nested_if(33, True))
    assert "nested deeper than 100 levels" in str(info.value)
    assert info.value.path.startswith("graph.node[0].attribute[0].g.node[0]")


def test_a_rust_panic_becomes_internal_error_and_the_interpreter_survives() -> None:
    for _ in range(3):
        with pytest.raises(onnxfast.InternalError, match="please report it"):
            onnxfast._onnxfast._panic_for_tests()
    assert onnxfast.check(SAMPLES / "tiny_cnn.onnx").ok  # still working


def test_a_panic_prints_nothing_and_the_error_says_where() -> None:
    code = (
        "import onnxfast\n"
        "try:\n"
        "    onnxfast._onnxfast._panic_for_tests()\n"
        "except onnxfast.InternalError as e:\n"
        "    print(e)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert proc.stderr == ""  # no "thread panicked at" noise in a pipeline's logs
    assert "index out of bounds" in proc.stdout
    assert "src/lib.rs:" in proc.stdout  # where the panic happened


def test_untrusted_names_are_cut_and_escaped_in_error_text() -> None:
    from onnx import TensorProto

    name = "\x1b[31m" + "n" * 5000 + "\x07"
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=[4], raw_data=b"\0")
    with pytest.raises(onnxfast.TensorError) as info:
        onnxfast.load_tensor(t.SerializeToString()).numpy()
    text = str(info.value)
    assert "\x1b" not in text
    assert "\x07" not in text
    assert len(text) < 600
    assert info.value.tensor == name  # the attribute keeps the exact value


def test_threads_load_and_check_concurrently() -> None:
    paths = corpus_models()[::4]
    expected = {p: (onnxfast.check(p).ok, len(onnxfast.load(p).graph.node)) for p in paths}
    errors: list[BaseException] = []
    results: dict = {}

    def worker(chunk) -> None:
        try:
            for p in chunk:
                model = onnxfast.load(p)
                for t in model.graph.initializer:
                    t.numpy()
                results[(threading.get_ident(), p)] = (
                    onnxfast.check(model).ok,
                    len(model.graph.node),
                )
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(paths[i::4] * 2,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert len(results) == len(paths)
    for (_, p), got in results.items():
        assert got == expected[p]
    assert np.array_equal(
        onnxfast.load(SAMPLES / "tiny_cnn.onnx").graph.initializer[0].numpy().shape, (8, 1, 3, 3)
    )
