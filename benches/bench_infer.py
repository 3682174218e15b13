"""Shape-inference benchmark: onnxfast.infer_shapes against
onnx.shape_inference.infer_shapes, same run.

    python benches/bench_infer.py [--quick]

- the 200,000-node graph (Add/Relu chain) and the 150,000-node exporter
  graph with attributes and value_info: from the path (onnx loads, then
  infers) and already loaded (inference only, the model loaded in setup);
- the ~1.5 GB fp16 inline model from its path (onnxfast reads no weight;
  onnx must parse it, and its infer_shapes serializes and parses it again),
  and inferred then written to a file (`infer_shapes_path` on both sides;
  onnxfast's writes the weights from the map);
- a model with 2.5 GiB of external data: onnx can infer it only without its
  data (load_external_data=False); loaded with its data the ModelProto is
  over 2 GiB and infer_shapes refuses it. onnxfast maps the weights and reads
  none of them either way;
- the single-file model over 2 GiB, which onnx cannot load at all;
- data propagation (`data_prop=True`, both sides) on a 210,000-node graph
  of dynamic-axes shape computations (Shape, Gather, Concat, Reshape), and
  the values each side leaves unknown;
- against onnxruntime's symbolic_shape_infer.py (a second table): that
  graph, and a 32-layer 4-bit LLM decoder of onnxruntime's operators
  (GroupQueryAttention, MatMulNBits, ...), symbolic dims on both sides.

Each case runs in fresh processes, onnx and onnxfast taking turns; median
time, farthest run from it, peak RSS growth.
"""

from __future__ import annotations

import argparse
import sys

from _common import (
    DATA,
    graph_models,
    huge_model,
    llm_model,
    measure_interleaved,
    result_rows,
    shape_ops_model,
    table,
    transformer_model,
    warm,
)

ONNX_INFER = "onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)"


def versus(onnx_case: tuple[str, str], ours_case: tuple[str, str], repeat: int) -> dict:
    """onnx's and onnxfast's (setup, statement), measured taking turns."""
    return measure_interleaved({"onnx": onnx_case, "onnxfast": ours_case}, repeat=repeat)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeat = 1 if args.quick else 5
    chain, exporter = graph_models(args.quick)
    big = transformer_model(
        DATA / ("transformer_small.onnx" if args.quick else "transformer_1p5gb.onnx"),
        layers=2 if args.quick else 15,
    )
    external = DATA / "external_2p5gb" / "model.onnx"
    huge = None if args.quick else huge_model(DATA / "huge_2p5gib.onnx")
    rows = []

    def add(case: str, results: dict) -> None:
        rows.extend(result_rows(case, results))

    for label, path in (("200k-node chain", chain), ("150k exporter nodes + value_info", exporter)):
        warm(path)
        add(
            f"{label}, from path",
            versus(
                ("import onnx", f"m = onnx.load({str(path)!r})\n{ONNX_INFER}"),
                ("import onnxfast", f"onnxfast.infer_shapes({str(path)!r})"),
                repeat,
            ),
        )
        add(
            f"{label}, loaded",
            versus(
                (f"import onnx\nm = onnx.load({str(path)!r})", ONNX_INFER),
                (
                    f"import onnxfast\nm = onnxfast.load({str(path)!r})",
                    "onnxfast.infer_shapes(m)",
                ),
                repeat,
            ),
        )
    warm(big)
    add(
        f"{big.stat().st_size / 1e9:.1f} GB inline weights, from path",
        versus(
            ("import onnx", f"m = onnx.load({str(big)!r})\n{ONNX_INFER}"),
            ("import onnxfast", f"onnxfast.infer_shapes({str(big)!r})"),
            repeat,
        ),
    )
    # Annotating a file: infer and write the result (onnx's infer_shapes_path).
    saved = DATA / "inferred_out.onnx"
    add(
        f"{big.stat().st_size / 1e9:.1f} GB inline weights, inferred and saved",
        versus(
            (
                "import onnx",
                f"onnx.shape_inference.infer_shapes_path({str(big)!r}, {str(saved)!r},"
                " check_type=True, strict_mode=True)",
            ),
            (
                "import onnxfast",
                f"onnxfast.infer_shapes_path({str(big)!r}, {str(saved)!r}, strict_mode=True)",
            ),
            repeat,
        ),
    )
    saved.unlink(missing_ok=True)
    if external.exists():
        add(
            "2.5 GiB external data, without its data",
            versus(
                (
                    "import onnx",
                    f"m = onnx.load({str(external)!r}, load_external_data=False)\n" + ONNX_INFER,
                ),
                ("import onnxfast", f"onnxfast.infer_shapes({str(external)!r})"),
                repeat,
            ),
        )
        add(
            "2.5 GiB external data, loaded with it",
            versus(
                ("import onnx", f"m = onnx.load({str(external)!r})\n{ONNX_INFER}"),
                (
                    "import onnxfast",
                    f"m = onnxfast.load({str(external)!r}, load_external_data=True)\n"
                    "onnxfast.infer_shapes(m)",
                ),
                1 if args.quick else 3,
            ),
        )
    if huge is not None:
        add(
            "2.5 GiB single file, from path",
            versus(
                ("import onnx", f"m = onnx.load({str(huge)!r})\n{ONNX_INFER}"),
                ("import onnxfast", f"onnxfast.infer_shapes({str(huge)!r})"),
                1 if args.quick else 3,
            ),
        )
    shapes = shape_ops_model(
        DATA / ("shape_ops_2k.onnx" if args.quick else "shape_ops_210k.onnx"),
        layers=150 if args.quick else 15_000,
    )
    warm(shapes)
    onnx_dp = ONNX_INFER.replace(")", ", data_prop=True)")
    add(
        "210k shape-computation nodes, data_prop, loaded",
        versus(
            (f"import onnx\nm = onnx.load({str(shapes)!r})", onnx_dp),
            (
                f"import onnxfast\nm = onnxfast.load({str(shapes)!r})",
                "onnxfast.infer_shapes(m, data_prop=True)",
            ),
            repeat,
        ),
    )
    print(table(rows, ["case", "library", "time", "spread", "peak RSS growth", "onnx / ours"]))
    print()
    print(unknown_dims(shapes))
    print()
    print(against_symbolic_shape_infer(shapes, args.quick, repeat))
    return 0


SSI = "import onnx\nfrom onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference"


def against_symbolic_shape_infer(shapes, quick: bool, repeat: int) -> str:
    """onnxruntime's symbolic_shape_infer.py (SymPy; what its transformer
    optimizer runs) against `infer_shapes(symbolic=True, data_prop=True)`,
    from the path: the shape-computation graph, and a 4-bit LLM decoder of
    onnxruntime's operators (ours with contrib_ops=True; onnx, which knows
    none of them, for reference)."""
    llm = llm_model(DATA / ("llm_4.onnx" if quick else "llm_32.onnx"), layers=4 if quick else 32)
    rows = []
    ours = "onnxfast.infer_shapes({p!r}, symbolic=True, data_prop=True{more})"
    for label, path, more, with_onnx in (
        (f"{'2k' if quick else '210k'} shape-computation nodes", shapes, "", False),
        (
            f"{4 if quick else 32}-layer 4-bit LLM decoder (onnxruntime's operators)",
            llm,
            ", contrib_ops=True",
            True,
        ),
    ):
        warm(path)
        p = str(path)
        cases = {
            "onnxruntime SSI": (SSI, f"SymbolicShapeInference.infer_shapes(onnx.load({p!r}))"),
            "onnxfast": ("import onnxfast", ours.format(p=p, more=more)),
        }
        if with_onnx:
            cases["onnx"] = ("import onnx", f"m = onnx.load({p!r})\n" + ONNX_INFER)
        results = measure_interleaved(cases, repeat=repeat)
        rows.extend(result_rows(f"{label}, from path", results, base="onnxruntime SSI"))
    return table(rows, ["case", "library", "time", "spread", "peak RSS growth", "SSI / it"])


def unknown_dims(path) -> str:
    """How many dims of the value_info each side leaves unknown (a fresh
    unk__N name or none) with data_prop=True, on the shape-computation graph."""
    import onnx

    import onnxfast

    def count(model: onnx.ModelProto) -> tuple[int, int]:
        dims = [d for v in model.graph.value_info for d in v.type.tensor_type.shape.dim]
        unknown = sum(
            1
            for d in dims
            if (not d.HasField("dim_value") and not d.dim_param) or d.dim_param.startswith("unk__")
        )
        return unknown, len(dims)

    m = onnx.load(path)
    theirs = count(onnx.shape_inference.infer_shapes(m, strict_mode=True, data_prop=True))
    ours = count(onnxfast.infer_shapes(path, strict=True, data_prop=True).to_onnx())
    return (
        f"data_prop on {path.name}: dims left unknown: onnx {theirs[0]:,} of {theirs[1]:,}, "
        f"onnxfast {ours[0]:,} of {ours[1]:,}"
    )


if __name__ == "__main__":
    sys.exit(main())
