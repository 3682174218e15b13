"""Saving benchmark: a loaded model written back out, onnx against onnxfast.

    python benches/bench_save.py [--quick]

The ~1.5 GB fp16 transformer with inline weights (bench_load.py's) is loaded
and saved, to a path and to an open binary file object, in fresh processes
taking turns: onnx.load + onnx.save_model(proto, f) (which serializes the
whole model into one bytes object, then writes it) against onnxfast.load +
Model.save(f) (the source's bytes streamed from the map: to a path through a
temporary file, to a file object in chunks of at most 4 MiB). Then the same
model, and one of 20,000 small weights, saved with a data file per tensor
(`save_as_external_data=True, all_tensors_to_one_file=False`) into an empty
folder (emptied before each run, untimed). Median time, farthest run from
it, peak RSS growth; the written files are compared (onnx's and ours, file
by file).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from _common import DATA, measure_interleaved, result_rows, table, transformer_model, warm

CASES = {
    "to a path": {
        "onnx": "onnx.save_model(onnx.load({src!r}), {out!r})",
        "onnxfast": "onnxfast.load({src!r}).save({out!r})",
    },
    "to an open file object": {
        "onnx": "with open({out!r}, 'wb') as f:\n    onnx.save_model(onnx.load({src!r}), f)",
        "onnxfast": "with open({out!r}, 'wb') as f:\n    onnxfast.load({src!r}).save(f)",
    },
}


# A data file per tensor, into a folder emptied before each run.
PER_TENSOR = {
    "onnx": "onnx.save_model(onnx.load({src!r}), {out!r}, save_as_external_data=True,"
    " all_tensors_to_one_file=False)",
    "onnxfast": "onnxfast.load({src!r}).save({out!r}, save_as_external_data=True,"
    " all_tensors_to_one_file=False)",
}
EMPTY_FOLDER = (
    "import shutil, os\nshutil.rmtree({folder!r}, ignore_errors=True)\nos.makedirs({folder!r})"
)


def small_weights_model(path: Path, *, count: int = 20_000, floats: int = 512) -> Path:
    """`count` fp32 initializers of `floats` values each (2 KiB: over onnx's
    default size_threshold), used by one Identity node; built on first use."""
    if path.exists():
        return path
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    inits = [
        numpy_helper.from_array(np.full(floats, i, dtype=np.float32), name=f"w{i}")
        for i in range(count)
    ]
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Identity", ["w0"], ["y"])],
        "weights",
        [],
        [vi("y", TensorProto.FLOAT, [floats])],
        initializer=inits,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    return path


def same_folders(a: Path, b: Path) -> bool:
    names = sorted(os.listdir(a))
    return names == sorted(os.listdir(b)) and all(
        filecmp.cmp(a / n, b / n, shallow=False) for n in names
    )


def per_tensor_rows(title: str, src: Path, scratch: str, repeat: int) -> list[list[str]]:
    folders = {lib: Path(scratch) / f"{lib}-files" for lib in PER_TENSOR}
    results = measure_interleaved(
        {
            lib: (
                f"import {lib}\n" + EMPTY_FOLDER.format(folder=str(folders[lib])),
                stmt.format(src=str(src), out=str(folders[lib] / "m.onnx")),
            )
            for lib, stmt in PER_TENSOR.items()
        },
        repeat=repeat,
    )
    if not any("error" in r for r in results.values()) and not same_folders(*folders.values()):
        raise SystemExit(f"{title}: onnx's files and onnxfast's differ")
    files = len(os.listdir(folders["onnxfast"]))
    return result_rows(f"{title}, a file per tensor ({files} files)", results)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="a small model, one run")
    args = parser.parse_args()
    src = (
        transformer_model(DATA / "transformer_small.onnx", layers=2)
        if args.quick
        else transformer_model(DATA / "transformer_1p5gb.onnx")
    )
    warm(src)
    size = src.stat().st_size
    rows = []
    with tempfile.TemporaryDirectory(dir=DATA) as scratch:
        for case, stmts in CASES.items():
            outs = {lib: str(Path(scratch) / f"{lib}.onnx") for lib in stmts}
            results = measure_interleaved(
                {
                    lib: (f"import {lib}", stmt.format(src=str(src), out=outs[lib]))
                    for lib, stmt in stmts.items()
                },
                repeat=1 if args.quick else 3,
            )
            for lib, out in outs.items():
                if "error" not in results[lib] and not filecmp.cmp(src, out, shallow=False):
                    raise SystemExit(f"{lib} {case}: the written file differs from the source")
            rows.extend(result_rows(f"{size / 2**20:.0f} MiB model, {case}", results))
            for out in outs.values():
                os.unlink(out)
        repeat = 1 if args.quick else 3
        rows.extend(per_tensor_rows(f"{size / 2**20:.0f} MiB model", src, scratch, repeat))
        count = 2_000 if args.quick else 20_000
        small = small_weights_model(DATA / f"weights_{count // 1000}k.onnx", count=count)
        warm(small)
        rows.extend(per_tensor_rows(f"{count:,} weights of 2 KiB", small, scratch, repeat))
    print(table(rows, ["case", "library", "time", "spread", "peak RSS growth", "onnx / ours"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
