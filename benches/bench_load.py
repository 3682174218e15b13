"""Load benchmark: onnxfast.load against onnx.load and onnx_ir.load, same run.

    python benches/bench_load.py [--quick]

Inputs are built on first use under bench-data/ (ONNXFAST_BENCH_DATA):
a ~1.5 GB fp16 transformer-shaped model with inline weights, a 200,000-node
graph, and a 2.5 GiB single-file model (onnx cannot read it). Prints a
markdown table of median wall time and peak RSS growth, with ratios.
"""

from __future__ import annotations

import argparse
import sys

from _common import (
    DATA,
    chain_model,
    fmt_bytes,
    fmt_seconds,
    huge_model,
    measure_interleaved,
    table,
    transformer_model,
    warm,
)

LOADERS = {
    "onnx": ("import onnx", "m = onnx.load({path!r})"),
    "onnx_ir": ("import onnx_ir", "m = onnx_ir.load({path!r})"),
    "onnxfast": ("import onnxfast", "m = onnxfast.load({path!r})"),
}

# What a user does next: walk every node (forces object creation where lazy).
TOUCH = {
    "onnx": "n = sum(len(x.input) for x in m.graph.node)",
    "onnx_ir": "n = sum(len(x.inputs) for x in m.graph)",
    "onnxfast": "n = sum(len(x.input) for x in m.graph.node)",
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller inputs, one repeat")
    args = parser.parse_args()
    # Medians of 5 fresh processes: single runs on this shared VM move by tens of percent.
    repeat = 1 if args.quick else 5
    inputs = [
        (
            "fp16 transformer, inline",
            transformer_model(
                DATA / ("transformer_small.onnx" if args.quick else "transformer_1p5gb.onnx"),
                layers=2 if args.quick else 15,
            ),
        ),
        ("200k-node graph", chain_model(DATA / "chain_200k.onnx")),
    ]
    if not args.quick:
        inputs.append(("2.5 GiB single file", huge_model(DATA / "huge_2p5gib.onnx")))

    rows = []
    for title, path in inputs:
        warm(path)
        size = path.stat().st_size
        results = measure_interleaved(
            {lib: (setup, stmt.format(path=str(path))) for lib, (setup, stmt) in LOADERS.items()},
            repeat=repeat,
        )
        base = results["onnxfast"]
        for lib, r in results.items():
            if "error" in r:
                rows.append([title, fmt_bytes(size), lib, "fails: " + r["error"][:60], "", "", ""])
                continue
            speed = r["seconds"] / base["seconds"] if "seconds" in base else float("nan")
            rows.append(
                [
                    title,
                    fmt_bytes(size),
                    lib,
                    fmt_seconds(r["seconds"]),
                    fmt_bytes(r["peak_growth"]),
                    "1.0×" if lib == "onnxfast" else f"{speed:.1f}× slower",
                    "",
                ]
            )
        if "node" in title:
            touched = measure_interleaved(
                {
                    lib: (setup, stmt.format(path=str(path)) + "\n" + TOUCH[lib])
                    for lib, (setup, stmt) in LOADERS.items()
                },
                repeat=repeat,
            )
            for lib, r in touched.items():
                if "error" not in r:
                    rows.append(
                        [
                            title + " + walk nodes",
                            fmt_bytes(size),
                            lib,
                            fmt_seconds(r["seconds"]),
                            fmt_bytes(r["peak_growth"]),
                            "",
                            "",
                        ]
                    )
    print(
        table(rows, ["input", "file", "library", "load time", "peak RSS growth", "vs onnxfast", ""])
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
