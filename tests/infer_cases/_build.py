"""What the family modules share: value infos, initializers, nodes, graphs,
models, and the collector of named cases."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

F, F16, BF16, D = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.DOUBLE
I64, I32, I16, I8 = TensorProto.INT64, TensorProto.INT32, TensorProto.INT16, TensorProto.INT8
U8, B, S = TensorProto.UINT8, TensorProto.BOOL, TensorProto.STRING
BIG = 2**62

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)+")


class Cases:
    """Collects (name, model) pairs. A name is `group/what` (file-safe, no
    `__`: the corpus writes `/` as `__`) and unique, case aside; the model's
    main graph is named after it. Cases on which onnx itself crashes or hangs
    go to `crashes` instead of `built`."""

    def __init__(self) -> None:
        self.built: list[tuple[str, onnx.ModelProto]] = []
        self.crashes: list[tuple[str, onnx.ModelProto]] = []
        self._seen: set[str] = set()

    def add(self, name: str, model: onnx.ModelProto, onnx_crashes: bool = False) -> None:
        if not _NAME.fullmatch(name) or "__" in name:
            raise ValueError(f"bad case name {name!r}")
        if name.lower() in self._seen:
            raise ValueError(f"case {name!r} defined twice")
        self._seen.add(name.lower())
        model.graph.name = name
        (self.crashes if onnx_crashes else self.built).append((name, model))


def tensor(name: str, elem: int, shape: Any) -> onnx.ValueInfoProto:
    """A tensor value; `shape` None gives no shape."""
    return helper.make_tensor_value_info(name, elem, shape)


def seq(name: str, elem: int, shape: Any) -> onnx.ValueInfoProto:
    """A sequence of tensors."""
    return helper.make_value_info(
        name, helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, shape))
    )


def optional(name: str, inner: onnx.TypeProto) -> onnx.ValueInfoProto:
    return helper.make_value_info(name, helper.make_optional_type_proto(inner))


def typed(name: str, type_proto: onnx.TypeProto) -> onnx.ValueInfoProto:
    return helper.make_value_info(name, type_proto)


def untyped(name: str) -> onnx.ValueInfoProto:
    """A value info with a name and no type."""
    return onnx.ValueInfoProto(name=name)


def init(
    name: str, values: Any, dtype: Any = np.int64, dims: Sequence[int] | None = None
) -> onnx.TensorProto:
    """A tensor of `values` (numpy's `dtype`); `dims`, when given, replaces
    the dims it gets (even by inconsistent ones)."""
    t = numpy_helper.from_array(np.array(values, dtype=dtype), name)
    if dims is not None:
        del t.dims[:]
        t.dims.extend(dims)
    return t


def attr(name: str, kind: int, **values: Any) -> onnx.AttributeProto:
    """An attribute of an explicit type, possibly without any value."""
    a = AttributeProto(name=name, type=kind)
    for field, value in values.items():
        if isinstance(value, list):
            getattr(a, field).extend(value)
        elif isinstance(value, onnx.TensorProto):
            getattr(a, field).CopyFrom(value)
        else:
            setattr(a, field, value)
    return a


def node(
    op: str,
    inputs: Sequence[str],
    outputs: Sequence[str],
    *,
    domain: str | None = None,
    extra: Iterable[onnx.AttributeProto] = (),
    **attrs: Any,
) -> onnx.NodeProto:
    """helper.make_node, where an empty list gives an empty INTS attribute
    and `extra` attributes are appended as they are."""
    empty = [k for k, v in attrs.items() if isinstance(v, list) and not v]
    n = helper.make_node(
        op, inputs, outputs, domain=domain, **{k: v for k, v in attrs.items() if k not in empty}
    )
    n.attribute.extend(attr(k, AttributeProto.INTS) for k in empty)
    n.attribute.extend(extra)
    return n


def graph(
    nodes: Iterable[onnx.NodeProto],
    inputs: Iterable[onnx.ValueInfoProto],
    outputs: Iterable[onnx.ValueInfoProto],
    inits: Iterable[onnx.TensorProto] = (),
    value_info: Iterable[onnx.ValueInfoProto] = (),
    name: str = "main",
) -> onnx.GraphProto:
    return helper.make_graph(
        list(nodes),
        name,
        list(inputs),
        list(outputs),
        initializer=list(inits),
        value_info=list(value_info),
    )


def model(
    g: onnx.GraphProto,
    opsets: Iterable[tuple[str, int]],
    ir: int | None = None,
    functions: Iterable[onnx.FunctionProto] = (),
) -> onnx.ModelProto:
    """A model importing `opsets` ((domain, version) pairs); `ir` None keeps
    the installed onnx's IR version."""
    m = helper.make_model(
        g,
        opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
        functions=list(functions),
    )
    if ir is not None:
        m.ir_version = ir
    return m


def unknown_rank_inputs(
    inputs: Iterable[onnx.ValueInfoProto], opset: int
) -> tuple[list[onnx.ValueInfoProto], list[onnx.NodeProto]]:
    """The checker wants shaped main-graph inputs, so an input tensor without
    a shape is made inside the graph instead: SequenceAt of a sequence of
    unshaped tensors from opset 11, else Reshape-5 by a shape that is not
    constant. Returns the graph inputs and the nodes making those values."""
    graph_inputs: list[onnx.ValueInfoProto] = []
    made: list[onnx.NodeProto] = []
    for vi in inputs:
        tt = vi.type.tensor_type if vi.type.WhichOneof("value") == "tensor_type" else None
        if tt is None or tt.HasField("shape"):
            graph_inputs.append(vi)
        elif opset >= 11:
            graph_inputs.append(seq(vi.name + "__seq", tt.elem_type, None))
            made.append(node("SequenceAt", [vi.name + "__seq", "pos__"], [vi.name]))
            if not any(g.name == "pos__" for g in graph_inputs):
                graph_inputs.append(tensor("pos__", I64, []))
        else:
            graph_inputs.append(tensor(vi.name + "__src", tt.elem_type, ["n_" + vi.name]))
            made.append(node("Reshape", [vi.name + "__src", "shape__"], [vi.name]))
            if not any(g.name == "shape__" for g in graph_inputs):
                graph_inputs.append(tensor("shape__", I64, [2]))
    return graph_inputs, made
