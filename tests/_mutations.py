"""Mutations that make valid models invalid (or keep them valid), for checker parity tests.

Each mutation takes a ModelProto (a copy it may change) and returns a short
description, or None when it does not apply to that model.
"""

from __future__ import annotations

import random
from typing import Callable

import onnx
from onnx import AttributeProto, TensorProto, helper

Mutation = Callable[[onnx.ModelProto, random.Random], "str | None"]


def _nodes(m: onnx.ModelProto):
    return m.graph.node


def undefined_input(m, rng):
    cands = [n for n in _nodes(m) if any(n.input)]
    if not cands:
        return None
    n = rng.choice(cands)
    k = rng.choice([i for i, x in enumerate(n.input) if x])
    n.input[k] = n.input[k] + "_undefined"
    return "undefined input"


def reversed_nodes(m, rng):
    if len(m.graph.node) < 2:
        return None
    nodes = list(m.graph.node)[::-1]
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    return "reversed node order"


def duplicate_output(m, rng):
    nodes = [n for n in _nodes(m) if n.output and n.output[0]]
    if len(nodes) < 2:
        return None
    nodes[1].output[0] = nodes[0].output[0]
    return "duplicate output"


def output_shadows_input(m, rng):
    if not m.graph.input or not _nodes(m) or not _nodes(m)[0].output:
        return None
    _nodes(m)[0].output[0] = m.graph.input[0].name
    return "node output reuses a graph input"


def unknown_op(m, rng):
    if not _nodes(m):
        return None
    n = rng.choice(list(_nodes(m)))
    n.op_type = n.op_type + "Xyz"
    return "unknown op"


def unknown_domain(m, rng):
    if not _nodes(m):
        return None
    rng.choice(list(_nodes(m))).domain = "com.example.unimported"
    return "unimported domain"


def ai_onnx_domain(m, rng):
    if not _nodes(m):
        return None
    _nodes(m)[0].domain = "ai.onnx"
    return "node domain 'ai.onnx'"


def missing_attribute(m, rng):
    for n in _nodes(m):
        if n.attribute:
            del n.attribute[0]
            return "attribute removed"
    return None


def extra_attribute(m, rng):
    if not _nodes(m):
        return None
    rng.choice(list(_nodes(m))).attribute.append(helper.make_attribute("bogus_attr", 1))
    return "unknown attribute"


def hidden_attribute(m, rng):
    if not _nodes(m):
        return None
    _nodes(m)[0].attribute.append(helper.make_attribute("__hidden", 1))
    return "__ attribute (ignored by onnx)"


def mistyped_attribute(m, rng):
    for n in _nodes(m):
        for a in n.attribute:
            if a.type == AttributeProto.INT:
                a.ClearField("i")
                a.type = AttributeProto.FLOAT
                a.f = 1.0
                return "INT attribute made FLOAT"
            if a.type == AttributeProto.FLOAT:
                a.ClearField("f")
                a.type = AttributeProto.INT
                a.i = 1
                return "FLOAT attribute made INT"
    return None


def type_value_mismatch(m, rng):
    for n in _nodes(m):
        for a in n.attribute:
            if a.type == AttributeProto.INT:
                a.type = AttributeProto.FLOAT
                return "type FLOAT with an i value"
    return None


def duplicate_attribute(m, rng):
    for n in _nodes(m):
        if n.attribute:
            n.attribute.append(n.attribute[0])
            return "duplicate attribute"
    return None


def too_many_inputs(m, rng):
    if not _nodes(m) or not m.graph.input:
        return None
    n = _nodes(m)[0]
    for _ in range(8):
        n.input.append(m.graph.input[0].name)
    return "8 extra inputs"


def empty_required_input(m, rng):
    for n in _nodes(m):
        if n.input and n.input[0]:
            n.input[0] = ""
            return "first input emptied"
    return None


def no_io(m, rng):
    if not _nodes(m):
        return None
    n = _nodes(m)[-1]
    del n.input[:]
    del n.output[:]
    return "node without inputs and outputs"


def empty_op_type(m, rng):
    if not _nodes(m):
        return None
    _nodes(m)[0].op_type = ""
    return "empty op_type"


def ir_zero(m, rng):
    m.ir_version = 0
    return "ir_version 0"


def ir_future(m, rng):
    m.ir_version = 99
    return "ir_version 99"


def ir_two_with_opsets(m, rng):
    m.ir_version = 2
    return "ir_version 2 with opset_import"


def no_opsets(m, rng):
    del m.opset_import[:]
    return "no opset_import"


def opset_zero(m, rng):
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = 0
            return "opset version 0"
    return None


def opset_old(m, rng):
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = 1
            return "opset version 1"
    return None


def duplicate_metadata(m, rng):
    for k in ("a", "a"):
        e = m.metadata_props.add()
        e.key, e.value = k, "v"
    return "duplicate metadata key"


def graph_name_empty(m, rng):
    m.graph.name = ""
    return "empty graph name"


def output_not_produced(m, rng):
    m.graph.output.append(helper.make_tensor_value_info("never_made", TensorProto.FLOAT, [1]))
    return "graph output not produced"


def input_without_type(m, rng):
    if not m.graph.input:
        return None
    m.graph.input[0].ClearField("type")
    return "graph input without type"


def input_without_shape(m, rng):
    for vi in m.graph.input:
        if vi.type.HasField("tensor_type"):
            vi.type.tensor_type.ClearField("shape")
            return "graph input without shape"
    return None


def duplicate_graph_input(m, rng):
    if not m.graph.input:
        return None
    m.graph.input.append(m.graph.input[0])
    return "duplicate graph input"


def initializer_no_name(m, rng):
    m.graph.initializer.append(helper.make_tensor("", TensorProto.FLOAT, [1], [1.0]))
    return "initializer without name"


def initializer_duplicate(m, rng):
    m.graph.initializer.append(helper.make_tensor("dup_init", TensorProto.FLOAT, [1], [1.0]))
    m.graph.initializer.append(helper.make_tensor("dup_init", TensorProto.FLOAT, [1], [2.0]))
    return "duplicate initializer"


def initializer_short_raw(m, rng):
    t = TensorProto(name="short_raw", data_type=TensorProto.FLOAT, dims=[4], raw_data=b"\0" * 8)
    m.graph.initializer.append(t)
    return "raw_data too short"


def initializer_long_raw(m, rng):
    t = TensorProto(name="long_raw", data_type=TensorProto.FLOAT, dims=[1], raw_data=b"\0" * 8)
    m.graph.initializer.append(t)
    return "raw_data too long (valid for onnx)"


def initializer_undefined_type(m, rng):
    m.graph.initializer.append(TensorProto(name="untyped", dims=[1], raw_data=b"\0"))
    return "initializer data_type missing"


def initializer_wrong_field(m, rng):
    m.graph.initializer.append(
        TensorProto(name="wrongfield", data_type=TensorProto.FLOAT, dims=[2], int64_data=[1, 2])
    )
    return "FLOAT in int64_data"


def initializer_negative_dim(m, rng):
    m.graph.initializer.append(
        TensorProto(name="negdim", data_type=TensorProto.FLOAT, dims=[-1], float_data=[1.0])
    )
    return "negative dim"


def string_in_raw(m, rng):
    m.graph.initializer.append(
        TensorProto(name="sraw", data_type=TensorProto.STRING, dims=[1], raw_data=b"abc")
    )
    return "STRING in raw_data"


def external_missing(m, rng):
    t = TensorProto(
        name="ext", data_type=TensorProto.FLOAT, dims=[1], data_location=TensorProto.EXTERNAL
    )
    e = t.external_data.add()
    e.key, e.value = "location", "does-not-exist-anywhere.bin"
    m.graph.initializer.append(t)
    return "external file missing"


def external_escape(m, rng):
    t = TensorProto(
        name="ext2", data_type=TensorProto.FLOAT, dims=[1], data_location=TensorProto.EXTERNAL
    )
    e = t.external_data.add()
    e.key, e.value = "location", "../../etc/passwd"
    m.graph.initializer.append(t)
    return "external location escapes"


def sparse_unsorted(m, rng):
    values = helper.make_tensor("sp_vals", TensorProto.FLOAT, [2], [1.0, 2.0])
    indices = helper.make_tensor("sp_idx", TensorProto.INT64, [2], [3, 1])
    m.graph.sparse_initializer.append(helper.make_sparse_tensor(values, indices, [5]))
    return "sparse indices unsorted"


def sparse_out_of_range(m, rng):
    values = helper.make_tensor("sp_vals2", TensorProto.FLOAT, [1], [1.0])
    indices = helper.make_tensor("sp_idx2", TensorProto.INT64, [1], [9])
    m.graph.sparse_initializer.append(helper.make_sparse_tensor(values, indices, [5]))
    return "sparse index out of range"


def subgraph_break(m, rng):
    for n in _nodes(m):
        for a in n.attribute:
            if a.type == AttributeProto.GRAPH and a.g.node:
                a.g.node[0].op_type = "NotAnOp"
                return "unknown op inside a subgraph"
    return None


def subgraph_outer_ref(m, rng):
    for n in _nodes(m):
        for a in n.attribute:
            if a.type == AttributeProto.GRAPH and a.g.node and a.g.node[0].input:
                a.g.node[0].input[0] = "name_from_nowhere"
                return "subgraph reads an undefined name"
    return None


MUTATIONS: list[Mutation] = [
    undefined_input,
    reversed_nodes,
    duplicate_output,
    output_shadows_input,
    unknown_op,
    unknown_domain,
    ai_onnx_domain,
    missing_attribute,
    extra_attribute,
    hidden_attribute,
    mistyped_attribute,
    type_value_mismatch,
    duplicate_attribute,
    too_many_inputs,
    empty_required_input,
    no_io,
    empty_op_type,
    ir_zero,
    ir_future,
    ir_two_with_opsets,
    no_opsets,
    opset_zero,
    opset_old,
    duplicate_metadata,
    graph_name_empty,
    output_not_produced,
    input_without_type,
    input_without_shape,
    duplicate_graph_input,
    initializer_no_name,
    initializer_duplicate,
    initializer_short_raw,
    initializer_long_raw,
    initializer_undefined_type,
    initializer_wrong_field,
    initializer_negative_dim,
    string_in_raw,
    external_missing,
    external_escape,
    sparse_unsorted,
    sparse_out_of_range,
    subgraph_break,
    subgraph_outer_ref,
]


def mutants(model: onnx.ModelProto, seed: int):
    """Yields (description, mutated model) for every mutation that applies."""
    for mutate in MUTATIONS:
        rng = random.Random(f"{seed}-{mutate.__name__}")
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        what = mutate(copy, rng)
        if what is not None:
            yield f"{mutate.__name__}: {what}", copy
