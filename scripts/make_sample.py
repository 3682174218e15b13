"""Builds the sample models shipped in samples/ (run when they need to change).

    python scripts/make_sample.py

- samples/tiny_cnn.onnx: a small image classifier (Conv, Relu, MaxPool, Gemm,
  Softmax) with seeded random weights, valid for onnx.checker.
- samples/broken.onnx: the same model with three defects (an undefined input,
  a node out of topological order, an unknown operator), for the checker.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = Path(__file__).resolve().parent.parent / "samples"


def tiny_cnn() -> onnx.ModelProto:
    rng = np.random.default_rng(20261122)

    def weight(name: str, *shape: int) -> TensorProto:
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name)

    inits = [
        weight("conv1.w", 8, 1, 3, 3),
        weight("conv1.b", 8),
        weight("conv2.w", 16, 8, 3, 3),
        weight("conv2.b", 16),
        weight("fc.w", 10, 16 * 7 * 7),
        weight("fc.b", 10),
        numpy_helper.from_array(np.array([-1, 16 * 7 * 7], dtype=np.int64), "flat_shape"),
    ]
    nodes = [
        helper.make_node(
            "Conv", ["image", "conv1.w", "conv1.b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]
        ),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node(
            "MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]
        ),
        helper.make_node(
            "Conv", ["p1", "conv2.w", "conv2.b"], ["c2"], name="conv2", pads=[1, 1, 1, 1]
        ),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node(
            "MaxPool", ["r2"], ["p2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]
        ),
        helper.make_node("Reshape", ["p2", "flat_shape"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 1, 28, 28])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10])],
        initializer=inits,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 21)],
        producer_name="onnxfast-samples",
        producer_version="1",
        doc_string="A small MNIST-shaped classifier with random weights.",
    )
    model.ir_version = 10
    helper.set_model_props(model, {"license": "Apache-2.0", "source": "scripts/make_sample.py"})
    return model


def broken(model: onnx.ModelProto) -> onnx.ModelProto:
    bad = onnx.ModelProto()
    bad.CopyFrom(model)
    nodes = bad.graph.node
    nodes[3].input[0] = "p_1"  # conv2 reads a value nobody defines ("p1" exists)
    relu1 = onnx.NodeProto()
    relu1.CopyFrom(nodes[1])
    pool1 = onnx.NodeProto()
    pool1.CopyFrom(nodes[2])
    nodes[1].CopyFrom(pool1)  # pool1 now runs before relu1 produces r1
    nodes[2].CopyFrom(relu1)
    nodes[4].op_type = "Rellu"  # no such operator
    return bad


def main() -> None:
    OUT.mkdir(exist_ok=True)
    model = tiny_cnn()
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, OUT / "tiny_cnn.onnx")
    onnx.save(broken(model), OUT / "broken.onnx")
    print(f"wrote {OUT / 'tiny_cnn.onnx'} and {OUT / 'broken.onnx'}")


if __name__ == "__main__":
    main()
