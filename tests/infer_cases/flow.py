"""Control flow, sequence and optional families (If, Loop, Scan, Sequence*,
SplitToSequence, ConcatFromSequence, SequenceMap, Optional*): edge and failure
cases of the inference rules.

The node outputs stay intermediate values (onnx records their inferred types
in value_info) and the graph's only output passes its first input through; a
typed output of a case becomes a value_info declaration. An input of unknown
rank is made inside the graph (`unknown_rank_inputs`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import helper

from ._build import (
    I32,
    I64,
    B,
    Cases,
    F,
    graph,
    init,
    model,
    node,
    optional,
    seq,
    tensor,
    unknown_rank_inputs,
    untyped,
)

ONNX_CRASHES: tuple[str, ...] = ()


class _Cases(Cases):
    def model(
        self,
        name: str,
        nodes: Sequence[onnx.NodeProto],
        inputs: Sequence[onnx.ValueInfoProto],
        outputs: Sequence[onnx.ValueInfoProto],
        opset: int = 21,
        ir: int = 10,
        inits: Sequence[onnx.TensorProto] = (),
    ) -> None:
        """`nodes` on `inputs`; the graph's output is its first input (a dummy
        one when there is none); `outputs` with a type are declared as
        value_info."""
        graph_inputs, made = unknown_rank_inputs(inputs, opset)
        if made and opset < 11:
            raise ValueError(f"{name}: unknown-rank inputs need opset 11")
        if not graph_inputs:
            graph_inputs.append(tensor("dummy__", F, [1]))
        declared = [o for o in outputs if o.HasField("type")]
        g = graph(made + list(nodes), graph_inputs, [graph_inputs[0]], inits, declared)
        self.add(name, model(g, [("", opset)], ir))


def _sub(
    name: str,
    nodes: Sequence[onnx.NodeProto],
    inputs: Sequence[onnx.ValueInfoProto],
    outputs: Sequence[onnx.ValueInfoProto],
    inits: Sequence[onnx.TensorProto] = (),
) -> onnx.GraphProto:
    """A subgraph (branch or body)."""
    return graph(nodes, inputs, outputs, inits, name=name)


def _if_case(c: _Cases, name, then_type, else_type, opset=21, out=None, n_out=1, ir=10):
    """then/else return the outer values `a` and `b` (typed then_type/else_type)."""
    then_g = _sub("then", [node("Identity", ["a"], ["ta"])], [], [untyped("ta")])
    else_g = _sub("else", [node("Identity", ["b"], ["eb"])], [], [untyped("eb")])
    outs = [out or untyped("y")] + [untyped(f"y{i}") for i in range(1, n_out)]
    n = node("If", ["c"], [o.name for o in outs], then_branch=then_g, else_branch=else_g)
    c.model(
        name, [n], [tensor("c", B, []), then_type("a"), else_type("b")], outs, opset=opset, ir=ir
    )


def _loop_body(
    state_types,
    scan_types,
    out_state=None,
    extra_inputs=(),
    cond_type=None,
    iter_type=None,
    typed=True,
):
    """Body: (i, cond, states...) -> (cond, states..., scans...). States are
    passed through (Identity) unless out_state gives body output types for
    them (then the outer values `s<k>` are returned); scans return the
    outer values `o<k>`."""
    nodes = [node("Identity", ["cond_in"], ["cond_out"])]
    inputs = [tensor("i", iter_type or I64, []), tensor("cond_in", cond_type or B, [])]
    outputs = [untyped("cond_out")]
    for k, st in enumerate(state_types):
        inputs.append(st(f"v{k}_in") if typed else untyped(f"v{k}_in"))
        src = f"s{k}" if out_state else f"v{k}_in"
        nodes.append(node("Identity", [src], [f"v{k}_out"]))
        outputs.append(untyped(f"v{k}_out"))
    for k, _ in enumerate(scan_types):
        nodes.append(node("Identity", [f"o{k}"], [f"scan{k}"]))
        outputs.append(untyped(f"scan{k}"))
    inputs.extend(extra_inputs)
    return _sub("body", nodes, inputs, outputs)


def _loop_case(
    c: _Cases,
    name,
    state_types,
    scan_types,
    opset=21,
    out_state=None,
    ir=10,
    inputs_override=None,
    outs=None,
    body=None,
    m="M",
    cond="cond",
    body_kw=None,
):
    body = body or _loop_body(state_types, scan_types, out_state, **(body_kw or {}))
    state_names = [f"v{k}" for k in range(len(state_types))]
    outputs = outs or (
        [untyped(f"y{k}") for k in range(len(state_types))]
        + [untyped(f"z{k}") for k in range(len(scan_types))]
    )
    n = node("Loop", [m, cond, *state_names], [o.name for o in outputs], body=body)
    graph_inputs = [tensor("M", I64, []), tensor("cond", B, [])]
    graph_inputs += [st(f"v{k}") for k, st in enumerate(state_types)]
    graph_inputs += [
        (out_state[k] if out_state else st)(f"s{k}") for k, st in enumerate(state_types)
    ]
    graph_inputs += [sc(f"o{k}") for k, sc in enumerate(scan_types)]
    c.model(name, [n], inputs_override or graph_inputs, outputs, opset=opset, ir=ir)


def _scan_body(n_state, scan_in, scan_out, state_out=None):
    """Body (states..., scan elems...) -> (states..., scan outs...): states
    are returned as they come (or as the outer values `so<k>`), scan
    outputs are the outer values `x<k>`."""
    nodes, inputs, outputs = [], [], []
    for k in range(n_state):
        inputs.append(untyped(f"st{k}"))
        src = f"so{k}" if state_out else f"st{k}"
        nodes.append(node("Identity", [src], [f"st{k}_out"]))
        outputs.append(untyped(f"st{k}_out"))
    for k in range(scan_in):
        inputs.append(untyped(f"el{k}"))
    for k in range(scan_out):
        nodes.append(node("Identity", [f"x{k}"], [f"so_{k}"]))
        outputs.append(untyped(f"so_{k}"))
    return _sub("body", nodes, inputs, outputs)


def _scan_case(
    c: _Cases,
    name,
    states,
    scans,
    scan_outs,
    opset=21,
    ir=10,
    attrs=None,
    state_out=None,
    outs=None,
    body=None,
    seq_lens=False,
):
    body = body or _scan_body(len(states), len(scans), len(scan_outs), state_out)
    names = [f"s{k}" for k in range(len(states))] + [f"in{k}" for k in range(len(scans))]
    if seq_lens:
        names = [seq_lens if isinstance(seq_lens, str) else "", *names]
    outputs = outs or (
        [untyped(f"y{k}") for k in range(len(states))]
        + [untyped(f"z{k}") for k in range(len(scan_outs))]
    )
    a = {"num_scan_inputs": len(scans)}
    a.update(attrs or {})
    n = node("Scan", names, [o.name for o in outputs], body=body, **a)
    inputs = [st(f"s{k}") for k, st in enumerate(states)] + [
        sc(f"in{k}") for k, sc in enumerate(scans)
    ]
    if isinstance(seq_lens, str):
        inputs.append(tensor(seq_lens, I64, [1]))
    inputs += [so(f"x{k}") for k, so in enumerate(scan_outs)]
    if state_out:
        inputs += [so(f"so{k}") for k, so in enumerate(state_out)]
    c.model(name, [n], inputs, outputs, opset=opset, ir=ir)


def _split_case(
    c: _Cases, name, shape, split=None, split_shape=None, dtype=np.int64, const_node=False, **attrs
):
    inputs = [tensor("x", F, shape)]
    nodes, inits, names = [], [], ["x"]
    if split is not None:
        if const_node:
            nodes.append(
                node("Constant", [], ["split"], value=init("v", split, dtype, split_shape))
            )
        else:
            inits.append(init("split", split, dtype, split_shape))
        names.append("split")
    nodes.append(node("SplitToSequence", names, ["s"], **attrs))
    c.model(name, nodes, inputs, [untyped("s")], inits=inits)


def _seqmap_case(c: _Cases, name, inputs, body_inputs, body_nodes, body_outputs, n_out):
    n = node(
        "SequenceMap",
        [i.name for i in inputs],
        [f"y{k}" for k in range(n_out)],
        body=_sub("body", body_nodes, body_inputs, body_outputs),
    )
    c.model(name, [n], inputs, [untyped(f"y{k}") for k in range(n_out)])


def _if(c: _Cases) -> None:
    """If."""
    _if_case(c, "if13/union_dims", lambda n: tensor(n, F, [2, 3]), lambda n: tensor(n, F, [2, 4]))
    _if_case(
        c,
        "if13/union_symbols",
        lambda n: tensor(n, F, ["N", 3]),
        lambda n: tensor(n, F, ["N", "M"]),
    )
    _if_case(c, "if13/rank_differs", lambda n: tensor(n, F, [2]), lambda n: tensor(n, F, [2, 3]))
    _if_case(c, "if13/else_no_shape", lambda n: tensor(n, F, [2]), lambda n: tensor(n, F, None))
    _if_case(c, "if13/kind_mismatch", lambda n: tensor(n, F, [2]), lambda n: seq(n, F, [2]))
    _if_case(c, "if13/elem_mismatch", lambda n: tensor(n, F, [2]), lambda n: tensor(n, I64, [2]))
    _if_case(c, "if13/seq_union", lambda n: seq(n, F, [2]), lambda n: seq(n, F, [3]))
    _if_case(
        c,
        "if13/opt_union",
        lambda n: optional(n, helper.make_tensor_type_proto(F, [2])),
        lambda n: optional(n, helper.make_tensor_type_proto(F, [2])),
    )
    _if_case(c, "if13/seq_elem_mismatch", lambda n: seq(n, F, [2]), lambda n: seq(n, I64, [2]))
    _if_case(
        c,
        "if13/node_has_two_outputs",
        lambda n: tensor(n, F, [2]),
        lambda n: tensor(n, F, [2]),
        n_out=2,
    )
    _if_case(
        c,
        "if13/declared_conflict",
        lambda n: tensor(n, F, [2]),
        lambda n: tensor(n, F, [2]),
        out=tensor("y", F, [3]),
    )
    _if_case(
        c,
        "if13/declared_symbol_ok",
        lambda n: tensor(n, F, [2]),
        lambda n: tensor(n, F, [3]),
        out=tensor("y", F, ["K"]),
    )
    _if_case(
        c,
        "if11/union",
        lambda n: tensor(n, F, [2, 3]),
        lambda n: tensor(n, F, [2, 4]),
        opset=11,
        ir=6,
    )
    _if_case(
        c,
        "if11/scalar_vs_unknown_rank",
        lambda n: tensor(n, F, []),
        lambda n: tensor(n, F, None),
        opset=11,
        ir=6,
    )
    _if_case(
        c,
        "if11/vector_vs_unknown_rank",
        lambda n: tensor(n, F, [2]),
        lambda n: tensor(n, F, None),
        opset=11,
        ir=6,
    )
    _if_case(
        c,
        "if11/elem_mismatch",
        lambda n: tensor(n, F, [2]),
        lambda n: tensor(n, I32, [2]),
        opset=11,
        ir=6,
    )
    _if_case(
        c,
        "if1/merge_ok",
        lambda n: tensor(n, F, [2, "N"]),
        lambda n: tensor(n, F, [2, 3]),
        opset=10,
        ir=5,
    )
    _if_case(
        c,
        "if1/merge_conflict",
        lambda n: tensor(n, F, [2]),
        lambda n: tensor(n, F, [3]),
        opset=10,
        ir=5,
    )
    _if_case(
        c,
        "if1/rank_conflict",
        lambda n: tensor(n, F, [2]),
        lambda n: tensor(n, F, [2, 1]),
        opset=10,
        ir=5,
    )
    # Branch counts differ.
    c.model(
        "if13/branch_counts_differ",
        [
            node(
                "If",
                ["c"],
                ["y"],
                then_branch=_sub("then", [node("Identity", ["a"], ["ta"])], [], [untyped("ta")]),
                else_branch=_sub(
                    "else",
                    [node("Identity", ["a"], ["e1"]), node("Identity", ["a"], ["e2"])],
                    [],
                    [untyped("e1"), untyped("e2")],
                ),
            )
        ],
        [tensor("c", B, []), tensor("a", F, [2])],
        [untyped("y")],
    )
    # A branch with an input (IR >= 4: the node gives none).
    c.model(
        "if13/branch_with_input",
        [
            node(
                "If",
                ["c"],
                ["y"],
                then_branch=_sub(
                    "then",
                    [node("Identity", ["p"], ["ta"])],
                    [tensor("p", F, [2])],
                    [untyped("ta")],
                ),
                else_branch=_sub("else", [node("Identity", ["a"], ["eb"])], [], [untyped("eb")]),
            )
        ],
        [tensor("c", B, []), tensor("a", F, [2])],
        [untyped("y")],
    )
    # IR 3: a branch input that is one of its initializers is allowed.
    c.model(
        "if_ir3/branch_initializer_input",
        [
            node(
                "If",
                ["c"],
                ["y"],
                then_branch=_sub(
                    "then",
                    [node("Identity", ["w"], ["ta"])],
                    [tensor("w", F, [2])],
                    [untyped("ta")],
                    inits=[init("w", [1.0, 2.0], np.float32)],
                ),
                else_branch=_sub("else", [node("Identity", ["a"], ["eb"])], [], [untyped("eb")]),
            )
        ],
        [tensor("c", B, []), tensor("a", F, [2])],
        [untyped("y")],
        opset=9,
        ir=3,
    )
    # A branch failing inside: the If fails.
    c.model(
        "if13/branch_fails_inside",
        [
            node(
                "If",
                ["c"],
                ["y"],
                then_branch=_sub("then", [node("Add", ["a", "d"], ["ta"])], [], [untyped("ta")]),
                else_branch=_sub("else", [node("Identity", ["a"], ["eb"])], [], [untyped("eb")]),
            )
        ],
        [tensor("c", B, []), tensor("a", F, [2]), tensor("d", F, [3])],
        [untyped("y")],
    )
    c.model(
        "if13/branch_output_is_initializer",
        [
            node(
                "If",
                ["c"],
                ["y"],
                then_branch=_sub(
                    "then", [], [], [untyped("w")], inits=[init("w", [1.0, 2.0], np.float32)]
                ),
                else_branch=_sub("else", [node("Identity", ["a"], ["eb"])], [], [untyped("eb")]),
            )
        ],
        [tensor("c", B, []), tensor("a", F, [2])],
        [untyped("y")],
    )
    c.model(
        "if13/branch_outputs_are_initializers",
        [
            node(
                "If",
                ["c"],
                ["y"],
                then_branch=_sub(
                    "then", [], [], [untyped("w")], inits=[init("w", [1.0, 2.0], np.float32)]
                ),
                else_branch=_sub(
                    "else", [], [], [untyped("w2")], inits=[init("w2", [1.0], np.float32)]
                ),
            )
        ],
        [tensor("c", B, []), tensor("a", F, [2])],
        [untyped("y")],
    )
    # Branch outputs without type (an outer value named directly): no type for y.
    c.model(
        "if13/outer_value_as_output",
        [
            node(
                "If",
                ["c"],
                ["y"],
                then_branch=_sub("then", [], [], [untyped("a")]),
                else_branch=_sub("else", [], [], [untyped("a")]),
            )
        ],
        [tensor("c", B, []), tensor("a", F, [2])],
        [untyped("y")],
    )
    c.model(
        "if13/outer_value_vs_typed",
        [
            node(
                "If",
                ["c"],
                ["y"],
                then_branch=_sub("then", [], [], [untyped("a")]),
                else_branch=_sub("else", [node("Identity", ["a"], ["eb"])], [], [untyped("eb")]),
            )
        ],
        [tensor("c", B, []), tensor("a", F, [2])],
        [untyped("y")],
    )
    c.model(
        "if_ir3/branch_initializer_not_input",
        [
            node(
                "If",
                ["c"],
                ["y"],
                then_branch=_sub(
                    "then",
                    [node("Identity", ["w"], ["ta"])],
                    [],
                    [untyped("ta")],
                    inits=[init("w", [1.0, 2.0], np.float32)],
                ),
                else_branch=_sub("else", [node("Identity", ["a"], ["eb"])], [], [untyped("eb")]),
            )
        ],
        [tensor("c", B, []), tensor("a", F, [2])],
        [untyped("y")],
        opset=9,
        ir=3,
    )
    c.model(
        "if_ir3/branch_input_not_initializer",
        [
            node(
                "If",
                ["c"],
                ["y"],
                then_branch=_sub(
                    "then",
                    [node("Identity", ["p"], ["ta"])],
                    [tensor("p", F, [2])],
                    [untyped("ta")],
                ),
                else_branch=_sub("else", [node("Identity", ["a"], ["eb"])], [], [untyped("eb")]),
            )
        ],
        [tensor("c", B, []), tensor("a", F, [2])],
        [untyped("y")],
        opset=9,
        ir=3,
    )


def _loop(c: _Cases) -> None:
    """Loop."""
    T23 = lambda n: tensor(n, F, [2, 3])  # noqa: E731
    _loop_case(c, "loop16/basic", [T23], [lambda n: tensor(n, F, [3])])
    _loop_case(c, "loop16/scan_symbolic", [T23], [lambda n: tensor(n, F, ["N", 3])])
    _loop_case(
        c, "loop16/state_elem_mismatch", [T23], [], out_state=[lambda n: tensor(n, I64, [2, 3])]
    )
    _loop_case(c, "loop16/state_shape_changes", [T23], [], out_state=[lambda n: tensor(n, F, [5])])
    _loop_case(c, "loop16/scan_is_sequence", [T23], [lambda n: seq(n, F, [3])])
    _loop_case(c, "loop16/seq_state", [lambda n: seq(n, F, [2])], [])
    _loop_case(
        c,
        "loop16/seq_state_elem_mismatch",
        [lambda n: seq(n, F, [2])],
        [],
        out_state=[lambda n: seq(n, I64, [2])],
    )
    _loop_case(
        c, "loop16/opt_state", [lambda n: optional(n, helper.make_tensor_type_proto(F, [2]))], []
    )
    _loop_case(c, "loop16/state_kind_changes", [T23], [], out_state=[lambda n: seq(n, F, [2])])
    _loop_case(
        c,
        "loop13/opt_state",
        [lambda n: optional(n, helper.make_tensor_type_proto(F, [2]))],
        [],
        opset=13,
        ir=7,
    )
    _loop_case(c, "loop13/seq_state", [lambda n: seq(n, F, [2])], [], opset=13, ir=7)
    _loop_case(c, "loop13/basic", [T23], [lambda n: tensor(n, F, [3])], opset=13, ir=7)
    _loop_case(c, "loop11/seq_state", [lambda n: seq(n, F, [2])], [], opset=11, ir=6)
    _loop_case(c, "loop11/basic", [T23], [lambda n: tensor(n, F, [3])], opset=11, ir=6)
    _loop_case(
        c,
        "loop11/scan_declared_conflict",
        [T23],
        [lambda n: tensor(n, F, [3])],
        opset=11,
        ir=6,
        outs=[untyped("y0"), tensor("z0", F, [4, 4])],
    )
    _loop_case(
        c,
        "loop16/scan_declared_ok",
        [T23],
        [lambda n: tensor(n, F, [3])],
        outs=[untyped("y0"), tensor("z0", F, [7, 3])],
    )
    _loop_case(c, "loop16/no_m_no_cond", [T23], [], m="", cond="")
    _loop_case(c, "loop16/iter_declared_int32", [T23], [], body_kw={"iter_type": I32})
    _loop_case(c, "loop16/cond_declared_float", [T23], [], body_kw={"cond_type": F})
    _loop_case(
        c, "loop16/body_extra_input", [T23], [], body_kw={"extra_inputs": [tensor("extra", F, [1])]}
    )
    _loop_case(
        c, "loop16/untyped_body", [T23], [lambda n: tensor(n, F, [3])], body_kw={"typed": False}
    )
    _loop_case(
        c, "loop16/seq_untyped_body", [lambda n: seq(n, F, [2])], [], body_kw={"typed": False}
    )
    _loop_case(
        c,
        "loop16/opt_untyped_body",
        [lambda n: optional(n, helper.make_tensor_type_proto(F, [2]))],
        [],
        body_kw={"typed": False},
    )
    _loop_case(
        c,
        "loop11/untyped_body",
        [T23],
        [lambda n: tensor(n, F, [3])],
        opset=11,
        ir=6,
        body_kw={"typed": False},
    )
    # Body outputs that are body inputs: onnx gives such an output no type.
    _loop_case(
        c,
        "loop16/body_passthrough",
        [T23],
        [],
        body=_sub(
            "body",
            [],
            [tensor("i", I64, []), untyped("cond_in"), untyped("v0_in")],
            [untyped("cond_in"), untyped("v0_in")],
        ),
    )
    _loop_case(
        c,
        "loop16/body_passthrough_typed",
        [T23],
        [],
        body=_sub(
            "body",
            [],
            [tensor("i", I64, []), untyped("cond_in"), untyped("v0_in")],
            [untyped("cond_in"), tensor("v0_in", F, None)],
        ),
    )
    _loop_case(
        c,
        "loop13/seq_untyped_passthrough",
        [lambda n: seq(n, F, [2])],
        [],
        opset=13,
        ir=7,
        body=_sub(
            "body",
            [node("Identity", ["cond_in"], ["cond_out"])],
            [tensor("i", I64, []), untyped("cond_in"), untyped("v0_in")],
            [untyped("cond_out"), seq("v0_in", F, None)],
        ),
    )
    # A body output typed only through a value_info entry of the same name:
    # onnx's output stays untyped.
    body_vi = _sub(
        "body",
        [node("Identity", ["cond_in"], ["cond_out"]), node("Identity", ["v0_in"], ["v0_out"])],
        [tensor("i", I64, []), untyped("cond_in"), untyped("v0_in")],
        [untyped("cond_out"), untyped("v0_out")],
    )
    body_vi.value_info.append(tensor("v0_out", F, None))
    _loop_case(c, "loop16/body_output_in_value_info", [T23], [], body=body_vi)
    # Body output that is a body initializer (IR >= 4): untyped for onnx.
    _loop_case(
        c,
        "loop16/body_output_is_initializer",
        [T23],
        [],
        body=_sub(
            "body",
            [node("Identity", ["cond_in"], ["cond_out"])],
            [tensor("i", I64, []), untyped("cond_in"), untyped("v0_in")],
            [untyped("cond_out"), untyped("w")],
            inits=[init("w", [1.0, 2.0], np.float32)],
        ),
    )
    # Body with one output too few.
    _loop_case(
        c,
        "loop16/body_output_count",
        [T23],
        [],
        body=_sub(
            "body",
            [node("Identity", ["cond_in"], ["cond_out"])],
            [tensor("i", I64, []), tensor("cond_in", B, []), tensor("v0_in", F, None)],
            [untyped("cond_out")],
        ),
    )
    # Fewer node outputs than loop-carried values.
    _loop_case(c, "loop16/fewer_outputs_than_states", [T23, T23], [], outs=[untyped("y0")])
    # IR 3: extra body inputs that are initializers.
    _loop_case(
        c,
        "loop_ir3/body_initializer_input",
        [T23],
        [],
        opset=9,
        ir=3,
        body=_sub(
            "body",
            [node("Identity", ["cond_in"], ["cond_out"]), node("Add", ["v0_in", "w"], ["v0_out"])],
            [
                tensor("i", I64, []),
                tensor("cond_in", B, []),
                tensor("v0_in", F, None),
                tensor("w", F, [1]),
            ],
            [untyped("cond_out"), untyped("v0_out")],
            inits=[init("w", [1.0], np.float32)],
        ),
    )


def _scan(c: _Cases) -> None:
    """Scan."""
    V2 = lambda n: tensor(n, F, [2])  # noqa: E731
    _scan_case(c, "scan16/basic", [V2], [lambda n: tensor(n, F, [5, 2])], [V2])
    _scan_case(c, "scan16/symbolic_len", [V2], [lambda n: tensor(n, F, ["S", 2])], [V2])
    _scan_case(
        c,
        "scan16/input_axis_1",
        [V2],
        [lambda n: tensor(n, F, [2, 5])],
        [V2],
        attrs={"scan_input_axes": [1]},
    )
    _scan_case(
        c,
        "scan16/input_axis_neg",
        [V2],
        [lambda n: tensor(n, F, [2, 5])],
        [V2],
        attrs={"scan_input_axes": [-1]},
    )
    _scan_case(
        c,
        "scan16/input_axis_out_of_range",
        [V2],
        [lambda n: tensor(n, F, [2, 5])],
        [V2],
        attrs={"scan_input_axes": [2]},
    )
    _scan_case(
        c,
        "scan16/input_axes_count",
        [V2],
        [lambda n: tensor(n, F, [2, 5])],
        [V2],
        attrs={"scan_input_axes": [0, 1]},
    )
    _scan_case(
        c,
        "scan16/output_axis_1",
        [V2],
        [lambda n: tensor(n, F, [5, 2])],
        [lambda n: tensor(n, F, [3, 4])],
        attrs={"scan_output_axes": [1]},
    )
    _scan_case(
        c,
        "scan16/output_axis_neg",
        [V2],
        [lambda n: tensor(n, F, [5, 2])],
        [lambda n: tensor(n, F, [3, 4])],
        attrs={"scan_output_axes": [-1]},
    )
    _scan_case(
        c,
        "scan16/output_axis_out_of_range",
        [V2],
        [lambda n: tensor(n, F, [5, 2])],
        [lambda n: tensor(n, F, [3])],
        attrs={"scan_output_axes": [2]},
    )
    _scan_case(
        c,
        "scan16/output_axes_count",
        [V2],
        [lambda n: tensor(n, F, [5, 2])],
        [V2],
        attrs={"scan_output_axes": [0, 0]},
    )
    _scan_case(
        c,
        "scan16/seq_len_conflict",
        [V2],
        [lambda n: tensor(n, F, [5, 2]), lambda n: tensor(n, F, [6, 2])],
        [V2],
    )
    _scan_case(
        c,
        "scan16/seq_len_merge",
        [V2],
        [lambda n: tensor(n, F, ["S", 2]), lambda n: tensor(n, F, [6, 2])],
        [V2],
    )
    _scan_case(
        c,
        "scan16/too_many_scan_inputs",
        [V2],
        [lambda n: tensor(n, F, [5, 2])],
        [V2],
        attrs={"num_scan_inputs": 3},
    )
    _scan_case(
        c,
        "scan16/negative_scan_inputs",
        [V2],
        [lambda n: tensor(n, F, [5, 2])],
        [V2],
        attrs={"num_scan_inputs": -1},
    )
    _scan_case(
        c,
        "scan16/states_exceed_outputs",
        [V2, V2],
        [lambda n: tensor(n, F, [5, 2])],
        [],
        outs=[untyped("y0")],
    )
    _scan_case(
        c,
        "scan16/state_shape_conflict",
        [V2],
        [lambda n: tensor(n, F, [5, 2])],
        [V2],
        state_out=[lambda n: tensor(n, F, [3])],
    )
    _scan_case(
        c,
        "scan16/state_rank_conflict",
        [V2],
        [lambda n: tensor(n, F, [5, 2])],
        [V2],
        state_out=[lambda n: tensor(n, F, [2, 1])],
    )
    _scan_case(
        c,
        "scan16/state_elem_differs",
        [V2],
        [lambda n: tensor(n, F, [5, 2])],
        [V2],
        state_out=[lambda n: tensor(n, I64, [2])],
    )
    _scan_case(
        c,
        "scan16/scan_output_sequence",
        [V2],
        [lambda n: tensor(n, F, [5, 2])],
        [lambda n: seq(n, F, [2])],
    )
    _scan_case(c, "scan16/scan_input_no_shape", [V2], [lambda n: tensor(n, F, None)], [V2])
    _scan_case(
        c,
        "scan16/state_input_sequence",
        [lambda n: seq(n, F, [2])],
        [lambda n: tensor(n, F, [5, 2])],
        [V2],
    )
    _scan_case(
        c,
        "scan16/body_output_count",
        [V2],
        [lambda n: tensor(n, F, [5, 2])],
        [V2],
        body=_scan_body(1, 1, 0),
    )
    _scan_case(
        c,
        "scan16/input_axis_wraps_32bit",
        [V2],
        [lambda n: tensor(n, F, [5, 2])],
        [V2],
        attrs={"scan_input_axes": [1 << 32]},
    )
    _scan_case(
        c,
        "scan16/output_axis_wraps_32bit",
        [V2],
        [lambda n: tensor(n, F, [5, 2])],
        [lambda n: tensor(n, F, [3])],
        attrs={"scan_output_axes": [(1 << 32) + 1]},
    )
    _scan_case(
        c,
        "scan8/with_seq_lens_given",
        [lambda n: tensor(n, F, [1, 2])],
        [lambda n: tensor(n, F, [1, 5, 2])],
        [V2],
        opset=8,
        ir=3,
        seq_lens="lens",
    )
    _scan_case(c, "scan9/basic", [V2], [lambda n: tensor(n, F, [5, 2])], [V2], opset=9, ir=4)
    _scan_case(
        c,
        "scan8/basic",
        [lambda n: tensor(n, F, [1, 2])],
        [lambda n: tensor(n, F, [1, 5, 2])],
        [V2],
        opset=8,
        ir=3,
        seq_lens=True,
    )
    _scan_case(
        c,
        "scan8/rank2_scan_input",
        [lambda n: tensor(n, F, [1, 2])],
        [lambda n: tensor(n, F, [1, 5])],
        [V2],
        opset=8,
        ir=3,
        seq_lens=True,
    )
    _scan_case(
        c,
        "scan8/batch_conflict",
        [lambda n: tensor(n, F, [1, 2])],
        [lambda n: tensor(n, F, [1, 5, 2]), lambda n: tensor(n, F, [2, 5, 2])],
        [V2],
        opset=8,
        ir=3,
        seq_lens=True,
    )
    _scan_case(
        c,
        "scan8/too_many_scan_inputs",
        [lambda n: tensor(n, F, [1, 2])],
        [lambda n: tensor(n, F, [1, 5, 2])],
        [V2],
        opset=8,
        ir=3,
        seq_lens=True,
        attrs={"num_scan_inputs": 2},
    )
    _scan_case(
        c,
        "scan8/state_shape_conflict",
        [lambda n: tensor(n, F, [1, 2])],
        [lambda n: tensor(n, F, [1, 5, 2])],
        [V2],
        opset=8,
        ir=3,
        seq_lens=True,
        state_out=[lambda n: tensor(n, F, [3])],
    )
    _scan_case(
        c,
        "scan8/state_out_without_batch",
        [lambda n: tensor(n, F, [2])],
        [lambda n: tensor(n, F, [1, 5, 2])],
        [V2],
        opset=8,
        ir=3,
        seq_lens=True,
    )


def _sequences(c: _Cases) -> None:
    """Sequences."""
    c.model(
        "sequenceconstruct/union",
        [node("SequenceConstruct", ["a", "b"], ["s"])],
        [tensor("a", F, [2, 3]), tensor("b", F, [2, 4])],
        [untyped("s")],
    )
    c.model(
        "sequenceconstruct/rank_differs",
        [node("SequenceConstruct", ["a", "b"], ["s"])],
        [tensor("a", F, [2, 3]), tensor("b", F, [2])],
        [untyped("s")],
    )
    c.model(
        "sequenceconstruct/one_without_shape",
        [node("SequenceConstruct", ["a", "b"], ["s"])],
        [tensor("a", F, [2, 3]), tensor("b", F, None)],
        [untyped("s")],
    )
    c.model(
        "sequenceconstruct/elem_mismatch",
        [node("SequenceConstruct", ["a", "b"], ["s"])],
        [tensor("a", F, [2, 3]), tensor("b", I64, [2, 3])],
        [untyped("s")],
    )
    c.model(
        "sequenceconstruct/of_sequence",
        [node("SequenceConstruct", ["a"], ["s"])],
        [seq("a", F, [2])],
        [untyped("s")],
    )
    c.model(
        "sequenceinsert/union",
        [node("SequenceInsert", ["s", "a"], ["r"])],
        [seq("s", F, [2, 3]), tensor("a", F, [2, 5])],
        [untyped("r")],
    )
    c.model(
        "sequenceinsert/elem_mismatch",
        [node("SequenceInsert", ["s", "a"], ["r"])],
        [seq("s", F, [2, 3]), tensor("a", I64, [2, 3])],
        [untyped("r")],
    )
    c.model(
        "sequenceinsert/tensor_no_shape",
        [node("SequenceInsert", ["s", "a"], ["r"])],
        [seq("s", F, [2, 3]), tensor("a", F, None)],
        [untyped("r")],
    )
    c.model(
        "sequenceinsert/position",
        [node("SequenceInsert", ["s", "a", "p"], ["r"])],
        [seq("s", F, [2, 3]), tensor("a", F, [2, 3]), tensor("p", I64, [])],
        [untyped("r")],
    )
    c.model(
        "sequenceat/basic",
        [node("SequenceAt", ["s", "p"], ["r"])],
        [seq("s", F, ["N", 3]), tensor("p", I64, [])],
        [untyped("r")],
    )
    c.model(
        "sequenceat/of_tensor",
        [node("SequenceAt", ["s", "p"], ["r"])],
        [tensor("s", F, [3]), tensor("p", I64, [])],
        [untyped("r")],
    )
    c.model(
        "sequenceerase/basic",
        [node("SequenceErase", ["s"], ["r"])],
        [seq("s", F, ["N", 3])],
        [untyped("r")],
    )
    c.model(
        "sequencelength/basic",
        [node("SequenceLength", ["s"], ["r"])],
        [seq("s", F, ["N", 3])],
        [untyped("r")],
    )
    c.model("sequenceempty/default", [node("SequenceEmpty", [], ["r"])], [], [untyped("r")])
    c.model(
        "sequenceempty/int64", [node("SequenceEmpty", [], ["r"], dtype=I64)], [], [untyped("r")]
    )
    c.model(
        "sequenceempty/bad_dtype",
        [node("SequenceEmpty", [], ["r"], dtype=1000)],
        [],
        [untyped("r")],
    )
    c.model(
        "concatfromsequence/axis0",
        [node("ConcatFromSequence", ["s"], ["r"], axis=0)],
        [seq("s", F, [2, 3])],
        [untyped("r")],
    )
    c.model(
        "concatfromsequence/axis_neg",
        [node("ConcatFromSequence", ["s"], ["r"], axis=-1)],
        [seq("s", F, [2, 3])],
        [untyped("r")],
    )
    c.model(
        "concatfromsequence/new_axis",
        [node("ConcatFromSequence", ["s"], ["r"], axis=1, new_axis=1)],
        [seq("s", F, [2, 3])],
        [untyped("r")],
    )
    c.model(
        "concatfromsequence/new_axis_last",
        [node("ConcatFromSequence", ["s"], ["r"], axis=-1, new_axis=1)],
        [seq("s", F, [2, 3])],
        [untyped("r")],
    )
    c.model(
        "concatfromsequence/new_axis_end",
        [node("ConcatFromSequence", ["s"], ["r"], axis=2, new_axis=1)],
        [seq("s", F, [2, 3])],
        [untyped("r")],
    )
    c.model(
        "concatfromsequence/axis_out_of_range",
        [node("ConcatFromSequence", ["s"], ["r"], axis=2)],
        [seq("s", F, [2, 3])],
        [untyped("r")],
    )
    c.model(
        "concatfromsequence/new_axis_2",
        [node("ConcatFromSequence", ["s"], ["r"], axis=0, new_axis=2)],
        [seq("s", F, [2, 3])],
        [untyped("r")],
    )
    c.model(
        "concatfromsequence/scalars",
        [node("ConcatFromSequence", ["s"], ["r"], axis=0)],
        [seq("s", F, [])],
        [untyped("r")],
    )
    c.model(
        "concatfromsequence/scalars_stacked",
        [node("ConcatFromSequence", ["s"], ["r"], axis=0, new_axis=1)],
        [seq("s", F, [])],
        [untyped("r")],
    )
    c.model(
        "concatfromsequence/axis_wraps_32bit",
        [node("ConcatFromSequence", ["s"], ["r"], axis=(1 << 32) + 1)],
        [seq("s", F, [2, 3])],
        [untyped("r")],
    )
    c.model(
        "concatfromsequence/new_axis_wraps_32bit",
        [node("ConcatFromSequence", ["s"], ["r"], axis=0, new_axis=(1 << 32) + 1)],
        [seq("s", F, [2, 3])],
        [untyped("r")],
    )
    c.model(
        "sequenceempty/undefined", [node("SequenceEmpty", [], ["r"], dtype=0)], [], [untyped("r")]
    )
    c.model(
        "concatfromsequence/no_shape",
        [node("ConcatFromSequence", ["s"], ["r"], axis=5)],
        [seq("s", F, None)],
        [untyped("r")],
    )
    _split_case(c, "splittosequence/default", [6, 4])
    _split_case(c, "splittosequence/no_keepdims", [6, 4], keepdims=0, axis=1)
    _split_case(c, "splittosequence/axis_neg", [6, 4], axis=-1)
    _split_case(c, "splittosequence/axis_out_of_range", [6, 4], axis=2)
    _split_case(c, "splittosequence/scalar_divides", [6, 4], split=[2], split_shape=[])
    _split_case(c, "splittosequence/scalar_not_divides", [6, 4], split=[4], split_shape=[])
    _split_case(c, "splittosequence/scalar_zero", [6, 4], split=[0], split_shape=[])
    _split_case(c, "splittosequence/equal_sizes", [6, 4], split=[3, 3])
    _split_case(c, "splittosequence/unequal_sizes", [6, 4], split=[2, 4])
    _split_case(c, "splittosequence/sum_mismatch", [6, 4], split=[2, 2])
    _split_case(c, "splittosequence/empty", [6, 4], split=[], split_shape=[0])
    _split_case(c, "splittosequence/int32", [6, 4], split=[3, 3], dtype=np.int32)
    _split_case(c, "splittosequence/float_const", [6, 4], split=[3.0, 3.0], dtype=np.float32)
    _split_case(c, "splittosequence/constant_node", [6, 4], split=[2, 2, 2], const_node=True)
    _split_case(c, "splittosequence/symbolic_dim", ["N", 4], split=[2, 2])
    _split_case(c, "splittosequence/axis_wraps_32bit", [6, 4], axis=(1 << 32) + 1)
    _split_case(c, "splittosequence/scalar_huge", [6, 4], split=[1 << 62], split_shape=[])
    _split_case(c, "splittosequence/sum_wraps", [6, 4], split=[(1 << 63) - 1, (1 << 63) - 1, 8])
    _split_case(c, "splittosequence/2d_split", [6, 4], split=[3, 3], split_shape=[1, 2])
    _split_case(c, "splittosequence/keepdims_ignored", [6, 4], split=[3, 3], keepdims=0)
    c.model(
        "splittosequence/not_constant",
        [node("SplitToSequence", ["x", "sp"], ["s"])],
        [tensor("x", F, [6, 4]), tensor("sp", I64, [2])],
        [untyped("s")],
    )
    c.model(
        "splittosequence/empty_name",
        [node("SplitToSequence", ["x", ""], ["s"], keepdims=0)],
        [tensor("x", F, [6, 4])],
        [untyped("s")],
    )
    _seqmap_case(
        c,
        "sequencemap/seq_and_tensor",
        [seq("s", F, ["N"]), tensor("a", F, [3])],
        [untyped("e"), untyped("b")],
        [node("Identity", ["e"], ["o0"]), node("Identity", ["b"], ["o1"])],
        [untyped("o0"), untyped("o1")],
        2,
    )
    _seqmap_case(
        c,
        "sequencemap/first_not_sequence",
        [tensor("a", F, [3])],
        [untyped("e")],
        [node("Identity", ["e"], ["o0"])],
        [untyped("o0")],
        1,
    )
    _seqmap_case(
        c,
        "sequencemap/output_count",
        [seq("s", F, ["N"])],
        [untyped("e")],
        [node("Identity", ["e"], ["o0"])],
        [untyped("o0")],
        2,
    )
    _seqmap_case(
        c,
        "sequencemap/input_count",
        [seq("s", F, ["N"])],
        [untyped("e"), untyped("f")],
        [node("Identity", ["e"], ["o0"])],
        [untyped("o0")],
        1,
    )
    _seqmap_case(
        c,
        "sequencemap/body_output_is_input",
        [seq("s", F, ["N"])],
        [untyped("e")],
        [],
        [untyped("e")],
        1,
    )
    _seqmap_case(
        c,
        "sequencemap/declared_conflict",
        [seq("s", F, ["N"])],
        [tensor("e", I64, None)],
        [node("Identity", ["e"], ["o0"])],
        [untyped("o0")],
        1,
    )


def _optional(c: _Cases) -> None:
    """Optional."""
    c.model(
        "optional/from_type",
        [node("Optional", [], ["o"], type=helper.make_tensor_type_proto(F, [2]))],
        [],
        [untyped("o")],
    )
    c.model(
        "optional/from_input",
        [node("Optional", ["a"], ["o"])],
        [tensor("a", F, ["N", 2])],
        [untyped("o")],
    )
    c.model(
        "optional/from_seq", [node("Optional", ["a"], ["o"])], [seq("a", F, [2])], [untyped("o")]
    )
    c.model(
        "optional/type_empty",
        [node("Optional", [], ["o"], type=onnx.TypeProto())],
        [],
        [untyped("o")],
    )
    c.model(
        "optional/type_seq",
        [
            node(
                "Optional",
                [],
                ["o"],
                type=helper.make_sequence_type_proto(helper.make_tensor_type_proto(I64, ["K"])),
            )
        ],
        [],
        [untyped("o")],
    )
    c.model("optional/nothing", [node("Optional", [], ["o"])], [], [untyped("o")])
    c.model(
        "optional/empty_input_and_type",
        [node("Optional", [""], ["o"], type=helper.make_tensor_type_proto(F, [2]))],
        [],
        [untyped("o")],
    )
    c.model(
        "optional/input_and_type",
        [node("Optional", ["a"], ["o"], type=helper.make_tensor_type_proto(I64, [2]))],
        [tensor("a", F, [3])],
        [untyped("o")],
    )
    c.model(
        "optionalgetelement18/optional",
        [node("OptionalGetElement", ["o"], ["r"])],
        [optional("o", helper.make_tensor_type_proto(F, ["N"]))],
        [untyped("r")],
    )
    c.model(
        "optionalgetelement18/tensor",
        [node("OptionalGetElement", ["a"], ["r"])],
        [tensor("a", F, ["N"])],
        [untyped("r")],
    )
    c.model(
        "optionalgetelement18/seq",
        [node("OptionalGetElement", ["a"], ["r"])],
        [seq("a", F, ["N"])],
        [untyped("r")],
    )
    c.model(
        "optionalgetelement15/tensor",
        [node("OptionalGetElement", ["a"], ["r"])],
        [tensor("a", F, ["N"])],
        [untyped("r")],
        opset=15,
        ir=8,
    )
    c.model(
        "optionalgetelement15/optional",
        [node("OptionalGetElement", ["o"], ["r"])],
        [optional("o", helper.make_tensor_type_proto(F, ["N"]))],
        [untyped("r")],
        opset=15,
        ir=8,
    )
    c.model(
        "optionalhaselement18/none", [node("OptionalHasElement", [], ["r"])], [], [untyped("r")]
    )
    c.model(
        "optionalhaselement18/empty_name",
        [node("OptionalHasElement", [""], ["r"])],
        [],
        [untyped("r")],
    )
    c.model(
        "optionalhaselement18/tensor",
        [node("OptionalHasElement", ["a"], ["r"])],
        [tensor("a", F, [2])],
        [untyped("r")],
    )
    c.model(
        "optionalhaselement15/basic",
        [node("OptionalHasElement", ["o"], ["r"])],
        [optional("o", helper.make_tensor_type_proto(F, [2]))],
        [untyped("r")],
        opset=15,
        ir=8,
    )


_SECTIONS = (_if, _loop, _scan, _sequences, _optional)


def cases() -> list[tuple[str, onnx.ModelProto]]:
    c = _Cases()
    for section in _SECTIONS:
        section(c)
    return c.built
