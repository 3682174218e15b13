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
    measure,
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
    r_onnx = measure(
        onnx_setup, loop.format(r=repeat, call="onnx.checker.check_model(m)"), repeat=1
    )
    r_ours = measure(ours_setup, loop.format(r=repeat, call="onnxfast.check_model(m)"), repeat=1)
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
    path_onnx = measure(
        "import onnx", f"onnx.checker.check_model({str(big)!r})", repeat=1 if args.quick else 3
    )
    path_ours = measure(
        "import onnxfast", f"onnxfast.check_model({str(big)!r})", repeat=1 if args.quick else 3
    )
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
    """Load + check the node-test corpus on 1 thread, then on one per core."""
    import importlib.util
    import os
    import time
    from concurrent.futures import ThreadPoolExecutor

    import onnxfast

    spec = importlib.util.spec_from_file_location(
        "gen", Path(__file__).parent.parent / "scripts" / "gen_node_corpus.py"
    )
    assert spec is not None
    assert spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    files = sorted(gen.generate(DATA / "corpus").glob("*/model.onnx"))

    def job(path: Path) -> bool:
        return onnxfast.check(onnxfast.load(path)).ok

    list(map(job, files))  # warm the page cache and the schema table
    t = time.perf_counter()
    list(map(job, files))
    one = time.perf_counter() - t
    cores = os.cpu_count() or 1
    with ThreadPoolExecutor(cores) as pool:
        t = time.perf_counter()
        list(pool.map(job, files))
        many = time.perf_counter() - t
    rows = [
        [f"{len(files)} corpus models, load + check", "1 thread", fmt_seconds(one), "1.0×"],
        [
            f"{len(files)} corpus models, load + check",
            f"{cores} threads",
            fmt_seconds(many),
            f"{one / many:.2f}×",
        ],
    ]
    return table(rows, ["workload", "threads", "time", "speed-up"])


if __name__ == "__main__":
    sys.exit(main())
