"""Math, logical and reduction families (element-wise, Softmax, Gemm, MatMul,
Einsum, Expand, TopK, Det, losses, DFT/STFT, windows, reductions, ArgMax,
comparisons): edge and failure cases of the inference rules.

Each model is one node on graph inputs and initializers; its outputs are the
graph's outputs, declared (so that the structural check passes) with the type
onnx infers, or as scalars when onnx infers no shape (or fails).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper

from ._build import I8, I32, I64, U8, B, Cases, D, F, S, graph, init, model, node, tensor

# Cases on which onnx itself crashes or hangs: left out of cases() (nothing to
# compare with), built by crash_cases().
ONNX_CRASHES = (
    # Einsum with a non-letter in an operand term ("i1->i"): onnx loops forever.
    "einsum/nonletter_hangs_onnx",
)

# An input: (name, element type, shape); shape None is no shape.
Input = tuple[str, int, Any]


class _Cases(Cases):
    def case(
        self,
        name: str,
        op: str,
        inputs: Sequence[Input],
        outputs: Sequence[tuple[str, int]],
        attrs: dict[str, Any] | None = None,
        opset: int = 21,
        inits: Sequence[onnx.TensorProto] = (),
        node_inputs: Sequence[str] | None = None,
    ) -> None:
        """One `op` node; its inputs are `inputs` then `inits` unless
        `node_inputs` names them."""
        if node_inputs is None:
            node_inputs = [i[0] for i in inputs] + [t.name for t in inits]
        n = node(op, node_inputs, [o[0] for o in outputs], **(attrs or {}))
        g = graph(
            [n], [tensor(*i) for i in inputs], [tensor(o[0], o[1], None) for o in outputs], inits
        )
        self.add(name, _declare_inferred_outputs(model(g, [("", opset)])))


def _declare_inferred_outputs(m: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `m` whose outputs declare the type onnx infers (scalar when
    onnx infers no shape or fails), so that the structural check passes.
    A symbol onnx made up (`unk__N`, not one of the inputs') becomes an
    unknown dim: declared, it would pass for one of the model's own."""
    try:
        inferred = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
        outs = {o.name: o for o in inferred.graph.output}
    except Exception:
        outs = {}
    symbols = {d.dim_param for i in m.graph.input for d in i.type.tensor_type.shape.dim}
    declared = onnx.ModelProto()
    declared.CopyFrom(m)
    for o in declared.graph.output:
        got = outs.get(o.name)
        if got is not None and got.type.tensor_type.HasField("shape"):
            o.type.CopyFrom(got.type)
            for d in o.type.tensor_type.shape.dim:
                if d.HasField("dim_param") and d.dim_param not in symbols:
                    d.ClearField("dim_param")
        else:
            o.type.tensor_type.shape.SetInParent()
    return declared


def _einsum_case(c: _Cases, name: str, eq: str, shapes: list[Any], opset: int = 12) -> None:
    c.case(
        name,
        "Einsum",
        [(f"x{i}", F, s) for i, s in enumerate(shapes)],
        [("y", F)],
        {"equation": eq},
        opset=opset,
    )


def _expand_case(
    c: _Cases,
    name: str,
    xshape: Any,
    shape_vals: list[int] | None = None,
    shape_shape: Any = None,
    opset: int = 13,
) -> None:
    """Expand by constant `shape_vals`, or by an input of shape `shape_shape`."""
    inits = [init("s", shape_vals)] if shape_vals is not None else []
    ins = [("x", F, xshape)] + ([] if shape_vals is not None else [("s", I64, shape_shape)])
    c.case(name, "Expand", ins, [("y", F)], opset=opset, inits=inits, node_inputs=["x", "s"])


def _nll_case(
    c: _Cases, name: str, xs: Any, ts: Any, ws: Any = None, opset: int = 13, **attrs: Any
) -> None:
    ins = [("x", F, xs), ("t", I64, ts)] + ([("w", F, ws)] if ws is not None else [])
    c.case(name, "NegativeLogLikelihoodLoss", ins, [("y", F)], attrs, opset=opset)


def _stft_case(
    c: _Cases,
    name: str,
    xs: Any,
    step: int | None = None,
    window: Any = None,
    frame_length: Any = None,
    opset: int = 17,
    **attrs: Any,
) -> None:
    """STFT; `step` None makes it an input; `window` is a shape (or None for
    none; "unshaped" for one without a shape); `frame_length` is (value,
    dims) of a constant, "input", or None."""
    ins: list[Input] = [("x", F, xs)]
    inits = []
    names = ["x"]
    if step is not None:
        inits.append(init("st", step))
        names.append("st")
    else:
        ins.append(("st", I64, []))
        names.append("st")
    if window is not None:
        ins.append(("w", F, None if window == "unshaped" else window))
        names.append("w")
    elif frame_length is not None:
        names.append("")
    if frame_length is not None:
        if frame_length == "input":
            ins.append(("fl", I64, []))
            names.append("fl")
        else:
            inits.append(init("fl", frame_length[0], dims=frame_length[1]))
            names.append("fl")
    c.case(name, "STFT", ins, [("y", F)], attrs, opset=opset, inits=inits, node_inputs=names)


def _element_wise(c: _Cases) -> None:
    """element-wise."""
    c.case("add7/bcast_fail", "Add", [("a", F, [2, 3]), ("b", F, [4])], [("c", F)], opset=7)
    c.case(
        "add14/bcast_sym", "Add", [("a", F, ["N", 3]), ("b", F, [1, 1, 3])], [("c", F)], opset=14
    )
    c.case(
        "add6/keeps_A",
        "Add",
        [("a", F, [2, 3]), ("b", F, [3])],
        [("c", F)],
        {"broadcast": 1},
        opset=6,
    )
    c.case(
        "sum8/bcast_fail",
        "Sum",
        [("a", F, [2, 3]), ("b", F, [3]), ("c", F, [4, 1])],
        [("s", F)],
        opset=8,
    )
    c.case(
        "sum8/bcast",
        "Sum",
        [("a", F, [2, 1]), ("b", F, [3]), ("c", F, ["N", 1, 1])],
        [("s", F)],
        opset=13,
    )
    c.case("sum8/one_unshaped", "Sum", [("a", F, [2, 1]), ("b", F, None)], [("s", F)], opset=13)
    c.case("max6/first_shape", "Max", [("a", F, [2, 3]), ("b", F, [7])], [("s", F)], opset=6)
    c.case("pow1/first_shape", "Pow", [("a", F, [2, 3]), ("b", F, [5])], [("s", F)], opset=1)
    c.case("pow15/bcast_fail", "Pow", [("a", F, [2, 3]), ("b", F, [5])], [("s", F)], opset=15)
    c.case("mod13/bcast_fail", "Mod", [("a", I64, [2, 3]), ("b", I64, [2])], [("s", I64)], opset=13)
    c.case("relu/unshaped", "Relu", [("a", F, None)], [("s", F)], opset=14)
    c.case("swiglu/ok", "SwiGLU", [("a", F, ["N", 4]), ("b", F, [2, "M"])], [("y", F)], opset=28)
    c.case("swiglu/rank_fail", "SwiGLU", [("a", F, [2, 4]), ("b", F, [4])], [("y", F)], opset=28)
    c.case("swiglu/dim_fail", "SwiGLU", [("a", F, [2, 4]), ("b", F, [2, 5])], [("y", F)], opset=28)
    c.case("clip11/shape", "Clip", [("a", F, [2, 4])], [("y", F)], opset=11)


def _softmax_family(c: _Cases) -> None:
    """softmax family."""
    c.case("softmax13/axis_hi", "Softmax", [("x", F, [2, 3, 4])], [("y", F)], {"axis": 3}, opset=13)
    c.case(
        "softmax13/axis_lo", "Softmax", [("x", F, [2, 3, 4])], [("y", F)], {"axis": -4}, opset=13
    )
    c.case("softmax13/scalar", "Softmax", [("x", F, [])], [("y", F)], opset=13)
    c.case(
        "softmax13/axis_trunc",
        "Softmax",
        [("x", F, [2, 3, 4])],
        [("y", F)],
        {"axis": 2**32 + 1},
        opset=13,
    )
    c.case("softmax11/default_rank1", "Softmax", [("x", F, [5])], [("y", F)], opset=11)
    c.case("logsoftmax11/axis_ok", "LogSoftmax", [("x", F, [5, 2])], [("y", F)], opset=11)
    c.case("softmax1/axis_any", "Softmax", [("x", F, [5])], [("y", F)], {"axis": 7}, opset=1)
    c.case("hardmax13/scalar", "Hardmax", [("x", F, [])], [("y", F)], opset=13)


def _gemm(c: _Cases) -> None:
    """Gemm."""
    c.case("gemm13/rank3", "Gemm", [("a", F, [2, 3, 4]), ("b", F, [4, 5])], [("y", F)], opset=13)
    c.case("gemm13/k_mismatch", "Gemm", [("a", F, [2, 3]), ("b", F, [4, 5])], [("y", F)], opset=13)
    c.case(
        "gemm13/trans_ok",
        "Gemm",
        [("a", F, [3, "M"]), ("b", F, ["N", 3])],
        [("y", F)],
        {"transA": 1, "transB": 1},
        opset=13,
    )
    c.case(
        "gemm13/trans_k_fail",
        "Gemm",
        [("a", F, [3, 2]), ("b", F, [5, 4])],
        [("y", F)],
        {"transA": 1, "transB": 1},
        opset=13,
    )
    c.case("gemm13/unknown", "Gemm", [("a", F, None), ("b", F, None)], [("y", F)], opset=13)
    c.case(
        "gemm13/trans_trunc",
        "Gemm",
        [("a", F, [2, 3]), ("b", F, [3, 4])],
        [("y", F)],
        {"transA": 2**32},
        opset=13,
    )
    c.case("gemm11/rank3", "Gemm", [("a", F, [2, 3, 4]), ("b", F, [4, 5])], [("y", F)], opset=11)
    c.case("gemm11/k_unchecked", "Gemm", [("a", F, [2, 3]), ("b", F, [4, 5])], [("y", F)], opset=11)
    c.case(
        "gemm9/one_unshaped",
        "Gemm",
        [("a", F, None), ("b", F, [4, 5]), ("c", F, [5])],
        [("y", F)],
        opset=9,
    )
    c.case(
        "gemm6/c_shape",
        "Gemm",
        [("a", F, None), ("b", F, [4, 5]), ("c", F, [2, 5])],
        [("y", F)],
        opset=6,
    )
    c.case(
        "gemm6/c_bcast",
        "Gemm",
        [("a", F, None), ("b", F, [4, 5]), ("c", F, [2, 5])],
        [("y", F)],
        {"broadcast": 1},
        opset=6,
    )
    c.case(
        "gemm6/rank1", "Gemm", [("a", F, [3]), ("b", F, [3, 5]), ("c", F, [5])], [("y", F)], opset=6
    )


def _matmul(c: _Cases) -> None:
    """MatMul."""
    c.case("matmul/scalar", "MatMul", [("a", F, []), ("b", F, [3])], [("y", F)], opset=13)
    c.case(
        "matmul/inner_fail", "MatMul", [("a", F, [2, 3]), ("b", F, [4, 5])], [("y", F)], opset=13
    )
    c.case(
        "matmul/batch_fail",
        "MatMul",
        [("a", F, [2, 2, 3]), ("b", F, [4, 3, 5])],
        [("y", F)],
        opset=13,
    )
    c.case("matmul/1d_1d", "MatMul", [("a", F, [3]), ("b", F, [3])], [("y", F)], opset=1)
    c.case(
        "matmul/batch",
        "MatMul",
        [("a", F, ["N", 1, 2, 3]), ("b", F, [4, 3, 5])],
        [("y", F)],
        opset=9,
    )
    c.case(
        "matmulinteger/ok",
        "MatMulInteger",
        [("a", U8, [2, 3]), ("b", U8, [3, 4])],
        [("y", I32)],
        opset=10,
    )
    c.case(
        "matmulinteger/fail",
        "MatMulInteger",
        [("a", U8, [2, 3]), ("b", U8, [4, 4])],
        [("y", I32)],
        opset=10,
    )
    q = [
        ("a", U8, [2, 3]),
        ("sa", F, []),
        ("za", U8, []),
        ("b", U8, [3, 4]),
        ("sb", F, []),
        ("zb", U8, []),
        ("sy", F, []),
        ("zy", U8, []),
    ]
    c.case("qlinearmatmul/ok", "QLinearMatMul", q, [("y", U8)], opset=21)
    q_zp = list(q)
    q_zp[2] = ("za", I8, [])
    c.case("qlinearmatmul/zp_fail", "QLinearMatMul", q_zp, [("y", U8)], opset=21)
    q_inner = list(q)
    q_inner[3] = ("b", U8, [5, 4])
    c.case("qlinearmatmul/inner_fail", "QLinearMatMul", q_inner, [("y", U8)], opset=10)


def _einsum(c: _Cases) -> None:
    """Einsum."""
    _einsum_case(c, "einsum/matmul", "ij,jk->ik", [[2, 3], [3, 4]])
    _einsum_case(c, "einsum/implicit", "ij,jk", [[2, 3], [3, 4]])
    _einsum_case(c, "einsum/implicit_order", "Ba,aA", [[2, 3], [3, 4]])
    _einsum_case(c, "einsum/trace", "ii", [[3, 3]])
    _einsum_case(c, "einsum/rank_fail", "ij,jk->ik", [[2, 3, 1], [3, 4]])
    _einsum_case(c, "einsum/operands_fail", "ij,jk->ik", [[2, 3]])
    _einsum_case(c, "einsum/operands_fail2", "ij->ij", [[2, 3], [3, 3]])
    _einsum_case(c, "einsum/label_fail", "ij,jk->iz", [[2, 3], [3, 4]])
    _einsum_case(c, "einsum/ellipsis", "...ij,...jk->...ik", [[1, 2, 3], [5, 3, 4]], opset=28)
    _einsum_case(c, "einsum/ellipsis_sym", "...ij,...jk", [["N", 2, 3], [5, 3, 4]])
    _einsum_case(c, "einsum/ellipsis_mismatch", "...ij,...jk->...ik", [[7, 1, 2, 3], [5, 3, 4]])
    _einsum_case(c, "einsum/ellipsis_short", "...ijk", [[2, 3]])
    _einsum_case(c, "einsum/spaces", " i j , j k -> i k ", [[2, 3], [3, 4]])
    _einsum_case(c, "einsum/trailing_comma", "ij,", [[2, 3], [3]])
    _einsum_case(c, "einsum/right_junk", "ij->j-i", [[2, 3]])
    _einsum_case(c, "einsum/ellipsis_mid", "i...j,j...k->ik", [[2, 7, 3], [3, 7, 4]])


def _expand(c: _Cases) -> None:
    """Expand."""
    _expand_case(c, "expand13/const", [3, 1], [2, 1, 6])
    _expand_case(c, "expand13/const_fail", [3, 2], [2, 1, 6])
    _expand_case(c, "expand13/minus_one", [3, 4], [-1, 4])
    _expand_case(c, "expand13/rank_only", [3, 1], shape_shape=[3])
    _expand_case(c, "expand13/rank2_fail", [3, 1], shape_shape=[3, 1])
    _expand_case(c, "expand13/rank_big", [3, 1], shape_shape=[2000])
    _expand_case(c, "expand8/const", [3, 1], [2, 1, 6], opset=8)
    _expand_case(c, "expand8/rank_only", [3, 1], shape_shape=[3], opset=8)
    _expand_case(c, "expand8/rank2_fail", [3, 1], shape_shape=[3, 1], opset=8)
    _expand_case(c, "expand8/sym", [3, 1], shape_shape=["K"], opset=8)


def _topk(c: _Cases) -> None:
    """TopK."""
    c.case("topk1/k0", "TopK", [("x", F, [3, 4])], [("v", F), ("i", I64)], {"k": 0}, opset=1)
    c.case(
        "topk1/axis",
        "TopK",
        [("x", F, [3, 4])],
        [("v", F), ("i", I64)],
        {"k": 2, "axis": 2},
        opset=1,
    )
    c.case(
        "topk1/ok", "TopK", [("x", F, [3, 4])], [("v", F), ("i", I64)], {"k": 2, "axis": 0}, opset=1
    )
    c.case(
        "topk11/k_big",
        "TopK",
        [("x", F, [3, 4])],
        [("v", F), ("i", I64)],
        opset=11,
        inits=[init("k", [5])],
    )
    c.case(
        "topk11/k_scalar",
        "TopK",
        [("x", F, [3, 4])],
        [("v", F), ("i", I64)],
        opset=11,
        inits=[init("k", 2)],
    )
    c.case(
        "topk11/k_two",
        "TopK",
        [("x", F, [3, 4])],
        [("v", F), ("i", I64)],
        opset=11,
        inits=[init("k", [1, 2])],
    )
    c.case(
        "topk11/ok",
        "TopK",
        [("x", F, [3, 4])],
        [("v", F), ("i", I64)],
        opset=11,
        inits=[init("k", [2])],
    )
    c.case(
        "topk11/k_input",
        "TopK",
        [("x", F, [3, 4]), ("k", I64, [1])],
        [("v", F), ("i", I64)],
        opset=11,
    )
    c.case(
        "topk10/axis_sym",
        "TopK",
        [("x", F, [3, "N"])],
        [("v", F), ("i", I64)],
        opset=10,
        inits=[init("k", [2])],
    )
    c.case(
        "topk24/axis_fail",
        "TopK",
        [("x", F, [3, 4])],
        [("v", F), ("i", I64)],
        {"axis": -3},
        opset=24,
        inits=[init("k", [2])],
    )


def _det_losses(c: _Cases) -> None:
    """Det, losses."""
    c.case("det/rank1", "Det", [("x", F, [3])], [("y", F)], opset=22)
    c.case("det/nonsquare", "Det", [("x", F, [2, 3, 4])], [("y", F)], opset=11)
    c.case("det/ok", "Det", [("x", F, ["B", 3, "M"])], [("y", F)], opset=22)
    _nll_case(c, "negativeloglikelihoodloss13/rank1", [3], [3])
    _nll_case(c, "negativeloglikelihoodloss13/target_rank", [3, 4, 5], [3])
    _nll_case(c, "negativeloglikelihoodloss13/dim_fail", [3, 4, 5], [3, 6])
    _nll_case(c, "negativeloglikelihoodloss13/weight_rank", [3, 4], [3], [4, 1])
    _nll_case(c, "negativeloglikelihoodloss13/weight_len_unchecked", [3, 4], [3], [7])
    _nll_case(c, "negativeloglikelihoodloss13/none", [3, 4, 5], ["N", 5], reduction="none")
    _nll_case(c, "negativeloglikelihoodloss22/dim_fail", [3, 4, 5], [3, 6], opset=22)
    _nll_case(c, "negativeloglikelihoodloss22/weight_fail", [3, 4], [3], [7], opset=22)
    _nll_case(
        c,
        "negativeloglikelihoodloss22/none_merge",
        ["N", 4, "D"],
        [3, "E"],
        [4],
        opset=22,
        reduction="none",
    )
    _nll_case(c, "negativeloglikelihoodloss22/target_rank", [3, 4, 5], [3], opset=22)
    _nll_case(c, "negativeloglikelihoodloss22/sum", [3, 4, 5], [3, 5], opset=22, reduction="sum")
    c.case(
        "softmaxcrossentropyloss/none",
        "SoftmaxCrossEntropyLoss",
        [("x", F, [3, 4, 5]), ("t", I64, [3, 5])],
        [("y", F), ("lp", F)],
        {"reduction": "none"},
        opset=13,
    )
    c.case(
        "softmaxcrossentropyloss/mean",
        "SoftmaxCrossEntropyLoss",
        [("x", F, [3, 4, 5]), ("t", I64, [3, 5])],
        [("y", F)],
        opset=12,
    )


def _dft_stft_windows(c: _Cases) -> None:
    """DFT, STFT, windows."""
    c.case("dft17/rank1", "DFT", [("x", F, [8])], [("y", F)], opset=17)
    c.case(
        "dft17/onesided_last", "DFT", [("x", F, [2, 8, 2])], [("y", F)], {"onesided": 1}, opset=17
    )
    c.case("dft17/axis_last", "DFT", [("x", F, [2, 8, 2])], [("y", F)], {"axis": 2}, opset=17)
    c.case("dft17/axis_minus1", "DFT", [("x", F, [2, 8, 2])], [("y", F)], {"axis": -1}, opset=17)
    c.case("dft17/ok", "DFT", [("x", F, [2, 8, 1])], [("y", F)], {"onesided": 1}, opset=17)
    c.case("dft17/len", "DFT", [("x", F, [2, 8, 2])], [("y", F)], opset=17, inits=[init("n", 5)])
    c.case(
        "dft17/len_vec", "DFT", [("x", F, [2, 8, 2])], [("y", F)], opset=17, inits=[init("n", [5])]
    )
    c.case("dft17/len_input", "DFT", [("x", F, [2, 8, 2]), ("n", I64, [])], [("y", F)], opset=17)
    c.case("dft20/default", "DFT", [("x", F, [2, 8, 2])], [("y", F)], opset=20)
    c.case(
        "dft20/axis_const",
        "DFT",
        [("x", F, [2, 8, 3, 2])],
        [("y", F)],
        {"onesided": 1, "inverse": 1},
        opset=20,
        inits=[init("a", 2)],
        node_inputs=["x", "", "a"],
    )
    c.case(
        "dft20/axis_fail",
        "DFT",
        [("x", F, [2, 8, 2])],
        [("y", F)],
        opset=20,
        inits=[init("a", 2)],
        node_inputs=["x", "", "a"],
    )
    c.case(
        "dft20/axis_vec_fail",
        "DFT",
        [("x", F, [2, 8, 2])],
        [("y", F)],
        opset=20,
        inits=[init("a", [1])],
        node_inputs=["x", "", "a"],
    )
    c.case(
        "dft20/axis_input",
        "DFT",
        [("x", F, [2, 8, 2]), ("a", I64, [])],
        [("y", F)],
        opset=20,
        node_inputs=["x", "", "a"],
    )
    c.case(
        "dft20/axis_input_len",
        "DFT",
        [("x", F, [2, 8, 2]), ("n", I64, []), ("a", I64, [])],
        [("y", F)],
        opset=20,
    )
    c.case(
        "dft20/len_input_sym", "DFT", [("x", F, [2, "S", 2]), ("n", I64, [])], [("y", F)], opset=20
    )
    c.case(
        "dft20/len_input_val", "DFT", [("x", F, [2, 8, 2]), ("n", I64, [])], [("y", F)], opset=20
    )
    c.case(
        "dft20/irfft",
        "DFT",
        [("x", F, [2, 5, 2])],
        [("y", F)],
        {"onesided": 1, "inverse": 1},
        opset=20,
    )
    c.case(
        "dft20/len_float",
        "DFT",
        [("x", F, [2, 8, 2])],
        [("y", F)],
        opset=20,
        inits=[init("n", 6.7, np.float32)],
    )
    _stft_case(c, "stft/rank1", [16], 4, frame_length=(8, []))
    _stft_case(c, "stft/ok", [2, 16, 1], 4, frame_length=(8, []))
    _stft_case(c, "stft/onesided", [2, 16, 1], 4, frame_length=(8, []), onesided=1)
    _stft_case(c, "stft/window", ["B", 16, 1], 4, window=[8])
    _stft_case(c, "stft/window_rank2", [2, 16, 1], 4, window=[8, 1])
    _stft_case(c, "stft/window_unshaped", [2, 16, 1], 4, window="unshaped", frame_length=(8, []))
    _stft_case(c, "stft/window_mismatch", [2, 16, 1], 4, window=[6], frame_length=(8, []))
    _stft_case(c, "stft/fl_vec", [2, 16, 1], 4, frame_length=(8, [1]))
    _stft_case(c, "stft/step_input", [2, 16, 1], None, frame_length=(8, []))
    _stft_case(c, "stft/fl_input", [2, 16, 1], 4, frame_length="input")
    _stft_case(c, "stft/sym_signal", [2, "S", 1], 4, frame_length=(8, []))
    _stft_case(c, "stft/step_zero", [2, 16, 1], 0, frame_length=(8, []))
    for w in ["HannWindow", "HammingWindow", "BlackmanWindow"]:
        c.case(f"{w.lower()}/ok", w, [], [("y", F)], opset=17, inits=[init("n", 10)])
    c.case("hannwindow/zero", "HannWindow", [], [("y", F)], opset=17, inits=[init("n", 0)])
    c.case("hannwindow/vec", "HannWindow", [], [("y", F)], opset=17, inits=[init("n", [4])])
    c.case("hannwindow/input", "HannWindow", [("n", I64, [])], [("y", F)], opset=17)
    c.case(
        "hannwindow/dtype",
        "HannWindow",
        [],
        [("y", D)],
        {"output_datatype": 11},
        opset=17,
        inits=[init("n", 10, np.int32)],
    )
    c.case(
        "hannwindow/dtype_big",
        "HannWindow",
        [],
        [("y", D)],
        {"output_datatype": 2**40},
        opset=17,
        inits=[init("n", 10)],
    )
    c.case(
        "melweightmatrix/ok",
        "MelWeightMatrix",
        [("sr", I64, []), ("lo", F, []), ("hi", F, [])],
        [("y", F)],
        opset=17,
        inits=[init("nb", 8), init("dl", 16)],
        node_inputs=["nb", "dl", "sr", "lo", "hi"],
    )
    c.case(
        "melweightmatrix/vec",
        "MelWeightMatrix",
        [("sr", I64, []), ("lo", F, []), ("hi", F, [])],
        [("y", F)],
        opset=17,
        inits=[init("nb", [8]), init("dl", 16)],
        node_inputs=["nb", "dl", "sr", "lo", "hi"],
    )
    c.case(
        "melweightmatrix/zero",
        "MelWeightMatrix",
        [("sr", I64, []), ("lo", F, []), ("hi", F, [])],
        [("y", F)],
        opset=17,
        inits=[init("nb", 0), init("dl", 16)],
        node_inputs=["nb", "dl", "sr", "lo", "hi"],
    )


def _reductions(c: _Cases) -> None:
    """reductions."""
    c.case(
        "reducesum13/axes_both",
        "ReduceSum",
        [("x", F, [2, 3])],
        [("y", F)],
        {"axes": [0]},
        opset=13,
        inits=[init("a", [1])],
    )
    c.case(
        "reducemean18/axes_range",
        "ReduceMean",
        [("x", F, [2, 3])],
        [("y", F)],
        opset=18,
        inits=[init("a", [2])],
    )
    c.case(
        "reducemean18/noop",
        "ReduceMean",
        [("x", F, [2, 3])],
        [("y", F)],
        {"noop_with_empty_axes": 1},
        opset=18,
        inits=[init("a", [])],
    )
    c.case(
        "reducemean18/noop_absent",
        "ReduceMean",
        [("x", F, [2, 3])],
        [("y", F)],
        {"noop_with_empty_axes": 1},
        opset=18,
    )
    c.case(
        "reducemean18/keep2",
        "ReduceMean",
        [("x", F, [2, 3, 4])],
        [("y", F)],
        {"keepdims": 2},
        opset=18,
        inits=[init("a", [-1])],
    )
    c.case(
        "reducemean18/axes_input",
        "ReduceMean",
        [("x", F, [2, 3]), ("a", I64, [1])],
        [("y", F)],
        opset=18,
    )
    c.case(
        "reducemean18/dup",
        "ReduceMean",
        [("x", F, [2, 3])],
        [("y", F)],
        {"keepdims": 0},
        opset=18,
        inits=[init("a", [1, -1])],
    )
    c.case(
        "reducemax11/lenient", "ReduceMax", [("x", F, [2, 3])], [("y", F)], {"axes": [5]}, opset=11
    )
    c.case(
        "reducemax12/checked", "ReduceMax", [("x", F, [2, 3])], [("y", F)], {"axes": [5]}, opset=12
    )
    c.case(
        "reducesum11/checked", "ReduceSum", [("x", F, [2, 3])], [("y", F)], {"axes": [-3]}, opset=11
    )
    c.case(
        "reducesum1/lenient", "ReduceSum", [("x", F, [2, 3])], [("y", F)], {"axes": [5, 1]}, opset=1
    )
    c.case("reducel2_13/all", "ReduceL2", [("x", F, ["N", 3])], [("y", F)], opset=13)
    c.case(
        "reducel2_13/attr_range",
        "ReduceL2",
        [("x", F, ["N", 3])],
        [("y", F)],
        {"axes": [2]},
        opset=13,
    )
    c.case(
        "reducelogsum28/noaxes",
        "ReduceLogSum",
        [("x", F, [2, 3])],
        [("y", F)],
        {"keepdims": 0},
        opset=28,
    )
    c.case("argmax1/lenient", "ArgMax", [("x", F, [2, 3])], [("y", I64)], {"axis": 5}, opset=1)
    c.case("argmax13/range", "ArgMax", [("x", F, [2, 3])], [("y", I64)], {"axis": 2}, opset=13)
    c.case(
        "argmin11/neg",
        "ArgMin",
        [("x", F, [2, 3])],
        [("y", I64)],
        {"axis": -1, "keepdims": 0},
        opset=11,
    )
    c.case("argmax13/scalar", "ArgMax", [("x", F, [])], [("y", I64)], opset=13)
    c.case("argmax13/scalar_axis", "ArgMax", [("x", F, [])], [("y", I64)], {"axis": 0}, opset=13)
    c.case("argmax12/keep5", "ArgMax", [("x", F, [2, 3])], [("y", I64)], {"keepdims": 5}, opset=12)


def _logical(c: _Cases) -> None:
    """logical."""
    c.case(
        "equal1/first",
        "Equal",
        [("a", I64, [2, 3]), ("b", I64, [3])],
        [("c", B)],
        {"broadcast": 1},
        opset=1,
    )
    c.case("less13/fail", "Less", [("a", F, [2, 3]), ("b", F, [2])], [("c", B)], opset=13)
    c.case("greater9/ok", "Greater", [("a", F, [2, 1]), ("b", F, ["N"])], [("c", B)], opset=9)
    c.case("and7/fail", "And", [("a", B, [2, 3]), ("b", B, [2])], [("c", B)], opset=7)
    c.case("not/shape", "Not", [("a", B, [2, "N"])], [("c", B)], opset=1)
    c.case(
        "lessorequal16/ok", "LessOrEqual", [("a", F, [2, 1]), ("b", F, [3])], [("c", B)], opset=16
    )
    c.case(
        "greaterorequal12/fn",
        "GreaterOrEqual",
        [("a", F, [2, 1]), ("b", F, [3])],
        [("c", B)],
        opset=12,
    )
    c.case(
        "bitshift/fail",
        "BitShift",
        [("a", U8, [2, 3]), ("b", U8, [2])],
        [("c", U8)],
        {"direction": "LEFT"},
        opset=11,
    )
    c.case("bitwisenot/basic", "BitwiseNot", [("a", I32, [2, "N"])], [("c", I32)], opset=18)
    c.case("equal19/string", "Equal", [("a", S, [2, 3]), ("b", S, [3])], [("c", B)], opset=19)


def _functions(c: _Cases) -> None:
    """Through a model-local function whose Softmax axis refers to the caller's."""
    for name, ax in (("function/softmax_axis_ok", -1), ("function/softmax_axis_fail", 3)):
        softmax = node("Softmax", ["x"], ["y"])
        softmax.attribute.append(helper.make_attribute_ref("axis", onnx.AttributeProto.INT))
        f = helper.make_function(
            "local", "F", ["x"], ["y"], [softmax], [helper.make_opsetid("", 13)], attributes=["ax"]
        )
        f.node[0].attribute[0].ref_attr_name = "ax"
        call = node("F", ["a"], ["b"], domain="local", ax=ax)
        g = graph([call], [tensor("a", F, [2, 3, 4])], [tensor("b", F, None)])
        c.add(name, _declare_inferred_outputs(model(g, [("", 13), ("local", 1)], functions=[f])))


def _onnx_hangs(c: _Cases) -> None:
    """onnx loops forever on a non-letter in an Einsum operand term."""
    n = node("Einsum", ["a"], ["y"], equation="i1->i")
    g = graph([n], [tensor("a", F, [2])], [tensor("y", F, [2])])
    c.add("einsum/nonletter_hangs_onnx", model(g, [("", 12)]), onnx_crashes=True)


_SECTIONS = (
    _element_wise,
    _softmax_family,
    _gemm,
    _matmul,
    _einsum,
    _expand,
    _topk,
    _det_losses,
    _dft_stft_windows,
    _reductions,
    _logical,
    _functions,
    _onnx_hangs,
)


def _all() -> _Cases:
    c = _Cases()
    for section in _SECTIONS:
        section(c)
    return c


def cases() -> list[tuple[str, onnx.ModelProto]]:
    return _all().built


def crash_cases() -> list[tuple[str, onnx.ModelProto]]:
    """The models of ONNX_CRASHES."""
    return _all().crashes
