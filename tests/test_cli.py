"""The installed console script, run as a subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from conftest import SAMPLES, wheel_models

SCRIPT = Path(sys.executable).parent / "onnxfast"


def run(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    exe = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "onnxfast"]
    return subprocess.run(
        [*exe, *args], capture_output=True, text=True, timeout=120, check=False, **kwargs
    )


def test_valid_model_exits_0() -> None:
    proc = run("check", str(SAMPLES / "tiny_cnn.onnx"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "valid" in proc.stdout
    assert "1 model checked, 1 valid" in proc.stdout
    assert "\033[" not in proc.stdout  # no colour when not on a terminal


def test_invalid_model_exits_1_and_names_the_node() -> None:
    proc = run("check", str(SAMPLES / "broken.onnx"))
    assert proc.returncode == 1
    assert "invalid" in proc.stdout
    assert "node[1] 'pool1' (MaxPool)" in proc.stdout
    assert "error[E405]" in proc.stdout
    assert "did you mean 'Relu'?" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_missing_file_and_garbage_exit_2_without_traceback(tmp_path) -> None:
    proc = run("check", str(tmp_path / "nope.onnx"))
    assert proc.returncode == 2
    assert "no such file" in proc.stdout
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x0a\xff\xff\xff\xff\x0f")
    proc = run("check", str(garbage))
    assert proc.returncode == 2
    assert "not a valid ONNX model: at byte 0" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    proc = run("check", "--debug", str(garbage))
    assert "Traceback" in proc.stdout


def test_usage_error_exits_2() -> None:
    assert run("check").returncode == 2
    assert run("frobnicate").returncode == 2
    assert run("check", "-j", "0", str(SAMPLES / "tiny_cnn.onnx")).returncode == 2


def test_folder_in_parallel_as_json_lines(tmp_path) -> None:
    folder = tmp_path / "models"
    (folder / "nested").mkdir(parents=True)
    shutil.copy(SAMPLES / "tiny_cnn.onnx", folder / "a.onnx")
    shutil.copy(SAMPLES / "broken.onnx", folder / "nested" / "b.onnx")
    for i, path in enumerate(wheel_models()[:6]):
        shutil.copy(path, folder / f"w{i}.onnx")
    (folder / "notes.txt").write_text("not a model")
    proc = run("check", "-j", "2", "--json", str(folder))
    assert proc.returncode == 1, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(records) == 8
    by_name = {Path(r["path"]).name: r for r in records}
    assert by_name["a.onnx"]["ok"] is True
    assert by_name["b.onnx"]["ok"] is False
    codes = [d["code"] for d in by_name["b.onnx"]["diagnostics"]]
    assert codes == ["E212", "E212", "E405"]
    assert all(
        {"code", "severity", "location", "message"} <= d.keys()
        for d in by_name["b.onnx"]["diagnostics"]
    )
    assert all(r["seconds"] >= 0 for r in records)
    # same verdicts as one job
    serial = [json.loads(line) for line in run("check", "--json", str(folder)).stdout.splitlines()]
    assert [(r["path"], r["ok"]) for r in serial] == [(r["path"], r["ok"]) for r in records]
    # an unreadable file makes the whole run exit 2
    (folder / "bad.onnx").write_bytes(b"\x07")
    assert run("check", "-j", "2", str(folder)).returncode == 2


def test_strict_flag(tmp_path) -> None:
    model = onnx.load(SAMPLES / "tiny_cnn.onnx")
    model.graph.initializer.append(
        onnx.helper.make_tensor("unused", onnx.TensorProto.FLOAT, [1], [0.0])
    )
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    assert run("check", str(path)).returncode == 0
    proc = run("check", "--strict", str(path))
    assert proc.returncode == 0  # warnings only
    assert "warning[W905]" in proc.stdout


def test_info_on_a_real_model() -> None:
    path = next(p for p in wheel_models() if "resnet50" in p.name)
    proc = run("info", str(path))
    assert proc.returncode == 0, proc.stderr
    for word in ("ir_version", "opsets", "inputs", "outputs", "operators", "parameters", "Conv"):
        assert word in proc.stdout
    data = json.loads(run("info", "--json", str(path)).stdout)
    theirs = onnx.load(path)
    assert data["nodes"] == len(theirs.graph.node)
    assert data["ops"]["Conv"] == sum(1 for n in theirs.graph.node if n.op_type == "Conv")
    assert sum(p["tensors"] for p in data["parameters"].values()) == len(theirs.graph.initializer)
    assert data["inputs"][0]["name"] == theirs.graph.input[0].name


def test_info_reports_external_files(tmp_path) -> None:
    model = onnx.load(SAMPLES / "tiny_cnn.onnx")
    onnx.save_model(
        model, tmp_path / "m.onnx", save_as_external_data=True, location="w.bin", size_threshold=0
    )
    data = json.loads(run("info", "--json", str(tmp_path / "m.onnx")).stdout)
    assert data["external_files"] == [
        {
            "location": "w.bin",
            "size": (tmp_path / "w.bin").stat().st_size,
            "tensors": 7,
            "error": None,
        }
    ]
    assert "external files" in run("info", str(tmp_path / "m.onnx")).stdout


def test_info_lists_many_external_files_in_short(tmp_path) -> None:
    """A file per tensor (30 here): the first 20 files, every file with a
    problem (a missing one, past the first 20), and a line for the rest;
    --json lists them all."""
    from onnx import numpy_helper

    weights = [
        numpy_helper.from_array(np.full(300, i, dtype=np.float32), name=f"w{i:02}")
        for i in range(30)
    ]
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Identity", ["w00"], ["y"])],
        "g",
        [],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [300])],
        initializer=weights,
    )
    path = tmp_path / "m.onnx"
    onnx.save_model(
        onnx.helper.make_model(graph),
        path,
        save_as_external_data=True,
        all_tensors_to_one_file=False,
    )
    (tmp_path / "w27").unlink()
    data = json.loads(run("info", "--json", str(path)).stdout)
    assert len(data["external_files"]) == 30
    lines = run("info", str(path)).stdout.splitlines()
    start = lines.index("external files (30)")
    listed = [line.split()[0] for line in lines[start + 1 : start + 22]]
    assert listed == [f"w{i:02}" for i in range(20)] + ["w27"]
    assert "unreadable" in lines[start + 21]
    assert lines[start + 22] == "    … 9 more (10.5 KiB, 9 tensors; --json lists all)"


def test_info_errors_are_readable(tmp_path) -> None:
    proc = run("info", str(tmp_path / "missing.onnx"))
    assert proc.returncode == 2
    assert "no such file" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_python_dash_m() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "onnxfast", "--version"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith("onnxfast ")


def test_shapes_prints_every_value_as_onnx_infers_it() -> None:
    path = SAMPLES / "tiny_cnn.onnx"
    proc = run("shapes", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["ok"]
    (main,) = out["graphs"]
    ours = {v["name"]: v for v in main["values"]}
    inferred = onnx.shape_inference.infer_shapes(onnx.load(path), strict_mode=True)
    declared = {vi.name: vi for vi in [*inferred.graph.value_info, *inferred.graph.output]}
    for node in inferred.graph.node:
        for name in node.output:
            dims = [
                d.dim_value if d.HasField("dim_value") else d.dim_param
                for d in declared[name].type.tensor_type.shape.dim
            ]
            text = ours[name]["type"]
            assert text.startswith("FLOAT["), text
            assert text[len("FLOAT[") : -1].replace("'", "").split(", ") == [str(d) for d in dims]
            assert ours[name]["producer"].endswith(node.op_type)
    human = run("shapes", str(path))
    assert human.returncode == 0
    assert "logits" in human.stdout
    assert "node[7] Gemm" in human.stdout
    info = run("info", "--shapes", "--json", str(path))
    assert json.loads(info.stdout)["values"] == out["graphs"]


def test_shapes_pauses_the_cycle_collector_and_restores_it(monkeypatch, capsys) -> None:
    import gc

    from onnxfast import cli

    path = str(SAMPLES / "tiny_cnn.onnx")
    seen = []
    build = cli.shape_table

    def spy(*a, **k):
        seen.append(gc.isenabled())
        return build(*a, **k)

    monkeypatch.setattr(cli, "shape_table", spy)
    assert gc.isenabled()
    assert cli.main(["shapes", path, "--sizes", "N=1"]) == 0
    assert cli.main(["info", "--shapes", path]) == 0
    assert seen == [False, False], "the table is built with the collector off"
    assert gc.isenabled(), "and it is back on after"
    assert cli.main(["shapes", path + ".missing"]) == cli.EXIT_ERROR
    assert gc.isenabled(), "after a failure too"
    gc.disable()
    try:
        assert cli.main(["shapes", path]) == 0
        assert not gc.isenabled(), "a collector that was off stays off"
    finally:
        gc.enable()
    capsys.readouterr()


def test_shapes_strict_exits_1_and_locates_the_defect(tmp_path) -> None:
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("Add", ["x", "y"], ["z"])], "g", [x, y], [])
    path = tmp_path / "bad.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    loose = run("shapes", str(path))
    assert loose.returncode == 0
    assert "error[E720]" in loose.stderr
    strict = run("shapes", str(path), "--strict", "--json")
    assert strict.returncode == 1
    out = json.loads(strict.stdout)
    assert not out["ok"]
    assert out["diagnostics"][0]["location"] == "graph 'g' › node[0] (Add)"
    assert run("shapes", str(tmp_path / "missing.onnx")).returncode == 2


def test_shapes_no_check_type_infers_as_onnx_does_by_default(tmp_path) -> None:
    """`--no-check-type`: a node whose input types its operator does not
    allow (CumSum over a float axis) is inferred as onnx's infer_shapes does
    by default; with the check (the default) it is a defect."""
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 5])
    axis = helper.make_tensor_value_info("axis", TensorProto.FLOAT, [])
    graph = helper.make_graph(
        [helper.make_node("CumSum", ["x", "axis"], ["y"])], "g", [x, axis], []
    )
    path = tmp_path / "float_axis.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)
    checked = run("shapes", str(path), "--strict", "--json")
    assert checked.returncode == 1
    assert json.loads(checked.stdout)["diagnostics"][0]["code"] == "E701"
    loose = run("shapes", str(path), "--strict", "--json", "--no-check-type")
    assert loose.returncode == 0, loose.stderr
    (main,) = json.loads(loose.stdout)["graphs"]
    ours = {v["name"]: v["type"] for v in main["values"]}
    theirs = onnx.shape_inference.infer_shapes(onnx.load(path), strict_mode=True)
    (y,) = [vi for vi in theirs.graph.value_info if vi.name == "y"]
    assert y.type.tensor_type.elem_type == TensorProto.FLOAT
    assert ours["y"] == "FLOAT[4, 5]"
    info = run("info", "--shapes", "--no-check-type", "--json", str(path))
    assert json.loads(info.stdout)["values"] == json.loads(loose.stdout)["graphs"]
    checked_info = run("info", "--shapes", "--json", str(path))
    assert json.loads(checked_info.stdout)["values"] != json.loads(loose.stdout)["graphs"]


def test_shapes_data_prop_gives_the_computed_reshape(tmp_path) -> None:
    """`--data-prop`: a Reshape whose target is computed from Shape gets the
    model's symbol N as onnx's data propagation gives it, and the -1 that
    onnx leaves unknown (N x 3 x 4 elements into N x -1: 12)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    nodes = [
        helper.make_node("Shape", ["x"], ["s"], end=1),
        helper.make_node("Concat", ["s", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([-1], dtype=np.int64), "minus_one")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    path = tmp_path / "computed.onnx"
    onnx.save(model, path)
    theirs = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    dims = [d.dim_value or d.dim_param for d in theirs.graph.output[0].type.tensor_type.shape.dim]
    assert dims[0] == "N"
    assert dims[1].startswith("unk__")

    def y_type(*flags: str) -> str:
        proc = run("shapes", str(path), "--json", *flags)
        assert proc.returncode == 0, proc.stderr
        (main,) = json.loads(proc.stdout)["graphs"]
        return next(v["type"] for v in main["values"] if v["name"] == "y")

    assert y_type("--data-prop") == "FLOAT['N', 12]"
    assert "unk__" in y_type()
    info = run("info", "--shapes", "--data-prop", "--json", str(path))
    values = json.loads(info.stdout)["values"][0]["values"]
    assert next(v["type"] for v in values if v["name"] == "y") == "FLOAT['N', 12]"


def test_shapes_symbolic_gives_expressions(tmp_path) -> None:
    """`--symbolic`: a Concat of two symbolic lengths is their sum; without
    it, a fresh name (onnx's result)."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Concat", ["past", "x"], ["y"], axis=1)],
        "g",
        [
            helper.make_tensor_value_info("past", TensorProto.FLOAT, ["B", "P"]),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S"]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    path = tmp_path / "concat.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)

    def y_type(*args: str) -> str:
        proc = run(*args, "--json", str(path))
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        graphs = out["graphs"] if "graphs" in out else out["values"]
        return next(v["type"] for v in graphs[0]["values"] if v["name"] == "y")

    assert y_type("shapes", "--symbolic") == "FLOAT['B', 'P + S']"
    assert y_type("info", "--shapes", "--symbolic") == "FLOAT['B', 'P + S']"
    assert "unk__" in y_type("shapes")


def test_shapes_sizes_gives_each_values_bytes_and_the_peak(tmp_path) -> None:
    """`--sizes`: every value's shape and bytes at the given sizes are those
    of the arrays onnx's reference evaluator makes running the model at
    them; the peak is the largest sum of node outputs held at once in graph
    order, computed here from those arrays (held from their node to their
    last reader, or to their own node when none reads them; outputs to the
    end)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node
    graph = helper.make_graph(
        [
            node("Conv", ["img", "w"], ["c1"], strides=[2, 2], pads=[1, 1, 1, 1]),
            node("Relu", ["c1"], ["r1"]),
            # Read by no node: freed after its own.
            node("Sigmoid", ["c1"], ["unread"]),
            node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
            node("Shape", ["p1"], ["ps"]),
            node("Slice", ["ps", "i0", "i2"], ["nc"]),
            node("Concat", ["nc", "m1"], ["flat_shape"], axis=0),
            node("Reshape", ["p1", "flat_shape"], ["flat"]),
            node("Cast", ["flat"], ["half"], to=TensorProto.FLOAT16),
            node("Slice", ["half", "i0", "c5", "i2"], ["head"]),
        ],
        "plan",
        [helper.make_tensor_value_info("img", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info("head", TensorProto.FLOAT16, None)],
        [
            numpy_helper.from_array(np.ones((8, 3, 3, 3), np.float32), "w"),
            numpy_helper.from_array(np.array([0], np.int64), "i0"),
            numpy_helper.from_array(np.array([2], np.int64), "i2"),
            numpy_helper.from_array(np.array([-1], np.int64), "m1"),
            numpy_helper.from_array(np.array([5], np.int64), "c5"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    path = tmp_path / "plan.onnx"
    onnx.save(model, path)
    names = [o for n in graph.node for o in n.output]
    runner = ReferenceEvaluator(model)
    for n, h, w in [(1, 9, 9), (2, 32, 20), (3, 17, 64)]:
        proc = run(
            "shapes",
            "--json",
            "--symbolic",
            "--data-prop",
            "--sizes",
            f"N={n},H={h},W={w}",
            str(path),
        )
        assert proc.returncode == 0, proc.stderr
        main = json.loads(proc.stdout)["graphs"][0]
        ours = {v["name"]: v for v in main["values"]}
        arrays = dict(zip(names, runner.run(names, {"img": np.zeros((n, 3, h, w), np.float32)})))
        for name, array in arrays.items():
            assert ours[name]["shape_at"] == list(array.shape), (name, ours[name], array.shape)
            assert ours[name]["bytes"] == array.nbytes, (name, ours[name], array.nbytes)
        last = {}
        for i, nd in enumerate(graph.node):
            for x in [*nd.input, *nd.output]:
                last.setdefault(x, i)
            for x in nd.input:
                last[x] = i
        live = peak = 0
        for i, nd in enumerate(graph.node):
            live += sum(arrays[o].nbytes for o in nd.output)
            peak = max(peak, live)
            live -= sum(a.nbytes for x, a in arrays.items() if last.get(x) == i and x != "head")
        assert main["memory"] == {
            "total_bytes": sum(a.nbytes for a in arrays.values()),
            "peak_bytes": peak,
            "unknown": 0,
        }
    proc = run("shapes", "--sizes", "N=1,H=9,W=9", "--symbolic", "--data-prop", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "at most at once in graph order" in proc.stdout
    proc = run("shapes", "--sizes", "N=one", str(path))
    assert proc.returncode == 2
    assert "'N=one' is not NAME=SIZE" in proc.stderr


def _first_fresh_dims(model: onnx.ModelProto, inferred: onnx.ModelProto) -> list[str]:
    """For each dim onnx's inference names (a dim_param the model does not
    declare), the value where it first appears: graph inputs, then node
    outputs in node order."""
    graph = model.graph

    def params(vi: onnx.ValueInfoProto) -> list[str]:
        return [d.dim_param for d in vi.type.tensor_type.shape.dim if d.dim_param]

    declared = {p for vi in [*graph.input, *graph.output, *graph.value_info] for p in params(vi)}
    types = {vi.name: vi for vi in [*inferred.graph.value_info, *inferred.graph.output]}
    order = [vi.name for vi in graph.input] + [o for n in graph.node for o in n.output if o]
    seen: set[str] = set()
    first = []
    for name in order:
        vi = types.get(name) or next((i for i in graph.input if i.name == name), None)
        for p in params(vi) if vi is not None else []:
            if p not in declared and p not in seen:
                seen.add(p)
                first.append(name)
    return first


def test_shapes_lists_where_each_unknown_dim_first_appears(tmp_path) -> None:
    """The `unknown_dims` of `shapes --json` name, dim by dim, the value
    where each dim inference can only name first appears, as onnx's own
    inference names them (NonZero's count, a Reshape to a shape read from an
    input, sizes computed from shapes without data_prop)."""
    from onnx import TensorProto, helper
    from test_infer_shapes import _shape_computations

    node = helper.make_node
    small = helper.make_model(
        helper.make_graph(
            [
                node("NonZero", ["x"], ["nz"]),
                node("Transpose", ["nz"], ["nzt"]),
                node("Relu", ["x"], ["r"]),
                node("Reshape", ["r", "s"], ["rs"]),
                node("Add", ["rs", "rs"], ["rs2"]),
            ],
            "g",
            [
                helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4]),
                helper.make_tensor_value_info("s", TensorProto.INT64, [3]),
            ],
            [
                helper.make_tensor_value_info("rs2", TensorProto.FLOAT, None),
                helper.make_tensor_value_info("nzt", TensorProto.INT64, None),
            ],
        ),
        opset_imports=[helper.make_opsetid("", 18)],
    )
    for i, model in enumerate([small, _shape_computations()]):
        path = tmp_path / f"m{i}.onnx"
        onnx.save(model, path)
        proc = run("shapes", "--json", str(path))
        assert proc.returncode == 0, proc.stderr
        ours = [u["value"] for u in json.loads(proc.stdout)["unknown_dims"]]
        theirs = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        assert ours == _first_fresh_dims(model, theirs)
        assert ours, "the models have dims inference can only name"
    proc = run("shapes", str(tmp_path / "m0.onnx"))
    assert "unknown dims, where each first appears" in proc.stdout
    assert "unk__0  nz  node[0] NonZero" in proc.stdout


def test_shapes_output_writes_the_inferred_model(tmp_path) -> None:
    """`shapes -o FILE` writes what onnx's infer_shapes_path writes (every
    intermediate value typed); `--external-data` puts the weights in a data
    file beside it that onnx reads."""
    path = SAMPLES / "tiny_cnn.onnx"
    theirs = onnx.shape_inference.infer_shapes(onnx.load(path), strict_mode=True)
    out = tmp_path / "inferred.onnx"
    proc = run("shapes", str(path), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"wrote {out} ({out.stat().st_size} bytes)\n"
    saved = onnx.load(out)
    onnx.checker.check_model(saved, full_check=True)
    assert [v.name for v in saved.graph.value_info] == [v.name for v in theirs.graph.value_info]
    assert [v.type for v in saved.graph.value_info] == [v.type for v in theirs.graph.value_info]
    assert saved.graph.initializer == theirs.graph.initializer

    folder = tmp_path / "with_data"
    folder.mkdir()
    external = folder / "m.onnx"
    proc = run("shapes", str(path), "-o", str(external), "--external-data")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["m.onnx", "m.onnx.data"]
    proc = run("shapes", str(path), "-o", str(external), "--external-data", "w.bin")
    assert proc.returncode == 0, proc.stderr
    assert (folder / "w.bin").read_bytes() == (folder / "m.onnx.data").read_bytes()
    unloaded = onnx.load(external, load_external_data=False)
    assert any(onnx.external_data_helper.uses_external_data(t) for t in unloaded.graph.initializer)
    # onnx.load leaves data_location present (DEFAULT) on what it read in.
    loaded = [(t.name, t.dims, t.raw_data) for t in onnx.load(external).graph.initializer]
    assert loaded == [(t.name, t.dims, t.raw_data) for t in theirs.graph.initializer]

    for args, message in [
        (["--external-data"], "give -o"),
        (["-o", str(out), "--json"], "--json and --sizes print"),
        (["-o", str(tmp_path / "x.onnx"), "--external-data", "../w.bin"], "'..'"),
    ]:
        proc = run("shapes", str(path), *args)
        assert proc.returncode == 2, proc.stdout
        assert message in proc.stderr
        assert "Traceback" not in proc.stderr
    assert not (tmp_path / "x.onnx").exists()


def test_shapes_output_elsewhere_warns_of_external_data_left_behind(tmp_path) -> None:
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    src = tmp_path / "src"
    src.mkdir()
    weight = numpy_helper.from_array(np.ones(4096, np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Relu", ["w"], ["y"])],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4096])],
        initializer=[weight],
    )
    onnx.save_model(
        helper.make_model(graph), src / "m.onnx", save_as_external_data=True, location="w.bin"
    )
    out = tmp_path / "out"
    out.mkdir()
    proc = run("shapes", str(src / "m.onnx"), "-o", str(out / "m.onnx"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("onnxfast shapes: warning: ")
    assert "'w.bin'" in proc.stderr
    assert "--external-data" in proc.stderr
    assert "cli.py" not in proc.stderr
    proc = run("shapes", str(src / "m.onnx"), "-o", str(out / "m.onnx"), "--external-data")
    assert proc.returncode == 0
    assert proc.stderr == ""
    assert onnx.load(out / "m.onnx").graph.initializer[0].raw_data == weight.raw_data


def run_bytes(*args: str, **kwargs) -> subprocess.CompletedProcess[bytes]:
    """`run` with bytes in and out (a model on standard input or output)."""
    exe = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "onnxfast"]
    return subprocess.run([*exe, *args], capture_output=True, timeout=120, check=False, **kwargs)


def test_dash_reads_the_model_from_standard_input(tmp_path) -> None:
    """From a pipe (read) and from a redirected file (mapped): the verdicts
    and tables the path gives, under the name "-"; with -j the model on
    standard input is checked too."""
    valid, broken = SAMPLES / "tiny_cnn.onnx", SAMPLES / "broken.onnx"
    proc = run_bytes("check", "-", input=valid.read_bytes())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert b"-: valid" in proc.stdout
    with open(broken, "rb") as f:
        proc = run_bytes("check", "-", "--json", stdin=f)
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert result["path"] == "-"
    assert (
        result["diagnostics"]
        == json.loads(run("check", str(broken), "--json").stdout)["diagnostics"]
    )
    with open(valid, "rb") as f:
        proc = run_bytes("check", "-", str(broken), "-j", "2", "--json", stdin=f)
    assert [json.loads(line)["ok"] for line in proc.stdout.splitlines()] == [True, False]
    for command in ("info", "shapes"):
        piped = run_bytes(command, "-", "--json", input=valid.read_bytes())
        named = run(command, str(valid), "--json")
        assert piped.returncode == named.returncode == 0
        assert {**json.loads(piped.stdout), "path": ""} == {**json.loads(named.stdout), "path": ""}


def test_shapes_output_dash_writes_the_model_to_standard_output(tmp_path) -> None:
    """`shapes -o -`: the inferred model on stdout (what infer_shapes gives),
    the messages on stderr; piped into `check -`."""
    import onnxfast

    valid = SAMPLES / "tiny_cnn.onnx"
    proc = run_bytes("shapes", str(valid), "-o", "-")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == onnxfast.infer_shapes(valid).SerializeToString()
    assert b"wrote - (" in proc.stderr
    checked = run_bytes("check", "-", input=proc.stdout)
    assert checked.returncode == 0
    refused = run("shapes", str(valid), "-o", "-", "--external-data")
    assert refused.returncode == 2
    assert "not with standard output" in refused.stderr


def test_input_format_forces_the_format_whatever_the_extension(tmp_path) -> None:
    """A binary model named .json is parsed as json text by default (as
    onnx.load does), and read as the binary format with --input-format
    protobuf; a json model on standard input needs --input-format json."""
    valid = SAMPLES / "tiny_cnn.onnx"
    named_json = tmp_path / "binary.json"
    shutil.copy(valid, named_json)
    proc = run("check", str(named_json))
    assert proc.returncode == 2
    assert "not a valid ONNX model in json format:" in proc.stdout
    assert "at byte" not in proc.stdout
    assert run("check", str(named_json), "--input-format", "protobuf").returncode == 0
    both = run("check", str(named_json), str(valid), "--input-format", "protobuf", "-j", "2")
    assert both.returncode == 0, both.stdout
    for command in ("info", "shapes"):
        proc = run(command, str(named_json), "--input-format", "protobuf", "--json")
        assert proc.returncode == 0, proc.stderr
    text = tmp_path / "m.json"
    onnx.save_model(onnx.load(str(valid)), text)
    assert run_bytes("check", "-", input=text.read_bytes()).returncode == 2
    proc = run_bytes("check", "-", "--input-format", "json", input=text.read_bytes())
    assert proc.returncode == 0, proc.stdout


def test_paths_of_pipes_and_devices(tmp_path) -> None:
    """`/dev/stdin` fed by a pipe is the model piped (before: an empty
    model, "invalid"); a device is unreadable (exit 2), not a model."""
    valid = SAMPLES / "tiny_cnn.onnx"
    proc = run_bytes("check", "/dev/stdin", input=valid.read_bytes())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert b"/dev/stdin: valid" in proc.stdout
    if Path("/dev/zero").exists():
        proc = run("check", "/dev/zero")
        assert proc.returncode == 2
        assert "a character device, not a model file" in proc.stdout + proc.stderr


def test_running_out_of_memory_on_a_stream_is_an_unreadable_model(monkeypatch, capsys) -> None:
    """Standard input from a pipe is read whole: out of memory, the model is
    unreadable (exit 2, a message), not a traceback."""
    from onnxfast import cli

    class Exhausted:
        def read(self, *args: object) -> bytes:
            raise MemoryError

    class Stdin:
        buffer = Exhausted()

    monkeypatch.setattr(sys, "stdin", Stdin())
    for command in (["check", "-"], ["info", "-"], ["shapes", "-"]):
        assert cli.main(command) == cli.EXIT_ERROR
        out, err = capsys.readouterr()
        assert "out of memory reading the model" in out + err
        assert "Traceback" not in out + err


def _mapped(path: Path) -> bool:
    """Whether this process maps the file at `path`."""
    return str(path.resolve()) in Path("/proc/self/maps").read_text()


def test_no_mmap_reads_the_files_so_rewriting_them_cannot_kill_the_check(tmp_path) -> None:
    """--no-mmap (check, info, shapes): the same verdicts and tables, from
    files read into memory: a file rewritten or truncated meanwhile (an
    upload in progress) cannot end the process with SIGBUS, as a map of it
    can. Checked here: the file is not mapped while its model lives, and a
    model read so survives its file's truncation."""
    import onnxfast
    from onnxfast import cli

    path = tmp_path / "m.onnx"
    shutil.copy(SAMPLES / "tiny_cnn.onnx", path)
    for command in (["check", "--json"], ["info", "--json"], ["shapes", "--json"]):
        default = run(*command, str(path))
        read = run(*command, str(path), "--no-mmap")
        assert read.returncode == default.returncode
        strip = lambda out: [{**json.loads(x), "seconds": 0} for x in out.splitlines()]  # noqa: E731
        assert strip(read.stdout) == strip(default.stdout)
    if not Path("/proc/self/maps").exists():
        return
    mapped = onnxfast.load(cli._model_source(path))
    assert _mapped(path)
    del mapped
    model = cli._model_source(path, None, mmap=False)
    assert not _mapped(path)
    expected = onnx.load(path)
    path.write_bytes(b"")
    assert model.to_onnx() == expected
    assert onnxfast.check(model, full=True).ok


def test_a_policys_file_size_bounds_what_is_read_from_standard_input(tmp_path) -> None:
    """`curl … | onnxfast check - --policy p.toml`: a stream is read into
    memory, so max_file_bytes stops the read (P009, exit 1), with or without
    --no-mmap: an endless stream is refused, not held."""
    policy = tmp_path / "policy.toml"
    policy.write_text("[policy]\nmax_file_bytes = 1048576\n")
    exe = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "onnxfast"]
    for extra in ([], ["--no-mmap"]):
        command = [*exe, "check", "-", "--policy", str(policy), "--json", *extra]
        proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert proc.stdin is not None
        sent = 0
        try:
            while sent < 256 << 20:
                proc.stdin.write(bytes(1 << 20))
                sent += 1 << 20
            proc.stdin.close()
        except BrokenPipeError:
            pass
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 1, err
        result = json.loads(out)
        assert [d["code"] for d in result["diagnostics"]] == ["P009"]
        assert sent < 16 << 20  # stopped near 1 MiB, not at 256 MiB


def test_outputs_that_cannot_be_written(tmp_path) -> None:
    """`shapes -o` and `check -o` to a folder or into a missing one: exit 2
    and what could not be written (before: the report's open() a traceback,
    the model's save worded as a missing input)."""
    valid = str(SAMPLES / "tiny_cnn.onnx")
    missing = tmp_path / "missing" / "out"
    cases = [
        (("shapes", valid, "-o", str(tmp_path)), f"cannot write {tmp_path}: Is a directory"),
        (("shapes", valid, "-o", str(missing)), f"cannot write {missing}: No such file"),
        (("check", valid, "-o", str(missing)), f"--output: cannot write {missing}: No such file"),
    ]
    for args, said in cases:
        proc = run(*args)
        assert proc.returncode == 2, proc.stderr
        assert said in proc.stderr
        assert "Traceback" not in proc.stderr


def test_file_names_that_are_not_utf8_are_printed_as_escapes(tmp_path) -> None:
    """A file name with a byte that is not UTF-8 (an upload's, say) reaches
    Python with a surrogate, which a strict UTF-8 stream (LANG=en_US.UTF-8)
    refused to print: the run ended with a traceback. Printed as an escape
    now, in every format, to the terminal or to -o."""
    import os

    name = os.fsdecode(bytes(tmp_path) + b"/\xffmodel.onnx")
    shutil.copy(SAMPLES / "tiny_cnn.onnx", name)
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    for fmt in ("text", "json", "sarif", "github"):
        proc = run("check", name, str(SAMPLES / "broken.onnx"), "--format", fmt, env=env)
        assert proc.returncode == 1, proc.stderr
        assert "Traceback" not in proc.stderr
        if fmt == "text":  # the byte as an escape
            assert "\\xffmodel.onnx: valid" in proc.stdout
        if fmt == "json":  # as json.dumps writes the surrogate
            assert "\\udcffmodel.onnx" in proc.stdout
    report = tmp_path / "report.txt"
    proc = run("check", name, "-o", str(report), env=env)
    assert proc.returncode == 0, proc.stderr
    assert "\\xffmodel.onnx: valid" in report.read_text()
    for command in (["info", name], ["shapes", name]):
        proc = run(*command, env=env)
        assert proc.returncode == 0, proc.stderr


def _terminal_controls(text: str) -> list[str]:
    """Characters of `text` a terminal acts on, or that reorder or forge
    what is shown (line breaks aside)."""
    import unicodedata

    return [c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


def test_model_strings_cannot_drive_the_terminal(tmp_path) -> None:
    """Names, the producer, metadata and the file's own name, with escape
    sequences (clear screen, window title), a carriage return, a forged
    line and a right-to-left override: every text output shows them as
    escapes (\\u{1b}), never as the characters (info printed them raw)."""
    import os

    hostile = "x\x1b[2J\x1b]0;pwned\x07\r\nfake: valid\u202eevil"
    model = onnx.load(SAMPLES / "tiny_cnn.onnx")
    model.producer_name = hostile
    model.graph.name = hostile
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = hostile
    model.metadata_props.add(key=hostile, value=hostile)
    path = tmp_path / ("m" + "\x1b[1m" + ".onnx")
    onnx.save(model, path)
    broken = onnx.load(SAMPLES / "tiny_cnn.onnx")
    broken.graph.node[0].input[0] = hostile  # an undefined input: a finding
    bad = tmp_path / "bad.onnx"
    onnx.save(broken, bad)
    for command in (
        ["info", str(path)],
        ["shapes", str(path)],
        ["check", str(path), str(bad), "--full"],
        ["check", str(bad), "--format", "github"],
    ):
        proc = run(*command)
        assert proc.returncode in (0, 1), proc.stderr
        assert _terminal_controls(proc.stdout + proc.stderr) == [], command
        # Escaped: as the checker writes it, or as a type's repr() of a dim.
        assert "\\u{1b}" in proc.stdout or "\\x1b" in proc.stdout, command
    assert "fake: valid" not in run("info", str(path)).stdout.splitlines()
    assert os.path.exists(path)


class _KillsItsWorker:
    """A file list item whose unpickling, in the worker it is sent to, kills
    that worker with SIGKILL (as the kernel's out-of-memory killer would)."""

    def __reduce__(self) -> tuple[Any, ...]:
        import signal

        return (signal.raise_signal, (signal.SIGKILL,))

    def __str__(self) -> str:
        return "killer"


def test_a_worker_that_dies_costs_only_its_file() -> None:
    """check -j: a worker process killed while it holds a file (out of
    memory, SIGBUS from a file changed under its map) made the whole run a
    BrokenProcessPool traceback, every other result lost. Now that file is
    unreadable (F001: killed by SIGKILL), the others are checked, in order,
    those of its batch too."""
    from onnxfast import cli

    valid, broken = SAMPLES / "tiny_cnn.onnx", SAMPLES / "broken.onnx"
    # 128 files: batches of 8, two of which hold a killer (checked again a
    # file at a time: the killer alone dies again).
    files: list[Any] = [valid, broken, valid, valid] * 32
    files[5] = files[100] = _KillsItsWorker()
    options = (False, False, None, False, False, None, True)
    results = list(cli._checked_by_workers(files, options, 2))  # type: ignore[arg-type]
    assert [f for f, _ in results] == files
    for f, result in results:
        if isinstance(f, _KillsItsWorker):
            assert result["error_type"] == "WorkerDied"
            assert "killed by SIGKILL (signal 9)" in result["error"]
        else:
            assert result["ok"] == (f == valid), result


def test_timeout_gives_up_on_a_model_and_goes_on(tmp_path) -> None:
    """--timeout: each model is checked in a worker killed at the deadline.
    A FIFO no one writes to (its open() waits forever, as cat's would) is
    unreadable after the timeout; the models around it are checked."""
    import os
    import time

    if not hasattr(os, "mkfifo"):
        return
    hang = tmp_path / "hang.onnx"
    os.mkfifo(hang)
    valid, broken = str(SAMPLES / "tiny_cnn.onnx"), str(SAMPLES / "broken.onnx")
    started = time.monotonic()
    proc = run("check", valid, str(hang), broken, "--timeout", "1", "--json")
    assert time.monotonic() - started < 60
    assert proc.returncode == 2, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["path"] for r in results] == [valid, str(hang), broken]
    assert [r["ok"] for r in results] == [True, False, False]
    assert results[1]["error_type"] == "TimedOut"
    assert "gave up after 1 s" in results[1]["error"]
    assert results[2]["errors"] > 0
    for bad in (["--timeout", "0"], ["-", "--timeout", "1"]):
        refused = run("check", valid, *bad)
        assert refused.returncode == 2
        assert "--timeout" in refused.stderr


def test_workers_that_cannot_start_end_the_run_with_an_error() -> None:
    """A worker that dies before its imports are done (here: its arguments
    kill it as they are unpickled) is not restarted again and again: the
    run stops with WorkersFailed, which `check` reports (exit 2)."""
    import pytest

    from onnxfast import cli

    options = (_KillsItsWorker(),)
    with pytest.raises(cli.WorkersFailed, match="could not start"):
        list(cli._checked_by_workers([SAMPLES / "tiny_cnn.onnx"] * 4, options, 2))
