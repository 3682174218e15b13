"""infer_shapes(contrib_ops=True): onnxruntime's own operators, against
onnxruntime itself: the types and shapes its InferenceSession infers for
each output (every dim it knows, ours must know the same), and the shapes
of the arrays it returns running the model at several sizes (every dim we
give, evaluated at those sizes, is the array's); operators without a CPU
kernel against its symbolic_shape_infer.py. Also: what it refuses, the
check with contrib_ops, and the command line."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from dataclasses import replace as dataclasses_replace
from pathlib import Path
from typing import Any, Callable

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.capi.onnxruntime_pybind11_state import Fail as OrtFail

import onnxfast
from onnxfast._shapes import infer_with_report

F, H, I32, I64, U8 = (
    TensorProto.FLOAT,
    TensorProto.FLOAT16,
    TensorProto.INT32,
    TensorProto.INT64,
    TensorProto.UINT8,
)
# Batch, sequence, past and total (past + sequence) lengths.
SIZES = [
    {"B": 1, "S": 3, "P": 5, "T": 8},
    {"B": 2, "S": 1, "P": 7, "T": 8},
    {"B": 3, "S": 4, "P": 0, "T": 4},
]
_ORT_TYPES = {
    "tensor(float)": F,
    "tensor(float16)": H,
    "tensor(int32)": I32,
    "tensor(int64)": I64,
    "tensor(uint8)": U8,
    "tensor(int8)": TensorProto.INT8,
    "tensor(uint32)": TensorProto.UINT32,
}
_rng = np.random.default_rng(0)
_ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Case:
    """One node (or a few) of onnxruntime's operators: its graph inputs
    (name, element type, dims with the symbols B, S, P), initializers, the
    outputs to compare, and the arrays to feed at given sizes."""

    name: str
    nodes: list[onnx.NodeProto]
    inputs: list[tuple[str, int, list[Any]]]
    outputs: list[str]
    feeds: Callable[[dict[str, int]], dict[str, np.ndarray]]
    initializers: list[onnx.TensorProto] = field(default_factory=list)
    opset: int = 21
    # Outputs whose dims onnxruntime's inference gives wrong (its kernel
    # returns another shape): compared with the arrays only.
    ort_inference_differs: tuple[str, ...] = ()

    def model(self) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes,
            self.name,
            [helper.make_tensor_value_info(n, t, d) for n, t, d in self.inputs],
            [onnx.ValueInfoProto(name=o) for o in self.outputs],
            initializer=self.initializers,
        )
        model = helper.make_model(
            graph,
            opset_imports=[
                helper.make_opsetid("", self.opset),
                helper.make_opsetid("com.microsoft", 1),
            ],
        )
        model.ir_version = 10
        return model


def ms(op: str, inputs: list[str], outputs: list[str], **attrs: Any) -> onnx.NodeProto:
    return helper.make_node(op, inputs, outputs, domain="com.microsoft", **attrs)


def const(name: str, array: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(array, name)


def rand(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return _rng.standard_normal(shape).astype(dtype)


def _cases() -> list[Case]:
    cases = []
    hidden = 16
    x3 = [("x", F, ["B", "S", hidden])]

    def x_feed(s: dict[str, int]) -> dict[str, np.ndarray]:
        return {"x": rand(s["B"], s["S"], hidden)}

    cases.append(
        Case(
            "skip_layer_norm",
            [
                ms(
                    "SkipLayerNormalization",
                    ["x", "skip", "gamma", "beta", "bias"],
                    ["y", "mean", "inv_std", "sum"],
                    epsilon=1e-5,
                )
            ],
            [*x3, ("skip", F, ["B", "S", hidden])],
            ["y", "mean", "inv_std", "sum"],
            lambda s: {**x_feed(s), "skip": rand(s["B"], s["S"], hidden)},
            [const(n, rand(hidden)) for n in ("gamma", "beta", "bias")],
        )
    )
    cases.append(
        Case(
            "skip_simplified_layer_norm",
            [
                ms(
                    "SkipSimplifiedLayerNormalization",
                    ["x", "skip", "gamma"],
                    ["y", "", "", "sum"],
                )
            ],
            [*x3, ("skip", F, ["B", "S", hidden])],
            ["y", "sum"],
            lambda s: {**x_feed(s), "skip": rand(s["B"], s["S"], hidden)},
            [const("gamma", rand(hidden))],
        )
    )
    for axis in (-1, 1):
        cases.append(
            Case(
                f"simplified_layer_norm_axis{axis}",
                [
                    helper.make_node(
                        "SimplifiedLayerNormalization", ["x", "scale"], ["y", "inv"], axis=axis
                    )
                ],
                x3,
                ["y", "inv"],
                x_feed,
                [const("scale", rand(*([hidden] if axis == -1 else [1, hidden])))],
                ort_inference_differs=("inv",) if axis == 1 else (),
            )
        )
    cases.append(
        Case(
            "layer_norm_before_opset17",
            [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y", "mean", "inv"])],
            x3,
            ["y", "mean", "inv"],
            x_feed,
            [const("g", rand(hidden)), const("b", rand(hidden))],
            opset=14,
        )
    )
    for op, extra in (
        ("FastGelu", ["bias"]),
        ("BiasGelu", ["bias"]),
        ("Gelu", []),
        ("QuickGelu", []),
    ):
        cases.append(
            Case(
                op.lower(),
                [ms(op, ["x", *extra], ["y"])],
                x3,
                ["y"],
                x_feed,
                [const("bias", rand(hidden))] if extra else [],
            )
        )
    # MatMulNBits: K=32 in blocks of 16, 4 bits, N=24.
    k, n, block = 32, 24, 16
    cases.append(
        Case(
            "matmul_nbits",
            [ms("MatMulNBits", ["a", "w", "scales"], ["y"], K=k, N=n, block_size=block, bits=4)],
            [("a", F, ["B", "S", k])],
            ["y"],
            lambda s: {"a": rand(s["B"], s["S"], k)},
            [
                const("w", _rng.integers(0, 255, (n, k // block, block // 2), dtype=np.uint8)),
                const("scales", rand(n * (k // block))),
            ],
        )
    )
    # Rotary embeddings over (B, S, heads·head_size), positions (B, S).
    head = 8
    cases.append(
        Case(
            "rotary_embedding",
            [ms("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], num_heads=2)],
            [*x3, ("pos", I64, ["B", "S"])],
            ["y"],
            lambda s: {
                **x_feed(s),
                "pos": np.tile(np.arange(s["S"], dtype=np.int64), (s["B"], 1)),
            },
            [const("cos", rand(32, head // 2)), const("sin", rand(32, head // 2))],
        )
    )
    for trans_a, trans_b in ((0, 1), (1, 0), (1, 1)):
        a_dims = ["B", hidden, "S"] if trans_a else ["B", "S", hidden]
        w = rand(24, hidden) if trans_b else rand(hidden, 24)
        cases.append(
            Case(
                f"fused_matmul_a{trans_a}_b{trans_b}",
                [ms("FusedMatMul", ["a", "w"], ["y"], transA=trans_a, transB=trans_b, alpha=0.5)],
                [("a", F, a_dims)],
                ["y"],
                lambda s, t=trans_a: {
                    "a": rand(s["B"], hidden, s["S"]) if t else rand(s["B"], s["S"], hidden)
                },
                [const("w", w)],
            )
        )
    # Batch dims moved (transBatchA/B): A (S, B, 16) read as B batches of
    # (S, 16); W (16, 2, 24) as 2 batches of (16, 24).
    for trans_a, trans_b in ((0, 0), (1, 0), (0, 1), (1, 1)):
        w = rand(24, 2, hidden) if trans_b else rand(hidden, 2, 24)
        a_dims = ["S", 2, hidden] if not trans_a else [hidden, 2, "S"]
        cases.append(
            Case(
                f"fused_matmul_batch_a{trans_a}_b{trans_b}",
                [
                    ms(
                        "FusedMatMul",
                        ["a", "w"],
                        ["y"],
                        transA=trans_a,
                        transB=trans_b,
                        transBatchA=1,
                        transBatchB=1,
                    )
                ],
                [("a", F, a_dims)],
                ["y"],
                lambda s, d=a_dims: {"a": rand(*(s[x] if isinstance(x, str) else x for x in d))},
                [const("w", w)],
            )
        )
    cases += _attention_cases(hidden)
    cases += _quantized_cases(hidden)
    cases += _image_cases()
    cases += _expert_cases()
    cases += _decoder_step_cases()
    cases += _extra_cases()
    # Embeddings of token ids, and a 4-bit quantized one gathered.
    cases.append(
        Case(
            "embed_layer_norm",
            [
                ms(
                    "EmbedLayerNormalization",
                    ["ids", "seg", "word", "pos", "segemb", "gamma", "beta", "mask"],
                    ["y", "mask_index"],
                )
            ],
            [("ids", I32, ["B", "S"]), ("seg", I32, ["B", "S"]), ("mask", I32, ["B", "S"])],
            ["y", "mask_index"],
            lambda s: {
                "ids": _rng.integers(0, 10, (s["B"], s["S"]), dtype=np.int32),
                "seg": np.zeros((s["B"], s["S"]), np.int32),
                "mask": np.ones((s["B"], s["S"]), np.int32),
            },
            [
                const("word", rand(10, hidden)),
                const("pos", rand(32, hidden)),
                const("segemb", rand(2, hidden)),
                const("gamma", rand(hidden)),
                const("beta", rand(hidden)),
            ],
        )
    )
    cases.append(
        Case(
            "gather_block_quantized",
            [ms("GatherBlockQuantized", ["data", "ids", "scales"], ["y"], block_size=16)],
            [("ids", I64, ["B", "S"])],
            ["y"],
            lambda s: {"ids": _rng.integers(0, 10, (s["B"], s["S"]), dtype=np.int64)},
            [
                const("data", _rng.integers(0, 255, (10, 8), dtype=np.uint8)),
                const("scales", rand(10, 1)),
            ],
        )
    )
    return cases


def _quantized_cases(hidden: int) -> list[Case]:
    """The com.microsoft operators of onnxruntime's int8 quantizer (static
    QDQ-to-QOperator and dynamic): uint8 activations, int8 weights."""
    scale = const("scale", np.array(0.05, np.float32))
    zp = const("zp", np.array(128, np.uint8))
    wzp = const("wzp", np.array(0, np.int8))

    def u8(*shape: int) -> np.ndarray:
        return _rng.integers(0, 255, shape, dtype=np.uint8)

    def qx(s: dict[str, int]) -> dict[str, np.ndarray]:
        return {"x": u8(s["B"], s["S"], hidden)}

    q_in = [("x", U8, ["B", "S", hidden])]
    cases = [
        Case(
            "quantize_dequantize_linear",
            [
                ms("QuantizeLinear", ["f", "scale", "zp"], ["q"]),
                ms("DequantizeLinear", ["q", "scale", "zp"], ["dq"]),
            ],
            [("f", F, ["B", "S", hidden])],
            ["q", "dq"],
            lambda s: {"f": rand(s["B"], s["S"], hidden)},
            [scale, zp],
        )
    ]
    for op in ("QLinearAdd", "QLinearMul"):
        cases.append(
            Case(
                op.lower(),
                [ms(op, ["x", "scale", "zp", "b", "scale", "zp", "scale", "zp"], ["y"])],
                q_in,
                ["y"],
                qx,
                [scale, zp, const("b", u8(hidden))],
            )
        )
    for op, attrs in (("QLinearSigmoid", {}), ("QLinearLeakyRelu", {"alpha": 0.1})):
        cases.append(
            Case(
                op.lower(),
                [ms(op, ["x", "scale", "zp", "scale", "zp"], ["y"], **attrs)],
                q_in,
                ["y"],
                qx,
                [scale, zp],
            )
        )
    cases.append(
        Case(
            "qlinear_concat",
            [
                ms(
                    "QLinearConcat",
                    ["scale", "zp", "x", "scale", "zp", "past", "scale", "zp"],
                    ["y"],
                    axis=1,
                )
            ],
            [*q_in, ("past", U8, ["B", "P", hidden])],
            ["y"],
            lambda s: {**qx(s), "past": u8(s["B"], s["P"], hidden)},
            [scale, zp],
        )
    )
    for channels_last in (0, 1):
        dims = ["B", "S", 4, 3] if channels_last else ["B", 3, "S", 4]
        cases.append(
            Case(
                f"qlinear_global_average_pool_{channels_last}",
                [
                    ms(
                        "QLinearGlobalAveragePool",
                        ["img", "scale", "zp", "scale", "zp"],
                        ["y"],
                        channels_last=channels_last,
                    )
                ],
                [("img", U8, dims)],
                ["y"],
                lambda s, d=dims: {"img": u8(*(s[x] if isinstance(x, str) else x for x in d))},
                [scale, zp],
            )
        )
    heads, head = 2, hidden // 2
    cases.append(
        Case(
            "qattention_past",
            [
                ms(
                    "QAttention",
                    ["x", "wqkv", "bqkv", "scale", "scale", "", "zp", "wzp", "past"],
                    ["y", "present"],
                    num_heads=heads,
                    unidirectional=1,
                )
            ],
            [*q_in, ("past", F, [2, "B", heads, "P", head])],
            ["y", "present"],
            lambda s: {**qx(s), "past": rand(2, s["B"], heads, s["P"], head)},
            [
                const("wqkv", _rng.integers(-127, 127, (hidden, 3 * hidden), dtype=np.int8)),
                const("bqkv", rand(3 * hidden)),
                scale,
                zp,
                wzp,
            ],
        )
    )
    w = const("w", _rng.integers(-127, 127, (hidden, 24), dtype=np.int8))
    cases.append(
        Case(
            "dynamic_quantize_matmul",
            [ms("DynamicQuantizeMatMul", ["f", "w", "scale", "wzp"], ["y"])],
            [("f", F, ["B", "S", hidden])],
            ["y"],
            lambda s: {"f": rand(s["B"], s["S"], hidden)},
            [w, scale, wzp],
        )
    )
    cases.append(
        Case(
            "matmul_integer_to_float",
            [ms("MatMulIntegerToFloat", ["x", "w", "scale", "scale", "zp", "wzp"], ["y"])],
            q_in,
            ["y"],
            qx,
            [w, scale, zp, wzp],
        )
    )
    for trans_b, quantized in ((0, False), (1, True)):
        weight = const(
            "wq", _rng.integers(-127, 127, (24, hidden) if trans_b else (hidden, 24), dtype=np.int8)
        )
        inputs = ["a", "scale", "zp", "wq", "scale", "wzp"]
        if quantized:
            inputs += ["", "scale", "zp"]
        cases.append(
            Case(
                f"qgemm_b{trans_b}" + ("_quantized" if quantized else ""),
                [ms("QGemm", inputs, ["y"], transB=trans_b)],
                [("a", U8, ["S", hidden])],
                ["y"],
                lambda s: {"a": u8(s["S"], hidden)},
                [weight, scale, zp, wzp],
            )
        )
    return cases


def _extra_cases() -> list[Case]:
    """contrib_extra.rs: what PyTorch's onnxruntime export helpers write,
    tensor utilities, integer and 4-bit matmuls, LLM building blocks."""
    i16, i32, i64 = np.int16, np.int32, np.int64

    def ints(name: str, *values: int, dtype: Any = i64) -> onnx.TensorProto:
        return const(name, np.array(values, dtype))

    def one(op: str, inputs, feeds, inits=(), outputs=("y",), name="", **attrs) -> Case:
        graph_inputs = [i for i in inputs if i[0] and i[0] not in {t.name for t in inits}]
        node = ms(op, [i[0] for i in inputs], list(outputs), **attrs)
        return Case(name or op.lower(), [node], graph_inputs, list(outputs), feeds, list(inits))

    hidden = 3
    lstm_w = [
        const("w", _rng.integers(0, 255, (1, 4, 4 * hidden), dtype=np.uint8)),
        const("r", _rng.integers(0, 255, (1, hidden, 4 * hidden), dtype=np.uint8)),
        const("ws", np.array([0.01], np.float32)),
        const("wz", np.array([128], np.uint8)),
        const("rs", np.array([0.01], np.float32)),
        const("rz", np.array([128], np.uint8)),
    ]
    return [
        one(
            "GridSample",
            [("x", F, ["B", 3, 5, 6]), ("grid", F, ["B", "S", 4, 2])],
            lambda s: {"x": rand(s["B"], 3, 5, 6), "grid": rand(s["B"], s["S"], 4, 2)},
            mode="bilinear",
        ),
        one(
            "Inverse",
            [("x", F, ["B", 3, 3])],
            lambda s: {"x": rand(s["B"], 3, 3) + 3 * np.eye(3, dtype=np.float32)},
        ),
        one(
            "Trilu",
            [("x", F, ["B", "S", 5]), ("k", I64, [])],
            lambda s: {"x": rand(s["B"], s["S"], 5)},
            [const("k", np.array(1, i64))],
            upper=0,
        ),
        one(
            "ExpandDims",
            [("x", F, ["B", "S"]), ("axis", I32, [])],
            lambda s: {"x": rand(s["B"], s["S"])},
            [const("axis", np.array(1, i32))],
        ),
        # onnxruntime's inference inserts a negative axis one place early.
        dataclasses_replace(
            one(
                "ExpandDims",
                [("x", F, ["B", "S"]), ("axis", I32, [])],
                lambda s: {"x": rand(s["B"], s["S"])},
                [const("axis", np.array(-1, i32))],
                name="expanddims_negative_axis",
            ),
            ort_inference_differs=("y",),
        ),
        one(
            "GatherND",
            [("data", F, ["B", 4, 5]), ("idx", I64, ["S", 2])],
            lambda s: {"data": rand(s["B"], 4, 5), "idx": np.zeros((s["S"], 2), i64)},
        ),
        one(
            "Pad",
            [("x", F, ["B", "S"]), ("pads", I64, [4])],
            lambda s: {"x": rand(s["B"], s["S"])},
            [ints("pads", 0, 1, 0, 2)],
        ),
        one(
            "Range",
            [("start", I64, []), ("limit", I64, []), ("delta", I64, [])],
            lambda s: {},
            [
                const("start", np.array(0, i64)),
                const("limit", np.array(10, i64)),
                const("delta", np.array(3, i64)),
            ],
        ),
        one(
            "Range",
            [("start", I64, []), ("limit", I64, [])],
            lambda s: {},
            [const("start", np.array(2, i64)), const("limit", np.array(7, i64))],
            name="range_without_delta",
        ),
        one(
            "Unique",
            [("x", F, ["S"])],
            lambda s: {"x": np.array([1.0, 2.0, 1.0, 5.0][: s["S"]], np.float32)},
            outputs=("y", "idx", "counts"),
        ),
        one(
            "CDist",
            [("a", F, ["B", 4]), ("b", F, ["S", 4])],
            lambda s: {"a": rand(s["B"], 4), "b": rand(s["S"], 4)},
            metric="euclidean",
        ),
        one(
            "CropAndResize",
            [
                ("x", F, ["B", 3, 8, 8]),
                ("rois", F, ["S", 4]),
                ("bi", I32, ["S"]),
                ("size", I32, [2]),
            ],
            lambda s: {
                "x": rand(s["B"], 3, 8, 8),
                "rois": np.tile(np.array([[0.1, 0.1, 0.8, 0.9]], np.float32), (s["S"], 1)),
                "bi": np.zeros(s["S"], i32),
            },
            [ints("size", 2, 3, dtype=i32)],
        ),
        one(
            "UnfoldTensor",
            [("x", F, ["B", 10])],
            lambda s: {"x": rand(s["B"], 10)},
            dim=1,
            size=3,
            step=2,
        ),
        one(
            "MaxpoolWithMask",
            [("x", F, ["B", 2, 6, 6]), ("m", I32, ["B", 2, 6, 6])],
            lambda s: {"x": rand(s["B"], 2, 6, 6), "m": np.ones((s["B"], 2, 6, 6), i32)},
            kernel_shape=[2, 2],
            strides=[2, 2],
        ),
        one(
            "DynamicQuantizeLSTM",
            [
                ("x", F, ["S", "B", 4]),
                ("w", U8, [1, 4, 4 * hidden]),
                ("r", U8, [1, hidden, 4 * hidden]),
                ("", F, []),
                ("", I32, []),
                ("", F, []),
                ("", F, []),
                ("", F, []),
                ("ws", F, [1]),
                ("wz", U8, [1]),
                ("rs", F, [1]),
                ("rz", U8, [1]),
            ],
            lambda s: {"x": rand(s["S"], s["B"], 4)},
            lstm_w,
            outputs=("y", "y_h", "y_c"),
            hidden_size=hidden,
        ),
        one(
            "MatMulInteger16",
            [("a", TensorProto.INT16, ["B", 4]), ("b", TensorProto.INT16, [4, 5])],
            lambda s: {"a": np.ones((s["B"], 4), i16)},
            [const("b", np.ones((4, 5), i16))],
        ),
        one(
            "MatMulBnb4",
            [("a", F, ["B", "S", 8]), ("b", U8, [16]), ("absmax", F, [2])],
            lambda s: {"a": rand(s["B"], s["S"], 8)},
            [
                const("b", _rng.integers(0, 255, 16, dtype=np.uint8)),
                const("absmax", np.ones(2, np.float32)),
            ],
            K=8,
            N=4,
            block_size=16,
            quant_type=1,
        ),
        one(
            "TransposeMatMul",
            [("a", F, ["B", 4, "S"]), ("b", F, [4, 5])],
            lambda s: {"a": rand(s["B"], 4, s["S"])},
            [const("b", rand(4, 5))],
            transA=1,
        ),
        one(
            "NGramRepeatBlock",
            [("ids", I64, ["B", "S"]), ("scores", F, ["B", 10])],
            lambda s: {"ids": np.ones((s["B"], s["S"]), i64), "scores": rand(s["B"], 10)},
            ngram_size=2,
        ),
        one("MurmurHash3", [("x", I32, ["S"])], lambda s: {"x": np.arange(s["S"], dtype=i32)}),
        one(
            "MurmurHash3",
            [("x", I64, ["B", "S"])],
            lambda s: {"x": np.ones((s["B"], s["S"]), i64)},
            name="murmurhash3_signed",
            positive=0,
        ),
        one(
            "GatedRMSNorm",
            [("x", F, ["B", "S", 8]), ("scale", F, [8]), ("gate", F, ["B", "S", 8])],
            lambda s: {"x": rand(s["B"], s["S"], 8), "gate": rand(s["B"], s["S"], 8)},
            [const("scale", rand(8))],
        ),
        one(
            "GatedAdd",
            [("x", F, ["B", "S", 8]), ("y2", F, ["B", "S", 8]), ("gate", F, ["B", "S", 1])],
            lambda s: {
                "x": rand(s["B"], s["S"], 8),
                "y2": rand(s["B"], s["S"], 8),
                "gate": rand(s["B"], s["S"], 1),
            },
        ),
        one(
            "ScaledSiLU",
            [("x", F, ["B", "S", 8])],
            lambda s: {"x": rand(s["B"], s["S"], 8)},
            alpha=0.5,
        ),
        one(
            "BranchwiseRMSNorm",
            [("x", F, ["B", "S", 2, 8]), ("scale", F, [8])],
            lambda s: {"x": rand(s["B"], s["S"], 2, 8)},
            [const("scale", rand(8))],
        ),
        one(
            "MRotaryEmbedding",
            [
                ("x", F, ["B", "S", 16]),
                ("pos", I64, [3, "B", "S"]),
                ("cos", F, [32, 4]),
                ("sin", F, [32, 4]),
            ],
            lambda s: {"x": rand(s["B"], s["S"], 16), "pos": np.zeros((3, s["B"], s["S"]), i64)},
            [const("cos", rand(32, 4)), const("sin", rand(32, 4))],
            num_heads=2,
            mrope_section=[2, 1, 1],
        ),
        one("SampleOp", [("x", F, ["B", 4])], lambda s: {"x": rand(s["B"], 4)}),
        one(
            "LinearAttention",
            [("q", F, ["B", "S", 8]), ("k", F, ["B", "S", 8]), ("v", F, ["B", "S", 10])],
            lambda s: {x: rand(s["B"], s["S"], n) for x, n in (("q", 8), ("k", 8), ("v", 10))},
            outputs=("y", "state"),
            q_num_heads=2,
            kv_num_heads=2,
            update_rule="linear",
        ),
        one(
            "LinearAttention",
            [
                ("q", F, ["B", "S", 16]),
                ("k", F, ["B", "S", 8]),
                ("v", F, ["B", "S", 10]),
                ("past", F, ["B", 2, 4, 5]),
            ],
            lambda s: {
                **{x: rand(s["B"], s["S"], n) for x, n in (("q", 16), ("k", 8), ("v", 10))},
                "past": rand(s["B"], 2, 4, 5),
            },
            outputs=("y", "state"),
            name="linear_attention_grouped_past",
            q_num_heads=4,
            kv_num_heads=2,
            update_rule="linear",
        ),
        one(
            "LinearAttention",
            [
                ("q", F, ["B", "S", 8]),
                ("k", F, ["B", "S", 8]),
                ("v", F, ["B", "S", 10]),
                ("", F, []),
                ("decay", F, ["B", "S", 2]),
                ("beta", F, ["B", "S", 2]),
            ],
            lambda s: {
                **{x: rand(s["B"], s["S"], n) for x, n in (("q", 8), ("k", 8), ("v", 10))},
                "decay": rand(s["B"], s["S"], 2),
                "beta": np.abs(rand(s["B"], s["S"], 2)),
            },
            outputs=("y", "state"),
            name="linear_attention_gated_delta",
            q_num_heads=2,
            kv_num_heads=2,
        ),
        one(
            "CausalConvWithState",
            [("x", F, ["B", 4, "S"]), ("w", F, [4, 1, 3]), ("b", F, [4]), ("past", F, ["B", 4, 2])],
            lambda s: {"x": rand(s["B"], 4, s["S"]), "past": rand(s["B"], 4, 2)},
            [const("w", rand(4, 1, 3)), const("b", rand(4))],
            outputs=("y", "state"),
            activation="silu",
        ),
        one(
            "CausalConvWithState",
            [("x", F, ["B", "S", 4]), ("w", F, [4, 1, 3])],
            lambda s: {"x": rand(s["B"], s["S"], 4)},
            [const("w", rand(4, 1, 3))],
            outputs=("y", "state"),
            name="causal_conv_with_state_channels_last",
            channels_last=1,
            dilation=2,
        ),
        one(
            "QEmbedLayerNormalization",
            [
                ("ids", I32, ["B", "S"]),
                ("", I32, []),
                ("word", U8, [20, 8]),
                ("pos", U8, [16, 8]),
                ("", U8, []),
                ("gamma", U8, [8]),
                ("beta", U8, [8]),
                ("", I32, []),
                *[(n, F, []) for n in ("ws", "ps")],
                ("", F, []),
                *[(n, F, []) for n in ("gs", "bs")],
                *[(n, U8, []) for n in ("wz", "pz")],
                ("", U8, []),
                *[(n, U8, []) for n in ("gz", "bz")],
            ],
            lambda s: {"ids": np.ones((s["B"], s["S"]), i32)},
            [
                const("word", _rng.integers(0, 255, (20, 8), dtype=np.uint8)),
                const("pos", _rng.integers(0, 255, (16, 8), dtype=np.uint8)),
                const("gamma", _rng.integers(0, 255, 8, dtype=np.uint8)),
                const("beta", _rng.integers(0, 255, 8, dtype=np.uint8)),
                *[const(n, np.array(0.01, np.float32)) for n in ("ws", "ps", "gs", "bs")],
                *[const(n, np.array(128, np.uint8)) for n in ("wz", "pz", "gz", "bz")],
            ],
            outputs=("y", "mask_index"),
        ),
        one(
            "HyperConnectionPreMix",
            [("x", F, ["B", "S", 4, 8]), ("m", F, ["B", "S", 4])],
            lambda s: {"x": rand(s["B"], s["S"], 4, 8), "m": rand(s["B"], s["S"], 4)},
        ),
        one(
            "HyperConnectionPreMix",
            [("x", F, ["B", "S", 32]), ("m", F, ["B", "S", 4])],
            lambda s: {"x": rand(s["B"], s["S"], 32), "m": rand(s["B"], s["S"], 4)},
            name="hyper_connection_pre_mix_flat",
            num_branches=4,
        ),
        one(
            "HyperConnectionPostMix",
            [
                ("x", F, ["B", "S", 4, 8]),
                ("o", F, ["B", "S", 8]),
                ("pm", F, ["B", "S", 4]),
                ("sm", F, ["B", "S", 4, 4]),
            ],
            lambda s: {
                "x": rand(s["B"], s["S"], 4, 8),
                "o": rand(s["B"], s["S"], 8),
                "pm": rand(s["B"], s["S"], 4),
                "sm": rand(s["B"], s["S"], 4, 4),
            },
        ),
        one(
            "EngramGate",
            [
                ("k", F, ["B", "S", 2, 8]),
                ("q", F, ["B", "S", 2, 8]),
                ("v", F, ["B", "S", 8]),
                ("kn", F, [2, 8]),
                ("qn", F, [2, 8]),
                ("cn", F, [2, 8]),
            ],
            lambda s: {
                "k": rand(s["B"], s["S"], 2, 8),
                "q": rand(s["B"], s["S"], 2, 8),
                "v": rand(s["B"], s["S"], 8),
            },
            [const("kn", rand(2, 8)), const("qn", rand(2, 8)), const("cn", rand(2, 8))],
            outputs=("y", "gated"),
        ),
        one(
            "NGramHashMapping",
            [("ids", I64, ["B", "S"]), ("mult", I64, [3]), ("voc", I64, [4])],
            lambda s: {"ids": np.ones((s["B"], s["S"]), i64)},
            [ints("mult", 1, 3, 5), ints("voc", 7, 7, 7, 7)],
            outputs=("hash", "present"),
            max_ngram_size=3,
            n_head_per_ngram=2,
            pad_id=0,
        ),
        one(
            "BifurcationDetector",
            [("src", I64, ["S"]), ("cur", I64, ["T"]), ("prev", I64, []), ("pred", I64, ["P"])],
            lambda s: {
                "src": np.arange(s["S"], dtype=i64),
                "cur": np.arange(s["T"], dtype=i64),
                "prev": np.array(0, i64),
                "pred": np.arange(s["S"] + 1, dtype=i64),
            },
            outputs=("tokens", "idx"),
        ),
        one(
            "WordConvEmbedding",
            [("seq", I32, ["S", 6]), ("w", F, [5, 1, 3, 4]), ("b", F, [5]), ("c", F, [20, 4])],
            lambda s: {"seq": np.ones((s["S"], 6), i32)},
            [const("w", rand(5, 1, 3, 4)), const("b", rand(5)), const("c", rand(20, 4))],
            embedding_size=5,
            conv_window_size=3,
            char_embedding_size=4,
        ),
        one(
            "LinearAttentionGate",
            [("a", F, ["B", "S", 4]), ("dt", F, [4]), ("ds", F, [4]), ("b", F, ["B", "S", 4])],
            lambda s: {"a": rand(s["B"], s["S"], 4), "b": rand(s["B"], s["S"], 4)},
            [const("dt", rand(4)), const("ds", rand(4))],
            outputs=("decay", "beta"),
        ),
    ]


def _legacy_cases() -> list[Case]:
    """onnx's experimental operators of its first opsets, which onnxruntime
    keeps in the default domain to opset 9 (onnx 1.23 has no schema)."""

    def one(op: str, attrs: dict, shape: list, name: str = "", extra=(), inits=()) -> Case:
        node = helper.make_node(op, ["x", *[e[0] for e in extra]], ["y"], **attrs)
        return Case(
            name or op.lower(),
            [node],
            [("x", F, shape)],
            ["y"],
            lambda s: {"x": rand(*[s[d] if isinstance(d, str) else d for d in shape])},
            list(inits),
            opset=9,
        )

    return [
        one("ImageScaler", {"bias": [0.1, 0.2, 0.3], "scale": 2.0}, ["B", 3, "S", 4]),
        one("Scale", {"scale": 3.0}, ["B", "S"]),
        one("Affine", {"alpha": 2.0, "beta": 1.0}, ["B", "S"]),
        one("ScaledTanh", {"alpha": 2.0, "beta": 0.5}, ["B", "S"]),
        one("ParametricSoftplus", {"alpha": 2.0, "beta": 0.5}, ["B", "S"]),
        one("Crop", {"border": [1, 2, 1, 1]}, ["B", 3, 6, 8]),
        one("Crop", {"border": [1, 1, 2, 2], "scale": [2, 3]}, ["B", 3, 6, 8], "crop_scale"),
        one(
            "DynamicSlice",
            {},
            ["B", 10],
            extra=[("starts",), ("ends",), ("axes",)],
            inits=[
                const("starts", np.array([1], np.int64)),
                const("ends", np.array([8], np.int64)),
                const("axes", np.array([1], np.int64)),
            ],
        ),
    ]


LEGACY = _legacy_cases()
_LEGACY_OPS = {c.nodes[0].op_type for c in LEGACY}


@pytest.mark.parametrize("case", LEGACY, ids=[c.name for c in LEGACY])
def test_legacy_default_domain_operators_match_onnxruntime(case: Case) -> None:
    """An opset-9 model of these operators: onnxruntime runs it, and with
    contrib_ops our types and dims are those of the arrays it returns (its
    session's inferred types too). onnx accepts them as experimental
    operators without a schema: without the option the checker warns
    (W790), its hint naming the option. At opset 10 onnxruntime refuses the
    model, and the check with contrib_ops reports the deprecated operator
    (E406)."""
    model = case.model()
    session = _ort_session(model)
    theirs = {o.name: o.type for o in session.get_outputs()}
    ours = _ours(model, symbolic=True, data_prop=True)
    assert ours["y"][0] == _ORT_TYPES[theirs["y"]]
    for sizes in SIZES:
        (array,) = session.run(["y"], case.feeds(sizes))
        dims = ours["y"][1]
        assert [onnxfast.evaluate_dim(d, sizes) for d in dims] == list(array.shape), dims
    op = case.nodes[0].op_type
    plain = [d for d in onnxfast.check(model, full=True) if d.code in ("E405", "W790")]
    assert [d.code for d in plain] == ["W790"], plain
    assert "contrib_ops" in (plain[0].suggestion or ""), plain
    model.opset_import[0].version = 10
    with pytest.raises(OrtFail, match=op):
        _ort_session(model)
    codes = [
        d.code for d in onnxfast.check(model, full=True, contrib_ops=True) if d.severity == "error"
    ]
    assert "E406" in codes, codes


def _decoder_step_cases() -> list[Case]:
    """DecoderMaskedMultiHeadAttention, one decoding step as Whisper's and
    T5's beam search decoders run it: self attention over a past buffer of
    16 positions shared with the present (with and without the beam
    search inputs), and cross attention over keys already in heads (B, N,
    T, H)."""
    heads, head, longest = 2, 4, 16
    hidden = heads * head
    step = [(n, F, ["B", 1, hidden]) for n in ("q", "k", "v")]
    pasts = [(n, F, ["B", heads, longest, head]) for n in ("pk", "pv")]
    length = const("length", np.array([5], np.int32))

    def self_feed(s: dict[str, int], beams: bool) -> dict[str, np.ndarray]:
        feeds = {n: rand(s["B"], 1, hidden) for n in ("q", "k", "v")}
        feeds |= {n: rand(s["B"], heads, longest, head) for n in ("pk", "pv")}
        if beams:
            feeds["cache"] = np.zeros((s["B"], 1, longest), np.int32)
        return feeds

    cases = []
    for beams in (False, True):
        extra = ["beams", "cache"] if beams else []
        cases.append(
            Case(
                "decoder_masked_mha_self" + ("_beams" if beams else ""),
                [
                    ms(
                        "DecoderMaskedMultiHeadAttention",
                        ["q", "k", "v", "", "", "pk", "pv", "length", *extra],
                        ["y", "present_k", "present_v"],
                        num_heads=heads,
                        past_present_share_buffer=1,
                    )
                ],
                [*step, *pasts] + ([("cache", I32, ["B", 1, longest])] if beams else []),
                ["y", "present_k", "present_v"],
                lambda s, b=beams: self_feed(s, b),
                [length] + ([const("beams", np.array([1], np.int32))] if beams else []),
            )
        )
    cases.append(
        Case(
            "decoder_masked_mha_cross",
            [ms("DecoderMaskedMultiHeadAttention", ["q", "ck", "cv"], ["y"], num_heads=heads)],
            [step[0], *[(n, F, ["B", heads, "T", head]) for n in ("ck", "cv")]],
            ["y"],
            lambda s: {
                "q": rand(s["B"], 1, hidden),
                **{n: rand(s["B"], heads, s["T"], head) for n in ("ck", "cv")},
            },
        )
    )
    return cases


def _expert_cases() -> list[Case]:
    """Mixtures of experts (onnxruntime's MoE and its 4-bit QMoE): 4
    experts, tokens of 8, inner size 16; tokens as (S, 8) or (B, S, 8)."""
    experts, hidden, inner = 4, 8, 16
    fc = [const("w1", rand(experts, inner, hidden)), const("w2", rand(experts, hidden, inner))]

    def packed(*shape: int) -> np.ndarray:
        return _rng.integers(0, 255, shape, dtype=np.uint8)

    q_fc = [
        const("q1", packed(experts, inner, hidden // 2)),
        const("s1", rand(experts, inner)),
        const("q2", packed(experts, hidden, inner // 2)),
        const("s2", rand(experts, hidden)),
    ]
    return [
        Case(
            "moe_tokens",
            [ms("MoE", ["x", "r", "w1", "", "w2"], ["y"], k=2, activation_type="gelu")],
            [("x", F, ["S", hidden]), ("r", F, ["S", experts])],
            ["y"],
            lambda s: {"x": rand(s["S"], hidden), "r": rand(s["S"], experts)},
            fc,
        ),
        Case(
            "moe_batched",
            [ms("MoE", ["x", "r", "w1", "", "w2"], ["y"], k=1)],
            [("x", F, ["B", "S", hidden]), ("r", F, ["T", experts])],
            ["y"],
            lambda s: {"x": rand(s["B"], s["S"], hidden), "r": rand(s["B"] * s["S"], experts)},
            fc,
        ),
        Case(
            "qmoe_4bit",
            [
                ms(
                    "QMoE",
                    ["x", "r", "q1", "s1", "", "q2", "s2"],
                    ["y"],
                    k=2,
                    expert_weight_bits=4,
                )
            ],
            [("x", F, ["S", hidden]), ("r", F, ["S", experts])],
            ["y"],
            lambda s: {"x": rand(s["S"], hidden), "r": rand(s["S"], experts)},
            q_fc,
        ),
    ]


def _image_cases() -> list[Case]:
    """The operators onnxruntime's graph optimizer and quantizer write for
    convolutional networks: Conv and Gemm with a fused activation, and the
    int8 pooling, convolution and selection operators, channels first and
    (its NHWC transformer's) channels last. Images are (B, 3, S, 7), or
    (B, S, 7, 3) channels last: a symbolic height, an odd static width."""
    scale = const("scale", np.array(0.05, np.float32))
    zp = const("zp", np.array(128, np.uint8))
    wzp = const("wzp", np.array(0, np.int8))

    def image(last: bool) -> list[Any]:
        return ["B", "S", 7, 3] if last else ["B", 3, "S", 7]

    def u8_feed(name: str, dims: list[Any]) -> Callable[[dict[str, int]], dict]:
        return lambda s: {
            name: _rng.integers(0, 255, [s[d] if isinstance(d, str) else d for d in dims], np.uint8)
        }

    window = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}
    cases = [
        Case(
            "fused_conv",
            [ms("FusedConv", ["x", "w", "b"], ["y"], activation="Relu", **window)],
            [("x", F, image(False))],
            ["y"],
            lambda s: {"x": rand(s["B"], 3, s["S"], 7)},
            [const("w", rand(4, 3, 3, 3)), const("b", rand(4))],
        ),
        # With a sum input Z (Conv + Add + activation fused).
        Case(
            "fused_conv_sum",
            [
                ms(
                    "FusedConv",
                    ["x", "w", "b", "z"],
                    ["y"],
                    activation="LeakyRelu",
                    activation_params=[0.1],
                    pads=[0, 1, 0, 1],
                    kernel_shape=[1, 3],
                )
            ],
            [("x", F, image(False)), ("z", F, ["B", 4, "S", 7])],
            ["y"],
            lambda s: {"x": rand(s["B"], 3, s["S"], 7), "z": rand(s["B"], 4, s["S"], 7)},
            [const("w", rand(4, 3, 1, 3)), const("b", rand(4))],
        ),
        Case(
            "fused_gemm",
            [
                ms(
                    "FusedGemm",
                    ["a", "w", "b"],
                    ["y"],
                    transB=1,
                    activation="LeakyRelu",
                    activation_alpha=0.1,
                )
            ],
            [("a", F, ["S", 16])],
            ["y"],
            lambda s: {"a": rand(s["S"], 16)},
            [const("w", rand(24, 16)), const("b", rand(24))],
        ),
        Case(
            "qlinear_where",
            [
                ms(
                    "QLinearWhere",
                    ["c", "x", "scale", "zp", "y", "scale", "zp", "scale", "zp"],
                    ["z"],
                )
            ],
            [("c", TensorProto.BOOL, ["B", "S", 1]), ("x", U8, ["B", "S", 16])],
            ["z"],
            lambda s: {
                "c": _rng.integers(0, 2, (s["B"], s["S"], 1)).astype(bool),
                **u8_feed("x", ["B", "S", 16])(s),
            },
            [scale, zp, const("y", _rng.integers(0, 255, 16, np.uint8))],
        ),
    ]
    for last in (0, 1):
        dims = image(bool(last))
        cases.append(
            Case(
                f"qlinear_conv_channels_last_{last}",
                [
                    ms(
                        "QLinearConv",
                        ["x", "scale", "zp", "w", "scale", "wzp", "scale", "zp", "b"],
                        ["y"],
                        channels_last=last,
                        pads=[1, 0, 1, 0],
                        strides=[2, 1],
                    )
                ],
                [("x", U8, dims)],
                ["y"],
                u8_feed("x", dims),
                [
                    scale,
                    zp,
                    wzp,
                    # (M, C, kH, kW) in both layouts: a 3x1 kernel from the
                    # weights (no kernel_shape).
                    const("w", _rng.integers(-127, 127, (4, 3, 3, 1), dtype=np.int8)),
                    const("b", _rng.integers(-100, 100, 4, dtype=np.int32)),
                ],
            )
        )
        # ceil_mode rounds the static width's window count up: (7 - 2)/2.
        cases.append(
            Case(
                f"qlinear_average_pool_channels_last_{last}",
                [
                    ms(
                        "QLinearAveragePool",
                        ["x", "scale", "zp", "scale", "zp"],
                        ["y"],
                        channels_last=last,
                        kernel_shape=[3, 2],
                        pads=[1, 0, 1, 0],
                        strides=[2, 2],
                        ceil_mode=1,
                    )
                ],
                [("x", U8, dims)],
                ["y"],
                u8_feed("x", dims),
                [scale, zp],
            )
        )
    cases.append(
        Case(
            "nhwc_max_pool",
            [ms("NhwcMaxPool", ["x"], ["y"], **window)],
            [("x", U8, image(True))],
            ["y"],
            u8_feed("x", image(True)),
        )
    )
    return cases


def _lengths_from_mask() -> list[onnx.NodeProto]:
    """What exporters compute from the attention mask (B, T) for
    GroupQueryAttention: the total length (`total`, int32 scalar) and each
    sequence's last position (`seqlens`); initializers `one` and `axes1`."""
    return [
        helper.make_node("Shape", ["mask"], ["mask_shape"]),
        helper.make_node("Gather", ["mask_shape", "one"], ["total64"]),
        helper.make_node("Cast", ["total64"], ["total"], to=I32),
        helper.make_node("ReduceSum", ["mask", "axes1"], ["count"], keepdims=0),
        helper.make_node("Sub", ["count", "one"], ["last"]),
        helper.make_node("Cast", ["last"], ["seqlens"], to=I32),
    ]


def _attention_cases(hidden: int) -> list[Case]:
    """Fused attention with and without a key/value cache (2 heads of 8,
    GroupQueryAttention: 2 query heads of 16 sharing 1 key/value head)."""
    cases = []
    heads, head = 2, hidden // 2

    def qkv(s: dict[str, int], width: int = hidden) -> dict[str, np.ndarray]:
        return {n: rand(s["B"], s["S"], width) for n in ("q", "k", "v")}

    def past(s: dict[str, int], n: int = heads, h: int = head) -> dict[str, np.ndarray]:
        return {n_: rand(s["B"], n, s["P"], h) for n_ in ("past_k", "past_v")}

    qkv_inputs = [(n, F, ["B", "S", hidden]) for n in ("q", "k", "v")]
    past_inputs = [(n, F, ["B", heads, "P", head]) for n in ("past_k", "past_v")]
    cases.append(
        Case(
            "multi_head_attention",
            [ms("MultiHeadAttention", ["q", "k", "v"], ["y"], num_heads=heads)],
            qkv_inputs,
            ["y"],
            qkv,
        )
    )
    cases.append(
        Case(
            "multi_head_attention_past",
            [
                ms(
                    "MultiHeadAttention",
                    ["q", "k", "v", "", "", "", "past_k", "past_v"],
                    ["y", "present_k", "present_v"],
                    num_heads=heads,
                )
            ],
            [*qkv_inputs, *past_inputs],
            ["y", "present_k", "present_v"],
            lambda s: {**qkv(s), **past(s)},
        )
    )
    cases.append(
        Case(
            "attention_past",
            [
                ms(
                    "Attention",
                    ["x", "w", "bias", "", "past"],
                    ["y", "present"],
                    num_heads=heads,
                    unidirectional=1,
                )
            ],
            [("x", F, ["B", "S", hidden]), ("past", F, [2, "B", heads, "P", head])],
            ["y", "present"],
            lambda s: {
                "x": rand(s["B"], s["S"], hidden),
                "past": rand(2, s["B"], heads, s["P"], head),
            },
            [const("w", rand(hidden, 3 * hidden)), const("bias", rand(3 * hidden))],
        )
    )
    # GroupQueryAttention as exporters write it: the total length and each
    # sequence's last position computed from the attention mask (B, T).
    gqa_head, kv = 16, 1
    lengths = _lengths_from_mask()
    cases.append(
        Case(
            "group_query_attention_past",
            [
                *lengths,
                ms(
                    "GroupQueryAttention",
                    ["q", "k", "v", "past_k", "past_v", "seqlens", "total"],
                    ["y", "present_k", "present_v"],
                    num_heads=2,
                    kv_num_heads=kv,
                ),
            ],
            [
                ("q", F, ["B", "S", 2 * gqa_head]),
                ("k", F, ["B", "S", kv * gqa_head]),
                ("v", F, ["B", "S", kv * gqa_head]),
                ("past_k", F, ["B", kv, "P", gqa_head]),
                ("past_v", F, ["B", kv, "P", gqa_head]),
                ("mask", I64, ["B", "T"]),
            ],
            ["y", "present_k", "present_v"],
            lambda s: {
                "q": rand(s["B"], s["S"], 2 * gqa_head),
                "k": rand(s["B"], s["S"], kv * gqa_head),
                "v": rand(s["B"], s["S"], kv * gqa_head),
                **past(s, kv, gqa_head),
                "mask": np.ones((s["B"], s["T"]), np.int64),
            },
            [const("one", np.array(1, np.int64)), const("axes1", np.array([1], np.int64))],
        )
    )
    # Without a cache (the prompt): Q, K and V apart, and packed in one.
    for packed in (False, True):
        width = (2 + 2 * kv) * gqa_head if packed else 2 * gqa_head
        names = ["q", "", ""] if packed else ["q", "k", "v"]
        cases.append(
            Case(
                "group_query_attention" + ("_packed" if packed else ""),
                [
                    *lengths,
                    ms(
                        "GroupQueryAttention",
                        [*names, "", "", "seqlens", "total"],
                        ["y", "present_k", "present_v"],
                        num_heads=2,
                        kv_num_heads=kv,
                    ),
                ],
                [
                    ("q", F, ["B", "S", width]),
                    *([] if packed else [(n, F, ["B", "S", kv * gqa_head]) for n in "kv"]),
                    ("mask", I64, ["B", "S"]),
                ],
                ["y", "present_k", "present_v"],
                lambda s, packed=packed, width=width: {
                    "q": rand(s["B"], s["S"], width),
                    **({} if packed else {n: rand(s["B"], s["S"], kv * gqa_head) for n in "kv"}),
                    "mask": np.ones((s["B"], s["S"]), np.int64),
                },
                [const("one", np.array(1, np.int64)), const("axes1", np.array([1], np.int64))],
            )
        )
    return cases


def _model_cases(hidden: int) -> list[Case]:
    """Whole layers as onnxruntime's optimizer and quantizer write them,
    every node output compared: a BERT-style encoder layer (embedding,
    fused attention with a mask index, skip layer norms, FastGelu) and a
    4-bit LLM decoder layer (RMS norms, MatMulNBits projections, grouped
    query attention over a cache, lengths from the attention mask)."""
    up = 4 * hidden

    def weight(*shape: int) -> np.ndarray:
        return rand(*shape) * 0.1

    encoder = [
        ms(
            "EmbedLayerNormalization",
            ["ids", "seg", "word", "pos", "segemb", "g0", "b0", "mask"],
            ["emb", "mask_index"],
        ),
        ms("Attention", ["emb", "w_qkv", "b_qkv", "mask_index"], ["attn"], num_heads=2),
        helper.make_node("MatMul", ["attn", "w_o"], ["proj"]),
        ms("SkipLayerNormalization", ["proj", "emb", "g1", "b1", "bias1"], ["ln1"]),
        helper.make_node("MatMul", ["ln1", "w_up"], ["up"]),
        ms("FastGelu", ["up", "b_up"], ["act"]),
        helper.make_node("MatMul", ["act", "w_down"], ["down"]),
        ms("SkipLayerNormalization", ["down", "ln1", "g2", "b2", "bias2"], ["out"]),
    ]
    encoder_weights = [
        const("word", weight(10, hidden)),
        const("pos", weight(32, hidden)),
        const("segemb", weight(2, hidden)),
        *[const(f"{n}{i}", weight(hidden)) for i in range(3) for n in ("g", "b")],
        const("w_qkv", weight(hidden, 3 * hidden)),
        const("b_qkv", weight(3 * hidden)),
        const("w_o", weight(hidden, hidden)),
        const("bias1", weight(hidden)),
        const("w_up", weight(hidden, up)),
        const("b_up", weight(up)),
        const("w_down", weight(up, hidden)),
        const("bias2", weight(hidden)),
    ]
    ids = ["ids", "seg", "mask"]
    cases = [
        Case(
            "bert_layer",
            encoder,
            [(n, I32, ["B", "S"]) for n in ids],
            [o for n in encoder for o in n.output],
            lambda s: {
                "ids": _rng.integers(0, 10, (s["B"], s["S"]), dtype=np.int32),
                "seg": np.zeros((s["B"], s["S"]), np.int32),
                "mask": np.ones((s["B"], s["S"]), np.int32),
            },
            encoder_weights,
        )
    ]
    # The decoder: 2 query heads of 16 sharing one key/value head.
    d, kv_width, block = 32, 16, 16

    def nbits(name: str, x: str, out: str, n: int) -> tuple[onnx.NodeProto, list]:
        blocks = d // block
        node = ms("MatMulNBits", [x, f"{name}_w", f"{name}_s"], [out], K=d, N=n, block_size=block)
        w = _rng.integers(0, 255, (n, blocks, block // 2), dtype=np.uint8)
        return node, [const(f"{name}_w", w), const(f"{name}_s", weight(n * blocks))]

    decoder = [
        helper.make_node("SimplifiedLayerNormalization", ["x", "norm1"], ["h"]),
        *_lengths_from_mask(),
    ]
    decoder_weights = [
        const("norm1", weight(d) + 1),
        const("norm2", weight(d) + 1),
        const("one", np.array(1, np.int64)),
        const("axes1", np.array([1], np.int64)),
    ]
    for name, out, n in (("q", "q", d), ("k", "k", kv_width), ("v", "v", kv_width)):
        node, w = nbits(name, "h", out, n)
        decoder.append(node)
        decoder_weights += w
    decoder.append(
        ms(
            "GroupQueryAttention",
            ["q", "k", "v", "past_k", "past_v", "seqlens", "total"],
            ["attn", "present_k", "present_v"],
            num_heads=2,
            kv_num_heads=1,
        )
    )
    node, w = nbits("o", "attn", "o", d)
    decoder.append(node)
    decoder_weights += w
    decoder.append(
        ms("SkipSimplifiedLayerNormalization", ["o", "x", "norm2"], ["y", "", "", "residual"])
    )
    cases.append(
        Case(
            "llm_decoder_layer",
            decoder,
            [
                ("x", F, ["B", "S", d]),
                ("past_k", F, ["B", 1, "P", kv_width]),
                ("past_v", F, ["B", 1, "P", kv_width]),
                ("mask", I64, ["B", "T"]),
            ],
            [o for n in decoder for o in n.output if o],
            lambda s: {
                "x": rand(s["B"], s["S"], d),
                "past_k": rand(s["B"], 1, s["P"], kv_width),
                "past_v": rand(s["B"], 1, s["P"], kv_width),
                "mask": np.ones((s["B"], s["T"]), np.int64),
            },
            decoder_weights,
        )
    )
    return cases


MODELS = _model_cases(16)
CASES = _cases() + MODELS


@pytest.mark.parametrize("case", MODELS, ids=[c.name for c in MODELS])
def test_every_value_of_an_optimized_layer_is_known_with_symbolic(case: Case) -> None:
    """With symbolic and data_prop, every dim of every value of these
    layers is known (a number or an expression over B, S, P, T), where
    onnxruntime's inference leaves some unknown."""
    model = case.model()
    ours = _ours(model, symbolic=True, data_prop=True)
    unknown = [
        (n, dims)
        for n, (_, dims) in ours.items()
        if dims is None or any(isinstance(x, str) and "unk__" in x for x in dims)
    ]
    assert not unknown, unknown
    if case.name == "llm_decoder_layer":
        theirs = _ort_session(model).get_outputs()
        assert any(not o.shape or None in o.shape for o in theirs), "onnxruntime knows them all"


def _ort_session(model: onnx.ModelProto) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def _ours(model: onnx.ModelProto, **options: Any) -> dict[str, tuple[int, list | None]]:
    inferred = onnxfast.infer_shapes(model, contrib_ops=True, strict=True, **options)
    out = {}
    for o in inferred.graph.output:
        t = o.type.tensor_type if o.type is not None else None
        if t is None:
            out[o.name] = (0, None)
            continue
        dims = None
        if t.shape is not None:
            dims = [
                d.dim_value if d.dim_value or not d.dim_param else d.dim_param for d in t.shape.dim
            ]
        out[o.name] = (t.elem_type, dims)
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("symbolic", [False, True], ids=["plain", "symbolic"])
def test_contrib_op_matches_onnxruntime(case: Case, symbolic: bool) -> None:
    model = case.model()
    session = _ort_session(model)
    theirs = {o.name: (o.type, o.shape) for o in session.get_outputs()}
    ours = _ours(model, symbolic=symbolic, data_prop=symbolic)
    symbols = set(SIZES[0])
    for name in case.outputs:
        elem, dims = ours[name]
        ort_type, ort_shape = theirs[name]
        assert elem == _ORT_TYPES[ort_type], (name, elem, ort_type)
        if name in case.ort_inference_differs or not ort_shape:
            continue
        assert dims is not None, (name, ort_shape)
        assert len(dims) == len(ort_shape), (name, dims, ort_shape)
        for k, (d, t) in enumerate(zip(dims, ort_shape)):
            if isinstance(t, int) or t in symbols:
                assert d == t, (name, k, dims, ort_shape)
    for sizes in SIZES:
        arrays = session.run(case.outputs, case.feeds(sizes))
        for name, array in zip(case.outputs, arrays):
            elem, dims = ours[name]
            assert elem == helper.np_dtype_to_tensor_dtype(array.dtype), (name, array.dtype)
            assert dims is not None, (name, array.shape)
            assert len(dims) == array.ndim, (name, dims, array.shape)
            for k, d in enumerate(dims):
                if isinstance(d, str) and d.startswith("unk__"):
                    continue
                got = onnxfast.evaluate_dim(d, sizes)
                assert got == array.shape[k], (name, k, d, sizes, array.shape)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_without_contrib_ops_their_outputs_are_untyped(case: Case) -> None:
    """onnx's behaviour by default: no schema, no types (an empty type, as
    onnx writes), and a warning per custom operator."""
    model = case.model()
    inferred, report = infer_with_report(model)
    theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    assert inferred.to_onnx().graph.output == theirs.graph.output
    custom = {n.op_type for n in model.graph.node if n.domain == "com.microsoft"}
    made = {
        o
        for n in model.graph.node
        if n.domain == "com.microsoft" or "LayerNormalization" in n.op_type
        for o in n.output
    }
    assert all(o.type.tensor_type is None for o in inferred.graph.output if o.name in made)
    # Unknown default-domain operators are the checker's to report (E405).
    assert [d.code for d in report] == ["W790"] * len(custom), report
    # Each warning says the option would infer it.
    assert all("contrib_ops=True" in (d.suggestion or "") for d in report), report


def _zeros(inputs: list[tuple[str, int, list[Any]]], sizes: dict[str, int]) -> dict:
    """Zero arrays for graph inputs at `sizes`."""
    return {
        name: np.zeros(
            [sizes[d] if isinstance(d, str) else d for d in dims],
            helper.tensor_dtype_to_np_dtype(elem),
        )
        for name, elem, dims in inputs
    }


def _refused() -> list[tuple[str, Case, str, str]]:
    """Nodes onnxruntime refuses: (label, case, what our finding says,
    "inference" when its shape inference refuses the model, "schema" when
    its schema's type constraints do, "run" when only its kernel does,
    running it, "enforce" when its kernel refuses the node's attributes)."""
    out = []

    def one(label, node, inputs, inits=(), expect: str = "", when: str = "inference") -> None:
        feeds = lambda s: _zeros(inputs, s)  # noqa: E731
        case = Case(label, [node], inputs, list(node.output), feeds, list(inits))
        out.append((label, case, expect, when))

    one(
        "matmul_nbits_k",
        ms("MatMulNBits", ["a", "w", "scales"], ["y"], K=32, N=8, block_size=16),
        [("a", F, ["B", 30])],
        [
            const("w", np.zeros((8, 2, 8), np.uint8)),
            const("scales", np.ones(16, np.float32)),
        ],
        "the last dim of A is 30, attribute K is 32",
    )
    one(
        "group_query_attention_rank",
        ms(
            "GroupQueryAttention",
            ["q", "k", "v", "", "", "sl", "t"],
            ["y"],
            num_heads=2,
            kv_num_heads=1,
        ),
        [
            ("q", F, ["B", 32]),
            ("k", F, ["B", "S", 16]),
            ("v", F, ["B", "S", 16]),
            ("sl", I32, ["B"]),
            ("t", I32, []),
        ],
        expect="the query must have rank 3, it has rank 2",
    )
    one(
        "multi_head_attention_rank",
        ms("MultiHeadAttention", ["q", "k", "v"], ["y"], num_heads=2),
        [("q", F, ["B", "S", 2, 8]), ("k", F, ["B", "S", 16]), ("v", F, ["B", "S", 16])],
        expect="the query must have rank 3 or 5, it has rank 4",
    )
    one(
        "attention_rank",
        ms("Attention", ["x", "w", "b"], ["y"], num_heads=2),
        [("x", F, ["B", 16])],
        [const("w", np.zeros((16, 48), np.float32)), const("b", np.zeros(48, np.float32))],
        "the input must have rank 3, it has rank 2",
    )
    one(
        "embed_layer_norm_hidden",
        ms(
            "EmbedLayerNormalization",
            ["ids", "", "word", "pos", "", "gamma", "beta"],
            ["y", "mask_index"],
        ),
        [("ids", I32, ["B", "S"])],
        [
            const("word", np.zeros((10, 16), np.float32)),
            const("pos", np.zeros((32, 16), np.float32)),
            const("gamma", np.zeros(12, np.float32)),
            const("beta", np.zeros(16, np.float32)),
        ],
        "gamma has 12 elements, the hidden size is 16",
    )
    one(
        "qlinear_add_broadcast",
        ms("QLinearAdd", ["x", "s", "z", "b", "s", "z", "s", "z"], ["y"]),
        [("x", U8, ["B", 16])],
        [
            const("s", np.array(0.1, np.float32)),
            const("z", np.array(0, np.uint8)),
            const("b", np.zeros(7, np.uint8)),
        ],
        "A and B do not broadcast",
    )
    one(
        "decoder_masked_mha_unshared_past",
        ms(
            "DecoderMaskedMultiHeadAttention",
            ["q", "k", "v", "", "", "pk", "pv", "length"],
            ["y", "present_k", "present_v"],
            num_heads=2,
        ),
        [
            *[(n, F, ["B", 1, 8]) for n in ("q", "k", "v")],
            *[(n, F, ["B", 2, 16, 4]) for n in ("pk", "pv")],
        ],
        [const("length", np.array([5], np.int32))],
        "past_present_share_buffer must be 1",
        when="enforce",
    )
    s8 = const("s", np.array(0.1, np.float32))
    z8 = const("z", np.array(0, np.uint8))
    one(
        "qlinear_add_zero_point_not_scalar",
        ms("QLinearAdd", ["x", "s", "z", "x", "s", "zs", "s", "z"], ["y"]),
        [("x", U8, ["B", 16])],
        [s8, z8, const("zs", np.zeros(16, np.uint8))],
        "input 5 (a zero point) must be a scalar, it has shape [16]",
    )
    one(
        "qlinear_average_pool_scale_type",
        ms("QLinearAveragePool", ["x", "sd", "z", "s", "z"], ["y"], kernel_shape=[2, 2]),
        [("x", U8, ["B", 3, 8, 8])],
        [s8, z8, const("sd", np.array(0.1, np.float64))],
        "input 1 (a scale) must be float, it is double",
        when="schema",
    )
    one(
        "nhwc_max_pool_rank",
        ms("NhwcMaxPool", ["x"], ["y"], kernel_shape=[2]),
        [("x", U8, ["B", 16])],
        expect="a channels-last input must have rank 3 or more",
    )
    one(
        "fused_gemm_rank",
        ms("FusedGemm", ["a", "w"], ["y"], activation="Relu"),
        [("a", F, ["B", "S", 16])],
        [const("w", np.zeros((16, 8), np.float32))],
        "must be a matrix (rank 2), it has rank 3",
    )
    one(
        "qlinear_where_broadcast",
        ms("QLinearWhere", ["c", "x", "s", "z", "x2", "s", "z", "s", "z"], ["y"]),
        [("c", TensorProto.BOOL, ["B", 16]), ("x", U8, ["B", 16])],
        [s8, z8, const("x2", np.zeros(7, np.uint8))],
        "condition, X and Y do not broadcast",
    )
    one(
        "qgemm_inner",
        ms("QGemm", ["a", "s", "z", "w", "s", "wz"], ["y"]),
        [("a", U8, ["S", 16])],
        [
            const("s", np.array(0.1, np.float32)),
            const("z", np.array(0, np.uint8)),
            const("wz", np.array(0, np.int8)),
            const("w", np.zeros((12, 8), np.int8)),
        ],
        "the inner dimensions of A and B differ: 16 and 12",
        when="run",
    )
    return out


REFUSED = _refused()


@pytest.mark.parametrize(("label", "case", "expect", "when"), REFUSED, ids=[r[0] for r in REFUSED])
def test_what_onnxruntime_refuses_is_a_defect_at_the_node(label, case, expect, when) -> None:
    model = case.model()
    if when == "schema":
        # Its schema's type constraints refuse it, before inference.
        with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidGraph, match="Type Error"):
            _ort_session(model)
    elif when == "inference":
        # onnxruntime's own shape inference refuses the node.
        with pytest.raises(OrtFail, match=r"\[(Shape|Type)InferenceError\]"):
            _ort_session(model)
    elif when == "enforce":
        # Its kernel refuses the node's attributes when it runs.
        session = _ort_session(model)
        with pytest.raises(Exception, match="past_present_share_buffer"):
            session.run(None, case.feeds(SIZES[0]))
    else:
        # Its inference lets it through; its kernel refuses to run it.
        session = _ort_session(model)
        with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidArgument, match="mismatch"):
            session.run(None, case.feeds(SIZES[0]))
    _, report = infer_with_report(model, contrib_ops=True)
    errors = [d for d in report if d.severity == "error"]
    assert len(errors) == 1, report
    assert expect in errors[0].message, errors[0]
    assert "node[0]" in errors[0].location, errors[0]
    # Without the option, onnx's behaviour: nothing to say about them.
    assert infer_with_report(model)[1].ok


def _extra_refused() -> list[tuple[str, Case, str, str]]:
    """contrib_extra.rs's refusals: (label, case, what our finding says,
    what onnxruntime says when it loads or runs the model)."""
    out = []

    def one(label, node, inputs, expect, theirs, inits=(), opset=21) -> None:
        feeds = lambda s: _zeros(inputs, s)  # noqa: E731
        case = Case(label, [node], inputs, list(node.output), feeds, list(inits), opset=opset)
        out.append((label, case, expect, theirs))

    def legacy(label, op, attrs, shape, expect, theirs) -> None:
        one(
            label,
            helper.make_node(op, ["x"], ["y"], **attrs),
            [("x", F, shape)],
            expect,
            theirs,
            opset=9,
        )

    legacy(
        "image_scaler_bias", "ImageScaler", {}, ["B", 3, 4, 4], "needs its 'bias'", "No attribute"
    )
    legacy(
        "image_scaler_channels",
        "ImageScaler",
        {"bias": [0.0, 1.0]},
        ["B", 3, 4, 4],
        "2 biases for the 3 channels",
        r"Bias size \(2\) does not match the number of channels \(3\)",
    )
    legacy(
        "image_scaler_rank",
        "ImageScaler",
        {"bias": [0.0, 0.0, 0.0]},
        [3, 4, 4],
        "must be (N, C, H, W)",
        "four dimensions",
    )
    legacy(
        "crop_negative_border",
        "Crop",
        {"border": [-1, 0, 0, 0]},
        ["B", 3, 6, 8],
        "borders cannot be negative",
        "non-negative",
    )
    legacy(
        "crop_scale",
        "Crop",
        {"border": [1, 1, 1, 1], "scale": [6, 3]},
        ["B", 3, 6, 8],
        "height 6 is less than its border and scale (1 + 6)",
        "scale",
    )
    legacy("scaled_tanh_alpha", "ScaledTanh", {"beta": 1.0}, ["B"], "needs its 'alpha'", "'alpha'")
    legacy(
        "crop_borders",
        "Crop",
        {"border": [4, 4, 4, 4]},
        ["B", 3, 6, 8],
        "height 6 is less than its two borders (4 + 4)",
        "height",
    )
    one(
        "cdist_metric",
        ms("CDist", ["a", "b"], ["y"], metric="cityblock"),
        [("a", F, ["B", 4]), ("b", F, ["S", 4])],
        "'sqeuclidean' and 'euclidean' only",
        "NOT_IMPLEMENTED",
    )
    one(
        "expand_dims_axis",
        ms("ExpandDims", ["x", "axis"], ["y"]),
        [("x", F, ["B", "S"])],
        "axis 5 is out of range",
        "axis is invalid",
        [const("axis", np.array(5, np.int32))],
    )
    one(
        "inverse_square",
        ms("Inverse", ["x"], ["y"]),
        [("x", F, ["B", 3, 4])],
        "square matrices",
        "inner-most 2 dimensions must have the same size",
    )
    one(
        "unique_rank",
        ms("Unique", ["x"], ["y", "idx", "counts"]),
        [("x", F, ["B", 4])],
        "must have rank 1",
        "1D",
    )
    one(
        "matmul_bnb4_k",
        ms("MatMulBnb4", ["a", "b", "absmax"], ["y"], K=8, N=4, block_size=16, quant_type=1),
        [("a", F, ["B", 6])],
        "must end in 8",
        "Incompatible dimensions",
        [const("b", np.zeros(16, np.uint8)), const("absmax", np.ones(2, np.float32))],
    )
    one(
        "unfold_size",
        ms("UnfoldTensor", ["x"], ["y"], dim=1, size=12),
        [("x", F, ["B", 10])],
        "a window of 12 over a dimension of 10",
        "UnfoldTensor",
    )
    one(
        "linear_attention_gate_beta",
        ms("LinearAttentionGate", ["a", "dt", "ds"], ["decay", "beta"]),
        [("a", F, ["B", 4])],
        "the beta output needs the b input",
        "b input is required",
        [const("dt", np.zeros(4, np.float32)), const("ds", np.ones(4, np.float32))],
    )
    one(
        "crop_and_resize_rank",
        ms("CropAndResize", ["x", "rois", "bi", "size"], ["y"]),
        [("x", F, ["B", 3, 8]), ("rois", F, ["S", 4]), ("bi", I32, ["S"])],
        "X must have rank 4",
        "wrong dimension",
        [const("size", np.array([2, 2], np.int32))],
    )
    one(
        "grid_sample_rank",
        ms("GridSample", ["x", "grid"], ["y"]),
        [("x", F, ["B", 3, 4, 5, 6]), ("grid", F, ["B", 2, 3, 4, 3])],
        "the input must have rank 4",
        "rank 4",
    )
    return out


EXTRA_REFUSED = _extra_refused()


@pytest.mark.parametrize(
    ("label", "case", "expect", "theirs"), EXTRA_REFUSED, ids=[r[0] for r in EXTRA_REFUSED]
)
def test_what_onnxruntime_refuses_of_more_operators_is_a_defect_at_the_node(
    label, case, expect, theirs
) -> None:
    """Each refusal of onnxruntime's inference (at load) or kernels (at
    load, when they start, or when they run) is one error at the node."""
    model = case.model()

    def load_and_run() -> None:
        _ort_session(model).run(None, case.feeds(SIZES[0]))

    with pytest.raises(Exception, match=theirs):
        load_and_run()
    _, report = infer_with_report(model, contrib_ops=True)
    errors = [d for d in report if d.severity == "error"]
    assert len(errors) == 1, report
    assert expect in errors[0].message, errors[0]
    assert "node[0]" in errors[0].location, errors[0]


def test_shapes_command_with_contrib_ops_gives_the_bytes_onnxruntime_makes(
    tmp_path, capsys
) -> None:
    """`onnxfast shapes --contrib-ops --sizes`: the bytes of every node
    output are those of the arrays onnxruntime returns at the sizes;
    without the option, the operator's outputs are of unknown type."""
    import json

    from onnxfast import cli

    case = next(c for c in CASES if c.name == "multi_head_attention_past")
    path = tmp_path / "mha.onnx"
    onnx.save(case.model(), path)
    sizes = SIZES[0]
    given = ",".join(f"{k}={v}" for k, v in sizes.items())
    argv = ["shapes", str(path), "--json", "--symbolic", "--sizes", given]
    assert cli.main([*argv, "--contrib-ops"]) == 0
    values = {v["name"]: v for v in json.loads(capsys.readouterr().out)["graphs"][0]["values"]}
    arrays = _ort_session(case.model()).run(case.outputs, case.feeds(sizes))
    for name, array in zip(case.outputs, arrays):
        assert values[name]["shape_at"] == list(array.shape), (name, values[name])
        assert values[name]["bytes"] == array.nbytes, (name, values[name])
    assert values["present_k"]["type"] == "FLOAT['B', 2, 'S + P', 8]"
    assert cli.main(argv) == 0
    values = {v["name"]: v for v in json.loads(capsys.readouterr().out)["graphs"][0]["values"]}
    assert values["present_k"]["type"] == "?"


def test_check_with_contrib_ops_checks_past_onnxruntimes_operators() -> None:
    """check(full=True): onnx's verdicts by default (a defect after the
    first com.microsoft operator is not seen; onnxruntime's default-domain
    operators are unknown, E405); with contrib_ops=True the operators are
    known and inferred, and the defect is an error at its node."""
    bert, decoder = MODELS

    def typed_outputs(model: onnx.ModelProto, outputs: dict[str, list]) -> onnx.ModelProto:
        # The checker wants main-graph outputs typed.
        del model.graph.output[:]
        model.graph.output.extend(
            helper.make_tensor_value_info(n, F, d) for n, d in outputs.items()
        )
        return model

    model = bert.model()
    bad = helper.make_node("Add", ["out", "seven"], ["broken"], name="planted")
    model.graph.node.append(bad)
    model.graph.initializer.append(const("seven", rand(7)))
    model = typed_outputs(model, {"broken": ["B", "S", 16]})
    onnx.checker.check_model(model, full_check=True)  # onnx: valid
    assert onnxfast.check(model, full=True).ok
    report = onnxfast.check(model, full=True, contrib_ops=True)
    errors = [d for d in report if d.severity == "error"]
    assert len(errors) == 1, report
    assert "node[8] 'planted' (Add)" in errors[0].location, errors[0]
    assert not [d for d in report if d.code == "W790"], report
    # A session refuses it too.
    with pytest.raises(OrtFail):
        _ort_session(model)

    cache = ["B", 1, "T", 16]
    outputs = {"y": ["B", "S", 32], "present_k": cache, "present_v": cache}
    model = typed_outputs(decoder.model(), outputs)
    with pytest.raises(onnx.checker.ValidationError, match="SimplifiedLayerNormalization"):
        onnx.checker.check_model(model, full_check=True)
    e405 = [d for d in onnxfast.check(model, full=True) if d.severity == "error"]
    assert [d.code for d in e405] == ["E405"]
    assert "contrib_ops=True" in (e405[0].suggestion or ""), e405
    assert onnxfast.check(model, full=True, contrib_ops=True).ok
    assert onnxfast.check(model, contrib_ops=True).ok
    _ort_session(model)


# Operators onnxruntime has no CPU kernel for: against onnxruntime's own
# symbolic_shape_infer.py (onnxruntime/tools), which its optimizer uses.
NO_CPU_KERNEL = [
    ("BiasAdd", [("x", F, ["B", "S", 16]), ("bias", F, [16]), ("skip", F, ["B", "S", 16])], {}),
    ("BiasSplitGelu", [("x", F, ["B", "S", 32]), ("bias", F, [32])], {}),
    ("GemmFastGelu", [("x", F, ["B", "S", 16]), ("w", F, [16, 24]), ("bias", F, [24])], {}),
    (
        "GroupNorm",
        [("x", F, ["B", 4, 4, 16]), ("g", F, [16]), ("b", F, [16])],
        {"groups": 4, "activation": 0},
    ),
    (
        "SkipGroupNorm",
        [("x", F, ["B", 4, 4, 16]), ("g", F, [16]), ("b", F, [16]), ("skip", F, ["B", 4, 4, 16])],
        {"groups": 4, "activation": 1},
    ),
]


def _symbolic_shape_infer(model: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    inferred = SymbolicShapeInference.infer_shapes(model)
    g = inferred.graph
    return {v.name: v.type for v in [*g.value_info, *g.output]}


@pytest.mark.parametrize(
    ("op", "inputs", "attrs"), NO_CPU_KERNEL, ids=[c[0] for c in NO_CPU_KERNEL]
)
def test_contrib_op_without_a_cpu_kernel_matches_symbolic_shape_infer(op, inputs, attrs) -> None:
    outputs = ["y", "sum"] if op == "SkipGroupNorm" else ["y"]
    node = ms(op, [n for n, _, _ in inputs], outputs, **attrs)
    model = Case(op, [node], inputs, outputs, lambda s: {}).model()
    theirs = _symbolic_shape_infer(model)
    ours = _ours(model)
    for name in outputs:
        t = theirs[name].tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else d.dim_param for d in t.shape.dim]
        assert ours[name] == (t.elem_type, dims), (name, ours[name], dims)


def test_nhwc_conv_is_conv_channels_last() -> None:
    """NhwcConv has no CPU kernel. Its output is Conv's on the same data
    transposed: at each set of sizes, our shape (channels last) must be
    that of the array onnxruntime's Conv returns, transposed. Its weights
    are (M, kH, kW, C/group), as onnxruntime's NHWC fusion writes them:
    a 3x1 kernel here, with no kernel_shape (onnxruntime's own inference
    would read them as a 3x3 kernel over 1 x 3). symbolic_shape_infer.py
    gives the same dims."""
    attrs = {"pads": [1, 0, 1, 0], "strides": [2, 1]}
    w = rand(4, 3, 1, 3)
    node = ms("NhwcConv", ["x", "w", "b"], ["y"], **attrs)
    nhwc = Case(
        "nhwc_conv",
        [node],
        [("x", F, ["B", "S", 7, 3])],
        ["y"],
        lambda s: {},
        [const("w", w), const("b", rand(4))],
    ).model()
    conv = Case(
        "conv",
        [helper.make_node("Conv", ["x", "w", "b"], ["y"], **attrs)],
        [("x", F, ["B", 3, "S", 7])],
        ["y"],
        lambda s: {},
        [const("w", w.transpose(0, 3, 1, 2).copy()), const("b", rand(4))],
    ).model()
    session = _ort_session(conv)
    ours = _ours(nhwc, symbolic=True)["y"]
    theirs = _symbolic_shape_infer(nhwc)["y"].tensor_type
    assert ours[0] == theirs.elem_type == F
    for sizes in SIZES:
        (array,) = session.run(["y"], {"x": rand(sizes["B"], 3, sizes["S"], 7)})
        n, m, h, width = array.shape
        expected = [n, h, width, m]
        assert [onnxfast.evaluate_dim(d, sizes) for d in ours[1]] == expected, (ours, sizes)
        ssi = [
            d.dim_value if d.HasField("dim_value") else _sympy_value(d.dim_param, sizes)
            for d in theirs.shape.dim
        ]
        assert ssi == expected, (ssi, sizes)


# Operators without a CPU kernel whose outputs are not all the input's
# shape: (op, graph inputs, initializers, attributes, outputs).
NO_CPU_KERNEL_SHAPES = [
    (
        "RemovePadding",
        [("x", F, ["B", "S", 16]), ("count", I32, ["B"])],
        [],
        {},
        ["y", "offsets", "cumulated", "longest"],
    ),
    ("RestorePadding", [("x", F, ["T", 16]), ("offsets", I32, ["B", "S"])], [], {}, ["y"]),
    (
        "RelativePositionBias",
        [("table", F, [32, 4])],
        [const("q", np.array(5, np.int64)), const("k", np.array(7, np.int64))],
        {"max_distance": 128},
        ["y"],
    ),
    # Phi-3-small's block-sparse attention: Q, K and V apart, and packed
    # (empty entries are absent inputs); past buffers of P positions.
    *[
        (
            "SparseAttention",
            [
                *query,
                ("pk", F, ["B", 2, "P", 8]),
                ("pv", F, ["B", 2, "P", 8]),
                ("rows", I32, [1, 5]),
                ("cols", I32, [1, 10]),
                ("total", I32, [1]),
                ("lengths", I32, ["B"]),
            ],
            [],
            {"num_heads": 4, "kv_num_heads": 2, "sparse_block_size": 16},
            ["y", "present_k", "present_v"],
        )
        for query in (
            [("q", F, ["B", "S", 32]), ("k", F, ["B", "S", 16]), ("v", F, ["B", "S", 16])],
            [("q", F, ["B", "S", 64]), ("", 0, []), ("", 0, [])],
        )
    ],
    # BERT with its padding removed: T tokens.
    (
        "PackedAttention",
        [("x", F, ["T", 16]), ("w", F, [16, 48]), ("b", F, [48]), ("offsets", I32, ["B", "S"])],
        [const("cumulated", np.zeros(3, np.int32))],
        {"num_heads": 2},
        ["y"],
    ),
    *[
        (
            "PackedMultiHeadAttention",
            [*query, ("", 0, []), ("offsets", I32, ["B", "S"])],
            [const("cumulated", np.zeros(3, np.int32))],
            {"num_heads": 2},
            ["y"],
        )
        for query in (
            [("q", F, ["T", 16]), ("k", F, ["T", 16]), ("v", F, ["T", 24])],
            [("q", F, ["T", 2, 3, 8]), ("", 0, []), ("", 0, [])],
        )
    ],
    (
        "GatedRelativePositionBias",
        [
            ("q", F, ["B", "S", 16]),
            ("qb", F, [16]),
            ("rel", F, [1, 2, "S", "S"]),
            ("w", F, [8, 8]),
            ("b", F, [8]),
            ("a", F, [1, 2, 1, 1]),
        ],
        [],
        {"num_heads": 2},
        ["y"],
    ),
]


@pytest.mark.parametrize(
    ("op", "inputs", "inits", "attrs", "outputs"),
    NO_CPU_KERNEL_SHAPES,
    ids=[f"{c[0]}-{k}" for k, c in enumerate(NO_CPU_KERNEL_SHAPES)],
)
def test_contrib_op_without_a_cpu_kernel_against_symbolic_shape_infer(
    op, inputs, inits, attrs, outputs
) -> None:
    """Against onnxruntime's symbolic_shape_infer.py: the same element types
    and ranks, and every dim it gives (a number, or an expression of the
    graph's symbols) evaluates to ours at each set of sizes; a fresh
    symbol of its own (RemovePadding's token count) says nothing to compare."""
    node = ms(op, [n for n, _, _ in inputs] + [i.name for i in inits], outputs, **attrs)
    graph_inputs = [i for i in inputs if i[0]]
    model = Case(op, [node], graph_inputs, outputs, lambda s: {}, inits).model()
    theirs = _symbolic_shape_infer(model)
    ours = _ours(model, symbolic=True, data_prop=True)
    compared = 0
    for name in outputs:
        t = theirs[name].tensor_type
        elem, dims = ours[name]
        assert elem == t.elem_type, name
        assert dims is not None, name
        assert len(dims) == len(t.shape.dim), (name, dims, t.shape)
        for d, their in zip(dims, t.shape.dim):
            if their.HasField("dim_value"):
                assert d == their.dim_value, (name, dims, t.shape)
                compared += 1
                continue
            expr = _sympy_expr(their.dim_param)
            if not {str(x) for x in expr.free_symbols} <= set(SIZES[0]):
                continue
            for sizes in SIZES:
                assert onnxfast.evaluate_dim(d, sizes) == int(expr.subs(sizes)), (name, d)
            compared += 1
    assert compared >= len(outputs)
    if op == "RemovePadding":
        # The cumulated lengths have B + 1 entries (the tool names it from a
        # symbol of its own, batch_size + 1).
        assert ours["cumulated"] == (I32, ["B + 1"])


def _sympy_expr(text: str) -> Any:
    """A dim of symbolic_shape_infer.py as a SymPy expression, the graph's
    symbols (B, S, P, T) read as symbols (S is SymPy's singleton registry
    otherwise)."""
    import sympy

    return sympy.sympify(text, locals={k: sympy.Symbol(k) for k in SIZES[0]})


def _sympy_value(text: str, sizes: dict[str, int]) -> int:
    return int(_sympy_expr(text).subs(sizes))


@pytest.mark.parametrize("case", MODELS, ids=[c.name for c in MODELS])
def test_optimized_layers_against_symbolic_shape_infer(case: Case) -> None:
    """onnxruntime's symbolic_shape_infer.py (SymPy) on the same layers: we
    give every dim it gives, and at each set of sizes ours (evaluated by
    onnxfast.evaluate_dim) is the shape of the array onnxruntime returns;
    its own (evaluated by SymPy) is too, but for GroupQueryAttention's
    present caches, which it gives the past's length."""
    model = case.model()
    theirs = _symbolic_shape_infer(model)
    ours = _ours(model, symbolic=True, data_prop=True)
    session = _ort_session(model)
    wrong, compared = set(), 0
    for sizes in SIZES:
        arrays = dict(zip(case.outputs, session.run(case.outputs, case.feeds(sizes))))
        for name in case.outputs:
            t = theirs[name].tensor_type
            elem, dims = ours[name]
            assert elem == t.elem_type, name
            assert dims is not None, name
            assert len(dims) == len(t.shape.dim) == arrays[name].ndim, (name, dims, t.shape)
            for d, their, actual in zip(dims, t.shape.dim, arrays[name].shape):
                assert onnxfast.evaluate_dim(d, sizes) == actual, (name, d, sizes)
                if their.HasField("dim_value"):
                    expected = their.dim_value
                else:
                    expected = _sympy_value(their.dim_param, sizes)
                if expected != actual:
                    wrong.add(name)
                compared += 1
    assert compared >= 3 * len(case.outputs)
    gqa = {"present_k", "present_v"} if case.name == "llm_decoder_layer" else set()
    assert wrong == gqa


def test_check_command_with_contrib_ops(tmp_path, capsys) -> None:
    """`onnxfast check --full --contrib-ops`: the LLM decoder layer is valid
    (exit 0; without the option: E405, exit 1), in one process and in
    worker processes (-j 2)."""
    from onnxfast import cli

    model = MODELS[1].model()
    del model.graph.output[:]
    model.graph.output.append(helper.make_tensor_value_info("y", F, ["B", "S", 32]))
    path = tmp_path / "decoder.onnx"
    onnx.save(model, path)
    assert cli.main(["check", "--full", str(path)]) == 1
    assert "E405" in capsys.readouterr().out
    for jobs in ("1", "2"):
        assert cli.main(["check", "--full", "--contrib-ops", "-j", jobs, str(path), str(path)]) == 0
        assert "E405" not in capsys.readouterr().out


def _small_cnn() -> onnx.ModelProto:
    """A small image classifier as exporters write it: Conv + Relu blocks, a
    residual Add, max and average pooling, Gemm + Relu, MatMul, Softmax;
    a symbolic batch."""
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []

    def conv(x: str, cin: int, cout: int, k: int, name: str, act: str, add: str = "") -> str:
        w, b = f"{name}_w", f"{name}_b"
        inits.extend([const(w, rand(cout, cin, k, k) * 0.1), const(b, rand(cout))])
        nodes.append(helper.make_node("Conv", [x, w, b], [f"{name}_c"], pads=[k // 2] * 4))
        y = f"{name}_c"
        if add:
            nodes.append(helper.make_node("Add", [y, add], [f"{name}_a"]))
            y = f"{name}_a"
        nodes.append(helper.make_node(act, [y], [f"{name}_r"]))
        return f"{name}_r"

    y = conv("x", 3, 8, 3, "c1", "Relu")
    nodes.append(helper.make_node("MaxPool", [y], ["p1"], kernel_shape=[2, 2], strides=[2, 2]))
    y = conv("p1", 8, 8, 3, "c2", "Relu")
    y = conv(y, 8, 8, 3, "c3", "Relu", add="p1")
    y = conv(y, 8, 16, 3, "c4", "LeakyRelu")
    nodes.append(helper.make_node("AveragePool", [y], ["ap0"], kernel_shape=[2, 2], strides=[2, 2]))
    # Twice the size, then halved again: a nearest-neighbour Resize.
    inits.append(const("twice", np.array([1, 1, 2, 2], np.float32)))
    nodes.append(
        helper.make_node(
            "Resize",
            ["ap0", "", "twice"],
            ["up"],
            mode="nearest",
            coordinate_transformation_mode="asymmetric",
            nearest_mode="floor",
        )
    )
    nodes.append(helper.make_node("MaxPool", ["up"], ["ap"], kernel_shape=[2, 2], strides=[2, 2]))
    y = conv("ap", 16, 16, 1, "c5", "Sigmoid")
    nodes.append(helper.make_node("GlobalAveragePool", [y], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"]))
    inits += [const("fc_w", rand(16, 10)), const("fc_b", rand(10)), const("fc2_w", rand(10, 4))]
    nodes.append(helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["fc"]))
    nodes.append(helper.make_node("Relu", ["fc"], ["fc_r"]))
    nodes.append(helper.make_node("MatMul", ["fc_r", "fc2_w"], ["mm"]))
    nodes.append(helper.make_node("Softmax", ["mm"], ["out"]))
    graph = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("x", F, ["N", 3, 16, 16])],
        [helper.make_tensor_value_info("out", F, ["N", 4])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _optimized(source: onnx.ModelProto, tmp_path, level: str, quantized: bool) -> onnx.ModelProto:
    """`source` as onnxruntime writes it: quantized to int8 operators by its
    static quantizer (QOperator format), then saved by its graph optimizer
    at `level`."""
    src = tmp_path / "source.onnx"
    onnx.save(source, src)
    if quantized:
        from onnxruntime.quantization import (
            CalibrationDataReader,
            QuantFormat,
            QuantType,
            quantize_static,
        )

        class Reader(CalibrationDataReader):
            def __init__(self) -> None:
                self.feeds = iter([{"x": rand(2, 3, 16, 16)} for _ in range(3)])

            def get_next(self) -> dict | None:
                return next(self.feeds, None)

        quantize_static(
            src,
            tmp_path / "quantized.onnx",
            Reader(),
            quant_format=QuantFormat.QOperator,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
        )
        src = tmp_path / "quantized.onnx"
    options = ort.SessionOptions()
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    options.log_severity_level = 3
    ort.InferenceSession(str(src), options, providers=["CPUExecutionProvider"])
    return onnx.load(tmp_path / "optimized.onnx")


OPTIMIZED = [
    # (level, quantized, operators of onnxruntime's it must have written)
    ("ORT_ENABLE_EXTENDED", False, {"FusedConv", "FusedGemm"}),
    (
        "ORT_ENABLE_EXTENDED",
        True,
        {"QLinearAveragePool", "QLinearGlobalAveragePool", "QGemm", "QLinearAdd"},
    ),
    # Its NHWC transformer: channels-last QLinearConv, NhwcMaxPool.
    ("ORT_ENABLE_ALL", True, {"QLinearConv", "NhwcMaxPool"}),
    # Float at its highest level: the NCHWc layout (where the machine's
    # vector width has one; skipped otherwise).
    ("ORT_ENABLE_ALL", False, {"ReorderOutput", "Conv", "Upsample", "GlobalAveragePool"}),
]


@pytest.mark.parametrize(
    ("level", "quantized", "expected"),
    OPTIMIZED,
    ids=[f"{lv[11:].lower()}{'_int8' if q else '_float'}" for lv, q, _ in OPTIMIZED],
)
def test_models_onnxruntime_optimized_are_inferred_everywhere(
    tmp_path, level: str, quantized: bool, expected: set[str]
) -> None:
    """A model saved by onnxruntime's optimizer (and its quantizer): with
    contrib_ops every node output is typed, and its dims are those of the
    arrays onnxruntime returns for it at two batch sizes; by default
    (onnx's behaviour) the first of its operators leaves the rest untyped."""
    model = _optimized(_small_cnn(), tmp_path, level, quantized)
    written = {n.op_type for n in model.graph.node if n.domain.startswith("com.microsoft")}
    if "ReorderOutput" in expected and not written & expected:
        pytest.skip("onnxruntime wrote no NCHWc layout on this machine")
    assert expected <= written, written
    names = [o for n in model.graph.node for o in n.output if o]
    ours = onnxfast.infer_shapes(model, contrib_ops=True, strict=True)
    values = ours.graph.values
    exposed = onnx.ModelProto()
    exposed.CopyFrom(model)
    del exposed.graph.output[:]
    exposed.graph.output.extend(onnx.ValueInfoProto(name=n) for n in names)
    session = _ort_session(exposed)
    for batch in (1, 3):
        arrays = session.run(names, {"x": rand(batch, 3, 16, 16)})
        for name, array in zip(names, arrays):
            t = values[name].type
            assert t is not None, name
            assert t.tensor_type is not None, name
            assert t.tensor_type.elem_type == helper.np_dtype_to_tensor_dtype(array.dtype), name
            dims = values[name].shape
            assert dims is not None, name
            assert len(dims) == array.ndim, (name, dims, array.shape)
            for d, n in zip(dims, array.shape):
                # A dim left unknown: NCHWc blocks of a machine's width.
                if not (isinstance(d, str) and d.startswith("unk__")):
                    assert onnxfast.evaluate_dim(d, {"N": batch}) == n, (name, dims, array.shape)
    plain = onnxfast.infer_shapes(model).graph.values
    assert any(plain[n].type is None for n in names)
    # onnxruntime loads it, so its schemas accept every node.
    report = onnxfast.check(model, full=True, contrib_ops=True)
    assert report.ok, report
    assert not [d for d in report if d.code in ("W790", "W791")], report


def _schema_defects() -> list[tuple[str, Case, str, str, str]]:
    """Nodes of onnxruntime's operators that its schemas refuse when it
    loads the model: (label, case, its message, our code, our message)."""
    out = []
    s = const("s", np.array(0.1, np.float32))
    z = const("z", np.array(0, np.uint8))
    wz = const("wz", np.array(0, np.int8))
    nbits = [const("w", np.zeros((8, 2, 8), np.uint8)), const("sc", np.ones(16, np.float32))]

    def one(label, node, inputs, inits, theirs, code, ours) -> None:
        case = Case(label, [node], inputs, list(node.output), lambda s: {}, list(inits))
        out.append((label, case, theirs, code, ours))

    one(
        "input_count",
        ms("FusedGemm", ["a", "w", "b", "b"], ["y"]),
        [("a", F, ["S", 16])],
        [const("w", np.zeros((16, 8), np.float32)), const("b", np.zeros(8, np.float32))],
        "input size 4 not in range [min=2, max=3]",
        "E407",
        "takes 2 to 3 inputs, the node has 4",
    )
    one(
        "unknown_attribute",
        ms("MatMulNBits", ["a", "w", "sc"], ["y"], K=32, N=8, block_size=16, foo=1),
        [("a", F, ["B", 32])],
        nbits,
        "Unrecognized attribute: foo",
        "E410",
        "has no attribute 'foo'",
    )
    one(
        "required_attribute",
        ms("MatMulNBits", ["a", "w", "sc"], ["y"], N=8, block_size=16),
        [("a", F, ["B", 32])],
        nbits,
        "Required attribute 'K' is missing",
        "E413",
        "requires the attribute 'K'",
    )
    one(
        "attribute_type",
        ms("FusedConv", ["x", "w"], ["y"], activation=1),
        [("x", F, ["B", 3, 8, 8])],
        [const("w", np.zeros((4, 3, 3, 3), np.float32))],
        "Mismatched attribute type",
        "E411",
        "must be STRING, it is INT",
    )
    # A type variable bound to two types (T of A and of A's zero point).
    one(
        "type_constraint",
        ms("QLinearMul", ["x", "s", "z", "x", "s", "z", "s", "wz"], ["y"]),
        [("x", U8, ["B", 16])],
        [s, z, wz],
        "bound to different types",
        "E",
        "int8",
    )
    return out


SCHEMA_DEFECTS = _schema_defects()


@pytest.mark.parametrize(
    ("label", "case", "theirs", "code", "ours"), SCHEMA_DEFECTS, ids=[d[0] for d in SCHEMA_DEFECTS]
)
def test_check_with_contrib_ops_verifies_onnxruntimes_schemas(
    label, case, theirs, code, ours
) -> None:
    """check(contrib_ops=True) verifies these nodes against onnxruntime's own
    schemas (data/ort_schemas.txt, generated from onnxruntime 1.32): what
    onnxruntime refuses when it loads the model is one error at the node.
    Without the option the operators are custom ones (onnx's verdict)."""
    model = case.model()
    with pytest.raises(Exception, match=re.escape(theirs)):
        _ort_session(model)
    for full in (False, True):
        report = onnxfast.check(model, contrib_ops=True, full=full)
        # (The untyped graph outputs are E203 / E204 at the outputs.)
        errors = [d for d in report if d.severity == "error" and "node[0]" in d.location]
        if code == "E" and not full:
            # A type constraint is checked by inference (the full check).
            assert not errors, report
            continue
        assert len(errors) == 1, report
        assert errors[0].code.startswith(code), report
        assert ours in errors[0].message, errors[0]
    # Without the option: custom operators, nothing to say at the node.
    plain = onnxfast.check(model, full=True)
    assert not [d for d in plain if d.severity == "error" and "node[0]" in d.location]


def test_onnxruntimes_schemas_allow_what_it_allows() -> None:
    """Its LayerNormalization before opset 17 and its
    SimplifiedLayerNormalization take attributes they do not declare
    (their schemas allow unchecked attributes): onnxruntime loads such a
    node, and the check with contrib_ops finds nothing."""
    node = helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], note=3)
    g, b = const("g", np.ones(8, np.float32)), const("b", np.zeros(8, np.float32))
    model = Case("ln", [node], [("x", F, ["B", 8])], ["y"], lambda s: {}, [g, b], opset=14).model()
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", F, ["B", 8]))
    _ort_session(model)
    assert onnxfast.check(model, contrib_ops=True, full=True).ok


def test_onnxruntime_schema_table_is_onnxruntimes(tmp_path) -> None:
    """data/ort_schemas.txt is what scripts/gen_ort_schemas.py writes from
    the pinned onnxruntime (regenerated here and compared)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "gen_ort_schemas", _ROOT / "scripts" / "gen_ort_schemas.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.OUT = tmp_path / "ort_schemas.txt"
    module.main()
    committed = (_ROOT / "rust" / "onnxfast-core" / "data" / "ort_schemas.txt").read_text()
    assert module.OUT.read_text() == committed


def _tiny_gpt_decoder(vocab: int, heads: int, head: int, inner: int) -> onnx.GraphProto:
    """A one-layer GPT decoder graph with the interface onnxruntime's
    generation loops require (input_ids, position_ids, attention_mask,
    past_0 → logits, present_0); `inner` is its output projection's input
    size (the embedding size heads·head for a valid model)."""
    hidden = heads * head
    nodes = [
        helper.make_node("Gather", ["emb", "input_ids"], ["x"]),
        helper.make_node("MatMul", ["x", "w_out"], ["logits"]),
        helper.make_node("Shape", ["input_ids"], ["ids_shape"]),
        helper.make_node("Concat", ["ids_shape", "heads"], ["kv_shape"], axis=0),
        helper.make_node("Reshape", ["x", "kv_shape"], ["kv4"]),
        helper.make_node("Transpose", ["kv4"], ["kvt"], perm=[0, 2, 1, 3]),
        helper.make_node("Unsqueeze", ["kvt", "zero"], ["kv5"]),
        helper.make_node("Concat", ["kv5", "kv5"], ["kv"], axis=0),
        helper.make_node("Concat", ["past_0", "kv"], ["present_0"], axis=3),
    ]
    inits = [
        const("emb", rand(vocab, hidden)),
        const("w_out", rand(inner, vocab)),
        const("heads", np.array([heads, head], np.int64)),
        const("zero", np.array([0], np.int64)),
    ]
    vi = helper.make_tensor_value_info
    return helper.make_graph(
        nodes,
        "decoder",
        [
            vi("input_ids", I32, ["batch", "seq"]),
            vi("position_ids", I32, ["batch", "seq"]),
            vi("attention_mask", I32, ["batch", "total"]),
            vi("past_0", F, [2, "batch", heads, "past", head]),
        ],
        [
            vi("logits", F, ["batch", "seq", vocab]),
            vi("present_0", F, [2, "batch", heads, "total", head]),
        ],
        inits,
    )


def _generation_model(op: str, decoder: onnx.GraphProto, vocab: int) -> onnx.ModelProto:
    """`op` (BeamSearch: 3 beams, 2 sequences returned; GreedySearch;
    Sampling) around `decoder`, generating up to 8 tokens from input_ids
    (B, S)."""

    def scalar(name: str, value: Any, dtype: Any = np.int32) -> onnx.TensorProto:
        return const(name, np.array([value], dtype))

    inits = [scalar("max_length", 8), scalar("min_length", 1)]
    inputs = ["input_ids", "max_length", "min_length"]
    outputs = ["sequences"]
    attrs: dict[str, Any] = {}
    if op == "BeamSearch":
        inits += [scalar("beams", 3), scalar("returned", 2), scalar("penalty", 1.0, np.float32)]
        inputs += ["beams", "returned", "penalty"]
        outputs += ["sequences_scores", "scores"]
        attrs["vocab_size"] = vocab
    node = helper.make_node(
        op,
        inputs,
        outputs,
        domain="com.microsoft",
        decoder=decoder,
        eos_token_id=vocab - 1,
        pad_token_id=0,
        model_type=0,
        **attrs,
    )
    graph = helper.make_graph(
        [node],
        "generate",
        [helper.make_tensor_value_info("input_ids", I32, ["B", "S"])],
        [onnx.ValueInfoProto(name=o) for o in outputs],
        inits,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    model.ir_version = 8
    return model


@pytest.mark.parametrize("op", ["BeamSearch", "GreedySearch", "Sampling"])
def test_generation_loops_match_onnxruntime(op: str) -> None:
    """onnxruntime's generation loops around a GPT decoder graph: our output
    types are those its session infers, and every dim we give evaluates, at
    two (batch, length) sizes, to the shape of the array it returns
    (sequences (B, 2, 8) for BeamSearch, scores (-S + 8, B, 3, vocab)); the
    decoder graph is inferred too."""
    vocab = 11
    model = _generation_model(op, _tiny_gpt_decoder(vocab, 2, 4, 8), vocab)
    session = _ort_session(model)
    names = [o.name for o in session.get_outputs()]
    theirs = {o.name: o.type for o in session.get_outputs()}
    ours = _ours(model, symbolic=True, data_prop=True)
    for name in names:
        assert ours[name][0] == _ORT_TYPES[theirs[name]], (name, ours[name])
    for batch, length in ((1, 3), (2, 2)):
        feeds = {"input_ids": _rng.integers(1, vocab - 1, (batch, length)).astype(np.int32)}
        for name, array in zip(names, session.run(names, feeds)):
            dims = ours[name][1]
            assert dims is not None, name
            at = [onnxfast.evaluate_dim(d, {"B": batch, "S": length}) for d in dims]
            assert at == list(array.shape), (name, dims, array.shape)
    if op == "BeamSearch":
        assert ours["scores"][1] == ["-S + 8", "B", 3, vocab]


def test_check_with_contrib_ops_reaches_inside_a_generation_loops_decoder() -> None:
    """A shape defect inside BeamSearch's decoder graph (the output
    projection's inner size 9, the embeddings' 8): onnxruntime refuses the
    model; the full check with contrib_ops infers the decoder and reports
    the MatMul inside it. By default (onnx's behaviour) the operator is
    unknown and its graph is not inferred."""
    vocab = 11
    model = _generation_model("BeamSearch", _tiny_gpt_decoder(vocab, 2, 4, 9), vocab)
    with pytest.raises(Exception, match="MatMul"):
        _ort_session(model)
    for o, dims in zip(model.graph.output, (["B", 2, 8], ["B", 2], [None, "B", 3, vocab])):
        o.CopyFrom(helper.make_tensor_value_info(o.name, I32 if o.name == "sequences" else F, dims))
    report = onnxfast.check(model, full=True, contrib_ops=True)
    errors = [d for d in report if d.severity == "error"]
    assert len(errors) == 1, report
    assert "attribute 'decoder'" in errors[0].location, errors[0]
    assert "MatMul" in errors[0].location, errors[0]
    assert onnxfast.check(model, full=True).ok


def _heads(x: str, out: str) -> list[onnx.NodeProto]:
    """(B, L, N·h) → (B, N, L, h), by the 'split' initializer [0, 0, N, h]."""
    return [
        helper.make_node("Reshape", [x, "split"], [out + "_4d"]),
        helper.make_node("Transpose", [out + "_4d"], [out], perm=[0, 2, 1, 3]),
    ]


def _tiny_encoder_decoder(
    whisper: bool, vocab: int, heads: int = 2, head: int = 4, mels: int = 6
) -> tuple[onnx.GraphProto, onnx.GraphProto]:
    """One-layer encoder and decoder graphs with the interfaces onnxruntime's
    beam search requires of T5 (encoder: encoder_input_ids, its mask and the
    decoder's start (B, 1) → logits, encoder_hidden_states, the self then the
    cross attention caches; decoder: input_ids (B·beams, 1), the mask, the
    hidden states and the four caches → logits and the grown self caches)
    and of Whisper (the encoder reads audio features (B, mels, frames) and
    a decoder prompt (B, L); the decoder only the token and the caches)."""
    hidden = heads * head
    vi = helper.make_tensor_value_info
    inits = [
        const("emb", rand(vocab, hidden)),
        const("w", rand(hidden, vocab)),
        const("split", np.array([0, 0, heads, head], np.int64)),
    ]
    enc_nodes = [
        helper.make_node("Gather", ["emb", "decoder_input_ids"], ["d"]),
        helper.make_node("MatMul", ["d", "w"], ["logits"]),
    ]
    if whisper:
        inits.append(const("mel", rand(mels, hidden)))
        enc_nodes += [
            helper.make_node("Transpose", ["encoder_input_ids"], ["frames"], perm=[0, 2, 1]),
            helper.make_node("MatMul", ["frames", "mel"], ["encoder_hidden_states"]),
        ]
        enc_inputs = [
            vi("encoder_input_ids", F, ["b", mels, "t"]),
            vi("decoder_input_ids", I32, ["b", "l"]),
        ]
        prompt, memory = "l", "t"
    else:
        enc_nodes.append(
            helper.make_node("Gather", ["emb", "encoder_input_ids"], ["encoder_hidden_states"])
        )
        enc_inputs = [
            vi("encoder_input_ids", I32, ["b", "t"]),
            vi("encoder_attention_mask", I32, ["b", "t"]),
            vi("decoder_input_ids", I32, ["b", 1]),
        ]
        prompt, memory = 1, "t"
    caches = [f"present_{kv}_{kind}_0" for kind in ("self", "cross") for kv in ("key", "value")]
    for name in caches:
        enc_nodes += _heads("d" if "self" in name else "encoder_hidden_states", name)
    encoder = helper.make_graph(
        enc_nodes,
        "encoder",
        enc_inputs,
        [
            vi("logits", F, ["b", prompt, vocab]),
            vi("encoder_hidden_states", F, ["b", memory, hidden]),
            *[vi(n, F, ["b", heads, prompt if "self" in n else memory, head]) for n in caches],
        ],
        inits,
    )
    dec_nodes = [
        helper.make_node("Gather", ["emb", "input_ids"], ["x"]),
        helper.make_node("MatMul", ["x", "w"], ["logits"]),
        *_heads("x", "kv"),
        helper.make_node("Concat", ["past_key_self_0", "kv"], ["present_key_self_0"], axis=2),
        helper.make_node("Concat", ["past_value_self_0", "kv"], ["present_value_self_0"], axis=2),
    ]
    dec_inputs = [vi("input_ids", I32, ["bb", 1])]
    if not whisper:
        dec_inputs += [
            vi("encoder_attention_mask", I32, ["bb", "t"]),
            vi("encoder_hidden_states", F, ["bb", "t", hidden]),
        ]
    dec_inputs += [
        vi(n.replace("present", "past"), F, ["bb", heads, "p" if "self" in n else "t", head])
        for n in caches
    ]
    decoder = helper.make_graph(
        dec_nodes,
        "decoder",
        dec_inputs,
        [
            vi("logits", F, ["bb", 1, vocab]),
            vi("present_key_self_0", F, ["bb", heads, "p1", head]),
            vi("present_value_self_0", F, ["bb", heads, "p1", head]),
        ],
        inits,
    )
    return encoder, decoder


def _encoder_decoder_search(
    op: str, whisper: bool, vocab: int, prompt: bool = False, **attrs: Any
) -> onnx.ModelProto:
    """`op` (BeamSearch or WhisperBeamSearch: 3 beams, 2 sequences returned,
    up to 8 tokens, decoding from token 2) around `_tiny_encoder_decoder`'s
    graphs, on input_ids (B, S) for T5 or features (B, 6, T) for Whisper;
    `prompt`: Whisper's decoder prompt decoder_input_ids (B, L) is given."""
    encoder, decoder = _tiny_encoder_decoder(whisper, vocab)
    inits = [
        const(name, np.array([value], dtype))
        for name, value, dtype in (
            ("max_length", 8, np.int32),
            ("min_length", 1, np.int32),
            ("beams", 3, np.int32),
            ("returned", 2, np.int32),
            ("penalty", 1.0, np.float32),
        )
    ]
    vi = helper.make_tensor_value_info
    first = vi("features", F, ["B", 6, "T"]) if whisper else vi("input_ids", I32, ["B", "S"])
    inputs = [first.name, "max_length", "min_length", "beams", "returned", "penalty"]
    graph_inputs = [first]
    if prompt:
        inputs += ["", "", "", "", "decoder_input_ids"]
        graph_inputs.append(vi("decoder_input_ids", I32, ["B", "L"]))
    outputs = ["sequences", "sequences_scores", "scores"]
    node = helper.make_node(
        op,
        inputs,
        outputs,
        domain="com.microsoft",
        encoder=encoder,
        decoder=decoder,
        eos_token_id=vocab - 1,
        pad_token_id=0,
        decoder_start_token_id=2,
        vocab_size=vocab,
        **attrs,
    )
    graph = helper.make_graph(
        [node], "generate", graph_inputs, [onnx.ValueInfoProto(name=o) for o in outputs], inits
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    model.ir_version = 8
    return model


_ENCODER_DECODER = [
    ("BeamSearch", False, False, {"model_type": 1}),
    ("WhisperBeamSearch", True, False, {}),
    ("WhisperBeamSearch", True, True, {}),
    ("BeamSearch", True, True, {"model_type": 2}),
]


@pytest.mark.parametrize(
    ("op", "whisper", "prompt", "attrs"),
    _ENCODER_DECODER,
    ids=["t5", "whisper", "whisper-prompt", "beamsearch-whisper-prompt"],
)
def test_encoder_decoder_beam_searches_match_onnxruntime(
    op: str, whisper: bool, prompt: bool, attrs: dict
) -> None:
    """onnxruntime's beam search around T5- and Whisper-shaped encoder and
    decoder graphs: our output types are those its session infers, and every
    dim we give evaluates, at two sizes, to the shape of the array it
    returns. The scores' steps are max_length less the tokens the sequences
    start with: the decoder's start token (7), or Whisper's decoder prompt
    (-L + 8)."""
    vocab = 11
    model = _encoder_decoder_search(op, whisper, vocab, prompt, **attrs)
    session = _ort_session(model)
    names = [o.name for o in session.get_outputs()]
    theirs = {o.name: o.type for o in session.get_outputs()}
    ours = _ours(model, symbolic=True, data_prop=True)
    for name in names:
        assert ours[name][0] == _ORT_TYPES[theirs[name]], (name, ours[name])
    assert ours["scores"][1] == ["-L + 8" if prompt else 7, "B", 3, vocab]
    for batch, length in ((1, 3), (2, 5)):
        sizes = {"B": batch, "S": length, "T": length + 2, "L": length - 1}
        if whisper:
            feeds = {"features": rand(batch, 6, sizes["T"])}
        else:
            feeds = {"input_ids": _rng.integers(1, vocab - 1, (batch, length)).astype(np.int32)}
        if prompt:
            feeds["decoder_input_ids"] = np.full((batch, sizes["L"]), 3, np.int32)
        for name, array in zip(names, session.run(names, feeds)):
            at = [onnxfast.evaluate_dim(d, sizes) for d in ours[name][1]]
            assert at == list(array.shape), (name, ours[name][1], array.shape)
    # Declared as inferred, the model checks valid, its graphs inferred.
    for o in model.graph.output:
        elem, dims = ours[o.name]
        o.CopyFrom(helper.make_tensor_value_info(o.name, elem, dims))
    assert onnxfast.check(model, full=True, contrib_ops=True).ok


def test_beam_search_refusals_match_onnxruntime() -> None:
    """What onnxruntime refuses of a Whisper beam search, we report: a
    WhisperBeamSearch of another model type (its session refuses to
    start), and a decoder prompt as long as max_length (its run fails)."""
    vocab = 11
    model = _encoder_decoder_search("WhisperBeamSearch", False, vocab, model_type=1)
    with pytest.raises(OrtFail, match="kModelTypeWhisper"):
        _ort_session(model)
    errors = [d for d in onnxfast.check(model, full=True, contrib_ops=True) if d.code != "E203"]
    assert [(d.code, "model_type" in d.location) for d in errors] == [("E722", True)], errors

    model = _encoder_decoder_search("WhisperBeamSearch", True, vocab, prompt=True)
    model.graph.input[1].CopyFrom(helper.make_tensor_value_info("decoder_input_ids", I32, [1, 8]))
    session = _ort_session(model)
    with pytest.raises(OrtFail, match=r"max_length \(8\) shall be greater"):
        session.run(
            None, {"features": rand(1, 6, 5), "decoder_input_ids": np.ones((1, 8), np.int32)}
        )
    errors = [d for d in onnxfast.check(model, full=True, contrib_ops=True) if d.code != "E203"]
    assert [(d.code, d.location.endswith("'max_length'")) for d in errors] == [("E723", True)]
    assert "must be greater than the length the sequences start with (8)" in errors[0].message


def _ort_schemas() -> list:
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_c

    wanted = set()
    for line in (
        (_ROOT / "rust" / "onnxfast-core" / "data" / "ort_schemas.txt").read_text().splitlines()
    ):
        if line.startswith("S "):
            _, domain, name, version = line.split(" ")[:4]
            wanted.add(("" if domain == "-" else domain, name, int(version)))
    found = [
        s for s in ort_c.get_all_operator_schema() if (s.domain, s.name, s.since_version) in wanted
    ]
    assert len(found) == len(wanted)
    return sorted(found, key=lambda s: s.name)


def _probe_node(schema, drop: str = "", extra: bool = False, inputs: int | None = None):
    """A node of `schema` with named inputs (its minimum, or `inputs`) and
    outputs, every required attribute but `drop` (dummy values), and with
    `extra` an attribute it does not declare."""
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_c

    kinds = ort_c.schemadef.OpSchema.AttrType
    dummies = {
        kinds.INT: 1,
        kinds.FLOAT: 1.0,
        kinds.STRING: "x",
        kinds.INTS: [1],
        kinds.GRAPH: helper.make_graph([], "g", [], []),
    }
    n_in = schema.min_input if inputs is None else inputs
    node = helper.make_node(
        schema.name,
        [f"i{k}" for k in range(n_in)],
        [f"o{k}" for k in range(schema.min_output)],
        domain=schema.domain,
    )
    for a in schema.attributes.values():
        if a.required and a.name != drop:
            node.attribute.append(helper.make_attribute(a.name, dummies[a.type]))
    if extra:
        node.attribute.append(helper.make_attribute("zz_probe", 1))
    graph = helper.make_graph(
        [node],
        "probe",
        [helper.make_tensor_value_info(n, F, None) for n in node.input],
        [helper.make_tensor_value_info(n, F, None) for n in node.output],
    )
    # The default domain at the schema's own opset when onnxruntime
    # deprecates it later (its experimental operators: 1 to 9, 10 on).
    default = 14 if schema.domain or schema.name not in _LEGACY_OPS else schema.since_version
    default = 9 if default == 1 else default
    opsets = [helper.make_opsetid(d, v) for d, v in (("", default), ("com.microsoft", 1))]
    if schema.domain not in ("", "com.microsoft"):
        opsets.append(helper.make_opsetid(schema.domain, 1))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return model


def _ort_load_error(model: onnx.ModelProto) -> str:
    try:
        _ort_session(model)
    except Exception as e:  # any refusal: its text is compared
        return str(e)
    return ""


def _codes_at_node(model: onnx.ModelProto) -> set[str]:
    report = onnxfast.check(model, contrib_ops=True)
    return {d.code for d in report if d.severity == "error" and "node[0]" in d.location}


def test_onnxruntimes_schema_verification_for_every_operator() -> None:
    """For every operator contrib_ops knows, what onnxruntime refuses when
    it loads a node and what our check with contrib_ops reports agree: an
    undeclared attribute (E410; its LayerNormalization and
    SimplifiedLayerNormalization take any), each required attribute left out
    (E413), one input too many (E407); its experimental default-domain
    operators are not verified (either passes), and are refused from opset
    10 (E406)."""
    checked = 0
    for schema in _ort_schemas():
        if schema.deprecated:
            # Opset 10 of its experimental operators: refused at load.
            model = _probe_node(schema)
            assert "is not a registered function/op" in _ort_load_error(model), schema.name
            assert "E406" in _codes_at_node(model), schema.name
            checked += 1
            continue
        model = _probe_node(schema, extra=True)
        theirs = "zz_probe" in _ort_load_error(model)
        assert ("E410" in _codes_at_node(model)) == theirs, schema.name
        for a in schema.attributes.values():
            if not a.required:
                continue
            model = _probe_node(schema, drop=a.name)
            theirs = f"Required attribute '{a.name}' is missing" in _ort_load_error(model)
            assert theirs, (schema.name, a.name)
            assert "E413" in _codes_at_node(model), (schema.name, a.name)
            checked += 1
        if schema.max_input < 2**31 - 1:
            model = _probe_node(schema, inputs=schema.max_input + 1)
            theirs = "input size" in _ort_load_error(model)
            # Its experimental default-domain operators are not verified.
            assert theirs == (schema.name not in _LEGACY_OPS), schema.name
            assert ("E407" in _codes_at_node(model)) == theirs, schema.name
            checked += 1
    assert checked > 40


def _qdq_case(op: str, scale_shape: list[int], zero_shape: list[int] | None, **attrs):
    """One QuantizeLinear (float x [4, 3], a graph input) or DequantizeLinear
    (int8 x [4, 3]) with a scale and zero point of these shapes."""
    elem = TensorProto.FLOAT if op == "QuantizeLinear" else TensorProto.INT8
    if op == "DequantizeLinear":
        out = TensorProto.FLOAT
    else:
        out = TensorProto.UINT8 if zero_shape is None else TensorProto.INT8
    inits = [numpy_helper.from_array(np.full(scale_shape, 0.5, np.float32), "scale")]
    inputs = ["x", "scale"]
    if zero_shape is not None:
        inits.append(numpy_helper.from_array(np.zeros(zero_shape, np.int8), "zero"))
        inputs.append("zero")
    graph = helper.make_graph(
        [helper.make_node(op, inputs, ["y"], **attrs)],
        "qdq",
        [helper.make_tensor_value_info("x", elem, [4, 3])],
        [helper.make_tensor_value_info("y", out, [4, 3])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize(
    ("op", "scale", "zero", "attrs", "expect"),
    [
        # ORT's quantizer wrote a [vocab, 1] scale for a per-row weight.
        ("QuantizeLinear", [4, 1], [], {}, "E720 the scale [4,1] is neither a scalar"),
        ("QuantizeLinear", [4], [4], {"axis": 0}, None),
        ("QuantizeLinear", [4], None, {"axis": 1}, "E720 the scale [4] is neither"),
        ("QuantizeLinear", [3], None, {"axis": 2}, "E722 the scale [3] is per axis"),
        ("QuantizeLinear", [3], None, {"axis": -(2**63)}, "E722 the scale [3] is per axis"),
        ("QuantizeLinear", [1], [1], {"axis": 7}, None),
        ("QuantizeLinear", [], [], {}, None),
        ("QuantizeLinear", [4], [3], {"axis": 0}, "E720 the zero point [3] is not"),
        ("DequantizeLinear", [3, 1], None, {}, "E720 the scale [3,1] is neither"),
        ("DequantizeLinear", [3], [3], {"axis": -1}, None),
    ],
)
def test_a_quantization_scale_onnxruntime_refuses_is_a_defect_with_contrib_ops(
    op, scale, zero, attrs, expect
) -> None:
    """onnx's QuantizeLinear and DequantizeLinear rules do not look at the
    scale's shape; onnxruntime loads such a model and its kernel refuses it
    on the first run (found on a BERT quantized per channel by
    onnxruntime.quantization). Checked as onnxruntime runs the model
    (contrib_ops=True), that is an error at the node."""
    model = _qdq_case(op, scale, zero, **attrs)
    onnx.checker.check_model(model, full_check=True)
    assert onnxfast.check(model, full=True).ok
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {"x": np.ones((4, 3), np.float32 if op == "QuantizeLinear" else np.int8)}
    report = onnxfast.check(model, full=True, contrib_ops=True)
    if expect is None:
        session.run(None, feeds)
        assert report.ok, report
        return
    with pytest.raises(Exception, match=r"scale|zero_point|axis"):
        session.run(None, feeds)
    (error,) = report.errors
    assert f"{error.code} {error.message}".startswith(expect), report


def _ml_case(op: str, inputs: list[tuple[str, int, list[int]]], outputs: list[int], **attrs):
    """One ai.onnx.ml node over inputs of static shapes (name, element type,
    shape); outputs of these element types, without shapes."""
    node = helper.make_node(
        op,
        [n for n, _, _ in inputs],
        [f"y{i}" for i in range(len(outputs))],
        domain="ai.onnx.ml",
        **attrs,
    )
    g = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(f"y{i}", t, None) for i, t in enumerate(outputs)],
    )
    return helper.make_model(
        g,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)],
        ir_version=8,
    )


_F, _I = TensorProto.FLOAT, TensorProto.INT64
# (onnxruntime's SVM kernels need kernel_params: gamma, coef0, degree.)
_KERNEL = {"kernel_params": [0.5, 0.0, 3.0]}
_LINEAR = {
    "coefficients": [0.5] * 12,
    "rho": [0.1, 0.2, 0.3],
    "classlabels_ints": [0, 1, 2],
    "kernel_type": "LINEAR",
    **_KERNEL,
}
_TREE = {
    "nodes_treeids": [0, 0, 0],
    "nodes_nodeids": [0, 1, 2],
    "nodes_featureids": [0, 0, 0],
    "nodes_values": [0.5, 0.0, 0.0],
    "nodes_modes": ["BRANCH_LEQ", "LEAF", "LEAF"],
    "nodes_truenodeids": [1, 0, 0],
    "nodes_falsenodeids": [2, 0, 0],
}


def _svc(classes: int, **more) -> dict:
    """A support-vector classifier of one vector per class over 4 features."""
    return {
        "vectors_per_class": [1] * classes,
        "support_vectors": [0.25] * (4 * classes),
        "coefficients": [1.0] * ((classes - 1) * classes),
        "rho": [0.1] * (classes * (classes - 1) // 2),
        "classlabels_ints": list(range(classes)),
        "kernel_type": "RBF",
        **_KERNEL,
        **more,
    }


@pytest.mark.parametrize(
    ("label", "model"),
    [
        (
            "FeatureVectorizer of rows",
            _ml_case(
                "FeatureVectorizer",
                [("a", _F, [3, 2]), ("b", _F, [3, 3])],
                [_F],
                inputdimensions=[2, 3],
            ),
        ),
        (
            "FeatureVectorizer of vectors",
            _ml_case(
                "FeatureVectorizer", [("a", _F, [2]), ("b", _F, [3])], [_F], inputdimensions=[2, 3]
            ),
        ),
        (
            "Scaler of a vector",
            _ml_case("Scaler", [("x", _I, [4])], [_F], scale=[2.0], offset=[1.0]),
        ),
        ("Normalizer", _ml_case("Normalizer", [("x", _F, [2, 3])], [_F], norm="L2")),
        (
            "Imputer",
            _ml_case(
                "Imputer",
                [("x", _I, [2, 3])],
                [_I],
                imputed_value_int64s=[0],
                replaced_value_int64=-1,
            ),
        ),
        (
            "LinearRegressor of a vector",
            _ml_case("LinearRegressor", [("x", _F, [5])], [_F], coefficients=[0.5] * 10, targets=2),
        ),
        (
            "LinearRegressor",
            _ml_case("LinearRegressor", [("x", _F, [3, 5])], [_F], coefficients=[0.5] * 5),
        ),
        (
            "SVMRegressor",
            _ml_case(
                "SVMRegressor",
                [("x", _F, [3, 4])],
                [_F],
                coefficients=[0.5] * 4,
                rho=[0.1],
                n_supports=0,
                kernel_type="LINEAR",
                **_KERNEL,
            ),
        ),
        (
            "SVMClassifier, linear",
            _ml_case("SVMClassifier", [("x", _F, [3, 4])], [_I, _F], **_LINEAR),
        ),
        (
            "SVMClassifier, 4 classes by votes",
            _ml_case("SVMClassifier", [("x", _F, [3, 4])], [_I, _F], **_svc(4)),
        ),
        (
            "SVMClassifier, 2 classes by votes",
            _ml_case("SVMClassifier", [("x", _F, [3, 4])], [_I, _F], **_svc(2)),
        ),
        (
            "SVMClassifier, probabilities",
            _ml_case(
                "SVMClassifier",
                [("x", _F, [3, 4])],
                [_I, _F],
                **_svc(4, prob_a=[1.0] * 6, prob_b=[0.0] * 6),
            ),
        ),
        (
            "ArrayFeatureExtractor of a vector",
            helper.make_model(
                helper.make_graph(
                    [
                        helper.make_node(
                            "ArrayFeatureExtractor", ["x", "k"], ["y0"], domain="ai.onnx.ml"
                        )
                    ],
                    "g",
                    [helper.make_tensor_value_info("x", _F, [5])],
                    [helper.make_tensor_value_info("y0", _F, None)],
                    initializer=[numpy_helper.from_array(np.array([0, 3], np.int64), "k")],
                ),
                opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)],
                ir_version=8,
            ),
        ),
        (
            "ArrayFeatureExtractor, scalar index",
            helper.make_model(
                helper.make_graph(
                    [
                        helper.make_node(
                            "ArrayFeatureExtractor", ["x", "k"], ["y0"], domain="ai.onnx.ml"
                        )
                    ],
                    "g",
                    [helper.make_tensor_value_info("x", _F, [3, 5])],
                    [helper.make_tensor_value_info("y0", _F, None)],
                    initializer=[numpy_helper.from_array(np.array(2, np.int64), "k")],
                ),
                opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)],
                ir_version=8,
            ),
        ),
        (
            "TreeEnsembleRegressor 1 of a vector",
            _ml_case(
                "TreeEnsembleRegressor",
                [("x", _F, [4])],
                [_F],
                n_targets=2,
                target_treeids=[0, 0],
                target_nodeids=[1, 2],
                target_ids=[0, 1],
                target_weights=[1.0, 2.0],
                **_TREE,
            ),
        ),
        (
            "TreeEnsembleClassifier 1 of a vector",
            _ml_case(
                "TreeEnsembleClassifier",
                [("x", _F, [4])],
                [_I, _F],
                classlabels_int64s=[0, 1, 2],
                class_treeids=[0, 0],
                class_nodeids=[1, 2],
                class_ids=[0, 2],
                class_weights=[1.0, 2.0],
                **_TREE,
            ),
        ),
    ],
)
def test_classic_ml_shapes_with_contrib_ops_are_onnxruntimes(label: str, model) -> None:
    """onnx's rules give these ai.onnx.ml operators types only (or no shape
    for a vector input); checked as onnxruntime runs them, every output has
    the shape onnxruntime's kernel returns, inputs of rank 1 (one row)
    included. Without the option: onnx's result."""
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {}
    for i in session.get_inputs():
        dtype = np.int64 if i.type == "tensor(int64)" else np.float32
        feeds[i.name] = (rng.random(i.shape) * 3).astype(dtype)
    ran = [o.shape for o in session.run(None, feeds)]
    values = onnxfast.infer_shapes(model, contrib_ops=True).graph.values
    assert [tuple(values[f"y{i}"].shape) for i in range(len(ran))] == ran, label
    plain = onnxfast.infer_shapes(model).graph.values
    theirs = onnx.shape_inference.infer_shapes(model, strict_mode=True, check_type=True)
    shaped = {v.name for v in theirs.graph.output if v.type.tensor_type.HasField("shape")}
    assert {f"y{i}" for i in range(len(ran)) if plain[f"y{i}"].shape is not None} == shaped
