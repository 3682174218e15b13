"""Tensor benchmarks, onnxfast against onnx + numpy_helper and ml_dtypes, same run.

    python benches/bench_tensors.py [--quick]

1. Every initializer of the ~1.5 GB fp16 inline model as numpy arrays:
   onnxfast.load + [t.numpy() ...] against onnx.load + [to_array(t) ...]
   (wall time, peak RSS growth; fresh process each).
2. Conversion throughput to float32 of 256 MB stored tensors (float8e4m3fn,
   bfloat16, float16, int4): onnxfast's Rust kernel (Tensor.numpy(dtype=
   np.float32), straight from the stored bytes) against ml_dtypes' / numpy's
   astype(np.float32) on the already-unpacked array.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import ml_dtypes
import numpy as np
from onnx import TensorProto, helper

import onnxfast

from _common import (
    DATA,
    fmt_bytes,
    fmt_seconds,
    measure_interleaved,
    table,
    transformer_model,
    warm,
)


def arrays_bench(quick: bool) -> str:
    name = "transformer_small.onnx" if quick else "transformer_1p5gb.onnx"
    path = transformer_model(DATA / name, layers=2 if quick else 15)
    warm(path)
    p = str(path)
    runs = {
        "onnx.load + to_array": (
            "import onnx\nfrom onnx import numpy_helper",
            f"m = onnx.load({p!r})\n"
            "arrays = [numpy_helper.to_array(t) for t in m.graph.initializer]",
        ),
        "onnxfast.load + numpy()": (
            # numpy and ml_dtypes are imported up front, as onnx's side does.
            "import onnxfast, numpy, ml_dtypes, onnxfast._numpy",
            f"m = onnxfast.load({p!r})\narrays = [t.numpy() for t in m.graph.initializer]",
        ),
    }
    results = measure_interleaved(runs, repeat=1 if quick else 3)
    base = results["onnxfast.load + numpy()"]["seconds"]
    rows = [
        [
            k,
            fmt_bytes(path.stat().st_size),
            fmt_seconds(r["seconds"]),
            fmt_bytes(r["peak_growth"]),
            f"{r['seconds'] / base:.0f}×",
        ]
        for k, r in results.items()
    ]
    return table(rows, ["initializers as numpy", "file", "time", "peak RSS growth", "vs onnxfast"])


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times) if repeat < 3 else statistics.median(times)


def convert_bench(quick: bool) -> str:
    stored = (16 if quick else 256) << 20
    rng = np.random.default_rng(0)
    cases = [
        ("float8e4m3fn", TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn, 1.0),
        ("bfloat16", TensorProto.BFLOAT16, ml_dtypes.bfloat16, 2.0),
        ("float16", TensorProto.FLOAT16, np.float16, 2.0),
        ("int4", TensorProto.INT4, ml_dtypes.int4, 0.5),
    ]
    rows = []
    repeat = 1 if quick else 5
    for label, code, dtype, bytes_per in cases:
        count = int(stored / bytes_per)
        raw = rng.integers(0, 256, size=stored, dtype=np.uint8)
        tensor = helper.make_tensor("t", code, [count], raw.tobytes(), raw=True)
        ours = onnxfast.load_tensor(tensor.SerializeToString())
        unpacked = ours.numpy()  # the ml_dtypes-typed array numpy_helper would give
        assert unpacked.dtype == np.dtype(dtype)
        theirs_t = _best(lambda u=unpacked: u.astype(np.float32), repeat)
        ours_t = _best(lambda o=ours: o.numpy(dtype=np.float32), repeat)
        # The floor: a fresh float32 array of the same size, written once.
        fill_t = _best(lambda n=count: np.full(n, 1.0, dtype=np.float32), repeat)
        check = ours.numpy(dtype=np.float32)
        assert np.array_equal(check.view(np.uint32), unpacked.astype(np.float32).view(np.uint32))
        gbs = lambda s, n=count: f"{n * 4 / s / 1e9:.2f} GB/s out"  # noqa: E731
        rows.append(
            [
                label,
                fmt_bytes(stored),
                fmt_seconds(theirs_t),
                gbs(theirs_t),
                fmt_seconds(ours_t),
                gbs(ours_t),
                f"{theirs_t / ours_t:.1f}×",
                f"{ours_t / fill_t:.2f}×",
            ]
        )
        del unpacked, check, ours, tensor, raw
    return table(
        rows,
        [
            "to float32",
            "stored",
            "ml_dtypes/numpy astype",
            "",
            "onnxfast kernel",
            "",
            "speed-up",
            "vs filling the output",
        ],
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print(arrays_bench(args.quick))
    print()
    print(convert_bench(args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())
