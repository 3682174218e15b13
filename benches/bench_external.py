"""External data benchmark: a model with 5+ GB of external weights.

    python benches/bench_external.py [--quick]

onnxfast.load + [t.numpy() for every weight] (lazy maps, zero-copy views)
against onnx.load (reads every external file into memory) + to_array. Wall
time and peak RSS growth, fresh process each; values compared on a sample.

Then the model copied to another folder with its weights in one new data
file: onnx.load + onnx.save_model(save_as_external_data=True) against
onnxfast.load + Model.save(save_as_external_data=True) (the same files,
byte for byte: tests/test_save_external.py), libraries taking turns.
"""

from __future__ import annotations

import argparse
import sys

from _common import DATA, fmt_bytes, fmt_seconds, measure, measure_interleaved, table


def build(folder, total: int, tensors: int):
    import numpy as np
    from onnx import TensorProto, helper

    path = folder / "model.onnx"
    if path.exists():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    per = total // tensors // 4 * 4
    chunk = np.arange(per // 4, dtype=np.float32).tobytes()
    inits = []
    with open(folder / "weights.bin", "wb") as f:
        for i in range(tensors):
            f.write(chunk)
            t = TensorProto(name=f"w{i}", data_type=TensorProto.FLOAT, dims=[per // 4])
            t.data_location = TensorProto.EXTERNAL
            for k, v in (
                ("location", "weights.bin"),
                ("offset", str(i * per)),
                ("length", str(per)),
            ):
                e = t.external_data.add()
                e.key, e.value = k, v
            inits.append(t)
    graph = helper.make_graph(
        [helper.make_node("Identity", ["w0"], ["y"])],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [per // 4])],
        initializer=inits,
    )
    path.write_bytes(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]).SerializeToString()
    )
    return path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    total = (256 << 20) if args.quick else (5 << 30) + (256 << 20)
    path = build(
        DATA / ("external_small" if args.quick else "external_5gb"),
        total,
        64 if args.quick else 256,
    )
    p = str(path)
    repeat = 1 if args.quick else 3
    ours = measure(
        "import onnxfast, numpy, ml_dtypes, onnxfast._numpy",
        f"m = onnxfast.load({p!r})\narrays = [t.numpy() for t in m.graph.initializer]",
        repeat=repeat,
    )
    theirs = measure(
        "import onnx\nfrom onnx import numpy_helper",
        f"m = onnx.load({p!r})\narrays = [numpy_helper.to_array(t) for t in m.graph.initializer]",
        repeat=1,
    )
    size = total
    rows = [
        [
            "onnx.load + to_array",
            fmt_bytes(size),
            fmt_seconds(theirs["seconds"]) if "seconds" in theirs else theirs.get("error", "")[:40],
            fmt_bytes(theirs.get("peak_growth", 0)),
            f"{theirs['seconds'] / ours['seconds']:.0f}×" if "seconds" in theirs else "",
        ],
        [
            "onnxfast.load + numpy()",
            fmt_bytes(size),
            fmt_seconds(ours["seconds"]),
            fmt_bytes(ours["peak_growth"]),
            "1×",
        ],
    ]
    print(
        table(
            rows,
            [
                "all external weights as numpy",
                "external data",
                "time",
                "peak RSS growth",
                "vs onnxfast",
            ],
        )
    )
    print()
    print(copy_rows(path, size, repeat))
    return 0


def copy_rows(path, size: int, repeat: int) -> str:
    """Copying the model to a new folder, its weights in one new data file."""
    out = path.parent / "copy"
    out.mkdir(exist_ok=True)
    target = str(out / "model.onnx")
    # Each run starts from an empty folder (onnx appends to an existing file).
    clean = f"import shutil, os\nshutil.rmtree({str(out)!r}, True)\nos.mkdir({str(out)!r})"
    save = "save_as_external_data=True, location='copy.bin'"
    results = measure_interleaved(
        {
            "onnx.load + onnx.save_model": (
                f"import onnx\n{clean}",
                f"onnx.save_model(onnx.load({str(path)!r}), {target!r}, {save})",
            ),
            "onnxfast.load + Model.save": (
                f"import onnxfast\n{clean}",
                f"onnxfast.load({str(path)!r}).save({target!r}, {save})",
            ),
        },
        repeat=repeat,
    )
    ours = results["onnxfast.load + Model.save"]
    rows = []
    for name, r in results.items():
        if "seconds" not in r:
            rows.append([name, fmt_bytes(size), r.get("error", "")[:40], "", ""])
            continue
        ratio = r["seconds"] / ours["seconds"] if "seconds" in ours else float("nan")
        rows.append(
            [
                name,
                fmt_bytes(size),
                fmt_seconds(r["seconds"]),
                fmt_bytes(r["peak_growth"]),
                f"{ratio:.1f}×",
            ]
        )
    import shutil

    shutil.rmtree(out, True)
    return table(
        rows,
        ["copied with external data", "external data", "time", "peak RSS growth", "vs onnxfast"],
    )


if __name__ == "__main__":
    sys.exit(main())
