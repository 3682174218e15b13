"""Regenerates rust/onnxfast-core/data/ort_schemas.txt from the installed
onnxruntime: the schemas of the onnxruntime operators that
`infer_shapes(contrib_ops=True)` infers (infer/ops/contrib.rs), which the
checker verifies those operators' nodes against with `contrib_ops=True`.

    python scripts/gen_ort_schemas.py

Same format as data/op_schemas.txt (see scripts/gen_op_schemas.py); the
header names the onnxruntime version. Rerun when the pinned onnxruntime
changes, and when a rule is added to contrib.rs (a Rust test checks that
the two name the same operators).
"""

from __future__ import annotations

import sys
from pathlib import Path

import onnx
import onnxruntime
from onnxruntime.capi import onnxruntime_pybind11_state as ort_c

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_op_schemas import _default, schema_lines

OUT = Path(__file__).resolve().parent.parent / "rust" / "onnxfast-core" / "data" / "ort_schemas.txt"

# (domain, operator, version): what contrib.rs has rules for. The
# default-domain LayerNormalization is onnxruntime's own, before opset 17.
OPERATORS = [
    ("com.microsoft", name, 1)
    for name in [
        "Attention",
        "Sampling",
        "GreedySearch",
        "BeamSearch",
        "WhisperBeamSearch",
        "PackedMultiHeadAttention",
        "PackedAttention",
        "SparseAttention",
        "DecoderMaskedMultiHeadAttention",
        "RestorePadding",
        "RemovePadding",
        "RelativePositionBias",
        "QMoE",
        "MoE",
        "GatedRelativePositionBias",
        "BiasAdd",
        "BiasGelu",
        "BiasSplitGelu",
        "DequantizeLinear",
        "DynamicQuantizeMatMul",
        "EmbedLayerNormalization",
        "FastGelu",
        "FusedConv",
        "FusedGemm",
        "FusedMatMul",
        "GatherBlockQuantized",
        "Gelu",
        "GemmFastGelu",
        "GroupNorm",
        "GroupQueryAttention",
        "MatMulIntegerToFloat",
        "MatMulNBits",
        "MultiHeadAttention",
        "NhwcConv",
        "NhwcMaxPool",
        "QAttention",
        "QGemm",
        "QLinearAdd",
        "QLinearAveragePool",
        "QLinearConcat",
        "QLinearConv",
        "QLinearGlobalAveragePool",
        "QLinearLeakyRelu",
        "QLinearMul",
        "QLinearSigmoid",
        "QLinearSoftmax",
        "QLinearWhere",
        "QuantizeLinear",
        "QuickGelu",
        "RotaryEmbedding",
        "SkipGroupNorm",
        "SkipLayerNormalization",
        "SkipSimplifiedLayerNormalization",
        # contrib_extra.rs
        "GridSample",
        "Inverse",
        "Trilu",
        "ExpandDims",
        "GatherND",
        "Pad",
        "Range",
        "Unique",
        "CDist",
        "CropAndResize",
        "UnfoldTensor",
        "MaxpoolWithMask",
        "DynamicQuantizeLSTM",
        "MatMulInteger16",
        "MatMulBnb4",
        "TransposeMatMul",
        "NGramRepeatBlock",
        "MurmurHash3",
        "WordConvEmbedding",
        "GatedRMSNorm",
        "GatedAdd",
        "ScaledSiLU",
        "BranchwiseRMSNorm",
        "MRotaryEmbedding",
        "SampleOp",
        "LinearAttentionGate",
        "LinearAttention",
        "CausalConvWithState",
        "QEmbedLayerNormalization",
        "HyperConnectionPreMix",
        "HyperConnectionPostMix",
        "EngramGate",
        "NGramHashMapping",
        "BifurcationDetector",
    ]
] + [("", "SimplifiedLayerNormalization", 1), ("", "LayerNormalization", 1)]
# onnx's experimental operators of its first opsets, which onnxruntime keeps
# to opset 9 and deprecates at 10 (both schemas: the checker reports E406).
OPERATORS += [
    ("", name, version)
    for name in [
        "Affine",
        "Crop",
        "DynamicSlice",
        "ImageScaler",
        "ParametricSoftplus",
        "Scale",
        "ScaledTanh",
    ]
    for version in (1, 10)
]
# The NCHWc layout of its highest optimization level.
OPERATORS += [
    ("com.microsoft.nchwc", name, 1)
    for name in [
        "AveragePool",
        "Conv",
        "GlobalAveragePool",
        "GlobalMaxPool",
        "MaxPool",
        "ReorderInput",
        "ReorderOutput",
        "Upsample",
    ]
]

_OPTION = {
    ort_c.schemadef.OpSchema.FormalParameterOption.Single: "S",
    ort_c.schemadef.OpSchema.FormalParameterOption.Optional: "O",
    ort_c.schemadef.OpSchema.FormalParameterOption.Variadic: "V",
}


class _Attr:
    """An onnxruntime attribute spec, read as gen_op_schemas reads onnx's."""

    def __init__(self, serialized: bytes) -> None:
        self.default_value = onnx.AttributeProto()
        if serialized:
            self.default_value.ParseFromString(serialized)


def main() -> None:
    schemas = {(s.domain, s.name, s.since_version): s for s in ort_c.get_all_operator_schema()}
    missing = [key for key in OPERATORS if key not in schemas]
    if missing:
        raise SystemExit(f"onnxruntime {onnxruntime.__version__} has no schema for {missing}")
    lines = [
        f"# onnxruntime {onnxruntime.__version__}",
        "D com.microsoft 1 1",
        "D com.microsoft.nchwc 1 1",
    ]
    for key in sorted(OPERATORS):
        s = schemas[key]
        # onnxruntime does not expose min_arity; its schemas keep onnx's
        # default of 1.
        params = [
            (tag, p.name, _OPTION[p.option], 1, p.isHomogeneous, p.typeStr)
            for tag, group in (("I", s.inputs), ("O", s.outputs))
            for p in group
        ]
        attributes = [
            (name, int(a.type.value), a.required, _default(_Attr(a._default_value)))
            for name, a in s.attributes.items()
        ]
        how = "i" if s.has_type_and_shape_inference_function else "-"
        lines += schema_lines(s, how, params, attributes)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {len(OPERATORS)} schemas to {OUT}")


if __name__ == "__main__":
    main()
