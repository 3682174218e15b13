"""NN family (pooling, convolutions, Col2Im, normalizations, Dropout,
Flatten, TfIdfVectorizer, attention): edge and failure cases of the
inference rules.

Each model is one node on graph inputs and initializers; its outputs are the
graph's outputs, declared (so that the structural check passes) with the
rank onnx infers and every dim unknown, which never conflicts with inference.
A float input without a shape is the output of a Conv whose kernel size is
symbolic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Union

import numpy as np
import onnx

from ._build import BF16, I8, I32, I64, U8, B, Cases, D, F, graph, init, model, node, tensor

ONNX_CRASHES: tuple[str, ...] = ()

# An input: (name, element type, shape) or "" for an omitted one.
Input = Union[tuple[str, int, Any], str]
# An output: (name, element type) or "" for an omitted one.
Output = Union[tuple[str, int], str]


class _Cases(Cases):
    def case(
        self,
        name: str,
        op: str,
        inputs: Sequence[Input],
        outputs: Sequence[Output],
        attrs: dict[str, Any] | None = None,
        opset: int = 22,
        inits: dict[str, Any] | None = None,
    ) -> None:
        """One `op` node. An input named in `inits` is an initializer of
        those values (int64); a shape None is no shape, a dim None unknown."""
        inits = inits or {}
        made, made_inputs = [], []
        for i in inputs:
            if not isinstance(i, str) and i[2] is None and i[1] == F:
                made_inputs += [
                    tensor(i[0] + "_x", F, [1, 1, 4, 4]),
                    tensor(i[0] + "_w", F, [1, 1, "k", 2]),
                ]
                made.append(node("Conv", [i[0] + "_x", i[0] + "_w"], [i[0]]))
        made_names = {n.output[0] for n in made}
        n = node(
            op,
            [i if isinstance(i, str) else i[0] for i in inputs],
            [o if isinstance(o, str) else o[0] for o in outputs],
            domain="",
            **(attrs or {}),
        )
        graph_inputs = made_inputs + [
            tensor(*i)
            for i in inputs
            if not isinstance(i, str) and i[0] not in inits and i[0] not in made_names
        ]
        graph_outputs = [tensor(o[0], o[1], None) for o in outputs if not isinstance(o, str)]
        initializers = [init(k, v) for k, v in inits.items()]
        m = model(graph([*made, n], graph_inputs, graph_outputs, initializers), [("", opset)], 10)
        _declare_outputs(m)
        self.add(name, m)


def _declare_outputs(m: onnx.ModelProto) -> None:
    """The checker wants main-graph outputs with a shape: declares each with
    the element type and rank onnx infers (non-strict), every dim unknown,
    so that the declaration never conflicts with inference; rank 1 when onnx
    infers nothing (the node fails)."""
    probe = onnx.ModelProto()
    probe.CopyFrom(m)
    for o in probe.graph.output:
        o.ClearField("type")
    inferred = {}
    try:
        done = onnx.shape_inference.infer_shapes(probe, check_type=False, strict_mode=False)
        inferred = {o.name: o.type for o in done.graph.output}
    except Exception:
        pass
    for o in m.graph.output:
        t = inferred.get(o.name)
        tt = o.type.tensor_type
        rank = 1
        if t is not None and t.HasField("tensor_type"):
            if t.tensor_type.elem_type:
                tt.elem_type = t.tensor_type.elem_type
            if t.tensor_type.HasField("shape"):
                rank = len(t.tensor_type.shape.dim)
        tt.ClearField("shape")
        tt.shape.SetInParent()
        for _ in range(rank):
            tt.shape.dim.add()


def _causal(
    c: _Cases,
    name: str,
    inputs: Sequence[Input],
    attrs: dict[str, Any] | None = None,
    outs: Sequence[Output] = (("Y", F), ("S", F)),
) -> None:
    c.case(name, "CausalConvWithState", inputs, list(outs), attrs, opset=27)


def _att(
    c: _Cases,
    name: str,
    inputs: Sequence[Input],
    outputs: Sequence[Output],
    attrs: dict[str, Any] | None = None,
    opset: int = 23,
) -> None:
    c.case(name, "Attention", inputs, outputs, attrs, opset=opset)


def _lin(
    c: _Cases,
    name: str,
    inputs: Sequence[Input],
    attrs: dict[str, Any],
    outs: Sequence[Output] = (("Y", F), ("S", F)),
) -> None:
    c.case(name, "LinearAttention", inputs, list(outs), attrs, opset=27)


_QKV: list[Input] = [("q", F, ["B", "T", 64]), ("k", F, ["B", "T", 32]), ("v", F, ["B", "T", 48])]
_HEADS = {"q_num_heads": 4, "kv_num_heads": 2}


def _pooling(c: _Cases) -> None:
    """pooling."""
    for v in (7, 11, 19, 22):
        c.case(
            f"averagepool{v}/ok",
            "AveragePool",
            [("X", F, [1, 3, 32, "W"])],
            [("Y", F)],
            {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
            opset=v,
        )
        c.case(
            f"averagepool{v}/rank2",
            "AveragePool",
            [("X", F, [1, 3])],
            [("Y", F)],
            {"kernel_shape": [3]},
            opset=v,
        )
        c.case(
            f"averagepool{v}/nokernel",
            "AveragePool",
            [("X", F, [1, 3, 8, 8])],
            [("Y", F)],
            {},
            opset=v,
        )
        c.case(
            f"averagepool{v}/kernel_len",
            "AveragePool",
            [("X", F, [1, 3, 8, 8])],
            [("Y", F)],
            {"kernel_shape": [3]},
            opset=v,
        )
        c.case(
            f"averagepool{v}/kernel_zero",
            "AveragePool",
            [("X", F, [1, 3, 8, 8])],
            [("Y", F)],
            {"kernel_shape": [3, 0]},
            opset=v,
        )
        c.case(
            f"averagepool{v}/strides_len",
            "AveragePool",
            [("X", F, [1, 3, 8, 8])],
            [("Y", F)],
            {"kernel_shape": [3, 3], "strides": [1]},
            opset=v,
        )
        c.case(
            f"averagepool{v}/strides_zero",
            "AveragePool",
            [("X", F, [1, 3, 8, 8])],
            [("Y", F)],
            {"kernel_shape": [3, 3], "strides": [1, 0]},
            opset=v,
        )
        c.case(
            f"averagepool{v}/pads_len",
            "AveragePool",
            [("X", F, [1, 3, 8, 8])],
            [("Y", F)],
            {"kernel_shape": [3, 3], "pads": [1, 1]},
            opset=v,
        )
        c.case(
            f"averagepool{v}/pads_neg",
            "AveragePool",
            [("X", F, [1, 3, 8, 8])],
            [("Y", F)],
            {"kernel_shape": [3, 3], "pads": [1, 1, -1, 1]},
            opset=v,
        )
        for mode in ("SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET"):
            c.case(
                f"averagepool{v}/auto_{mode}",
                "AveragePool",
                [("X", F, [1, 3, 7, 8])],
                [("Y", F)],
                {"kernel_shape": [3, 2], "strides": [2, 3], "auto_pad": mode},
                opset=v,
            )
        # ceil_mode: opset 22 drops a window starting in the end padding
        c.case(
            f"averagepool{v}/ceil",
            "AveragePool",
            [("X", F, [1, 3, 4, 5])],
            [("Y", F)],
            {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [0, 0, 1, 1], "ceil_mode": 1},
            opset=v,
        )
        c.case(
            f"averagepool{v}/kernel_too_big",
            "AveragePool",
            [("X", F, [1, 3, 2, 2])],
            [("Y", F)],
            {"kernel_shape": [5, 5]},
            opset=v,
        )
        c.case(
            f"averagepool{v}/overflow",
            "AveragePool",
            [("X", F, [1, 3, 8, 8])],
            [("Y", F)],
            {"kernel_shape": [3, 3], "pads": [2**62, 2**62, 1, 1]},
            opset=v,
        )
    c.case(
        "averagepool19/dilations_len",
        "AveragePool",
        [("X", F, [1, 3, 8, 8])],
        [("Y", F)],
        {"kernel_shape": [3, 3], "dilations": [1]},
        opset=19,
    )
    c.case(
        "averagepool22/dilations_zero",
        "AveragePool",
        [("X", F, [1, 3, 8, 8])],
        [("Y", F)],
        {"kernel_shape": [3, 3], "dilations": [1, 0]},
        opset=22,
    )
    c.case(
        "averagepool22/dilated",
        "AveragePool",
        [("X", F, [1, 3, 9, 9])],
        [("Y", F)],
        {"kernel_shape": [3, 3], "dilations": [2, 3]},
        opset=22,
    )
    c.case(
        "averagepool22/ceil2",
        "AveragePool",
        [("X", F, [1, 3, 4, 5])],
        [("Y", F)],
        {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [0, 0, 1, 1], "ceil_mode": 2},
        opset=22,
    )
    c.case(
        "averagepool22/noshape", "AveragePool", [("X", F, None)], [("Y", F)], {"kernel_shape": [2]}
    )
    for v in (8, 10, 12, 22):
        c.case(
            f"maxpool{v}/indices",
            "MaxPool",
            [("X", F, ["N", 3, 9, 10])],
            [("Y", F), ("I", I64)],
            {"kernel_shape": [3, 3], "strides": [2, 2]},
            opset=v,
        )
        c.case(
            f"maxpool{v}/indices_rank2",
            "MaxPool",
            [("X", F, ["N", 3])],
            [("Y", F), ("I", I64)],
            {"kernel_shape": [3]},
            opset=v,
        )
    c.case(
        "maxpool1/ok", "MaxPool", [("X", F, [1, 3, 9])], [("Y", F)], {"kernel_shape": [3]}, opset=1
    )
    c.case(
        "maxpool8/dilations_ignored",
        "MaxPool",
        [("X", F, [1, 3, 9])],
        [("Y", F)],
        {"kernel_shape": [3]},
        opset=8,
    )
    c.case(
        "maxpool22/u8", "MaxPool", [("X", U8, [1, 3, 9, 9])], [("Y", U8)], {"kernel_shape": [3, 3]}
    )
    for v in (2, 11, 18, 22):
        c.case(
            f"lppool{v}/ok",
            "LpPool",
            [("X", F, [2, 3, 9, 9])],
            [("Y", F)],
            {"kernel_shape": [3, 3], "strides": [2, 2]},
            opset=v,
        )
        c.case(f"lppool{v}/nokernel", "LpPool", [("X", F, [2, 3, 9, 9])], [("Y", F)], {}, opset=v)
    for op in ("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"):
        for v in (2, 22):
            c.case(f"{op.lower()}{v}/ok", op, [("X", F, ["N", "C", 5, 6])], [("Y", F)], opset=v)
            c.case(f"{op.lower()}{v}/rank1", op, [("X", F, [5])], [("Y", F)], opset=v)
            c.case(f"{op.lower()}{v}/unknown", op, [("X", F, [None, None, 5])], [("Y", F)], opset=v)


def _roipool_unpool(c: _Cases) -> None:
    """MaxRoiPool, MaxUnpool."""
    for v in (1, 22):
        c.case(
            f"maxroipool{v}/ok",
            "MaxRoiPool",
            [("X", F, ["N", 8, 10, 10]), ("R", F, ["K", 5])],
            [("Y", F)],
            {"pooled_shape": [2, 3]},
            opset=v,
        )
        c.case(
            f"maxroipool{v}/rank3",
            "MaxRoiPool",
            [("X", F, [1, 8, 10]), ("R", F, [4, 5])],
            [("Y", F)],
            {"pooled_shape": [2, 3]},
            opset=v,
        )
        c.case(
            f"maxroipool{v}/rois4",
            "MaxRoiPool",
            [("X", F, [1, 8, 10, 10]), ("R", F, [4, 4])],
            [("Y", F)],
            {"pooled_shape": [2, 3]},
            opset=v,
        )
        c.case(
            f"maxroipool{v}/rois_rank3",
            "MaxRoiPool",
            [("X", F, [1, 8, 10, 10]), ("R", F, [4, 5, 1])],
            [("Y", F)],
            {"pooled_shape": [2, 3]},
            opset=v,
        )
        c.case(
            f"maxroipool{v}/nopooled",
            "MaxRoiPool",
            [("X", F, [1, 8, 10, 10]), ("R", F, [4, 5])],
            [("Y", F)],
            {},
            opset=v,
        )
        c.case(
            f"maxroipool{v}/pooled_zero",
            "MaxRoiPool",
            [("X", F, [1, 8, 10, 10]), ("R", F, [4, 5])],
            [("Y", F)],
            {"pooled_shape": [2, 0]},
            opset=v,
        )
        c.case(
            f"maxroipool{v}/rank5",
            "MaxRoiPool",
            [("X", F, [1, 8, 10, 10, 4]), ("R", F, [4, 5])],
            [("Y", F)],
            {"pooled_shape": [2, 3, 1]},
            opset=v,
        )
        c.case(
            f"maxroipool{v}/noshape",
            "MaxRoiPool",
            [("X", F, [1, 8, 10, 10]), ("R", F, None)],
            [("Y", F)],
            {"pooled_shape": [2, 3]},
            opset=v,
        )
    for v in (9, 11, 22):
        c.case(
            f"maxunpool{v}/ok",
            "MaxUnpool",
            [("X", F, ["N", 3, 4, None]), ("I", I64, [1, 5, 4, 4])],
            [("Y", F)],
            {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 0, 0, 1]},
            opset=v,
        )
        c.case(
            f"maxunpool{v}/rank1",
            "MaxUnpool",
            [("X", F, [4]), ("I", I64, [4])],
            [("Y", F)],
            {"kernel_shape": [2]},
            opset=v,
        )
        c.case(
            f"maxunpool{v}/nokernel",
            "MaxUnpool",
            [("X", F, [1, 3, 4, 4]), ("I", I64, [1, 3, 4, 4])],
            [("Y", F)],
            {},
            opset=v,
        )
        c.case(
            f"maxunpool{v}/pads_len",
            "MaxUnpool",
            [("X", F, [1, 3, 4, 4]), ("I", I64, [1, 3, 4, 4])],
            [("Y", F)],
            {"kernel_shape": [2, 2], "pads": [1]},
            opset=v,
        )
        c.case(
            f"maxunpool{v}/indices_rank1",
            "MaxUnpool",
            [("X", F, [1, 3, 4, 4]), ("I", I64, [3])],
            [("Y", F)],
            {"kernel_shape": [2, 2]},
            opset=v,
        )
        c.case(
            f"maxunpool{v}/outshape_len",
            "MaxUnpool",
            [("X", F, [1, 3, 4, 4]), ("I", I64, [1, 3, 4, 4]), ("S", I64, [3])],
            [("Y", F)],
            {"kernel_shape": [2, 2]},
            opset=v,
        )
        c.case(
            f"maxunpool{v}/outshape_rank2",
            "MaxUnpool",
            [("X", F, [1, 3, 4, 4]), ("I", I64, [1, 3, 4, 4]), ("S", I64, [4, 1])],
            [("Y", F)],
            {"kernel_shape": [2, 2]},
            opset=v,
        )
        c.case(
            f"maxunpool{v}/outshape_ok",
            "MaxUnpool",
            [("X", F, [1, 3, 4, 4]), ("I", I64, [1, 3, 4, 4]), ("S", I64, [4])],
            [("Y", F)],
            {"kernel_shape": [2, 2]},
            opset=v,
        )
        c.case(
            f"maxunpool{v}/empty_third",
            "MaxUnpool",
            [("X", F, [1, 3, 4, 4]), ("I", I64, [1, 3, 4, 4]), ""],
            [("Y", F)],
            {"kernel_shape": [2, 2]},
            opset=v,
        )


def _convolutions(c: _Cases) -> None:
    """convolutions."""
    for v in (1, 11, 22):
        c.case(
            f"conv{v}/ok",
            "Conv",
            [("X", F, ["N", 3, 10, 12]), ("W", F, ["M", 3, 3, 3])],
            [("Y", F)],
            {"strides": [2, 1], "pads": [1, 1, 1, 1], "dilations": [1, 2]},
            opset=v,
        )
        c.case(
            f"conv{v}/wsym",
            "Conv",
            [("X", F, [1, 3, 10, 12]), ("W", F, [8, 3, "k", 3])],
            [("Y", F)],
            opset=v,
        )
        c.case(f"conv{v}/wnoshape", "Conv", [("X", F, [1, 3]), ("W", F, None)], [("Y", F)], opset=v)
        c.case(
            f"conv{v}/rank2", "Conv", [("X", F, [1, 3]), ("W", F, [8, 3, 3])], [("Y", F)], opset=v
        )
        c.case(
            f"conv{v}/wrank",
            "Conv",
            [("X", F, [1, 3, 10, 12]), ("W", F, [8, 3, 3])],
            [("Y", F)],
            opset=v,
        )
        c.case(
            f"conv{v}/wscalar",
            "Conv",
            [("X", F, [1, 3, 10, 12]), ("W", F, [])],
            [("Y", F)],
            {"kernel_shape": [3, 3]},
            opset=v,
        )
        c.case(
            f"conv{v}/wzero",
            "Conv",
            [("X", F, [1, 3, 10, 12]), ("W", F, [8, 3, 0, 3])],
            [("Y", F)],
            opset=v,
        )
        for mode in ("SAME_UPPER", "SAME_LOWER", "VALID"):
            c.case(
                f"conv{v}/auto_{mode}",
                "Conv",
                [("X", F, [1, 3, 10, 11]), ("W", F, [8, 3, 4, 3])],
                [("Y", F)],
                {"auto_pad": mode, "strides": [3, 2]},
                opset=v,
            )
        c.case(
            f"conv{v}/dil_zero",
            "Conv",
            [("X", F, [1, 3, 10, 11]), ("W", F, [8, 3, 4, 3])],
            [("Y", F)],
            {"dilations": [0, 1]},
            opset=v,
        )
    for v in (19, 22):
        c.case(
            f"deformconv{v}/ok",
            "DeformConv",
            [("X", F, [1, 3, 10, 10]), ("W", F, [4, 3, 3, 3]), ("O", F, [1, 18, 8, 8])],
            [("Y", F)],
            opset=v,
        )
        c.case(
            f"deformconv{v}/rank",
            "DeformConv",
            [("X", F, [1, 3]), ("W", F, [4, 3, 3, 3]), ("O", F, [1, 18, 8, 8])],
            [("Y", F)],
            opset=v,
        )
    c.case(
        "qlinearconv/ok",
        "QLinearConv",
        [
            ("x", U8, [1, 3, 7, 7]),
            ("xs", F, []),
            ("xz", U8, []),
            ("w", I8, [4, 3, 3, 3]),
            ("ws", F, []),
            ("wz", I8, []),
            ("ys", F, []),
            ("yz", U8, []),
        ],
        [("y", U8)],
        {"pads": [1, 1, 1, 1]},
        opset=10,
    )
    c.case(
        "qlinearconv/xz",
        "QLinearConv",
        [
            ("x", U8, [1, 3, 7, 7]),
            ("xs", F, []),
            ("xz", I8, []),
            ("w", I8, [4, 3, 3, 3]),
            ("ws", F, []),
            ("wz", I8, []),
            ("ys", F, []),
            ("yz", U8, []),
        ],
        [("y", U8)],
        opset=10,
    )
    c.case(
        "qlinearconv/wz",
        "QLinearConv",
        [
            ("x", U8, [1, 3, 7, 7]),
            ("xs", F, []),
            ("xz", U8, []),
            ("w", I8, [4, 3, 3, 3]),
            ("ws", F, []),
            ("wz", U8, []),
            ("ys", F, []),
            ("yz", U8, []),
        ],
        [("y", U8)],
        opset=10,
    )
    c.case(
        "convinteger/ok",
        "ConvInteger",
        [("x", U8, [1, 3, 7, 7]), ("w", U8, [4, 3, 3, 3])],
        [("y", I32)],
        {"strides": [2, 2]},
        opset=10,
    )
    c.case(
        "convinteger/rank",
        "ConvInteger",
        [("x", U8, [1, 3]), ("w", U8, [4, 3, 3, 3])],
        [("y", I32)],
        opset=10,
    )
    for v in (1, 11, 22):
        c.case(
            f"convtranspose{v}/ok",
            "ConvTranspose",
            [("X", F, ["N", 4, 5, None]), ("W", F, [4, 2, 3, 3])],
            [("Y", F)],
            {"strides": [2, 2], "group": 2, "output_padding": [1, 0]},
            opset=v,
        )
        c.case(
            f"convtranspose{v}/group0",
            "ConvTranspose",
            [("X", F, [1, 4, 5, 5]), ("W", F, [4, 2, 3, 3])],
            [("Y", F)],
            {"group": 0},
            opset=v,
        )
        c.case(
            f"convtranspose{v}/group_div",
            "ConvTranspose",
            [("X", F, [1, 5, 5, 5]), ("W", F, [5, 2, 3, 3])],
            [("Y", F)],
            {"group": 2},
            opset=v,
        )
        c.case(
            f"convtranspose{v}/wrank",
            "ConvTranspose",
            [("X", F, [1, 4, 5, 5]), ("W", F, [4, 2])],
            [("Y", F)],
            opset=v,
        )
        c.case(
            f"convtranspose{v}/xrank",
            "ConvTranspose",
            [("X", F, [1, 4]), ("W", F, [4, 2, 3])],
            [("Y", F)],
            opset=v,
        )
        c.case(
            f"convtranspose{v}/outshape",
            "ConvTranspose",
            [("X", F, [1, 4, 5, 5]), ("W", F, [4, 2, 3, 3])],
            [("Y", F)],
            {"output_shape": [11, 12]},
            opset=v,
        )
        c.case(
            f"convtranspose{v}/outshape_small",
            "ConvTranspose",
            [("X", F, [1, 4, 5, 5]), ("W", F, [4, 2, 3, 3])],
            [("Y", F)],
            {"output_shape": [11, 3]},
            opset=v,
        )
        c.case(
            f"convtranspose{v}/outshape_len",
            "ConvTranspose",
            [("X", F, [1, 4, 5, 5]), ("W", F, [4, 2, 3, 3])],
            [("Y", F)],
            {"output_shape": [11]},
            opset=v,
        )
        c.case(
            f"convtranspose{v}/outpad_neg",
            "ConvTranspose",
            [("X", F, [1, 4, 5, 5]), ("W", F, [4, 2, 3, 3])],
            [("Y", F)],
            {"output_padding": [0, -1]},
            opset=v,
        )
        c.case(
            f"convtranspose{v}/pads_autopad",
            "ConvTranspose",
            [("X", F, [1, 4, 5, 5]), ("W", F, [4, 2, 3, 3])],
            [("Y", F)],
            {"pads": [1, 1, 1, 1], "auto_pad": "SAME_UPPER"},
            opset=v,
        )
        c.case(
            f"convtranspose{v}/same_lower",
            "ConvTranspose",
            [("X", F, [1, 4, 5, 5]), ("W", F, [4, 2, 4, 3])],
            [("Y", F)],
            {"strides": [2, 2], "auto_pad": "SAME_LOWER"},
            opset=v,
        )
        c.case(
            f"convtranspose{v}/wsym_group2",
            "ConvTranspose",
            [("X", F, [1, 4, 5, 5]), ("W", F, [4, "M", 3, 3])],
            [("Y", F)],
            {"group": 2},
            opset=v,
        )
        c.case(
            f"convtranspose{v}/wsym_group1",
            "ConvTranspose",
            [("X", F, [1, 4, 5, 5]), ("W", F, [4, "M", 3, 3])],
            [("Y", F)],
            opset=v,
        )
        c.case(
            f"convtranspose{v}/wunknown_kernel",
            "ConvTranspose",
            [("X", F, [1, 4, 5, 5]), ("W", F, [4, 2, "k", 3])],
            [("Y", F)],
            opset=v,
        )


def _col2im(c: _Cases) -> None:
    """Col2Im."""
    img = [5, 5]
    blk = [2, 2]
    c.case(
        "col2im/ok",
        "Col2Im",
        [("X", F, ["N", 12, 16]), ("img", I64, [2]), ("blk", I64, [2])],
        [("Y", F)],
        inits={"img": img, "blk": blk},
        opset=18,
    )
    c.case(
        "col2im/sym_n",
        "Col2Im",
        [("X", F, [2, "C", 16]), ("img", I64, [2]), ("blk", I64, [2])],
        [("Y", F)],
        inits={"img": img, "blk": [1, 1]},
        opset=18,
    )
    c.case(
        "col2im/noconst",
        "Col2Im",
        [("X", F, [1, 12, 16]), ("img", I64, [2]), ("blk", I64, [2])],
        [("Y", F)],
        opset=18,
    )
    c.case(
        "col2im/nolen",
        "Col2Im",
        [("X", F, [1, 12, 16]), ("img", I64, [None]), ("blk", I64, [None])],
        [("Y", F)],
        opset=18,
    )
    c.case(
        "col2im/pads_len",
        "Col2Im",
        [("X", F, [1, 12, 16]), ("img", I64, [2]), ("blk", I64, [2])],
        [("Y", F)],
        {"pads": [0, 0, 0, 0, 0, 0]},
        opset=18,
    )
    c.case(
        "col2im/pads_odd",
        "Col2Im",
        [("X", F, [1, 12, 16]), ("img", I64, [2]), ("blk", I64, [2])],
        [("Y", F)],
        {"pads": [0, 0, 0]},
        opset=18,
    )
    c.case(
        "col2im/strides_len",
        "Col2Im",
        [("X", F, [1, 12, 16]), ("img", I64, [2]), ("blk", I64, [2])],
        [("Y", F)],
        {"strides": [1]},
        opset=18,
    )
    c.case(
        "col2im/len_mismatch",
        "Col2Im",
        [("X", F, [1, 12, 16]), ("img", I64, [2]), ("blk", I64, [3])],
        [("Y", F)],
        opset=18,
    )
    c.case(
        "col2im/rank2",
        "Col2Im",
        [("X", F, [12, 16]), ("img", I64, [2]), ("blk", I64, [2])],
        [("Y", F)],
        opset=18,
    )
    c.case(
        "col2im/img_rank2",
        "Col2Im",
        [("X", F, [1, 12, 16]), ("img", I64, [2, 1]), ("blk", I64, [2])],
        [("Y", F)],
        opset=18,
    )
    c.case(
        "col2im/img_scalar",
        "Col2Im",
        [("X", F, [1, 12, 16]), ("img", I64, []), ("blk", I64, [2])],
        [("Y", F)],
        opset=18,
    )
    c.case(
        "col2im/blk_zero",
        "Col2Im",
        [("X", F, [1, 12, 16]), ("img", I64, [2]), ("blk", I64, [2])],
        [("Y", F)],
        inits={"img": img, "blk": [2, 0]},
        opset=18,
    )
    c.case(
        "col2im/img_const_len",
        "Col2Im",
        [("X", F, [1, 12, 16]), ("img", I64, [3]), ("blk", I64, [2])],
        [("Y", F)],
        inits={"img": [5, 5, 5]},
        opset=18,
    )
    c.case(
        "col2im/c_not_divisible",
        "Col2Im",
        [("X", F, [1, 10, 16]), ("img", I64, [2]), ("blk", I64, [2])],
        [("Y", F)],
        inits={"img": img, "blk": [3, 1]},
        opset=18,
    )


def _causal_conv(c: _Cases) -> None:
    """CausalConvWithState."""
    _causal(c, "causalconvwithstate/ok", [("X", F, ["B", 4, "L"]), ("W", F, [4, 1, 3])])
    _causal(
        c,
        "causalconvwithstate/past",
        [("X", F, ["B", 4, 10]), ("W", F, [4, 1, "k"]), ("b", F, [4]), ("P", F, [2, 4, 2])],
    )
    _causal(
        c,
        "causalconvwithstate/act_bad",
        [("X", F, [1, 4, 10]), ("W", F, [4, 1, 3])],
        {"activation": "relu"},
    )
    _causal(
        c,
        "causalconvwithstate/act_silu",
        [("X", F, [1, 4, 10]), ("W", F, [4, 1, 3])],
        {"activation": "silu"},
    )
    _causal(c, "causalconvwithstate/w_mid", [("X", F, [1, 4, 10]), ("W", F, [4, 2, 3])])
    _causal(c, "causalconvwithstate/c_mismatch", [("X", F, [1, 4, 10]), ("W", F, [5, 1, 3])])
    _causal(
        c,
        "causalconvwithstate/k_mismatch",
        [("X", F, [1, 4, 10]), ("W", F, [4, 1, 3]), "", ("P", F, [1, 4, 3])],
    )
    _causal(c, "causalconvwithstate/k_zero", [("X", F, [1, 4, 10]), ("W", F, [4, 1, 0])])
    _causal(c, "causalconvwithstate/rank2", [("X", F, [4, 10]), ("W", F, [4, 1, 3])])
    _causal(
        c,
        "causalconvwithstate/bias_rank",
        [("X", F, [1, 4, 10]), ("W", F, [4, 1, 3]), ("b", F, [4, 1])],
    )
    _causal(c, "causalconvwithstate/noshape", [("X", F, None), ("W", F, None)])


def _normalization(c: _Cases) -> None:
    """normalizations, dropout, flatten."""
    for v in (9, 14, 15):
        bn_in = [
            ("X", F, ["N", 3, 4, 4]),
            ("s", F, [3]),
            ("b", F, [3]),
            ("m", F, [3]),
            ("var", F, [3]),
        ]
        c.case(f"batchnormalization{v}/ok", "BatchNormalization", bn_in, [("Y", F)], opset=v)
        c.case(
            f"batchnormalization{v}/scale_rank",
            "BatchNormalization",
            [("X", F, [2, 3, 4]), ("s", F, [3, 1]), ("b", F, [3]), ("m", F, [3]), ("var", F, [3])],
            [("Y", F)],
            opset=v,
        )
        c.case(
            f"batchnormalization{v}/channels",
            "BatchNormalization",
            [("X", F, [2, 3, 4]), ("s", F, [4]), ("b", F, [3]), ("m", F, [3]), ("var", F, [3])],
            [("Y", F)],
            opset=v,
        )
        c.case(
            f"batchnormalization{v}/rank1",
            "BatchNormalization",
            [("X", F, [2]), ("s", F, [3]), ("b", F, [3]), ("m", F, [3]), ("var", F, [3])],
            [("Y", F)],
            opset=v,
        )
        c.case(
            f"batchnormalization{v}/sym",
            "BatchNormalization",
            [
                ("X", F, [2, "C", 4]),
                ("s", F, [None]),
                ("b", F, ["D"]),
                ("m", F, [5]),
                ("var", F, [None]),
            ],
            [("Y", F)],
            opset=v,
        )
        c.case(
            f"batchnormalization{v}/train",
            "BatchNormalization",
            bn_in,
            [("Y", F), ("rm", F), ("rv", F)],
            {"training_mode": 1},
            opset=v,
        )
        c.case(
            f"batchnormalization{v}/train_1out",
            "BatchNormalization",
            bn_in,
            [("Y", F)],
            {"training_mode": 1},
            opset=v,
        )
        c.case(
            f"batchnormalization{v}/3out_notrain",
            "BatchNormalization",
            bn_in,
            [("Y", F), ("rm", F), ("rv", F)],
            opset=v,
        )
    c.case(
        "batchnormalization15/train_sym",
        "BatchNormalization",
        [
            ("X", F, ["N", "C", 4]),
            ("s", F, [None]),
            ("b", F, [None]),
            ("m", F, [None]),
            ("var", F, [None]),
        ],
        [("Y", F), ("rm", F), ("rv", F)],
        {"training_mode": 1},
        opset=15,
    )
    for v in (6, 22):
        c.case(
            f"instancenormalization{v}/basic",
            "InstanceNormalization",
            [("X", F, ["N", 3, 5]), ("s", F, [3]), ("b", F, [3])],
            [("Y", F)],
            opset=v,
        )
        c.case(
            f"lpnormalization{v}/basic",
            "LpNormalization",
            [("X", F, ["N", 3, 5])],
            [("Y", F)],
            opset=v,
        )
    for v in (1, 13):
        c.case(f"lrn{v}/basic", "LRN", [("X", F, ["N", 3, 5, 5])], [("Y", F)], {"size": 3}, opset=v)
    c.case("shrink/basic", "Shrink", [("X", F, ["N", 3])], [("Y", F)], opset=9)
    c.case("shrink/int", "Shrink", [("X", I32, [3])], [("Y", I32)], opset=9)
    for v in (7, 10, 12, 13, 22):
        c.case(f"dropout{v}/mask", "Dropout", [("X", F, ["N", 3])], [("Y", F), ("M", B)], opset=v)
    for v in (12, 13, 22):
        c.case(
            f"dropout{v}/ratio_rank",
            "Dropout",
            [("X", F, [2, 3]), ("r", F, [1])],
            [("Y", F)],
            opset=v,
        )
        c.case(
            f"dropout{v}/train_rank",
            "Dropout",
            [("X", F, [2, 3]), ("r", F, []), ("t", B, [1])],
            [("Y", F)],
            opset=v,
        )
        c.case(
            f"dropout{v}/ok",
            "Dropout",
            [("X", F, [2, 3]), "", ("t", B, [])],
            [("Y", F), ("M", B)],
            opset=v,
        )
    for v in (1, 9, 11, 13, 21, 25):
        c.case(
            f"flatten{v}/ok", "Flatten", [("X", F, [2, 3, 4, 5])], [("Y", F)], {"axis": 2}, opset=v
        )
        c.case(
            f"flatten{v}/neg",
            "Flatten",
            [("X", F, [2, 3, 4, 5])],
            [("Y", F)],
            {"axis": -1},
            opset=v,
        )
        c.case(
            f"flatten{v}/big", "Flatten", [("X", F, [2, 3, 4])], [("Y", F)], {"axis": 4}, opset=v
        )
        c.case(
            f"flatten{v}/zero", "Flatten", [("X", F, ["N", 3])], [("Y", F)], {"axis": 0}, opset=v
        )
        c.case(
            f"flatten{v}/sym",
            "Flatten",
            [("X", F, ["N", 1, "C", 1])],
            [("Y", F)],
            {"axis": 2},
            opset=v,
        )
        c.case(f"flatten{v}/end", "Flatten", [("X", F, ["N", 3])], [("Y", F)], {"axis": 2}, opset=v)
    c.case(
        "flatten13/too_neg", "Flatten", [("X", F, [2, 3, 4])], [("Y", F)], {"axis": -4}, opset=13
    )
    c.case(
        "flatten13/overflow",
        "Flatten",
        [("X", F, [2**40, 2**40, 4])],
        [("Y", F)],
        {"axis": 2},
        opset=13,
    )
    c.case("flatten13/rank0", "Flatten", [("X", F, [])], [("Y", F)], opset=13)
    c.case(
        "flatten13/axis_wrap",
        "Flatten",
        [("X", F, [2, 3, 4])],
        [("Y", F)],
        {"axis": 2**32 + 1},
        opset=13,
    )

    for name, axis, outs in [
        ("layernormalization/ok", -1, [("Y", F), ("M", F), ("R", F)]),
        ("layernormalization/axis1", 1, [("Y", F), ("M", F)]),
        ("layernormalization/axis_neg_bad", -4, [("Y", F)]),
        ("layernormalization/axis_big", 7, [("Y", F), ("M", F), ("R", F)]),
        ("layernormalization/empty_mean", 1, [("Y", F), "", ("R", F)]),
    ]:
        c.case(
            name,
            "LayerNormalization",
            [("X", F, ["N", 3, 4]), ("s", F, [4]), ("b", F, [4])],
            outs,
            {"axis": axis},
            opset=17,
        )
    c.case(
        "layernormalization/stash_double",
        "LayerNormalization",
        [("X", F, ["N", 3, 4]), ("s", F, [4])],
        [("Y", F), ("M", D)],
        {"stash_type": 11},
        opset=17,
    )
    c.case(
        "layernormalization/stash_bf16",
        "LayerNormalization",
        [("X", F, ["N", 3, 4]), ("s", F, [4])],
        [("Y", F), ("M", BF16)],
        {"stash_type": 16},
        opset=17,
    )
    c.case(
        "layernormalization/noshape",
        "LayerNormalization",
        [("X", F, None), ("s", F, [4])],
        [("Y", F), ("M", F)],
        opset=17,
    )
    c.case(
        "rmsnormalization/ok",
        "RMSNormalization",
        [("X", F, ["N", 3, 4]), ("s", F, [4])],
        [("Y", F)],
        {"axis": -2},
        opset=23,
    )
    c.case(
        "rmsnormalization/bad_axis",
        "RMSNormalization",
        [("X", F, ["N", 3, 4]), ("s", F, [4])],
        [("Y", F)],
        {"axis": -4},
        opset=23,
    )
    c.case(
        "rmsnormalization/big_axis",
        "RMSNormalization",
        [("X", F, ["N", 3, 4]), ("s", F, [4])],
        [("Y", F)],
        {"axis": 9},
        opset=23,
    )
    for name, attrs, shape in [
        ("tfidfvectorizer/1d", {"ngram_indexes": [0, 4, 2]}, [7]),
        ("tfidfvectorizer/2d", {"ngram_indexes": [0, 4, 2]}, ["N", 7]),
        ("tfidfvectorizer/3d", {"ngram_indexes": [0, 4, 2]}, [1, 2, 7]),
        ("tfidfvectorizer/noidx", {}, [7]),
        ("tfidfvectorizer/neg", {"ngram_indexes": [0, -1]}, [7]),
        ("tfidfvectorizer/noshape", {}, None),
    ]:
        base = {
            "mode": "TF",
            "min_gram_length": 1,
            "max_gram_length": 1,
            "max_skip_count": 0,
            "ngram_counts": [0],
            "pool_int64s": [1, 2, 3],
        }
        base.update(attrs)
        c.case(name, "TfIdfVectorizer", [("X", I64, shape)], [("Y", F)], base, opset=9)


def _attention(c: _Cases) -> None:
    """attention."""
    for name, shape, attrs in [
        ("rotaryembedding/4d", ["B", 2, "S", 8], {}),
        ("rotaryembedding/3d", ["B", "S", 16], {"num_heads": 2}),
        ("rotaryembedding/3d_noheads", ["B", "S", 16], {}),
        ("rotaryembedding/rank2", ["S", 16], {}),
        ("rotaryembedding/rank5", [1, 1, 2, 3, 8], {}),
    ]:
        c.case(
            name,
            "RotaryEmbedding",
            [("X", F, shape), ("cos", F, [4, 4]), ("sin", F, [4, 4])],
            [("Y", F)],
            attrs,
            opset=23,
        )

    for v in (23, 24, 25):
        _att(
            c,
            f"attention{v}/4d",
            [("Q", F, ["B", 8, 5, 16]), ("K", F, ["B", 2, 7, 16]), ("V", F, ["B", 2, 7, 12])],
            [("Y", F), "", "", ("QK", F)],
            opset=v,
        )
        _att(
            c,
            f"attention{v}/4d_symseq",
            [("Q", F, ["B", 8, 5, 16]), ("K", F, ["B", 2, "T", 16]), ("V", F, ["B", 2, "T", 12])],
            [("Y", F), "", "", ("QK", F)],
            opset=v,
        )
        _att(
            c,
            f"attention{v}/3d",
            [("Q", F, ["B", 5, 64]), ("K", F, ["B", 7, 32]), ("V", F, ["B", 7, 24])],
            [("Y", F), "", "", ("QK", F)],
            {"q_num_heads": 4, "kv_num_heads": 2},
            opset=v,
        )
        _att(
            c,
            f"attention{v}/3d_noheads",
            [("Q", F, ["B", 5, 64]), ("K", F, ["B", 7, 32]), ("V", F, ["B", 7, 24])],
            [("Y", F)],
            {"q_num_heads": 4},
            opset=v,
        )
        _att(
            c,
            f"attention{v}/3d_zeroheads",
            [("Q", F, ["B", 5, 64]), ("K", F, ["B", 7, 32]), ("V", F, ["B", 7, 24])],
            [("Y", F)],
            {"q_num_heads": 0, "kv_num_heads": 2},
            opset=v,
        )
        _att(
            c,
            f"attention{v}/q_rank2",
            [("Q", F, [5, 64]), ("K", F, ["B", 7, 32]), ("V", F, ["B", 7, 24])],
            [("Y", F)],
            opset=v,
        )
        _att(
            c,
            f"attention{v}/k_rank5",
            [("Q", F, [1, 2, 5, 64]), ("K", F, [1, 1, 2, 7, 32]), ("V", F, [1, 2, 7, 24])],
            [("Y", F)],
            opset=v,
        )
        _att(
            c,
            f"attention{v}/mixed",
            [("Q", F, [1, 2, 5, 16]), ("K", F, [1, 7, 32]), ("V", F, [1, 7, 32])],
            [("Y", F), "", "", ("QK", F)],
            {"q_num_heads": 2, "kv_num_heads": 2} if v < 25 else {},
            opset=v,
        )
        _att(
            c,
            f"attention{v}/noqshape_qk",
            [("Q", F, None), ("K", F, [1, 2, 7, 16]), ("V", F, [1, 2, 7, 16])],
            [("Y", F), "", "", ("QK", F)],
            opset=v,
        )
        _att(
            c,
            f"attention{v}/past",
            [
                ("Q", F, ["B", 8, 5, 16]),
                ("K", F, ["B", 2, 7, 16]),
                ("V", F, ["B", 2, 7, 12]),
                "",
                ("PK", F, ["B", 2, 3, 16]),
                ("PV", F, ["B", 2, 3, 12]),
            ],
            [("Y", F), ("PKo", F), ("PVo", F), ("QK", F)],
            opset=v,
        )
        _att(
            c,
            f"attention{v}/past_3d",
            [
                ("Q", F, ["B", 5, 64]),
                ("K", F, ["B", 7, 32]),
                ("V", F, ["B", 7, 24]),
                "",
                ("PK", F, ["B", 2, "P", 16]),
                ("PV", F, ["B", 2, "P", 12]),
            ],
            [("Y", F), ("PKo", F), ("PVo", F)],
            {"q_num_heads": 4, "kv_num_heads": 2},
            opset=v,
        )
        _att(
            c,
            f"attention{v}/past_rank",
            [
                ("Q", F, ["B", 8, 5, 16]),
                ("K", F, ["B", 2, 7, 16]),
                ("V", F, ["B", 2, 7, 12]),
                "",
                ("PK", F, ["B", 3, 16]),
                ("PV", F, ["B", 2, 3, 12]),
            ],
            [("Y", F), ("PKo", F), ("PVo", F)],
            opset=v,
        )
        _att(
            c,
            f"attention{v}/past_only_key",
            [
                ("Q", F, ["B", 8, 5, 16]),
                ("K", F, ["B", 2, 7, 16]),
                ("V", F, ["B", 2, 7, 12]),
                "",
                ("PK", F, ["B", 2, 3, 16]),
            ],
            [("Y", F), ("PKo", F), ("PVo", F)],
            opset=v,
        )
        _att(
            c,
            f"attention{v}/present_only_key",
            [("Q", F, ["B", 8, 5, 16]), ("K", F, ["B", 2, 7, 16]), ("V", F, ["B", 2, 7, 12])],
            [("Y", F), ("PKo", F)],
            opset=v,
        )
    _att(
        c,
        "attention25/window",
        [("Q", F, [1, 8, 5, 16]), ("K", F, [1, 2, 7, 16]), ("V", F, [1, 2, 7, 12])],
        [("Y", F)],
        {"left_window_size": -2},
        opset=25,
    )
    _att(
        c,
        "attention25/window_ok",
        [("Q", F, [1, 8, 5, 16]), ("K", F, [1, 2, 7, 16]), ("V", F, [1, 2, 7, 12])],
        [("Y", F)],
        {"left_window_size": 3, "right_window_size": 0},
        opset=25,
    )
    _att(
        c,
        "attention25/nonpad_past",
        [
            ("Q", F, [1, 8, 5, 16]),
            ("K", F, [1, 2, 7, 16]),
            ("V", F, [1, 2, 7, 12]),
            "",
            ("PK", F, [1, 2, 3, 16]),
            ("PV", F, [1, 2, 3, 12]),
            ("L", I64, [1]),
        ],
        [("Y", F), ("PKo", F), ("PVo", F)],
        opset=25,
    )
    _att(
        c,
        "attention25/nonpad_ok",
        [
            ("Q", F, [1, 8, 5, 16]),
            ("K", F, [1, 2, 7, 16]),
            ("V", F, [1, 2, 7, 12]),
            "",
            "",
            "",
            ("L", I64, [1]),
        ],
        [("Y", F)],
        opset=25,
    )
    _att(
        c,
        "attention25/4d_heads",
        [("Q", F, [1, 8, 5, 16]), ("K", F, [1, 2, 7, 16]), ("V", F, [1, 2, 7, 12])],
        [("Y", F)],
        {"kv_num_heads": 2},
        opset=25,
    )
    _att(
        c,
        "attention25/3d_neg_heads_nov",
        [("Q", F, [1, 5, 64]), ("K", F, [1, 7, 32]), ("V", F, None)],
        [("Y", F)],
        {"q_num_heads": -1, "kv_num_heads": 2},
        opset=25,
    )

    _lin(c, "linearattention/linear", _QKV, {**_HEADS, "update_rule": "linear"})
    _lin(
        c,
        "linearattention/gated_delta",
        [*_QKV, "", ("d", F, ["B", "T", 2]), ("b", F, ["B", "T", 1])],
        _HEADS,
    )
    _lin(
        c,
        "linearattention/gated_delta_past",
        [*_QKV, ("p", F, ["B", 2, 16, 24]), ("d", F, ["B", "T", 32]), ("b", F, ["B", "T", 2])],
        _HEADS,
    )
    _lin(c, "linearattention/noheads", _QKV, {"kv_num_heads": 2, "update_rule": "linear"})
    _lin(
        c,
        "linearattention/gqa_bad",
        _QKV,
        {"q_num_heads": 3, "kv_num_heads": 2, "update_rule": "linear"},
    )
    _lin(c, "linearattention/rule_bad", _QKV, {**_HEADS, "update_rule": "fast"})
    _lin(
        c,
        "linearattention/linear_decay",
        [*_QKV, "", ("d", F, ["B", "T", 2])],
        {**_HEADS, "update_rule": "linear"},
    )
    _lin(c, "linearattention/gated_nodecay", _QKV, {**_HEADS, "update_rule": "gated"})
    _lin(c, "linearattention/delta_nobeta", _QKV, {**_HEADS, "update_rule": "delta"})
    _lin(c, "linearattention/default_nothing", _QKV, _HEADS)
    _lin(
        c,
        "linearattention/q_not_div",
        [("q", F, ["B", "T", 66]), ("k", F, ["B", "T", 32]), ("v", F, ["B", "T", 48])],
        {**_HEADS, "update_rule": "linear"},
    )
    _lin(
        c,
        "linearattention/dk_mismatch",
        [("q", F, ["B", "T", 64]), ("k", F, ["B", "T", 64]), ("v", F, ["B", "T", 48])],
        {**_HEADS, "update_rule": "linear"},
    )
    _lin(
        c,
        "linearattention/past_mismatch",
        [*_QKV, ("p", F, ["B", 3, 16, 24])],
        {**_HEADS, "update_rule": "linear"},
    )
    _lin(
        c,
        "linearattention/decay_bad",
        [*_QKV, "", ("d", F, ["B", "T", 5]), ("b", F, ["B", "T", 1])],
        _HEADS,
    )
    _lin(
        c,
        "linearattention/beta_bad",
        [*_QKV, "", ("d", F, ["B", "T", 2]), ("b", F, ["B", "T", 3])],
        _HEADS,
    )
    _lin(
        c,
        "linearattention/rank",
        [("q", F, ["B", 64]), ("k", F, ["B", "T", 32]), ("v", F, ["B", "T", 48])],
        {**_HEADS, "update_rule": "linear"},
    )
    _lin(
        c,
        "linearattention/noshapes",
        [("q", F, None), ("k", F, None), ("v", F, None)],
        {**_HEADS, "update_rule": "linear"},
    )
    _lin(
        c,
        "linearattention/past_double",
        [*_QKV, ("p", D, ["B", 2, 16, 24])],
        {**_HEADS, "update_rule": "linear"},
        outs=(("Y", F), ("S", D)),
    )


def _corners(c: _Cases) -> None:
    """corners: overflow, C-int truncation, symbolic values read as 0."""
    c.case(
        "averagepool22/real_overflow",
        "AveragePool",
        [("X", F, [1, 3, 8, 8])],
        [("Y", F)],
        {"kernel_shape": [3, 3], "pads": [2**62, 1, 2**62, 1]},
    )
    c.case(
        "averagepool19/real_overflow",
        "AveragePool",
        [("X", F, [1, 3, 8, 8])],
        [("Y", F)],
        {"kernel_shape": [3, 3], "pads": [2**62, 1, 2**62, 1]},
        opset=19,
    )
    c.case(
        "conv22/dil_overflow",
        "Conv",
        [("X", F, [1, 3, 10, 11]), ("W", F, [8, 3, 4, 3])],
        [("Y", F)],
        {"dilations": [2**62, 1]},
    )
    c.case(
        "conv22/auto_sym",
        "Conv",
        [("X", F, [1, 3, "H", 11]), ("W", F, [8, 3, 4, 3])],
        [("Y", F)],
        {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
    )
    c.case(
        "convtranspose22/outshape_sym",
        "ConvTranspose",
        [("X", F, [1, 4, "H", 5]), ("W", F, [4, 2, 3, 3])],
        [("Y", F)],
        {"output_shape": [1, 12]},
    )
    c.case(
        "convtranspose22/group_overflow",
        "ConvTranspose",
        [("X", F, [1, 4, 5, 5]), ("W", F, [4, 2**62, 3, 3])],
        [("Y", F)],
        {"group": 4},
    )
    c.case(
        "layernormalization/axis_2p32",
        "LayerNormalization",
        [("X", F, ["N", 3, 4]), ("s", F, [4])],
        [("Y", F), ("M", F)],
        {"axis": 2**32},
        opset=17,
    )
    c.case(
        "tfidfvectorizer/max",
        "TfIdfVectorizer",
        [("X", I64, [7])],
        [("Y", F)],
        {
            "mode": "TF",
            "min_gram_length": 1,
            "max_gram_length": 1,
            "max_skip_count": 0,
            "ngram_counts": [0],
            "pool_int64s": [1],
            "ngram_indexes": [2**63 - 1],
        },
        opset=9,
    )
    c.case(
        "maxunpool22/outshape_wrap",
        "MaxUnpool",
        [("X", F, [1, 3, 4, 4]), ("I", I64, [1, 3, 4, 4]), ("S", I64, [2**32 + 4])],
        [("Y", F)],
        {"kernel_shape": [2, 2]},
    )
    c.case(
        "batchnormalization15/train_wrap",
        "BatchNormalization",
        [("X", F, [2, 3, 4]), ("s", F, [3]), ("b", F, [3]), ("m", F, [3]), ("var", F, [3])],
        [("Y", F)],
        {"training_mode": 2**32},
        opset=15,
    )
    c.case(
        "dropout10/ratio_ignored",
        "Dropout",
        [("X", F, [2, 3])],
        [("Y", F), ("M", B)],
        {"ratio": 0.5},
        opset=10,
    )
    _att(
        c,
        "attention23/3d_symv",
        [("Q", F, ["B", 5, 64]), ("K", F, ["B", 7, 32]), ("V", F, ["B", "S", "D"])],
        [("Y", F), "", "", ("QK", F)],
        {"q_num_heads": 4, "kv_num_heads": 2},
    )
    _att(
        c,
        "attention23/past_symkv",
        [
            ("Q", F, ["B", 8, 5, 16]),
            ("K", F, ["B", 2, "T", 16]),
            ("V", F, ["B", 2, "T", 12]),
            "",
            ("PK", F, ["B", 2, 3, 16]),
            ("PV", F, ["B", 2, 3, 12]),
        ],
        [("Y", F), ("PKo", F), ("PVo", F), ("QK", F)],
    )
    _att(
        c,
        "attention23/past_noshape",
        [
            ("Q", F, ["B", 8, 5, 16]),
            ("K", F, ["B", 2, 7, 16]),
            ("V", F, ["B", 2, 7, 12]),
            "",
            ("PK", F, None),
            ("PV", F, ["B", 2, 3, 12]),
        ],
        [("Y", F), ("PKo", F), ("PVo", F), ("QK", F)],
    )
    _att(
        c,
        "attention23/v_noshape_qk",
        [("Q", F, ["B", 8, 5, 16]), ("K", F, ["B", 2, 7, 16]), ("V", F, None)],
        [("Y", F), "", "", ("QK", F)],
    )
    c.case(
        "maxpool22/noshape_indices",
        "MaxPool",
        [("X", F, None)],
        [("Y", F), ("I", I64)],
        {"kernel_shape": [2, 2]},
    )
    c.case("globalaveragepool22/noshape", "GlobalAveragePool", [("X", F, None)], [("Y", F)])
    c.case("flatten13/noshape", "Flatten", [("X", F, None)], [("Y", F)], opset=13)
    c.case(
        "batchnormalization15/noshape",
        "BatchNormalization",
        [("X", F, None), ("s", F, [3]), ("b", F, [4]), ("m", F, [3]), ("var", F, [3])],
        [("Y", F)],
        opset=15,
    )
    _causal(
        c,
        "causalconvwithstate/x_noshape",
        [("X", F, None), ("W", F, [4, 1, 3]), "", ("P", F, ["B", 4, 2])],
    )

    c.case(
        "col2im/big_block",
        "Col2Im",
        [("X", F, [1, 12, 16]), ("img", I64, [70000]), ("blk", I64, [70000])],
        [("Y", F)],
        inits={"blk": np.ones(70000, np.int64)},
        opset=18,
    )
    c.case(
        "col2im/big_img",
        "Col2Im",
        [("X", F, [1, 12, 16]), ("img", I64, [2000]), ("blk", I64, [2000])],
        [("Y", F)],
        inits={"img": np.ones(2000, np.int64)},
        opset=18,
    )
    c.case(
        "col2im/big_img_pads",
        "Col2Im",
        [("X", F, [1, 12, 16]), ("img", I64, [2000]), ("blk", I64, [None])],
        [("Y", F)],
        {"pads": [0, 0]},
        inits={"img": np.ones(2000, np.int64)},
        opset=18,
    )


_SECTIONS = (
    _pooling,
    _roipool_unpool,
    _convolutions,
    _col2im,
    _causal_conv,
    _normalization,
    _attention,
    _corners,
)


def cases() -> list[tuple[str, onnx.ModelProto]]:
    c = _Cases()
    for section in _SECTIONS:
        section(c)
    return c.built
