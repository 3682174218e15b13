"""Checker benchmark: onnxfast.check_model against onnx.checker.check_model, same run.

    python benches/bench_check.py [--quick]

- the 200,000-node graph, already loaded (checker time only);
- the ~1.5 GB fp16 inline model checked from its path (onnxfast maps it and
  reads no weight; onnx must load it first): time and peak RSS growth.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _common import (
    DATA,
    chain_model,
    fmt_bytes,
    fmt_seconds,
    measure_interleaved,
    table,
    transformer_model,
    warm,
)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeat = 1 if args.quick else 5
    chain = chain_model(DATA / "chain_200k.onnx")
    big = transformer_model(
        DATA / ("transformer_small.onnx" if args.quick else "transformer_1p5gb.onnx"),
        layers=2 if args.quick else 15,
    )
    warm(chain)
    warm(big)
    rows = []
    # Checker only (model already in memory, checked once in setup): the mean
    # of `repeat` calls in one process.
    loop = "for _ in range({r}):\n    {call}\n"
    onnx_setup = f"import onnx\nm = onnx.load({str(chain)!r})\nonnx.checker.check_model(m)"
    ours_setup = f"import onnxfast\nm = onnxfast.load({str(chain)!r})\nonnxfast.check_model(m)"
    # Three processes each, taking turns (one process when --quick).
    checked = measure_interleaved(
        {
            "onnx": (onnx_setup, loop.format(r=repeat, call="onnx.checker.check_model(m)")),
            "ours": (ours_setup, loop.format(r=repeat, call="onnxfast.check_model(m)")),
        },
        repeat=1 if args.quick else 3,
    )
    r_onnx, r_ours = checked["onnx"], checked["ours"]
    t_onnx, t_ours = r_onnx["seconds"] / repeat, r_ours["seconds"] / repeat
    rows.append(
        [
            "200k-node graph, loaded",
            "onnx.checker.check_model",
            fmt_seconds(t_onnx),
            "",
            f"{t_onnx / t_ours:.1f}× slower",
        ]
    )
    rows.append(
        ["200k-node graph, loaded", "onnxfast.check_model", fmt_seconds(t_ours), "", "1.0×"]
    )
    # From a path: onnx needs the path variant above 2 GB; below, it loads the protobuf.
    by_path = measure_interleaved(
        {
            "onnx": ("import onnx", f"onnx.checker.check_model({str(big)!r})"),
            "ours": ("import onnxfast", f"onnxfast.check_model({str(big)!r})"),
        },
        repeat=1 if args.quick else 3,
    )
    path_onnx, path_ours = by_path["onnx"], by_path["ours"]
    label = f"{fmt_bytes(big.stat().st_size)} inline model, from its path"
    rows.append(
        [
            label,
            "onnx.checker.check_model(path)",
            fmt_seconds(path_onnx["seconds"]),
            fmt_bytes(path_onnx["peak_growth"]),
            f"{path_onnx['seconds'] / path_ours['seconds']:.0f}× slower",
        ]
    )
    rows.append(
        [
            label,
            "onnxfast.check_model(path)",
            fmt_seconds(path_ours["seconds"]),
            fmt_bytes(path_ours["peak_growth"]),
            "1.0×",
        ]
    )
    print(table(rows, ["input", "call", "time", "peak RSS growth", "vs onnxfast"]))
    print()
    print(thread_scaling())
    return 0


def thread_scaling() -> str:
    """Load + check 48 medium models (3,000 nodes, 1 MiB of weights each) on
    one thread, then on one thread per core: the GIL is released in Rust for
    inputs of 256 KiB and more."""
    import os
    import time
    from concurrent.futures import ThreadPoolExecutor

    import onnxfast

    folder = DATA / "medium"
    files = [chain_model(folder / f"m{i}.onnx", nodes=3000, weights=1 << 20) for i in range(48)]
    for f in files:
        warm(f)

    def job(path: Path) -> bool:
        model = onnxfast.load(path)
        for t in model.graph.initializer:
            t.numpy(dtype="float32") if t.data_type == 10 else t.numpy()
        return onnxfast.check(model).ok

    list(map(job, files))  # warm up
    t = time.perf_counter()
    list(map(job, files))
    one = time.perf_counter() - t
    cores = os.cpu_count() or 1
    with ThreadPoolExecutor(cores) as pool:
        t = time.perf_counter()
        list(pool.map(job, files))
        many = time.perf_counter() - t
    label = f"{len(files)} models (3k nodes, 1 MiB fp16), load + numpy + check"
    rows = [
        [label, "1 thread", fmt_seconds(one), "1.0×"],
        [label, f"{cores} threads", fmt_seconds(many), f"{one / many:.2f}×"],
    ]
    return table(rows, ["workload", "threads", "time", "speed-up"])


if __name__ == "__main__":
    sys.exit(main())
