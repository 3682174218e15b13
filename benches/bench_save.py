"""Saving benchmark: a loaded model written back out, onnx against onnxfast.

    python benches/bench_save.py [--quick]

The ~1.5 GB fp16 transformer with inline weights (bench_load.py's) is loaded
and saved, to a path and to an open binary file object, in fresh processes
taking turns: onnx.load + onnx.save_model(proto, f) (which serializes the
whole model into one bytes object, then writes it) against onnxfast.load +
Model.save(f) (the source's bytes streamed from the map: to a path through a
temporary file, to a file object in chunks of at most 4 MiB). Median time,
farthest run from it, peak RSS growth; the written files are compared.
"""

from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
from pathlib import Path

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
    print(table(rows, ["case", "library", "time", "spread", "peak RSS growth", "onnx / ours"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
