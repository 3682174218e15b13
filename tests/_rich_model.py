"""A model with a tensor in every place onnx's external-data helpers look."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _array(seed: int, n: int, dtype=np.float32) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(dtype)


def _const(name: str, value: np.ndarray) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value, name))


def rich_model() -> onnx.ModelProto:
    """Initializers around the default threshold, typed data, subgraph
    initializers (If branches, a Loop body), attribute tensors in the graph,
    a subgraph and a function, and a sparse initializer."""
    f = numpy_helper.from_array
    small = f(_array(1, 4), "small")
    edge_under = f(np.zeros(990, np.uint8), "edge_under")  # 990 + 33 < 1024
    edge_at = f(np.ones(991, np.uint8), "edge_at")  # 991 + 33 = 1024
    typed = helper.make_tensor("typed", TensorProto.FLOAT, [300], _array(2, 300).tolist())
    big = f(_array(3, 5000), "big")
    half = f(_array(4, 700).astype(np.float16), "half")
    then_g = helper.make_graph(
        [helper.make_node("Add", ["big", "then_w"], ["then_y"])],
        "then",
        [],
        [helper.make_tensor_value_info("then_y", TensorProto.FLOAT, [5000])],
        initializer=[f(_array(5, 5000), "then_w")],
    )
    else_g = helper.make_graph(
        [_const("else_y", _array(6, 5000))],
        "else",
        [],
        [helper.make_tensor_value_info("else_y", TensorProto.FLOAT, [5000])],
    )
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Add", ["carried", "body_w"], ["carried_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("carried", TensorProto.FLOAT, [5000]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("carried_out", TensorProto.FLOAT, [5000]),
        ],
        initializer=[f(_array(7, 5000), "body_w")],
    )
    sparse = helper.make_sparse_tensor(
        f(_array(8, 400), "sparse_values"),
        f(np.arange(400, dtype=np.int64) * 2, "sparse_indices"),
        [1000],
    )
    nodes = [
        _const("k", _array(9, 3000)),
        helper.make_node("If", ["flag"], ["chosen"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Loop", ["trip", "flag", "chosen"], ["looped"], body=body),
        helper.make_node("Plus", ["looped", "k"], ["y"], domain="local"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("flag", TensorProto.BOOL, []),
            helper.make_tensor_value_info("trip", TensorProto.INT64, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5000])],
        initializer=[small, edge_under, edge_at, typed, big, half],
    )
    graph.sparse_initializer.append(sparse)
    function = helper.make_function(
        "local",
        "Plus",
        ["a", "b"],
        ["c"],
        [_const("bias", _array(10, 2000)), helper.make_node("Sum", ["a", "b", "bias"], ["c"])],
        [helper.make_opsetid("", 18)],
    )
    return helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)],
        functions=[function],
    )


def weights_model(path, *, scales: bool = False, **save: Any) -> list[onnx.TensorProto]:
    """Saves to `path` (onnx.save_model with `save`) a model of 24 weights
    of 4 MiB (96 MiB), each after a 4 KiB tensor (a norm's scale, say) with
    `scales`; returns the initializers in file order."""
    inits = []
    for i in range(24):
        if scales:
            inits.append(numpy_helper.from_array(np.full(1024, i, np.float32), f"scale{i}"))
        inits.append(numpy_helper.from_array(np.full(1 << 20, i, np.float32), f"w{i}"))
    graph = helper.make_graph(
        [helper.make_node("Identity", ["w0"], ["y"])],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1 << 20])],
        initializer=inits,
    )
    onnx.save_model(helper.make_model(graph), path, **save)
    return inits
