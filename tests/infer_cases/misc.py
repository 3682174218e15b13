"""Misc families (Constant, ConstantOfShape, EyeLike, random generators,
Range, ImageDecoder, NonMaxSuppression, RoiAlign, quantization, RNN/GRU/LSTM,
string operators): edge and failure cases of the inference rules.

The graph's output is an Identity of its first input (or of a dummy input),
so the outputs of the nodes under test are typed by inference only. A value
of unknown rank is a Reshape by a shape of unknown length.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import AttributeProto, helper

from ._build import (
    F16,
    I8,
    I32,
    I64,
    U8,
    Cases,
    D,
    F,
    S,
    attr,
    graph,
    init,
    model,
    node,
    tensor,
)

ONNX_CRASHES: tuple[str, ...] = ()

INT, FLOAT, STRING = AttributeProto.INT, AttributeProto.FLOAT, AttributeProto.STRING


class _Cases(Cases):
    def case(
        self,
        name: str,
        nodes: Sequence[onnx.NodeProto],
        inputs: Sequence[onnx.ValueInfoProto],
        opset: int,
        inits: Sequence[onnx.TensorProto] = (),
        domain_opsets: Sequence[tuple[str, int]] = (),
        functions: Sequence[onnx.FunctionProto] = (),
    ) -> None:
        """`nodes`, and an Identity of the first input as the graph's output."""
        inputs = list(inputs) or [tensor("dummy", F, [1])]
        first = inputs[0].type.tensor_type
        shape = None
        if first.HasField("shape"):
            shape = [
                d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                for d in first.shape.dim
            ]
        out = tensor("passthrough", first.elem_type, shape)
        passthrough = node("Identity", [inputs[0].name], ["passthrough"])
        g = graph([*nodes, passthrough], inputs, [out], inits)
        opsets = [("", opset), *domain_opsets]
        self.add(name, model(g, opsets, 10 if opset >= 21 else 8, functions))

    def unshaped(
        self,
        name: str,
        op: str,
        ins: Sequence[str],
        outs: Sequence[str],
        elem: int,
        opset: int,
        more: Sequence[onnx.ValueInfoProto] = (),
        **attrs: Any,
    ) -> None:
        """`op` on inputs `ins` of unknown rank (each a Reshape by a shape of
        unknown length), then the graph inputs `more`."""
        nodes, inputs = [], []
        for i in ins:
            nodes.append(node("Reshape", [i + "_src", i + "_shape"], [i]))
            inputs += [tensor(i + "_src", elem, [2]), tensor(i + "_shape", I64, ["K"])]
        nodes.append(node(op, [*ins, *(v.name for v in more)], outs, **attrs))
        self.case(name, nodes, [*inputs, *more], opset)


_SPARSE = helper.make_sparse_tensor(
    init("vals", [1.0, 2.0], np.float32), init("idx", [0, 5]), [2, 4]
)


def _constant_ref(c: _Cases, name: str, caller_sets: bool) -> None:
    """A Constant in a model-local function whose value_int refers to the
    function's attribute `v`."""
    body = node("Constant", [], ["b"], extra=[attr("value_int", INT, ref_attr_name="v")])
    f = helper.make_function(
        "local", "mk", [], ["b"], [body], [helper.make_opsetid("", 13)], attributes=["v"]
    )
    attrs = {"v": 5} if caller_sets else {}
    call = node("mk", [], ["c"], domain="local", **attrs)
    c.case(name, [call], [], 13, domain_opsets=[("local", 1)], functions=[f])


def _constant(c: _Cases) -> None:
    """Constant."""
    c.case("constant/none", [node("Constant", [], ["c"])], [], 13)
    c.case("constant/two", [node("Constant", [], ["c"], value_int=1, value_float=2.0)], [], 13)
    c.case("constant/ints", [node("Constant", [], ["c"], value_ints=[1, 2, 3])], [], 13)
    c.case("constant/float", [node("Constant", [], ["c"], value_float=2.0)], [], 13)
    c.case("constant/strings", [node("Constant", [], ["c"], value_strings=["a", "b"])], [], 13)
    c.case("constant/string", [node("Constant", [], ["c"], value_string="a")], [], 21)
    value = init("v", np.zeros((2, 3)), np.int8)
    c.case("constant/tensor", [node("Constant", [], ["c"], value=value)], [], 21)
    c.case("constant/sparse", [node("Constant", [], ["c"], sparse_value=_SPARSE)], [], 13)
    c.case("constant/sparse_v11", [node("Constant", [], ["c"], sparse_value=_SPARSE)], [], 11)
    no_value = [attr("value_int", INT)]
    c.case("constant/int_without_value", [node("Constant", [], ["c"], extra=no_value)], [], 13)
    c.case("constant9/none", [node("Constant", [], ["c"])], [], 9)
    zeros = init("v", np.zeros(2), np.float32)
    both = node("Constant", [], ["c"], value=zeros, sparse_value=_SPARSE)
    c.case("constant11/both", [both], [], 11)
    c.case("constant11/none", [node("Constant", [], ["c"])], [], 11)
    c.case("constant1/basic", [node("Constant", [], ["c"], value=zeros)], [], 1)
    _constant_ref(c, "constant/ref_set", True)
    _constant_ref(c, "constant/ref_unset", False)
    no_float = [attr("value_float", FLOAT)]
    c.case("constant/value_float_no_f", [node("Constant", [], ["c"], extra=no_float)], [], 13)
    no_string = [attr("value_string", STRING)]
    c.case("constant/value_string_no_s", [node("Constant", [], ["c"], extra=no_string)], [], 13)
    c.case("constant/empty_ints", [node("Constant", [], ["c"], value_ints=[])], [], 13)


def _constant_of_shape(c: _Cases) -> None:
    """ConstantOfShape."""
    cos = node("ConstantOfShape", ["s"], ["y"])
    s2 = [tensor("s", I64, [2])]
    c.case("constantofshape/init", [cos], s2, 20, [init("s", [2, 3])])
    c.case(
        "constantofshape/init_2d",
        [cos],
        [tensor("s", I64, [2, 2])],
        20,
        [init("s", [[2, 3], [4, 5]])],
    )
    c.case("constantofshape/negative", [cos], s2, 20, [init("s", [-1, 3])])
    c.case(
        "constantofshape/value_int32",
        [node("ConstantOfShape", ["s"], ["y"], value=init("v", [7], np.int32))],
        s2,
        20,
        [init("s", [2, 3])],
    )
    c.case(
        "constantofshape/value_rank2",
        [node("ConstantOfShape", ["s"], ["y"], value=init("v", [[7]], np.int32))],
        s2,
        20,
    )
    c.case(
        "constantofshape/value_scalar",
        [node("ConstantOfShape", ["s"], ["y"], value=init("v", 7, np.int32))],
        s2,
        20,
    )
    c.case("constantofshape/rank_from_length", [cos], [tensor("s", I64, [3])], 9)
    c.case("constantofshape/symbolic_length", [cos], [tensor("s", I64, ["N"])], 9)
    c.case("constantofshape/huge_length", [cos], [tensor("s", I64, [2000])], 9)
    c.case("constantofshape/rank2_input", [cos], [tensor("s", I64, [2, 3])], 9)
    c.case(
        "constantofshape/from_constant",
        [node("Constant", [], ["s"], value_ints=[4, 0, 2]), cos],
        [],
        21,
    )
    c.case(
        "constantofshape/from_constant_negative",
        [node("Constant", [], ["s"], value_ints=[4, -2]), cos],
        [],
        21,
    )
    c.case("constantofshape/empty_shape", [cos], [tensor("s", I64, [0])], 21, [init("s", [])])
    c.case(
        "constantofshape/float_constant",
        [node("Constant", [], ["s"], value_floats=[2.0]), cos],
        [],
        21,
    )


def _eyelike_random(c: _Cases) -> None:
    """EyeLike, random generators."""
    x23 = [tensor("x", F, [2, 3])]
    no_dtype = [attr("dtype", INT)]
    c.case("eyelike/rank3", [node("EyeLike", ["x"], ["y"])], [tensor("x", F, [2, 3, 4])], 22)
    c.case(
        "eyelike/dtype", [node("EyeLike", ["x"], ["y"], dtype=7)], [tensor("x", F, ["N", 3])], 22
    )
    c.case("eyelike/bad_dtype", [node("EyeLike", ["x"], ["y"], dtype=100)], x23, 9)
    c.case("eyelike/plain", [node("EyeLike", ["x"], ["y"])], [tensor("x", I32, [2, 3])], 9)
    c.unshaped("eyelike/no_shape", "EyeLike", ["x"], ["y"], I32, 22)
    c.case("eyelike/dtype_no_i", [node("EyeLike", ["x"], ["y"], extra=no_dtype)], x23, 22)
    # INT attributes naming element types are cast to the 32-bit enum.
    c.case("eyelike/dtype_wide", [node("EyeLike", ["x"], ["y"], dtype=2**32 + 7)], x23, 22)
    c.case("randomnormal/negative", [node("RandomNormal", [], ["y"], shape=[2, -3])], [], 22)
    c.case("randomnormal/dtype0", [node("RandomNormal", [], ["y"], shape=[2], dtype=0)], [], 22)
    c.case("randomnormal/dtype99", [node("RandomNormal", [], ["y"], shape=[2], dtype=99)], [], 22)
    c.case("randomnormal/double", [node("RandomNormal", [], ["y"], shape=[2, 3], dtype=11)], [], 1)
    c.case("randomuniform/default", [node("RandomUniform", [], ["y"], shape=[])], [], 22)
    c.case(
        "randomuniform/no_i",
        [node("RandomUniform", [], ["y"], shape=[3], extra=no_dtype)],
        [],
        22,
    )
    c.case(
        "randomuniformlike/dtype",
        [node("RandomUniformLike", ["x"], ["y"], dtype=10)],
        [tensor("x", I32, [2, "N"])],
        22,
    )
    c.case(
        "randomnormallike/plain",
        [node("RandomNormalLike", ["x"], ["y"])],
        [tensor("x", D, [2, "N"])],
        1,
    )
    c.case(
        "randomnormallike/dtype99",
        [node("RandomNormalLike", ["x"], ["y"], dtype=99)],
        [tensor("x", D, [2])],
        1,
    )
    c.case("bernoulli/dtype", [node("Bernoulli", ["x"], ["y"], dtype=9)], x23, 15)
    c.unshaped("bernoulli/plain", "Bernoulli", ["x"], ["y"], F, 22)
    c.case("multinomial/bad_dtype", [node("Multinomial", ["x"], ["y"], dtype=1)], x23, 7)
    c.case(
        "multinomial/rank3", [node("Multinomial", ["x"], ["y"])], [tensor("x", F, [2, 3, 4])], 22
    )
    c.case(
        "multinomial/ok",
        [node("Multinomial", ["x"], ["y"], sample_size=4, dtype=7)],
        [tensor("x", F, ["N", 5])],
        22,
    )
    c.unshaped("multinomial/no_shape", "Multinomial", ["x"], ["y"], F, 22)
    c.case("multinomial/dtype_no_i", [node("Multinomial", ["x"], ["y"], extra=no_dtype)], x23, 22)
    no_sample_size = [attr("sample_size", INT)]
    c.case(
        "multinomial/sample_no_i",
        [node("Multinomial", ["x"], ["y"], extra=no_sample_size)],
        x23,
        22,
    )
    c.case("multinomial/dtype_wide", [node("Multinomial", ["x"], ["y"], dtype=2**32 + 7)], x23, 22)


def _range_case(c: _Cases, name: str, values: list, dtype: Any, opset: int = 11) -> None:
    """Range of constant start, limit and delta."""
    names = ["start", "limit", "delta"]
    inits = [init(n, v, dtype) for n, v in zip(names, values)]
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    ins = [tensor(n, elem, list(np.array(v).shape)) for n, v in zip(names, values)]
    c.case(name, [node("Range", names, ["y"])], ins, opset, inits)


def _range(c: _Cases) -> None:
    """Range."""
    _range_case(c, "range/float", [0.0, 10.0, 3.0], np.float32)
    _range_case(c, "range/float_precision", [1e8, 1e8 + 20, 3.0], np.float32)
    _range_case(c, "range/int32_neg", [10, 0, -3], np.int32)
    _range_case(c, "range/int64", [-5, 7, 2], np.int64, 27)
    _range_case(c, "range/double", [0.5, 2.25, 0.25], np.float64)
    _range_case(c, "range/delta0", [0, 10, 0], np.int64)
    _range_case(c, "range/float_delta0", [0.0, 10.0, 0.0], np.float32)
    _range_case(c, "range/int16", [0, 10, 3], np.int16)
    _range_case(c, "range/float16", [0, 10, 3], np.float16, 27)
    _range_case(c, "range/not_scalar", [[0], 10, 3], np.int64)
    _range_case(c, "range/int32_overflow", [-2147483648, 2147483647, 1], np.int32)
    _range_case(c, "range/int64_huge", [-(2**63), 2**63 - 1, 1], np.int64)
    _range_case(c, "range/float_huge", [0.0, 1e38, 1e-38], np.float32)
    _range_case(c, "range/double_nan", [0.0, 1.0, float("nan")], np.float64)
    _range_case(c, "range/double_inf", [0.0, float("inf"), 1.0], np.float64)
    _range_case(c, "range/int64_negdelta", [2**63 - 1, -(2**63), -1], np.int64)
    _range_case(c, "range/float_fraction", [0.1, 0.9, 0.2], np.float32)
    rng = node("Range", ["start", "limit", "delta"], ["y"])
    c.case(
        "range/mixed_types",
        [rng],
        [tensor("start", I64, []), tensor("limit", I32, []), tensor("delta", I64, [])],
        11,
        [init("start", 0), init("limit", 5, np.int32), init("delta", 1)],
    )
    c.case(
        "range/inputs",
        [rng],
        [tensor("start", I64, []), tensor("limit", I64, []), tensor("delta", I64, [])],
        11,
    )
    c.case(
        "range/from_constants",
        [
            node("Constant", [], ["a"], value_int=2),
            node("Constant", [], ["b"], value_int=11),
            node("Constant", [], ["d"], value_int=3),
            node("Range", ["a", "b", "d"], ["y"]),
        ],
        [],
        21,
    )
    c.case(
        "range/from_float_constants",
        [
            node("Constant", [], ["a"], value_float=2.0),
            node("Constant", [], ["b"], value_float=1.0),
            node("Constant", [], ["d"], value_float=-0.25),
            node("Range", ["a", "b", "d"], ["y"]),
        ],
        [],
        21,
    )
    c.case(
        "range/ints_constants",
        [
            node("Constant", [], ["a"], value_ints=[2]),
            node("Constant", [], ["b"], value_int=11),
            node("Constant", [], ["d"], value_int=3),
            node("Range", ["a", "b", "d"], ["y"]),
        ],
        [],
        21,
    )
    c.case(
        "range/partly_constant",
        [node("Constant", [], ["a"], value_int=2), node("Range", ["a", "b", "d"], ["y"])],
        [tensor("b", I64, []), tensor("d", I64, [])],
        21,
    )


def _roi_case(
    c: _Cases,
    name: str,
    x: Any,
    rois: Any,
    batch: Any,
    opset: int,
    extra: Sequence[onnx.AttributeProto] = (),
    **attrs: Any,
) -> None:
    c.case(
        name,
        [node("RoiAlign", ["x", "r", "b"], ["y"], extra=extra, **attrs)],
        [tensor("x", F, x), tensor("r", F, rois), tensor("b", I64, batch)],
        opset,
    )


def _image_object_detection(c: _Cases) -> None:
    """ImageDecoder, NonMaxSuppression, RoiAlign."""
    c.case(
        "imagedecoder/rank2", [node("ImageDecoder", ["x"], ["y"])], [tensor("x", U8, [2, 3])], 20
    )
    c.case(
        "imagedecoder/ok",
        [node("ImageDecoder", ["x"], ["y"], pixel_format="Grayscale")],
        [tensor("x", U8, ["N"])],
        20,
    )
    c.unshaped("imagedecoder/no_shape", "ImageDecoder", ["x"], ["y"], U8, 20)
    nms = [node("NonMaxSuppression", ["b", "s"], ["y"])]
    boxes_scores = [tensor("b", F, [1, 6, 4]), tensor("s", F, [1, 1, 6])]
    c.case("nonmaxsuppression10/basic", nms, boxes_scores, 10)
    c.case("nonmaxsuppression11/basic", nms, boxes_scores, 11)
    x4 = [1, 3, 10, 10]
    _roi_case(
        c, "roialign/ok", ["N", 3, 10, 10], ["R", 4], ["R"], 22, output_height=5, output_width=6
    )
    _roi_case(c, "roialign/rois5_v16", x4, [2, 5], [2], 16)
    _roi_case(c, "roialign/rois5_v22", x4, [2, 5], [2], 22)
    _roi_case(c, "roialign/rank3", [3, 10, 10], [2, 4], [2], 10)
    _roi_case(c, "roialign/rank3_v22", [3, 10, 10], [2, 4], [2], 22)
    _roi_case(c, "roialign/num_mismatch", x4, [2, 4], [3], 16)
    _roi_case(c, "roialign/num_mismatch_v22", x4, [2, 4], [3], 22)
    _roi_case(c, "roialign/num_from_batch", x4, ["R", 4], [7], 22)
    _roi_case(c, "roialign/batch_rank2", x4, [2, 4], [2, 1], 16)
    c.unshaped(
        "roialign/unknown_shapes", "RoiAlign", ["x", "r"], ["y"], F, 22, [tensor("b", I64, [3])]
    )
    _roi_case(c, "roialign/height_no_i", x4, [2, 4], [2], 22, extra=[attr("output_height", INT)])
    _roi_case(c, "roialign/negative_height", x4, [2, 4], [2], 22, output_height=-2)


def _q_case(
    c: _Cases,
    name: str,
    opset: int,
    zp: int | None = None,
    scale_elem: int = F,
    op: str = "QuantizeLinear",
    x_elem: int = F,
    **attrs: Any,
) -> None:
    """(De)QuantizeLinear of a [2, 3] input, a scalar scale and, when `zp`
    is an element type, a zero point of that type."""
    ins = [tensor("x", x_elem, [2, 3]), tensor("s", scale_elem, [])]
    names = ["x", "s"]
    if zp is not None:
        ins.append(tensor("z", zp, []))
        names.append("z")
    c.case(name, [node(op, names, ["y"], **attrs)], ins, opset)


def _q_untyped_zp(c: _Cases, name: str, opset: int) -> None:
    """The zero point comes out of a model-local function whose body is an
    unknown operator: present, without a type."""
    f = helper.make_function(
        "local",
        "mkzp",
        ["a"],
        ["b"],
        [node("Foo", ["a"], ["b"], domain="custom")],
        [helper.make_opsetid("", opset), helper.make_opsetid("custom", 1)],
    )
    c.case(
        name,
        [
            node("mkzp", ["z0"], ["z"], domain="local"),
            node("QuantizeLinear", ["x", "s", "z"], ["y"]),
        ],
        [tensor("x", F, [2, 3]), tensor("s", F, []), tensor("z0", U8, [])],
        opset,
        domain_opsets=[("local", 1), ("custom", 1)],
        functions=[f],
    )


def _quantization(c: _Cases) -> None:
    """QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear."""
    dq = "DequantizeLinear"
    _q_case(c, "quantizelinear21/dtype_conflict", 21, zp=U8, output_dtype=3)
    _q_case(c, "quantizelinear21/dtype", 21, output_dtype=3)
    _q_case(c, "quantizelinear21/plain", 21)
    _q_case(c, "quantizelinear25/zp", 25, zp=I8)
    _q_case(c, "quantizelinear10/zp", 10, zp=I8)
    _q_case(c, "quantizelinear13/plain", 13)
    _q_case(c, "quantizelinear23/bad_dtype", 23, output_dtype=99)
    _q_case(c, "quantizelinear21/dtype_agrees", 21, zp=I8, output_dtype=3)
    _q_case(c, "dequantizelinear23/dtype", 23, op=dq, x_elem=I8, output_dtype=10)
    _q_case(c, "dequantizelinear23/plain", 23, op=dq, x_elem=I8, scale_elem=F16)
    _q_case(c, "dequantizelinear21/fp16", 21, op=dq, x_elem=I8, scale_elem=F16)
    _q_case(c, "dequantizelinear13/basic", 13, op=dq, x_elem=I8)
    _q_case(c, "dequantizelinear25/bad_dtype", 25, op=dq, x_elem=I8, output_dtype=99)
    c.case(
        "dynamicquantizelinear/basic",
        [node("DynamicQuantizeLinear", ["x"], ["y", "ys", "yz"])],
        [tensor("x", F, [3, "N"])],
        11,
    )
    c.unshaped(
        "dynamicquantizelinear/no_shape", "DynamicQuantizeLinear", ["x"], ["y", "ys", "yz"], F, 11
    )
    _q_untyped_zp(c, "quantizelinear21/untyped_zp", 21)
    _q_untyped_zp(c, "quantizelinear13/untyped_zp", 13)
    # INT attributes naming element types are cast to the 32-bit enum.
    _q_case(c, "quantizelinear21/dtype_wide_zero", 21, output_dtype=2**32)
    _q_case(c, "dequantizelinear23/dtype_wide", 23, op=dq, x_elem=I8, output_dtype=2**33 + 10)


def _rnn_case(
    c: _Cases,
    name: str,
    op: str,
    opset: int,
    x: Any,
    outs: list[str],
    gates: int = 1,
    **attrs: Any,
) -> None:
    """`op` with weights for `gates` gates of hidden_size (4 by default)."""
    dirs = 2 if attrs.get("direction") == "bidirectional" else 1
    hidden = attrs.get("hidden_size", 4)
    ins = [
        tensor("x", F, x),
        tensor("w", F, [dirs, gates * hidden, 5]),
        tensor("r", F, [dirs, gates * hidden, hidden]),
    ]
    c.case(name, [node(op, ["x", "w", "r"], outs, **attrs)], ins, opset)


def _rnn(c: _Cases) -> None:
    """RNN, GRU, LSTM."""
    y_yh = ["y", "yh"]
    _rnn_case(c, "rnn/rank2", "RNN", 22, [3, 5], ["y"], hidden_size=4)
    _rnn_case(c, "rnn/ok", "RNN", 22, ["S", "B", 5], y_yh, hidden_size=4)
    _rnn_case(c, "rnn/layout", "RNN", 14, ["B", "S", 5], y_yh, hidden_size=4, layout=1)
    _rnn_case(c, "rnn/layout_v22", "RNN", 22, ["B", "S", 5], y_yh, hidden_size=4, layout=1)
    _rnn_case(
        c, "gru/bidir", "GRU", 7, [2, 3, 5], y_yh, 3, hidden_size=4, direction="bidirectional"
    )
    _rnn_case(c, "gru3/seq", "GRU", 3, [2, 3, 5], y_yh, 3, hidden_size=4, output_sequence=1)
    _rnn_case(c, "gru3/noseq", "GRU", 3, [2, 3, 5], y_yh, 3, hidden_size=4)
    _rnn_case(c, "gru3/rank4", "GRU", 3, [2, 3, 5, 1], y_yh, 3, hidden_size=4)
    _rnn_case(c, "lstm/all", "LSTM", 14, [2, 3, 5], ["y", "yh", "yc"], 4, hidden_size=4)
    _rnn_case(c, "lstm/only_c", "LSTM", 7, [2, 3, 5], ["", "", "yc"], 4, hidden_size=4)
    _rnn_case(
        c,
        "lstm/bad_direction",
        "LSTM",
        22,
        [2, 3, 5],
        ["y"],
        4,
        hidden_size=4,
        direction="sideways",
    )
    _rnn_case(
        c,
        "lstm1/basic",
        "LSTM",
        1,
        [2, 3, 5],
        ["y", "yh", "yc"],
        4,
        hidden_size=4,
        output_sequence=1,
    )
    _rnn_case(c, "rnn/no_hidden", "RNN", 22, [2, 3, 5], y_yh)
    c.unshaped("rnn/no_shape", "RNN", ["x", "w", "r"], y_yh, F, 22, hidden_size=4)
    _rnn_case(c, "rnn/negative_hidden", "RNN", 22, [2, 3, 5], y_yh, hidden_size=-4)
    _rnn_case(c, "rnn7/empty_y", "RNN", 7, [2, 3, 5], ["", "yh"], hidden_size=4)
    _rnn_case(
        c,
        "lstm22/layout_bidir",
        "LSTM",
        22,
        [2, 3, 5],
        ["y", "yh", "yc"],
        4,
        hidden_size=4,
        layout=1,
        direction="bidirectional",
    )


def _text(c: _Cases) -> None:
    """StringNormalizer, StringConcat, StringSplit, RegexFullMatch."""
    sn = [node("StringNormalizer", ["x"], ["y"])]
    c.case("stringnormalizer/rank2_bad", sn, [tensor("x", S, [2, 3])], 10)
    c.case("stringnormalizer/rank2_sym", sn, [tensor("x", S, ["N", 3])], 10)
    c.case("stringnormalizer/rank2_ok", sn, [tensor("x", S, [1, 3])], 10)
    c.case("stringnormalizer/rank1", sn, [tensor("x", S, [3])], 10)
    c.case("stringnormalizer/rank3", sn, [tensor("x", S, [1, 1, 3])], 10)
    c.case("stringnormalizer/rank0", sn, [tensor("x", S, [])], 10)
    sc = [node("StringConcat", ["a", "b"], ["y"])]
    c.case("stringconcat/bad", sc, [tensor("a", S, [2]), tensor("b", S, [3])], 20)
    c.case("stringconcat/ok", sc, [tensor("a", S, [2, 1]), tensor("b", S, ["N"])], 20)
    c.case(
        "stringsplit/ok", [node("StringSplit", ["x"], ["y", "n"])], [tensor("x", S, [2, "N"])], 20
    )
    c.unshaped("stringsplit/no_shape", "StringSplit", ["x"], ["y", "n"], S, 20)
    c.case(
        "regexfullmatch/ok",
        [node("RegexFullMatch", ["x"], ["y"], pattern="a+")],
        [tensor("x", S, [2, "N"])],
        20,
    )


_SECTIONS = (
    _constant,
    _constant_of_shape,
    _eyelike_random,
    _range,
    _image_object_detection,
    _quantization,
    _rnn,
    _text,
)


def cases() -> list[tuple[str, onnx.ModelProto]]:
    c = _Cases()
    for section in _SECTIONS:
        section(c)
    return c.built
