"""Tensor family (Cast, Concat, Split, Slice, Transpose, Gather/Scatter,
Squeeze, DepthToSpace, Tile, Pad, Reshape, Resize, GridSample, OneHot,
Shape, ...): edge and failure cases of the inference rules.

Each model has one node under test (plus what makes its inputs); the node's
outputs are intermediate values, so their types come from inference alone,
and the graph's only output passes the first input through. An input of
unknown rank is made inside the graph (`unknown_rank_inputs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper

from ._build import (
    BIG,
    F16,
    I32,
    I64,
    U8,
    B,
    Cases,
    D,
    F,
    graph,
    init,
    model,
    node,
    optional,
    seq,
    tensor,
    unknown_rank_inputs,
)

# Cases on which onnx itself crashes: left out of cases() (nothing to compare
# with), built by crash_cases().
ONNX_CRASHES = (
    # Split-18 with more outputs than num_outputs: onnx reads past a vector (assertion, abort).
    "split18/num_outputs_fewer",
    # The same after an operator onnx cannot infer: still aborts.
    "after_unknown_op/split18_fewer",
    # GatherND with batch_dims=-3: onnx segfaults.
    "gathernd/negative_batch",
)

X4 = [1, 3, 4, "W"]


class _Cases(Cases):
    def model(
        self,
        name: str,
        nodes: list[onnx.NodeProto],
        inputs: list[onnx.ValueInfoProto],
        opset: int = 21,
        ir: int | None = None,
        inits: Sequence[onnx.TensorProto] = (),
        value_info: Sequence[onnx.ValueInfoProto] = (),
        crash: bool = False,
        custom: bool = False,
    ) -> None:
        """`nodes` on `inputs`; the graph's output is its first input
        (a dummy one when there is none). `custom` imports domain `custom`."""
        graph_inputs, made = unknown_rank_inputs(inputs, opset)
        if not graph_inputs:
            graph_inputs.append(tensor("dummy__", F, [1]))
        g = graph(made + list(nodes), graph_inputs, [graph_inputs[0]], inits, value_info)
        opsets = [("", opset)] + ([("custom", 1)] if custom else [])
        if ir is None and opset <= 8:
            ir = 4
        self.add(name, model(g, opsets, ir), onnx_crashes=crash)


def x(shape: Any, elem: int = F, name: str = "x") -> onnx.ValueInfoProto:
    return tensor(name, elem, shape)


def _slice_case(
    c: _Cases,
    name: str,
    shape: Any,
    starts: list,
    ends: list,
    axes: list | None = None,
    steps: list | None = None,
    opset: int = 13,
    dtype: Any = np.int64,
) -> None:
    """Slice-10+ with constant starts, ends, axes and steps."""
    ins = ["x", "st", "en"]
    inits = [init("st", starts, dtype), init("en", ends, dtype)]
    if axes is not None or steps is not None:
        ins.append("ax" if axes is not None else "")
        if axes is not None:
            inits.append(init("ax", axes, dtype))
    if steps is not None:
        ins.append("sp")
        inits.append(init("sp", steps, dtype))
    c.model(name, [node("Slice", ins, ["y"])], [x(shape)], opset=opset, inits=inits)


def _reshape_case(
    c: _Cases, name: str, shape: Any, target: list, opset: int = 21, **attrs: Any
) -> None:
    """Reshape by a constant target shape."""
    c.model(
        name,
        [node("Reshape", ["x", "s"], ["y"], **attrs)],
        [x(shape)],
        opset=opset,
        inits=[init("s", target)],
    )


def _cast(c: _Cases) -> None:
    """Cast, CastLike, BitCast."""
    c.model("cast/ok_symbolic", [node("Cast", ["x"], ["y"], to=I64)], [x(["N", 3])])
    c.model("cast/unknown_rank", [node("Cast", ["x"], ["y"], to=D)], [x(None)])
    c.model("cast/to_undefined", [node("Cast", ["x"], ["y"], to=0)], [x([2])])
    c.model("cast/to_invalid", [node("Cast", ["x"], ["y"], to=99)], [x([2])])
    c.model("cast/to_float6", [node("Cast", ["x"], ["y"], to=27)], [x([2])], opset=28)
    c.model("cast/v6", [node("Cast", ["x"], ["y"], to=I32)], [x([2, "K"])], opset=6)
    c.model(
        "castlike/ok",
        [node("CastLike", ["x", "z"], ["y"])],
        [x(["N", 2]), tensor("z", D, [7])],
        opset=15,
    )
    c.model(
        "castlike/unknown_rank",
        [node("CastLike", ["x", "z"], ["y"])],
        [x(None), tensor("z", D, [])],
        opset=15,
    )
    c.model("bitcast/ok", [node("BitCast", ["x"], ["y"], to=I32)], [x(["N", 2])], opset=26)
    c.model("bitcast/width_mismatch", [node("BitCast", ["x"], ["y"], to=I64)], [x([2])], opset=26)
    c.model("bitcast/half_to_bool", [node("BitCast", ["x"], ["y"], to=B)], [x([2], F16)], opset=26)
    c.model("bitcast/bool_to_uint8", [node("BitCast", ["x"], ["y"], to=U8)], [x([2], B)], opset=26)


def _concat(c: _Cases) -> None:
    """Concat."""
    c.model(
        "concat/ok",
        [node("Concat", ["a", "b"], ["y"], axis=1)],
        [x([2, 3], name="a"), x([2, 4], name="b")],
    )
    c.model(
        "concat/symbols",
        [node("Concat", ["a", "b"], ["y"], axis=0)],
        [x(["N", 3], name="a"), x([2, "M"], name="b")],
    )
    c.model(
        "concat/neg_axis",
        [node("Concat", ["a", "b"], ["y"], axis=-1)],
        [x([2, 3], name="a"), x([2, "K"], name="b")],
    )
    c.model(
        "concat/axis_out",
        [node("Concat", ["a", "b"], ["y"], axis=2)],
        [x([2, 3], name="a"), x([2, 4], name="b")],
    )
    c.model(
        "concat/rank_differs",
        [node("Concat", ["a", "b"], ["y"], axis=0)],
        [x([2, 3], name="a"), x([2], name="b")],
    )
    c.model(
        "concat/dim_differs",
        [node("Concat", ["a", "b"], ["y"], axis=0)],
        [x([2, 3], name="a"), x([2, 4], name="b")],
    )
    c.model(
        "concat/one_input_symbol", [node("Concat", ["a"], ["y"], axis=0)], [x(["N", 3], name="a")]
    )
    c.model(
        "concat/unknown_rank",
        [node("Concat", ["a", "b"], ["y"], axis=0)],
        [x([2, 3], name="a"), x(None, name="b")],
    )
    c.model(
        "concat/negative_dim",
        [node("Concat", ["a", "b"], ["y"], axis=0)],
        [x([-1, 3], name="a"), x([2, 3], name="b")],
    )
    c.model(
        "concat/overflow",
        [node("Concat", ["a", "b"], ["y"], axis=0)],
        [x([BIG, 3], name="a"), x([BIG, 3], name="b")],
    )
    c.model(
        "concat/overflow_after_unknown",
        [node("Concat", ["a", "b", "c"], ["y"], axis=0)],
        [x(["N", 3], name="a"), x([BIG, 3], name="b"), x([BIG, 3], name="c")],
    )
    c.model(
        "concat/axis_wraps_int",
        [node("Concat", ["a", "b"], ["y"], axis=2**32)],
        [x([2, 3], name="a"), x([2, 3], name="b")],
    )
    c.model(
        "concat4/neg_axis",
        [node("Concat", ["a", "b"], ["y"], axis=-1)],
        [x([2, 3], name="a"), x([2, 4], name="b")],
        opset=4,
    )
    c.model(
        "concat4/axis_out",
        [node("Concat", ["a", "b"], ["y"], axis=2)],
        [x([2, 3], name="a"), x([2, 4], name="b")],
        opset=4,
    )
    c.model(
        "concat4/one_input_symbol",
        [node("Concat", ["a"], ["y"], axis=0)],
        [x(["N", 3], name="a")],
        opset=4,
    )


def _split(c: _Cases) -> None:
    """Split."""
    c.model(
        "split18/num_outputs",
        [node("Split", ["x"], ["a", "b", "c"], axis=0, num_outputs=3)],
        [x([7, 2])],
        opset=18,
    )
    c.model(
        "split18/num_outputs_even",
        [node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2)],
        [x([7, 4])],
        opset=18,
    )
    c.model("split18/neither", [node("Split", ["x"], ["a", "b"], axis=0)], [x([6, 2])], opset=18)
    c.model(
        "split18/both",
        [node("Split", ["x", "s"], ["a", "b"], axis=0, num_outputs=2)],
        [x([6, 2])],
        opset=18,
        inits=[init("s", [3, 3])],
    )
    c.model(
        "split18/both_unknown_dim",
        [node("Split", ["x", "s"], ["a", "b"], axis=0, num_outputs=2)],
        [x(["N", 2])],
        opset=18,
        inits=[init("s", [3, 3])],
    )
    c.model(
        "split18/num_outputs_zero",
        [node("Split", ["x"], ["a"], axis=0, num_outputs=0)],
        [x([6, 2])],
        opset=18,
    )
    c.model(
        "split18/num_outputs_more",
        [node("Split", ["x"], ["a", "b"], axis=0, num_outputs=3)],
        [x([6, 2])],
        opset=18,
    )
    c.model(
        "split18/num_outputs_uneven_more",
        [node("Split", ["x"], ["a", "b"], axis=0, num_outputs=4)],
        [x([7, 2])],
        opset=18,
    )
    c.model(
        "split18/num_outputs_fewer",
        [node("Split", ["x"], ["a", "b", "c"], axis=0, num_outputs=2)],
        [x([6, 2])],
        opset=18,
        crash=True,
    )
    c.model(
        "split18/input",
        [node("Split", ["x", "s"], ["a", "b"], axis=-1)],
        [x([2, 6])],
        opset=18,
        inits=[init("s", [2, 4])],
    )
    c.model(
        "split18/input_sum",
        [node("Split", ["x", "s"], ["a", "b"], axis=0)],
        [x([6, 2])],
        opset=18,
        inits=[init("s", [2, 3])],
    )
    c.model(
        "split18/input_count",
        [node("Split", ["x", "s"], ["a", "b"], axis=0)],
        [x([6, 2])],
        opset=18,
        inits=[init("s", [2, 2, 2])],
    )
    c.model(
        "split18/input_not_const",
        [node("Split", ["x", "s"], ["a", "b"], axis=0)],
        [x([6, 2]), tensor("s", I64, [2])],
        opset=18,
    )
    c.model(
        "split18/axis_out",
        [node("Split", ["x"], ["a", "b"], axis=2, num_outputs=2)],
        [x([6, 2])],
        opset=18,
    )
    c.model("split13/uneven", [node("Split", ["x"], ["a", "b"], axis=0)], [x([7, 2])], opset=13)
    c.model("split13/even", [node("Split", ["x"], ["a", "b"], axis=0)], [x([8, "K"])], opset=13)
    c.model(
        "split13/input",
        [node("Split", ["x", "s"], ["a", "b"], axis=0)],
        [x([6, 2])],
        opset=13,
        inits=[init("s", [1, 5])],
    )
    c.model(
        "split11/attr",
        [node("Split", ["x"], ["a", "b"], axis=0, split=[1, 5])],
        [x([6, 2])],
        opset=11,
    )
    c.model(
        "split11/attr_sum",
        [node("Split", ["x"], ["a", "b"], axis=0, split=[1, 4])],
        [x([6, 2])],
        opset=11,
    )
    c.model("split2/uneven", [node("Split", ["x"], ["a", "b"], axis=0)], [x([5, 2])], opset=7)
    c.model(
        "split11/unknown_dim",
        [node("Split", ["x"], ["a", "b"], axis=1, split=[1, 5])],
        [x([2, "W"])],
        opset=11,
    )
    c.model(
        "split/dim_wraps_int",
        [node("Split", ["x"], ["a", "b"], axis=0)],
        [x([2**32 + 4, 2])],
        opset=13,
    )


def _slice(c: _Cases) -> None:
    """Slice."""
    _slice_case(c, "slice13/basic", [5, 6], [1, 0], [4, 10])
    _slice_case(c, "slice13/neg_step", [10], [-1], [-11], [0], [-2])
    _slice_case(c, "slice13/step0", [10], [0], [5], [0], [0])
    _slice_case(c, "slice13/step0_symbolic", ["N"], [0], [5], [0], [0])
    _slice_case(c, "slice13/axis_out", [10], [0], [5], [1])
    _slice_case(c, "slice13/dup_axes", [10, 4], [0, 0], [5, 5], [0, -2])
    _slice_case(c, "slice13/len_mismatch", [10], [0, 1], [5])
    _slice_case(c, "slice13/axes_len", [10, 3], [0, 1], [5, 2], [0])
    _slice_case(c, "slice13/steps_len", [10, 3], [0, 1], [5, 2], [0, 1], [1])
    _slice_case(c, "slice13/symbolic", ["N", 4], [0, 1], [5, 3])
    _slice_case(c, "slice13/int32", [10, 4], [1], [3], [1], None, dtype=np.int32)
    _slice_case(c, "slice13/zero_dim", [0, 4], [1], [3])
    _slice_case(c, "slice13/huge", [10], [-BIG], [BIG], [0], [3])
    _slice_case(c, "slice11/dup_axes", [10, 4], [0, 0], [5, 5], [0, -2], opset=11)
    _slice_case(c, "slice11/symbolic_axis", ["N", 4], [0], [5], opset=11)
    _slice_case(c, "slice10/symbolic_axis", ["N", 4], [0], [5], opset=10)
    _slice_case(c, "slice10/neg_step_end", [10], [5], [20], [0], [-1], opset=10)
    _slice_case(c, "slice13/neg_step_end", [10], [5], [20], [0], [-1])
    c.model(
        "slice13/starts_not_const",
        [node("Slice", ["x", "st", "en"], ["y"])],
        [x([5, "N"]), tensor("st", I64, [1])],
        opset=13,
        inits=[init("en", [3])],
    )
    c.model(
        "slice13/axes_not_const",
        [node("Slice", ["x", "st", "en", "ax"], ["y"])],
        [x([5, 6]), tensor("ax", I64, [1])],
        opset=13,
        inits=[init("st", [1]), init("en", [3])],
    )
    c.model(
        "slice13/axes_unknown_rank",
        [node("Slice", ["x", "st", "en", "ax"], ["y"])],
        [x([5, 6]), tensor("ax", I64, None)],
        opset=13,
        inits=[init("st", [1]), init("en", [3])],
    )
    c.model(
        "slice13/float_starts",
        [node("Slice", ["x", "st", "en"], ["y"])],
        [x([5, 6])],
        opset=13,
        inits=[init("st", [1.0], np.float32), init("en", [3.0], np.float32)],
    )
    c.model(
        "slice1/attrs",
        [node("Slice", ["x"], ["y"], starts=[1, 0], ends=[3, -1], axes=[0, 2])],
        [x([5, 6, 7])],
        opset=1,
    )
    c.model(
        "slice1/unsorted",
        [node("Slice", ["x"], ["y"], starts=[1, 0], ends=[3, 2], axes=[1, 0])],
        [x([5, 6])],
        opset=1,
    )
    c.model(
        "slice1/negative_axes",
        [node("Slice", ["x"], ["y"], starts=[1], ends=[3], axes=[-1])],
        [x([5, 6])],
        opset=1,
    )
    c.model(
        "slice1/len", [node("Slice", ["x"], ["y"], starts=[1], ends=[3, 4])], [x([5, 6])], opset=1
    )
    c.model(
        "slice1/axes_len",
        [node("Slice", ["x"], ["y"], starts=[1], ends=[3], axes=[0, 1])],
        [x([5, 6])],
        opset=1,
    )
    c.model(
        "slice1/neg_result",
        [node("Slice", ["x"], ["y"], starts=[4], ends=[2])],
        [x([5, "N"])],
        opset=1,
    )


def _transpose(c: _Cases) -> None:
    """Transpose."""
    c.model("transpose/default", [node("Transpose", ["x"], ["y"])], [x([2, "N", 4])])
    c.model("transpose/perm", [node("Transpose", ["x"], ["y"], perm=[1, 2, 0])], [x([2, "N", 4])])
    c.model("transpose/perm_out", [node("Transpose", ["x"], ["y"], perm=[0, 3, 1])], [x([2, 3, 4])])
    c.model(
        "transpose/perm_neg", [node("Transpose", ["x"], ["y"], perm=[0, -1, 1])], [x([2, 3, 4])]
    )
    c.model("transpose/perm_dup", [node("Transpose", ["x"], ["y"], perm=[0, 0, 1])], [x([2, 3, 4])])
    c.model("transpose/perm_short", [node("Transpose", ["x"], ["y"], perm=[1])], [x([2, 3])])
    c.model("transpose/perm_empty", [node("Transpose", ["x"], ["y"], perm=[])], [x([2, 3])])
    c.model(
        "transpose1/perm_empty", [node("Transpose", ["x"], ["y"], perm=[])], [x([2, 3])], opset=1
    )
    c.model("transpose1/scalar", [node("Transpose", ["x"], ["y"])], [x([])], opset=1)
    c.model("transpose13/scalar", [node("Transpose", ["x"], ["y"])], [x([])], opset=13)


def _gather_scatter(c: _Cases) -> None:
    """Gather, GatherElements, GatherND, Scatter*."""
    c.model(
        "gather/ok",
        [node("Gather", ["x", "i"], ["y"], axis=1)],
        [x([2, 3, 4]), tensor("i", I64, ["K", 5])],
    )
    c.model(
        "gather/scalar_index",
        [node("Gather", ["x", "i"], ["y"], axis=-1)],
        [x([2, 3]), tensor("i", I32, [])],
    )
    c.model(
        "gather/scalar_data", [node("Gather", ["x", "i"], ["y"])], [x([]), tensor("i", I64, [2])]
    )
    c.model(
        "gather/axis_out",
        [node("Gather", ["x", "i"], ["y"], axis=2)],
        [x([2, 3]), tensor("i", I64, [2])],
    )
    c.model("gather/1d_scalar", [node("Gather", ["x", "i"], ["y"])], [x([5]), tensor("i", I64, [])])
    c.model(
        "gatherelements/basic",
        [node("GatherElements", ["x", "i"], ["y"], axis=1)],
        [x([2, 3]), tensor("i", I64, [2, "K"])],
    )
    c.model(
        "gatherelements/no_shape",
        [node("GatherElements", ["x", "i"], ["y"])],
        [x([2, 3]), tensor("i", I64, None)],
    )
    c.model(
        "gathernd/ok",
        [node("GatherND", ["x", "i"], ["y"])],
        [x([2, 3, 4]), tensor("i", I64, ["K", 2])],
    )
    c.model(
        "gathernd/batch",
        [node("GatherND", ["x", "i"], ["y"], batch_dims=1)],
        [x([2, 3, 4]), tensor("i", I64, [2, 1])],
    )
    c.model(
        "gathernd/too_deep",
        [node("GatherND", ["x", "i"], ["y"])],
        [x([2, 3]), tensor("i", I64, [1, 3])],
    )
    c.model(
        "gathernd/batch_too_deep",
        [node("GatherND", ["x", "i"], ["y"], batch_dims=1)],
        [x([2, 3]), tensor("i", I64, [2, 2])],
    )
    c.model(
        "gathernd/scalar_indices",
        [node("GatherND", ["x", "i"], ["y"])],
        [x([2, 3]), tensor("i", I64, [])],
    )
    c.model(
        "gathernd/unknown_last",
        [node("GatherND", ["x", "i"], ["y"])],
        [x([2, 3]), tensor("i", I64, [2, "L"])],
    )
    c.model(
        "gathernd11/batch_ignored",
        [node("GatherND", ["x", "i"], ["y"])],
        [x([2, 3, 4]), tensor("i", I64, [2, 1])],
        opset=11,
    )
    c.model(
        "scatterelements/basic",
        [node("ScatterElements", ["x", "i", "u"], ["y"], axis=1)],
        [x(["N", 3]), tensor("i", I64, [1, 2]), tensor("u", F, [1, 2])],
    )
    c.model(
        "scatternd/basic",
        [node("ScatterND", ["x", "i", "u"], ["y"])],
        [x([4, 3]), tensor("i", I64, [1, 1]), tensor("u", F, [1, 3])],
    )
    c.model(
        "scatter9/basic",
        [node("Scatter", ["x", "i", "u"], ["y"])],
        [x([4, "M"]), tensor("i", I64, [1, 1]), tensor("u", F, [1, 1])],
        opset=9,
    )
    c.model(
        "tensorscatter/ok",
        [node("TensorScatter", ["c", "u", "w"], ["y"])],
        [tensor("c", F, ["B", 4, 8, 2]), tensor("u", F, ["B", 4, 1, 2]), tensor("w", I64, ["B"])],
        opset=24,
    )
    c.model(
        "tensorscatter/rank",
        [node("TensorScatter", ["c", "u"], ["y"])],
        [tensor("c", F, [2, 4, 8]), tensor("u", F, [2, 4])],
        opset=24,
    )
    c.model(
        "tensorscatter/axis0",
        [node("TensorScatter", ["c", "u"], ["y"], axis=0)],
        [tensor("c", F, [2, 4, 8]), tensor("u", F, [2, 4, 8])],
        opset=24,
    )
    c.model(
        "tensorscatter/dim",
        [node("TensorScatter", ["c", "u"], ["y"])],
        [tensor("c", F, [2, 4, 8]), tensor("u", F, [2, 5, 1])],
        opset=24,
    )
    c.model(
        "tensorscatter/w_rank",
        [node("TensorScatter", ["c", "u", "w"], ["y"])],
        [tensor("c", F, [2, 4, 8]), tensor("u", F, [2, 1, 8]), tensor("w", I64, [2, 1])],
        opset=24,
    )
    c.model(
        "tensorscatter/w_batch",
        [node("TensorScatter", ["c", "u", "w"], ["y"])],
        [tensor("c", F, [2, 4, 8]), tensor("u", F, [2, 1, 8]), tensor("w", I64, [3])],
        opset=24,
    )
    c.model(
        "tensorscatter/w_only",
        [node("TensorScatter", ["c", "u", "w"], ["y"])],
        [tensor("c", F, [2, 4, 8]), tensor("u", F, None), tensor("w", I64, [3])],
        opset=24,
    )


def _squeeze(c: _Cases) -> None:
    """Squeeze, Unsqueeze."""
    c.model("squeeze/all", [node("Squeeze", ["x"], ["y"])], [x([1, 3, 1])])
    c.model("squeeze/all_symbolic", [node("Squeeze", ["x"], ["y"])], [x([1, "N", 1])])
    c.model(
        "squeeze/axes",
        [node("Squeeze", ["x", "a"], ["y"])],
        [x([1, "N", 1])],
        inits=[init("a", [1, -1])],
    )
    c.model(
        "squeeze/axes_not_one",
        [node("Squeeze", ["x", "a"], ["y"])],
        [x([1, 3, 1])],
        inits=[init("a", [1])],
    )
    c.model(
        "squeeze/axes_out",
        [node("Squeeze", ["x", "a"], ["y"])],
        [x([1, 3, 1])],
        inits=[init("a", [3])],
    )
    c.model(
        "squeeze/axes_dup",
        [node("Squeeze", ["x", "a"], ["y"])],
        [x([1, 3, 1])],
        inits=[init("a", [0, -3])],
    )
    c.model(
        "squeeze/axes_not_const",
        [node("Squeeze", ["x", "a"], ["y"])],
        [x([1, 3, 1]), tensor("a", I64, [1])],
    )
    c.model("squeeze/empty_axes_name", [node("Squeeze", ["x", ""], ["y"])], [x([1, 3, 1])])
    c.model(
        "squeeze11/attr_out", [node("Squeeze", ["x"], ["y"], axes=[5, 0])], [x([1, 3])], opset=11
    )
    c.model("squeeze11/attr_neg", [node("Squeeze", ["x"], ["y"], axes=[-1])], [x([3, 1])], opset=11)
    c.model(
        "squeeze11/attr_not_one", [node("Squeeze", ["x"], ["y"], axes=[0])], [x([3, 1])], opset=11
    )
    c.model(
        "squeeze1/unsorted", [node("Squeeze", ["x"], ["y"], axes=[2, 0])], [x([1, 3, 1])], opset=1
    )
    c.model("squeeze1/neg", [node("Squeeze", ["x"], ["y"], axes=[-1])], [x([3, 1])], opset=1)
    c.model(
        "unsqueeze/ok",
        [node("Unsqueeze", ["x", "a"], ["y"])],
        [x(["N", 3])],
        inits=[init("a", [0, -1])],
    )
    c.model(
        "unsqueeze/out", [node("Unsqueeze", ["x", "a"], ["y"])], [x([2, 3])], inits=[init("a", [3])]
    )
    c.model(
        "unsqueeze/dup",
        [node("Unsqueeze", ["x", "a"], ["y"])],
        [x([2, 3])],
        inits=[init("a", [0, -4])],
    )
    c.model(
        "unsqueeze/not_const",
        [node("Unsqueeze", ["x", "a"], ["y"])],
        [x([2, 3]), tensor("a", I64, [1])],
    )
    c.model(
        "unsqueeze/scalar",
        [node("Unsqueeze", ["x", "a"], ["y"])],
        [x([])],
        inits=[init("a", [0, 1])],
    )
    c.model("unsqueeze11/dup", [node("Unsqueeze", ["x"], ["y"], axes=[0, 0])], [x([2])], opset=11)
    c.model(
        "unsqueeze11/dup_adjusted",
        [node("Unsqueeze", ["x"], ["y"], axes=[0, -3])],
        [x([2])],
        opset=11,
    )
    c.model("unsqueeze11/out", [node("Unsqueeze", ["x"], ["y"], axes=[3])], [x([2])], opset=11)
    c.model(
        "unsqueeze1/out_ignored", [node("Unsqueeze", ["x"], ["y"], axes=[5, 0])], [x([2])], opset=1
    )
    c.model(
        "unsqueeze1/neg_ignored", [node("Unsqueeze", ["x"], ["y"], axes=[-1])], [x([2])], opset=1
    )


def _depth_space_tile(c: _Cases) -> None:
    """DepthToSpace, SpaceToDepth, Tile."""
    c.model(
        "depthtospace/ok", [node("DepthToSpace", ["x"], ["y"], blocksize=2)], [x(["N", 8, "H", 3])]
    )
    c.model(
        "depthtospace/block0", [node("DepthToSpace", ["x"], ["y"], blocksize=0)], [x([1, 8, 2, 3])]
    )
    c.model(
        "depthtospace/block0_no_shape", [node("DepthToSpace", ["x"], ["y"], blocksize=0)], [x(None)]
    )
    c.model("depthtospace/rank3", [node("DepthToSpace", ["x"], ["y"], blocksize=2)], [x([8, 2, 3])])
    c.model(
        "depthtospace/area_overflow",
        [node("DepthToSpace", ["x"], ["y"], blocksize=2**32)],
        [x([1, 8, 2, 3])],
    )
    c.model(
        "depthtospace/mul_overflow",
        [node("DepthToSpace", ["x"], ["y"], blocksize=4)],
        [x([1, 16, BIG, 3])],
    )
    c.model(
        "depthtospace/uneven", [node("DepthToSpace", ["x"], ["y"], blocksize=2)], [x([1, 7, 2, 3])]
    )
    c.model(
        "spacetodepth/ok", [node("SpaceToDepth", ["x"], ["y"], blocksize=2)], [x(["N", 3, 8, "W"])]
    )
    c.model(
        "spacetodepth/block1",
        [node("SpaceToDepth", ["x"], ["y"], blocksize=1)],
        [x(["N", "C", 8, "W"])],
    )
    c.model(
        "spacetodepth/neg_block",
        [node("SpaceToDepth", ["x"], ["y"], blocksize=-2)],
        [x([1, 3, 8, 8])],
    )
    c.model(
        "spacetodepth/rank5",
        [node("SpaceToDepth", ["x"], ["y"], blocksize=2)],
        [x([1, 3, 8, 8, 1])],
    )
    c.model("tile/ok", [node("Tile", ["x", "r"], ["y"])], [x(["N", 3])], inits=[init("r", [2, 3])])
    c.model("tile/not_const", [node("Tile", ["x", "r"], ["y"])], [x([2, 3]), tensor("r", I64, [2])])
    c.model(
        "tile/negative", [node("Tile", ["x", "r"], ["y"])], [x([2, 3])], inits=[init("r", [2, -1])]
    )
    c.model("tile/count", [node("Tile", ["x", "r"], ["y"])], [x([2, 3])], inits=[init("r", [2])])
    c.model(
        "tile/2d_repeats",
        [node("Tile", ["x", "r"], ["y"])],
        [x([2, 3])],
        inits=[init("r", [[2, 3]])],
    )
    c.model(
        "tile/overflow", [node("Tile", ["x", "r"], ["y"])], [x([BIG, 3])], inits=[init("r", [4, 1])]
    )
    c.model("tile/zero", [node("Tile", ["x", "r"], ["y"])], [x([2, 3])], inits=[init("r", [0, 1])])
    c.model(
        "tile1/basic",
        [node("Tile", ["x", "r", "a"], ["y"])],
        [x([2, 3]), tensor("r", F, [1]), tensor("a", F, [1])],
        opset=1,
    )


def _pad(c: _Cases) -> None:
    """Pad, CenterCropPad."""
    c.model(
        "pad/ok", [node("Pad", ["x", "p"], ["y"])], [x(["N", 3])], inits=[init("p", [0, 1, 0, 2])]
    )
    c.model(
        "pad/symbol_padded",
        [node("Pad", ["x", "p"], ["y"])],
        [x(["N", 3])],
        inits=[init("p", [1, 1, 0, 2])],
    )
    c.model(
        "pad/negative",
        [node("Pad", ["x", "p"], ["y"])],
        [x([4, 3])],
        inits=[init("p", [-1, 0, -2, 0])],
    )
    c.model("pad/len", [node("Pad", ["x", "p"], ["y"])], [x([4, 3])], inits=[init("p", [1, 1])])
    c.model(
        "pad/2d", [node("Pad", ["x", "p"], ["y"])], [x([4, 3])], inits=[init("p", [[1, 1], [1, 1]])]
    )
    c.model("pad/not_const", [node("Pad", ["x", "p"], ["y"])], [x([4, 3]), tensor("p", I64, [4])])
    c.model(
        "pad/axes",
        [node("Pad", ["x", "p", "", "a"], ["y"])],
        [x(["N", 3, "W"])],
        inits=[init("p", [1, 2]), init("a", [-1])],
    )
    c.model(
        "pad/axes_int32",
        [node("Pad", ["x", "p", "", "a"], ["y"])],
        [x([2, 3])],
        inits=[init("p", [1, 2]), init("a", [1], np.int32)],
    )
    c.model(
        "pad/axes_not_const",
        [node("Pad", ["x", "p", "", "a"], ["y"])],
        [x([2, 3]), tensor("a", I64, [1])],
        inits=[init("p", [1, 2])],
    )
    c.model(
        "pad/axes_dup",
        [node("Pad", ["x", "p", "", "a"], ["y"])],
        [x([2, 3])],
        inits=[init("p", [1, 2, 1, 2]), init("a", [1, -1])],
    )
    c.model(
        "pad/axes_len",
        [node("Pad", ["x", "p", "", "a"], ["y"])],
        [x([2, 3])],
        inits=[init("p", [1, 2, 3, 4]), init("a", [1])],
    )
    c.model(
        "pad/axes_empty",
        [node("Pad", ["x", "p", "", "a"], ["y"])],
        [x([2, 3])],
        inits=[init("p", [1, 2]), init("a", [])],
    )
    c.model(
        "pad/overflow",
        [node("Pad", ["x", "p"], ["y"])],
        [x([BIG, 3])],
        inits=[init("p", [BIG, 0, BIG, 0])],
    )
    c.model(
        "pad13/len",
        [node("Pad", ["x", "p"], ["y"])],
        [x([4, 3])],
        opset=13,
        inits=[init("p", [1, 1])],
    )
    c.model(
        "pad13/ok",
        [node("Pad", ["x", "p"], ["y"])],
        [x(["N", 3])],
        opset=13,
        inits=[init("p", [0, 1, 0, 2])],
    )
    c.model("pad2/attr", [node("Pad", ["x"], ["y"], pads=[0, 1, 0, 2])], [x(["N", 3])], opset=2)
    c.model("pad2/attr_len", [node("Pad", ["x"], ["y"], pads=[0, 1])], [x(["N", 3])], opset=2)
    c.model(
        "centercroppad/ok",
        [node("CenterCropPad", ["x", "s"], ["y"])],
        [x(["N", 3])],
        opset=18,
        inits=[init("s", [4, 5])],
    )
    c.model(
        "centercroppad/axes",
        [node("CenterCropPad", ["x", "s"], ["y"], axes=[-1])],
        [x(["N", 3])],
        opset=18,
        inits=[init("s", [5], np.int32)],
    )
    c.model(
        "centercroppad/len",
        [node("CenterCropPad", ["x", "s"], ["y"])],
        [x(["N", 3])],
        opset=18,
        inits=[init("s", [4])],
    )
    c.model(
        "centercroppad/axes_out",
        [node("CenterCropPad", ["x", "s"], ["y"], axes=[2])],
        [x(["N", 3])],
        opset=18,
        inits=[init("s", [4])],
    )
    c.model(
        "centercroppad/not_const",
        [node("CenterCropPad", ["x", "s"], ["y"])],
        [x(["N", 3]), tensor("s", I64, [2])],
        opset=18,
    )


def _reshape(c: _Cases) -> None:
    """Reshape."""
    _reshape_case(c, "reshape/ok", [2, 3, 4], [4, -1])
    _reshape_case(c, "reshape/zero", ["N", 3, 4], [0, -1])
    _reshape_case(c, "reshape/zero_symbolic_rest", ["N", 3, "M"], [0, 3, -1])
    _reshape_case(c, "reshape/two_minus_one", [2, 3, 4], [-1, -1])
    _reshape_case(c, "reshape/minus_two", [2, 3, 4], [-2, 12])
    _reshape_case(c, "reshape/zero_past_rank", [2, 12], [2, 3, 0])
    _reshape_case(c, "reshape/product_zero", [2, 0, 4], [0, -1, 0])
    _reshape_case(c, "reshape/allowzero_minus_one", [2, 0, 4], [0, -1], allowzero=1)
    _reshape_case(c, "reshape/allowzero", [2, 3, 4], [0, 24], allowzero=1)
    _reshape_case(c, "reshape/incompatible", [2, 3, 4], [5, -1])
    _reshape_case(c, "reshape/input_symbolic", ["N", 3], [-1, 3])
    _reshape_case(c, "reshape/overflow", [BIG, 4], [BIG, 4, 1])
    _reshape_case(c, "reshape/input_overflow", [BIG, 4], [-1, 2])
    _reshape_case(c, "reshape5/ok", [2, 3, 4], [4, 0, -1], opset=5)
    _reshape_case(c, "reshape5/zero_past_rank", [2, 12], [2, 3, 0], opset=5)
    c.model(
        "reshape/not_const",
        [node("Reshape", ["x", "s"], ["y"])],
        [x([2, 3]), tensor("s", I64, [3])],
    )
    c.model(
        "reshape/not_const_rank2",
        [node("Reshape", ["x", "s"], ["y"])],
        [x([2, 3]), tensor("s", I64, [3, 1])],
    )
    c.model(
        "reshape/not_const_symbolic",
        [node("Reshape", ["x", "s"], ["y"])],
        [x([2, 3]), tensor("s", I64, ["K"])],
    )
    c.model(
        "reshape/not_const_huge",
        [node("Reshape", ["x", "s"], ["y"])],
        [x([2, 3]), tensor("s", I64, [2000])],
    )
    c.model(
        "reshape5/not_const",
        [node("Reshape", ["x", "s"], ["y"])],
        [x([2, 3]), tensor("s", I64, [3])],
        opset=5,
    )
    c.model(
        "reshape/data_unknown_rank",
        [node("Reshape", ["x", "s"], ["y"])],
        [x(None)],
        inits=[init("s", [0, -1, 2])],
    )


def _resize(c: _Cases) -> None:
    """Resize, Upsample."""
    c.model(
        "resize/scales",
        [node("Resize", ["x", "", "sc"], ["y"])],
        [x(X4)],
        opset=19,
        inits=[init("sc", [1, 1, 2.5, 2], np.float32)],
    )
    c.model(
        "resize/sizes",
        [node("Resize", ["x", "", "", "sz"], ["y"])],
        [x(X4)],
        opset=19,
        inits=[init("sz", [1, 3, 8, 0])],
    )
    c.model(
        "resize/both",
        [node("Resize", ["x", "", "sc", "sz"], ["y"])],
        [x(X4)],
        opset=19,
        inits=[init("sc", [1, 1, 2, 2], np.float32), init("sz", [1, 3, 8, 8])],
    )
    c.model("resize/neither", [node("Resize", ["x"], ["y"])], [x(X4)], opset=19)
    c.model(
        "resize/empty_scales_sizes",
        [node("Resize", ["x", "", "sc", "sz"], ["y"])],
        [x(X4)],
        opset=19,
        inits=[init("sc", [], np.float32), init("sz", [1, 3, 8, 8])],
    )
    c.model(
        "resize/scales_count",
        [node("Resize", ["x", "", "sc"], ["y"])],
        [x(X4)],
        opset=19,
        inits=[init("sc", [2, 2], np.float32)],
    )
    c.model(
        "resize/scales_axes",
        [node("Resize", ["x", "", "sc"], ["y"], axes=[2, -1])],
        [x([1, 3, 4, 5])],
        opset=19,
        inits=[init("sc", [2, 3], np.float32)],
    )
    c.model(
        "resize/sizes_axes",
        [node("Resize", ["x", "", "", "sz"], ["y"], axes=[3, 2])],
        [x(["N", 3, 4, 5])],
        opset=19,
        inits=[init("sz", [10, 20])],
    )
    c.model(
        "resize/sizes_axes_count",
        [node("Resize", ["x", "", "", "sz"], ["y"], axes=[3])],
        [x([1, 3, 4, 5])],
        opset=19,
        inits=[init("sz", [10, 20])],
    )
    c.model(
        "resize/axes_dup",
        [node("Resize", ["x", "", "", "sz"], ["y"], axes=[3, -1])],
        [x([1, 3, 4, 5])],
        opset=19,
        inits=[init("sz", [10, 20])],
    )
    c.model(
        "resize/not_larger",
        [
            node(
                "Resize",
                ["x", "", "", "sz"],
                ["y"],
                axes=[2, 3],
                keep_aspect_ratio_policy="not_larger",
            )
        ],
        [x([1, 3, 4, 6])],
        opset=19,
        inits=[init("sz", [8, 9])],
    )
    c.model(
        "resize/not_smaller",
        [node("Resize", ["x", "", "", "sz"], ["y"], keep_aspect_ratio_policy="not_smaller")],
        [x([1, 3, 4, 6])],
        opset=19,
        inits=[init("sz", [1, 3, 8, 9])],
    )
    c.model(
        "resize/not_smaller_symbolic",
        [node("Resize", ["x", "", "", "sz"], ["y"], keep_aspect_ratio_policy="not_smaller")],
        [x([1, 3, "H", 6])],
        opset=19,
        inits=[init("sz", [1, 3, 8, 9])],
    )
    c.model(
        "resize/policy_bad",
        [node("Resize", ["x", "", "", "sz"], ["y"], keep_aspect_ratio_policy="wide")],
        [x([1, 3, 4, 6])],
        opset=19,
        inits=[init("sz", [1, 3, 8, 9])],
    )
    c.model(
        "resize/scales_policy",
        [node("Resize", ["x", "", "sc"], ["y"], keep_aspect_ratio_policy="not_larger")],
        [x([1, 3, 4, 6])],
        opset=19,
        inits=[init("sc", [1, 1, 2, 2], np.float32)],
    )
    c.model(
        "resize/sizes_shape_only",
        [node("Resize", ["x", "", "", "sz"], ["y"])],
        [x(X4), tensor("sz", I64, [4])],
        opset=19,
    )
    c.model(
        "resize/sizes_symbolic_len",
        [node("Resize", ["x", "", "", "sz"], ["y"])],
        [x(X4), tensor("sz", I64, ["K"])],
        opset=19,
    )
    c.model(
        "resize/scales_not_const",
        [node("Resize", ["x", "", "sc"], ["y"])],
        [x(X4), tensor("sc", F, [4])],
        opset=19,
    )
    c.model(
        "resize13/neither",
        [node("Resize", ["x", "roi", "sc"], ["y"])],
        [x(X4)],
        opset=13,
        inits=[init("roi", [], np.float32), init("sc", [], np.float32)],
    )
    c.model(
        "resize11/neither",
        [node("Resize", ["x", "roi", "sc"], ["y"])],
        [x(X4)],
        opset=11,
        inits=[init("roi", [], np.float32), init("sc", [], np.float32)],
    )
    c.model(
        "resize11/sizes_symbolic_len",
        [node("Resize", ["x", "roi", "sc", "sz"], ["y"])],
        [x(X4), tensor("sz", I64, ["K"])],
        opset=11,
        inits=[init("roi", [], np.float32), init("sc", [], np.float32)],
    )
    c.model(
        "resize11/scales_and_sizes",
        [node("Resize", ["x", "roi", "sc", "sz"], ["y"])],
        [x(X4)],
        opset=11,
        inits=[
            init("roi", [], np.float32),
            init("sc", [1, 1, 2, 2], np.float32),
            init("sz", [1, 3, 5, 5]),
        ],
    )
    c.model(
        "resize10/scales",
        [node("Resize", ["x", "sc"], ["y"])],
        [x(X4)],
        opset=10,
        inits=[init("sc", [1, 1, 2, 3], np.float32)],
    )
    c.model(
        "resize10/scales_count",
        [node("Resize", ["x", "sc"], ["y"])],
        [x(X4)],
        opset=10,
        inits=[init("sc", [1, 2, 3], np.float32)],
    )
    c.model(
        "resize10/scales_double",
        [node("Resize", ["x", "sc"], ["y"])],
        [x(X4)],
        opset=10,
        inits=[init("sc", [1, 1, 2, 3], np.float64)],
    )
    c.model(
        "upsample9/scales",
        [node("Upsample", ["x", "sc"], ["y"])],
        [x(X4)],
        opset=9,
        inits=[init("sc", [1, 1, 2, 1.5], np.float32)],
    )
    c.model(
        "upsample7/scales",
        [node("Upsample", ["x"], ["y"], scales=[1.0, 1.0, 2.0, 3.0])],
        [x(X4)],
        opset=7,
    )
    c.model(
        "upsample7/scales_count",
        [node("Upsample", ["x"], ["y"], scales=[1.0, 2.0])],
        [x(X4)],
        opset=7,
    )
    c.model(
        "upsample7/no_shape",
        [node("Upsample", ["x"], ["y"], scales=[1.0, 2.0])],
        [x(None)],
        opset=7,
    )


def _grid(c: _Cases) -> None:
    """GridSample, AffineGrid."""
    c.model(
        "gridsample/ok",
        [node("GridSample", ["x", "g"], ["y"])],
        [x(["N", 3, 8, 8]), tensor("g", F, [2, 5, 6, 2])],
        opset=20,
    )
    c.model(
        "gridsample/rank_differs",
        [node("GridSample", ["x", "g"], ["y"])],
        [x([2, 3, 8, 8]), tensor("g", F, [2, 5, 2])],
        opset=20,
    )
    c.model(
        "gridsample/rank2",
        [node("GridSample", ["x", "g"], ["y"])],
        [x([2, 3]), tensor("g", F, [2, 3])],
        opset=20,
    )
    c.model(
        "gridsample/last_dim",
        [node("GridSample", ["x", "g"], ["y"])],
        [x([2, 3, 8, 8]), tensor("g", F, [2, 5, 6, 3])],
        opset=20,
    )
    c.model(
        "gridsample/batch",
        [node("GridSample", ["x", "g"], ["y"])],
        [x([2, 3, 8, 8]), tensor("g", F, [3, 5, 6, 2])],
        opset=20,
    )
    c.model(
        "gridsample/symbolic_batch",
        [node("GridSample", ["x", "g"], ["y"])],
        [x(["N", "C", 8, 8]), tensor("g", F, ["M", 5, 6, 2])],
        opset=16,
    )
    c.model(
        "affinegrid/ok",
        [node("AffineGrid", ["th", "sz"], ["y"])],
        [tensor("th", F, ["N", 2, 3])],
        opset=20,
        inits=[init("sz", [2, 3, 5, 6])],
    )
    c.model(
        "affinegrid/3d",
        [node("AffineGrid", ["th", "sz"], ["y"])],
        [tensor("th", F, ["N", 3, 4])],
        opset=20,
        inits=[init("sz", [2, 3, 5, 6, 7])],
    )
    c.model(
        "affinegrid/len",
        [node("AffineGrid", ["th", "sz"], ["y"])],
        [tensor("th", F, ["N", 2, 3])],
        opset=20,
        inits=[init("sz", [2, 3, 5])],
    )
    c.model(
        "affinegrid/not_const",
        [node("AffineGrid", ["th", "sz"], ["y"])],
        [tensor("th", F, ["N", 2, 3]), tensor("sz", I64, [4])],
        opset=20,
    )
    c.model(
        "affinegrid/size_rank2",
        [node("AffineGrid", ["th", "sz"], ["y"])],
        [tensor("th", F, ["N", 2, 3]), tensor("sz", I64, [4, 1])],
        opset=20,
    )
    c.model(
        "affinegrid/no_theta_shape",
        [node("AffineGrid", ["th", "sz"], ["y"])],
        [tensor("th", F, None)],
        opset=20,
        inits=[init("sz", [2, 3, 5])],
    )


def _selection(c: _Cases) -> None:
    """Compress, OneHot, Unique, NonZero, Where, Trilu, ReverseSequence."""
    c.model(
        "compress/axis",
        [node("Compress", ["x", "c"], ["y"], axis=1)],
        [x(["N", 3]), tensor("c", B, [3])],
    )
    c.model(
        "compress/no_axis",
        [node("Compress", ["x", "c"], ["y"])],
        [x(["N", 3]), tensor("c", B, [3])],
    )
    c.model(
        "compress/axis_out",
        [node("Compress", ["x", "c"], ["y"], axis=2)],
        [x(["N", 3]), tensor("c", B, [3])],
    )
    c.model("compress/scalar", [node("Compress", ["x", "c"], ["y"])], [x([]), tensor("c", B, [1])])
    c.model(
        "onehot/ok",
        [node("OneHot", ["i", "d", "v"], ["y"], axis=1)],
        [tensor("i", I64, ["N", 3]), tensor("v", F, [2])],
        inits=[init("d", 10)],
    )
    c.model(
        "onehot/depth_float",
        [node("OneHot", ["i", "d", "v"], ["y"])],
        [tensor("i", I64, ["N", 3]), tensor("v", F, [2])],
        inits=[init("d", [7.9], np.float32)],
    )
    c.model(
        "onehot/depth_double",
        [node("OneHot", ["i", "d", "v"], ["y"])],
        [tensor("i", I64, ["N", 3]), tensor("v", F, [2])],
        inits=[init("d", [7.0], np.float64)],
    )
    c.model(
        "onehot/depth_negative",
        [node("OneHot", ["i", "d", "v"], ["y"])],
        [tensor("i", I64, [3]), tensor("v", F, [2])],
        inits=[init("d", -2)],
    )
    c.model(
        "onehot/depth_rank2",
        [node("OneHot", ["i", "d", "v"], ["y"])],
        [tensor("i", I64, [3]), tensor("d", I64, [1, 1]), tensor("v", F, [2])],
    )
    c.model(
        "onehot/depth_two",
        [node("OneHot", ["i", "d", "v"], ["y"])],
        [tensor("i", I64, [3]), tensor("d", I64, [2]), tensor("v", F, [2])],
    )
    c.model(
        "onehot/values_rank",
        [node("OneHot", ["i", "d", "v"], ["y"])],
        [tensor("i", I64, [3]), tensor("d", I64, []), tensor("v", F, [2, 1])],
    )
    c.model(
        "onehot/values_three",
        [node("OneHot", ["i", "d", "v"], ["y"])],
        [tensor("i", I64, [3]), tensor("d", I64, []), tensor("v", F, [3])],
    )
    c.model(
        "onehot/axis_out",
        [node("OneHot", ["i", "d", "v"], ["y"], axis=3)],
        [tensor("i", I64, [3, 2]), tensor("d", I64, []), tensor("v", F, [2])],
    )
    c.model(
        "onehot/scalar_indices",
        [node("OneHot", ["i", "d", "v"], ["y"])],
        [tensor("i", I64, []), tensor("d", I64, []), tensor("v", F, [2])],
    )
    c.model(
        "onehot9/negative_indices",
        [node("OneHot", ["i", "d", "v"], ["y"])],
        [tensor("d", I64, [1]), tensor("v", F, [2])],
        opset=9,
        inits=[init("i", [1, -1])],
    )
    c.model(
        "onehot11/negative_indices",
        [node("OneHot", ["i", "d", "v"], ["y"])],
        [tensor("d", I64, [1]), tensor("v", F, [2])],
        opset=11,
        inits=[init("i", [1, -1])],
    )
    c.model("unique/no_axis", [node("Unique", ["x"], ["y", "i", "v", "n"])], [x(["N", 3])])
    c.model("unique/axis", [node("Unique", ["x"], ["y", "i"], axis=-1)], [x(["N", 3])])
    c.model("unique/axis_out", [node("Unique", ["x"], ["y"], axis=2)], [x(["N", 3])])
    c.model("unique/axis_no_shape", [node("Unique", ["x"], ["y", "i"], axis=0)], [x(None)])
    c.model("nonzero/basic", [node("NonZero", ["x"], ["y"])], [x([2, "N", 3])])
    c.model("nonzero/no_shape", [node("NonZero", ["x"], ["y"])], [x(None)])
    c.model(
        "where/ok",
        [node("Where", ["c", "a", "b"], ["y"])],
        [tensor("c", B, ["N", 1]), tensor("a", I32, [3]), tensor("b", I32, [1, 1])],
    )
    c.model(
        "where/bad",
        [node("Where", ["c", "a", "b"], ["y"])],
        [tensor("c", B, [2]), tensor("a", F, [3]), tensor("b", F, [1])],
    )
    c.model("trilu/ok", [node("Trilu", ["x"], ["y"])], [x(["N", 3, 3])], opset=14)
    c.model("trilu/rank1", [node("Trilu", ["x"], ["y"])], [x([3])], opset=14)
    c.model(
        "reversesequence/ok",
        [node("ReverseSequence", ["x", "l"], ["y"])],
        [x(["T", "B", 3]), tensor("l", I64, ["B"])],
    )
    c.model(
        "reversesequence/rank1",
        [node("ReverseSequence", ["x", "l"], ["y"])],
        [x([3]), tensor("l", I64, [3])],
    )
    c.model(
        "reversesequence/lens_rank2",
        [node("ReverseSequence", ["x", "l"], ["y"])],
        [x([3, 2]), tensor("l", I64, [2, 1])],
    )


def _shape_identity(c: _Cases) -> None:
    """Shape, Size, IsNaN, IsInf, Identity."""
    c.model("shape/ok", [node("Shape", ["x"], ["y"])], [x([2, "N", 3])])
    c.model("shape/start_end", [node("Shape", ["x"], ["y"], start=-2, end=10)], [x([2, "N", 3])])
    c.model("shape/empty_range", [node("Shape", ["x"], ["y"], start=2, end=1)], [x([2, "N", 3])])
    c.model("shape/no_shape", [node("Shape", ["x"], ["y"])], [x(None)])
    c.model("shape13/basic", [node("Shape", ["x"], ["y"])], [x([2, "N", 3])], opset=13)
    c.model("size/basic", [node("Size", ["x"], ["y"])], [x([2, "N", 3])])
    c.model("isnan/basic", [node("IsNaN", ["x"], ["y"])], [x([2, "N"])])
    c.model("isinf/basic", [node("IsInf", ["x"], ["y"])], [x(None)])
    c.model("identity/seq", [node("Identity", ["s"], ["y"])], [seq("s", F, ["N"])])
    c.model(
        "identity/opt",
        [node("Identity", ["s"], ["y"])],
        [optional("s", helper.make_tensor_type_proto(F, [2]))],
    )


def _more_edges(c: _Cases) -> None:
    """more edges."""
    c.model(
        "split13/empty_split_name",
        [node("Split", ["x", ""], ["a", "b"], axis=0)],
        [x([6, 2])],
        opset=13,
    )
    c.model(
        "pad/pads_not_const_axes_const",
        [node("Pad", ["x", "p", "", "a"], ["y"])],
        [x([2, 3]), tensor("p", I64, [2])],
        inits=[init("a", [1])],
    )
    c.model(
        "pad/axes_unknown_rank",
        [node("Pad", ["x", "p", "", "a"], ["y"])],
        [x([2, "N"]), tensor("a", I64, None)],
        inits=[init("p", [1, 2, 0, 0])],
    )
    c.model(
        "onehot/depth_int32",
        [node("OneHot", ["i", "d", "v"], ["y"], axis=0)],
        [tensor("i", I64, ["N"]), tensor("v", F, [2])],
        inits=[init("d", [5], np.int32)],
    )
    c.model(
        "gather/indices_unknown_rank",
        [node("Gather", ["x", "i"], ["y"])],
        [x([2, 3]), tensor("i", I64, None)],
    )
    c.model(
        "gathernd/negative_batch",
        [node("GatherND", ["x", "i"], ["y"], batch_dims=-3)],
        [x([2, 3, 4]), tensor("i", I64, [2, 1])],
        crash=True,
    )
    c.model(
        "centercroppad/negative",
        [node("CenterCropPad", ["x", "s"], ["y"])],
        [x(["N", 3])],
        opset=18,
        inits=[init("s", [-4, 5])],
    )
    _slice_case(c, "slice10/step0_zero_dim", [0], [0], [5], [0], [0], opset=10)
    _slice_case(c, "slice13/step0_zero_dim", [0], [0], [5], [0], [0])
    _slice_case(c, "slice13/steps_unknown_rank_input", [10], [0], [5], [0])
    c.model(
        "slice13/steps_input_unknown_rank",
        [node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])],
        [x([10, 4]), tensor("sp", I64, None)],
        opset=13,
        inits=[init("st", [1]), init("en", [8]), init("ax", [0])],
    )
    c.model(
        "resize19/roi_only",
        [node("Resize", ["x", "roi"], ["y"])],
        [x(X4)],
        opset=19,
        inits=[init("roi", [], np.float32)],
    )
    c.model(
        "resize19/sizes_and_empty_scales",
        [node("Resize", ["x", "", "sc", "sz"], ["y"])],
        [x(X4)],
        opset=19,
        inits=[init("sc", [], np.float32), init("sz", [2, 3, 4, 5])],
    )
    c.model(
        "resize19/sizes_empty",
        [node("Resize", ["x", "", "sc", "sz"], ["y"])],
        [x(X4)],
        opset=19,
        inits=[init("sc", [1, 1, 2, 2], np.float32), init("sz", [])],
    )
    c.model(
        "tile/unknown_rank_repeats",
        [node("Tile", ["x", "r"], ["y"])],
        [x([2, 3]), tensor("r", I64, None)],
    )
    c.model(
        "concat/three_symbols",
        [node("Concat", ["a", "b", "c"], ["y"], axis=1)],
        [x(["N", 1], name="a"), x(["M", 2], name="b"), x([5, 3], name="c")],
    )
    c.model(
        "squeeze/scalar_axes_const",
        [node("Squeeze", ["x", "a"], ["y"])],
        [x([1, 3])],
        inits=[init("a", 0)],
    )
    c.model(
        "unsqueeze/scalar_axes_const",
        [node("Unsqueeze", ["x", "a"], ["y"])],
        [x([3])],
        inits=[init("a", 1)],
    )
    c.model(
        "reshape/constant_node",
        [node("Constant", [], ["s"], value_ints=[3, -1]), node("Reshape", ["x", "s"], ["y"])],
        [x([2, 3])],
    )
    c.model(
        "reshape/constant_node_scalar",
        [node("Constant", [], ["s"], value_int=6), node("Reshape", ["x", "s"], ["y"])],
        [x([2, 3])],
    )
    c.model(
        "pad/constant_node_scalar",
        [node("Constant", [], ["p"], value_int=1), node("Pad", ["x", "p"], ["y"])],
        [x([2, 3])],
    )
    c.model(
        "tile/constant_node",
        [node("Constant", [], ["r"], value_ints=[2, 2]), node("Tile", ["x", "r"], ["y"])],
        [x([2, 3])],
    )
    c.model(
        "slice/constant_nodes",
        [
            node("Constant", [], ["st"], value_ints=[1]),
            node("Constant", [], ["en"], value_ints=[3]),
            node("Slice", ["x", "st", "en"], ["y"]),
        ],
        [x([5, 3])],
    )

    # After an operator onnx cannot infer, its inference errors are not reported;
    # other failures are.
    unknown = node("Foo", ["x"], ["z"], domain="custom")
    c.model(
        "after_unknown_op/reshape_two_minus_one",
        [unknown, node("Reshape", ["x", "s"], ["y"])],
        [x([2, 3])],
        inits=[init("s", [-1, -1])],
        custom=True,
    )
    c.model(
        "after_unknown_op/cast_to_undefined",
        [unknown, node("Cast", ["x"], ["y"], to=0)],
        [x([2, 3])],
        custom=True,
    )
    c.model(
        "after_unknown_op/cast_to_invalid",
        [unknown, node("Cast", ["x"], ["y"], to=99)],
        [x([2, 3])],
        custom=True,
    )
    c.model(
        "after_unknown_op/split18_fewer",
        [unknown, node("Split", ["x"], ["a", "b", "c"], axis=0, num_outputs=2)],
        [x([6, 2])],
        opset=18,
        custom=True,
        crash=True,
    )

    # Split 18 allocates num_outputs sizes: onnx fails with bad_alloc / length_error
    # (outside its inference errors).
    c.model(
        "split18/num_outputs_huge",
        [node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2**40)],
        [x([6, 2])],
        opset=18,
    )
    c.model(
        "split18/num_outputs_max",
        [node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2**62)],
        [x([6, 2])],
        opset=18,
    )
    c.model(
        "split18/num_outputs_1e7",
        [node("Split", ["x"], ["a", "b"], axis=0, num_outputs=10**7)],
        [x([6, 2])],
        opset=18,
    )


_SECTIONS = (
    _cast,
    _concat,
    _split,
    _slice,
    _transpose,
    _gather_scatter,
    _squeeze,
    _depth_space_tile,
    _pad,
    _reshape,
    _resize,
    _grid,
    _selection,
    _shape_identity,
    _more_edges,
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
