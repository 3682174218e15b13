"""Type and shape mutations of valid models, for full-check parity tests.

Each mutation keeps the model valid for the structural checker (so only the
full check can tell) and changes one type or shape fact: a retyped input or
initializer, a declared output that contradicts the graph, swapped operands,
an attribute out of range, a weight of the wrong rank, ... Each takes a
ModelProto (a copy it may change) and a Random, and returns a short
description, or None when it does not apply to that model.
"""

from __future__ import annotations

import random
from typing import Callable

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

Mutation = Callable[[onnx.ModelProto, random.Random], "str | None"]

_OTHER_TYPES = [
    TensorProto.FLOAT,
    TensorProto.DOUBLE,
    TensorProto.INT32,
    TensorProto.INT64,
    TensorProto.BOOL,
    TensorProto.FLOAT16,
    TensorProto.UINT8,
    TensorProto.STRING,
]


def _other_type(rng: random.Random, current: int) -> int:
    return rng.choice([t for t in _OTHER_TYPES if t != current])


def _tensor_inputs(m: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    inits = {t.name for t in m.graph.initializer}
    return [vi for vi in m.graph.input if vi.type.HasField("tensor_type") and vi.name not in inits]


def _tensor_outputs(m: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    return [vi for vi in m.graph.output if vi.type.HasField("tensor_type")]


def retype_graph_input(m, rng):
    cands = _tensor_inputs(m)
    if not cands:
        return None
    vi = rng.choice(cands)
    t = vi.type.tensor_type
    t.elem_type = _other_type(rng, t.elem_type)
    return f"input {vi.name!r} retyped to {TensorProto.DataType.Name(t.elem_type)}"


def _zeros(name: str, data_type: int, dims: list[int]) -> TensorProto:
    shape = tuple(dims)
    if data_type == TensorProto.STRING:
        return helper.make_tensor(name, data_type, dims, [b""] * int(np.prod(shape)))
    np_type = helper.tensor_dtype_to_np_dtype(data_type)
    return numpy_helper.from_array(np.zeros(shape, dtype=np_type), name)


def retype_initializer(m, rng):
    cands = [t for t in m.graph.initializer if np.prod(t.dims) <= 1 << 16]
    if not cands:
        return None
    t = rng.choice(cands)
    new = _zeros(t.name, _other_type(rng, t.data_type), list(t.dims))
    t.CopyFrom(new)
    return f"initializer {t.name!r} retyped to {TensorProto.DataType.Name(t.data_type)}"


def output_elem_type(m, rng):
    cands = _tensor_outputs(m)
    if not cands:
        return None
    vi = rng.choice(cands)
    t = vi.type.tensor_type
    t.elem_type = _other_type(rng, t.elem_type)
    return f"output {vi.name!r} declared {TensorProto.DataType.Name(t.elem_type)}"


def output_dim(m, rng):
    cands = [
        (vi, i)
        for vi in _tensor_outputs(m)
        for i, d in enumerate(vi.type.tensor_type.shape.dim)
        if d.HasField("dim_value")
    ]
    if not cands:
        return None
    vi, i = rng.choice(cands)
    d = vi.type.tensor_type.shape.dim[i]
    d.dim_value = d.dim_value + rng.choice([1, 2, 7])
    return f"output {vi.name!r} dim {i} declared {d.dim_value}"


def output_rank(m, rng):
    cands = [vi for vi in _tensor_outputs(m) if vi.type.tensor_type.HasField("shape")]
    if not cands:
        return None
    vi = rng.choice(cands)
    vi.type.tensor_type.shape.dim.add().dim_value = 1
    return f"output {vi.name!r} declared one rank higher"


def input_rank(m, rng):
    cands = [vi for vi in _tensor_inputs(m) if len(vi.type.tensor_type.shape.dim) > 0]
    if not cands:
        return None
    vi = rng.choice(cands)
    del vi.type.tensor_type.shape.dim[-1]
    return f"input {vi.name!r} declared one rank lower"


def input_dim(m, rng):
    cands = [
        (vi, i)
        for vi in _tensor_inputs(m)
        for i, d in enumerate(vi.type.tensor_type.shape.dim)
        if d.HasField("dim_value") and d.dim_value > 1
    ]
    if not cands:
        return None
    vi, i = rng.choice(cands)
    d = vi.type.tensor_type.shape.dim[i]
    d.dim_value += rng.choice([1, 3])
    return f"input {vi.name!r} dim {i} declared {d.dim_value}"


def value_info_conflict(m, rng):
    outputs = {vi.name for vi in m.graph.output}
    cands = [o for n in m.graph.node for o in n.output if o and o not in outputs]
    if not cands:
        return None
    name = rng.choice(cands)
    elem = rng.choice(_OTHER_TYPES)
    m.graph.value_info.append(helper.make_tensor_value_info(name, elem, None))
    return f"value_info {name!r} declared {TensorProto.DataType.Name(elem)}"


def swap_inputs(m, rng):
    cands = [n for n in m.graph.node if sum(1 for x in n.input if x) >= 2]
    if not cands:
        return None
    n = rng.choice(cands)
    present = [i for i, x in enumerate(n.input) if x]
    a, b = rng.sample(present, 2)
    if n.input[a] == n.input[b]:
        return None
    n.input[a], n.input[b] = n.input[b], n.input[a]
    return f"{n.op_type} inputs {a} and {b} swapped"


def integer_operand(m, rng):
    floats = {
        vi.name: vi
        for vi in _tensor_inputs(m)
        if vi.type.tensor_type.elem_type in (TensorProto.FLOAT, TensorProto.DOUBLE)
    }
    cands = [(n, i) for n in m.graph.node for i, x in enumerate(n.input) if x in floats]
    if not cands:
        return None
    n, i = rng.choice(cands)
    old = floats[n.input[i]]
    new = onnx.ValueInfoProto()
    new.CopyFrom(old)
    new.name = old.name + "_as_int"
    new.type.tensor_type.elem_type = rng.choice([TensorProto.INT32, TensorProto.INT64])
    m.graph.input.append(new)
    n.input[i] = new.name
    return f"{n.op_type} input {i} replaced by an integer tensor"


def _int_attrs(m, names):
    return [
        (n, a)
        for n in m.graph.node
        for a in n.attribute
        if a.name in names and a.type == AttributeProto.INT
    ]


def dtype_undefined(m, rng):
    cands = _int_attrs(m, ("to", "dtype", "output_datatype"))
    if not cands:
        return None
    n, a = rng.choice(cands)
    a.i = rng.choice([0, 999])
    return f"{n.op_type} attribute {a.name!r} set to {a.i}"


def axis_out_of_range(m, rng):
    cands = _int_attrs(m, ("axis", "batch_dims", "blocksize"))
    if not cands:
        return None
    n, a = rng.choice(cands)
    a.i = rng.choice([17, -17, 64])
    return f"{n.op_type} attribute {a.name!r} set to {a.i}"


def ints_attribute_broken(m, rng):
    cands = [
        (n, a)
        for n in m.graph.node
        for a in n.attribute
        if a.type == AttributeProto.INTS
        and a.name in ("perm", "axes", "kernel_shape", "pads", "strides", "dilations", "starts")
        and len(a.ints) > 0
    ]
    if not cands:
        return None
    n, a = rng.choice(cands)
    how = rng.choice(["longer", "shorter", "repeat"])
    if how == "longer":
        a.ints.append(a.ints[-1])
    elif how == "shorter" and len(a.ints) > 1:
        del a.ints[-1]
    else:
        a.ints[0] = a.ints[-1] if len(a.ints) > 1 else a.ints[0] + 40
    return f"{n.op_type} attribute {a.name!r} made {how}"


def weight_rank(m, rng):
    inits = {t.name: t for t in m.graph.initializer}
    cands = [
        inits[n.input[1]]
        for n in m.graph.node
        if len(n.input) > 1 and n.input[1] in inits and len(inits[n.input[1]].dims) >= 2
    ]
    if not cands:
        return None
    t = rng.choice(cands)
    count = int(np.prod(t.dims))
    if count > 1 << 16:
        return None
    arr = numpy_helper.to_array(t).reshape(-1)
    t.CopyFrom(numpy_helper.from_array(arr, t.name))
    return f"initializer {t.name!r} flattened to rank 1"


def shape_constant_broken(m, rng):
    inits = {t.name: t for t in m.graph.initializer}
    cands = [
        inits[n.input[1]]
        for n in m.graph.node
        if n.op_type in ("Reshape", "Expand", "Tile", "ConstantOfShape")
        and len(n.input) > 1
        and n.input[1] in inits
        and inits[n.input[1]].data_type == TensorProto.INT64
    ]
    if not cands:
        return None
    t = rng.choice(cands)
    values = numpy_helper.to_array(t).reshape(-1).tolist()
    choice = rng.choice(["two -1", "zero-size mismatch", "longer"])
    if choice == "two -1":
        values = [-1, -1, *values[2:]]
    elif choice == "zero-size mismatch":
        values = [v + 3 for v in values]
    else:
        values = [*values, 5]
    t.CopyFrom(numpy_helper.from_array(np.array(values, dtype=np.int64), t.name))
    return f"shape constant {t.name!r} changed ({choice})"


def constant_retype(m, rng):
    cands = [
        (n, a)
        for n in m.graph.node
        if n.op_type == "Constant"
        for a in n.attribute
        if a.name == "value" and a.HasField("t") and np.prod(a.t.dims) <= 1 << 12
    ]
    if not cands:
        return None
    _, a = rng.choice(cands)
    a.t.CopyFrom(_zeros(a.t.name, _other_type(rng, a.t.data_type), list(a.t.dims)))
    return f"Constant value retyped to {TensorProto.DataType.Name(a.t.data_type)}"


def subgraph_output_retype(m, rng):
    cands = [
        vi
        for n in m.graph.node
        for a in n.attribute
        if a.HasField("g")
        for vi in a.g.output
        if vi.type.HasField("tensor_type")
    ]
    if not cands:
        return None
    vi = rng.choice(cands)
    t = vi.type.tensor_type
    t.elem_type = _other_type(rng, t.elem_type)
    return f"subgraph output {vi.name!r} declared {TensorProto.DataType.Name(t.elem_type)}"


MUTATIONS: list[Mutation] = [
    retype_graph_input,
    retype_initializer,
    output_elem_type,
    output_dim,
    output_rank,
    input_rank,
    input_dim,
    value_info_conflict,
    swap_inputs,
    integer_operand,
    dtype_undefined,
    axis_out_of_range,
    ints_attribute_broken,
    weight_rank,
    shape_constant_broken,
    constant_retype,
    subgraph_output_retype,
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
