"""`Graph.values` against the model as onnx reads it: every graph of the node
corpus, the onnx wheel's models and the inference cases (main graphs and
subgraphs, as loaded and as returned by infer_shapes), value by value:
names, definitions, producers, consumers (subgraph uses included), declared
types, and types against onnx's shape inference."""

from __future__ import annotations

import collections
import collections.abc
import copy

import onnx
import pytest
from onnx import TensorProto, helper

import onnxfast

from conftest import _script_module, corpus_models, infer_case_dir, wheel_models

_gen = _script_module("gen_infer_expected")
_cmp = _script_module("_onnx_compare")


# The model as onnx reads it: what each graph defines, reads and uses.


def _subgraphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    out = []
    for a in node.attribute:
        if a.HasField("g"):
            out.append(a.g)
        out.extend(a.graphs)
    return out


def _defs(g: onnx.GraphProto) -> dict[str, tuple]:
    """name -> definition, in definition order (first definition wins)."""
    defs: dict[str, tuple] = {}
    for i, v in enumerate(g.input):
        if v.name:
            defs.setdefault(v.name, ("input", i))
    for i, t in enumerate(g.initializer):
        if t.name:
            defs.setdefault(t.name, ("initializer", i))
    for i, s in enumerate(g.sparse_initializer):
        if s.values.name:
            defs.setdefault(s.values.name, ("sparse_initializer", i))
    for i, n in enumerate(g.node):
        for k, o in enumerate(n.output):
            if o:
                defs.setdefault(o, ("node", i, k))
    return defs


def _captured(g: onnx.GraphProto) -> list[str]:
    """Names `g` reads (node inputs, its subgraphs' captures, outputs) and
    does not define, in first-use order."""
    reads: dict[str, None] = {}
    for n in g.node:
        for x in n.input:
            if x:
                reads.setdefault(x)
        for sub in _subgraphs(n):
            for x in _captured(sub):
                reads.setdefault(x)
    for o in g.output:
        if o.name:
            reads.setdefault(o.name)
    defs = _defs(g)
    return [x for x in reads if x not in defs]


def _uses(g: onnx.GraphProto, name: str, out: list) -> list:
    """(node, input index) of every read of `name` in `g` and, where not
    defined again, in its subgraphs, in graph order."""
    for n in g.node:
        out.extend((n, k) for k, x in enumerate(n.input) if x == name)
        for sub in _subgraphs(n):
            if name not in _defs(sub):
                _uses(sub, name, out)
    return out


def _key(node) -> tuple:
    return (node.op_type, node.name, list(node.input), list(node.output))


def _declared(g: onnx.GraphProto, name: str) -> onnx.TypeProto | None:
    """The entry declaring `name`: an output, else an input, else a
    value_info entry (the first of each list)."""
    for field in ("output", "input", "value_info"):
        for v in getattr(g, field):
            if v.name == name:
                return v.type if v.HasField("type") else None
    return None


def _initializer_type(t: onnx.TensorProto) -> onnx.TypeProto:
    return helper.make_tensor_type_proto(t.data_type, list(t.dims))


def _onnx_type(g: onnx.GraphProto, name: str) -> onnx.TypeProto | None:
    for field in ("output", "input", "value_info"):
        for v in getattr(g, field):
            if v.name == name:
                if v.HasField("type"):
                    return v.type
                break
    for t in g.initializer:
        if t.name == name:
            return _initializer_type(t)
    return None


def _walk(ours, theirs, inferred, chain: list, where: str):
    """Yields (where, our graph, onnx graph, onnx-inferred graph or None,
    enclosing onnx graphs innermost first) for `theirs` and its subgraphs."""
    yield where, ours, theirs, inferred, chain
    for i, (n, m) in enumerate(zip(ours.node, theirs.node)):
        names = set()
        for j, (a, b) in enumerate(zip(n.attribute, m.attribute)):
            if not b.HasField("g"):
                continue
            # Types are kept for the first attribute of a name (as onnx).
            inner = None
            if inferred is not None and b.name not in names:
                inner = inferred.node[i].attribute[j].g
            names.add(b.name)
            yield from _walk(a.g, b.g, inner, [theirs, *chain], f"{where}/{i}.{b.name}")


def _check_graph(where, ours, theirs, inferred, chain, given, counts) -> list[str]:
    found = []
    values = ours.values
    counts["values"] += len(values)
    counts["outer"] += bool(chain) * (len(values) - len(_defs(theirs)))
    counts["typed"] += (inferred is not None) * len(_defs(theirs))
    defs = _defs(theirs)
    outer = [c for c in _captured(theirs) if any(c in _defs(o) for o in chain)]
    names = [*defs, *outer]
    if list(values) != names or len(values) != len(names):
        return [f"{where}: names {list(values)[:8]} vs {names[:8]}"]
    for name in names:
        v = values[name]
        owner = theirs if name in defs else next(o for o in chain if name in _defs(o))
        d = _defs(owner)[name]
        if v.name != name or v.kind != d[0]:
            found.append(f"{where} {name!r}: kind {v.kind} vs {d[0]}")
        p = v.producer
        if d[0] == "node":
            node = owner.node[d[1]]
            if p is None or _key(p[0]) != _key(node) or p[1] != d[2]:
                found.append(f"{where} {name!r}: producer {p} vs {d}")
        elif p is not None:
            found.append(f"{where} {name!r}: producer {p} for a {d[0]}")
        expected = [(_key(n), k) for n, k in _uses(owner, name, [])]
        got = [(_key(n), k) for n, k in v.consumers]
        if got != expected:
            found.append(f"{where} {name!r}: consumers {got[:3]} vs {expected[:3]}")
        if v.is_output != any(o.name == name for o in owner.output):
            found.append(f"{where} {name!r}: is_output {v.is_output}")
        declared = _declared(owner, name)
        dt = v.declared_type
        if (dt.to_onnx() if dt is not None else None) != declared:
            found.append(f"{where} {name!r}: declared {dt} vs {declared}")
        if inferred is not None and name in defs:
            t = _onnx_type(inferred, name)
            ot = v.type
            a = _cmp.dims(ot.to_onnx(), given) if ot is not None else None
            b = _cmp.dims(t, given) if t is not None else None
            if a != b:
                found.append(f"{where} {name!r}: type {a} vs onnx {b}")
            shape = v.shape
            dims = None
            if ot is not None and ot.to_onnx().WhichOneof("value") == "tensor_type":
                tt = ot.to_onnx().tensor_type
                if tt.HasField("shape"):
                    dims = [
                        d.dim_value
                        if d.HasField("dim_value")
                        else (d.dim_param if d.HasField("dim_param") else None)
                        for d in tt.shape.dim
                    ]
            if shape != dims and ot is not None and ot.to_onnx().HasField("tensor_type"):
                found.append(f"{where} {name!r}: shape {shape} vs type {dims}")
    return found


def _compare(fm, model: onnx.ModelProto, label: str, counts) -> list[str]:
    try:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        main = inferred.graph
    except Exception:
        main = None  # onnx refuses the model: names and uses only
    given = _gen.model_symbols(model)
    found = []
    for where, ours, theirs, inf, chain in _walk(fm.graph, model.graph, main, [], label):
        found += _check_graph(where, ours, theirs, inf, chain, given, counts)
    return found


def _models() -> list:
    cases = sorted(infer_case_dir().rglob("*.onnx"))
    return [*corpus_models(), *wheel_models(), *cases]


def test_values_match_the_model_on_every_corpus_wheel_and_case_model() -> None:
    """Every graph's values, as loaded (decode on touch) and stripped of
    declared types; and as returned by infer_shapes (an eager tree)."""
    found, compared, graphs = [], 0, 0
    counts = collections.Counter()
    for path in _models():
        model = onnx.load(str(path))
        stripped = copy.deepcopy(model)
        _gen.strip(stripped.graph)
        blob = stripped.SerializeToString()
        diffs = _compare(onnxfast.load(blob), stripped, f"{path.name} (stripped)", counts)
        if diffs and _cmp.bad_node_spec(model):
            continue  # documented: a node unfit for its schema's counts is not inferred (E731)
        found += diffs
        compared += 1
        graphs += sum(1 for _ in _walk(model.graph, model.graph, None, [], ""))
    assert not found, f"{len(found)} differences:\n" + "\n".join(found[:20])
    assert compared > 2000
    assert graphs > compared
    # 31,969 values, 29,269 typed by onnx, 289 read from enclosing graphs.
    assert counts["values"] > 30_000, counts
    assert counts["typed"] > 25_000, counts
    assert counts["outer"] > 250, counts


def test_values_of_an_inferred_model_and_its_subgraphs() -> None:
    model = onnx.load(str(next(p for p in corpus_models() if "test_loop11" in str(p))))
    ours = onnxfast.infer_shapes(model.SerializeToString())
    diffs = _compare(ours, ours.to_onnx(), "loop11 inferred", collections.Counter())
    assert not diffs, diffs


# The API, on a model with a subgraph reading outer values.


def _if_model() -> onnx.ModelProto:
    then = helper.make_graph(
        [helper.make_node("Add", ["a", "x"], ["t"], name="add")],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)],
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["a"], ["e"], name="id")],
        "else",
        [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
    )
    g = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["a"], name="relu"),
            helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other, name="if"),
            helper.make_node("Mul", ["a", "a"], ["z"], name="mul"),
        ],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3]),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, None),
        ],
        initializer=[helper.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0])],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_values_api() -> None:
    m = onnxfast.load(_if_model().SerializeToString())
    values = m.graph.values
    assert isinstance(values, collections.abc.Mapping)
    assert list(values) == ["x", "c", "w", "a", "y", "z"]
    assert values.keys() == list(values)
    assert len(values) == 6
    assert [k for k, _ in values.items()] == list(values)
    assert [v.name for v in values.values()] == list(values)
    assert "a" in values
    assert "t" not in values
    assert 3 not in values
    assert values.get("t") is None
    assert values.get("t", 0) == 0
    with pytest.raises(KeyError, match="'t'"):
        values["t"]
    assert repr(values) == "Values(<6 values>)"

    a = values["a"]
    node, index = a.producer
    assert (node.name, index, a.kind) == ("relu", 0, "node")
    uses = [(n.name, k) for n, k in a.consumers]
    # Through the If's branches (else_branch is the If's first attribute),
    # then Mul reading it twice.
    assert uses == [("id", 0), ("add", 0), ("mul", 0), ("mul", 1)]
    assert a.declared_type is None
    assert a.type.to_onnx() == helper.make_tensor_type_proto(TensorProto.FLOAT, ["N", 3])
    assert a.shape == ["N", 3]
    assert a == values["a"]
    assert hash(a) == hash(values["a"])
    assert repr(a) == "Value('a', FLOAT['N', 3], node 0 output 0)"

    y = values["y"]
    assert y.is_output
    assert not a.is_output
    assert y.declared_type.to_onnx() == helper.make_tensor_type_proto(TensorProto.FLOAT, None)
    assert y.shape == ["N", 3], "the declaration completed by inference"
    w = values["w"]
    assert (w.kind, w.producer, w.consumers, w.declared_type, w.shape) == (
        "initializer",
        None,
        [],
        None,
        [2],
    )
    assert values["x"].kind == "input"
    assert values["x"].shape == ["N", 3]

    # Inside a branch: its own values, then the enclosing graph's it reads.
    then = m.graph.node[1].attribute[1].g
    assert then.name == "then"
    inner = then.values
    assert list(inner) == ["t", "a", "x"]
    assert repr(inner) == "Values(<3 values, 2 from enclosing graphs>)"
    assert inner["a"] == a
    assert inner["a"].graph.name == "g"
    assert inner["x"].kind == "input"
    assert inner["t"].graph.name == "then"
    assert [(n.name, k) for n, k in inner["t"].consumers] == []
    assert "w" not in inner, "enclosing values the branch does not read are not listed"


def test_memory_plan_api() -> None:
    """Graph.memory_plan on a graph with branches reading outer values."""
    m = onnxfast.load(_if_model().SerializeToString())
    plan = m.graph.memory_plan({"N": 5})
    assert plan.shapes == {
        "x": [5, 3],
        "c": [],
        "w": [2],
        "a": [5, 3],
        "y": [5, 3],
        "z": [5, 3],
    }
    assert plan.bytes == {"x": 60, "c": 1, "w": 8, "a": 60, "y": 60, "z": 60}
    # `a` is read inside the If's branches (node 1) and by Mul (node 2).
    assert plan.live == {"a": (0, 2), "y": (1, None), "z": (2, None)}
    assert (plan.total_bytes, plan.peak_bytes, plan.peak_node, plan.unknown) == (180, 180, 2, 0)
    assert repr(plan) == "MemoryPlan(total_bytes=180, peak_bytes=180, peak_node=2, unknown=0)"
    # Sizes not given: what depends on them is unknown.
    plan = m.graph.memory_plan({})
    assert plan.shapes["a"] == [None, 3]
    assert (plan.bytes["a"], plan.bytes["w"]) == (None, 8)
    assert (plan.total_bytes, plan.peak_bytes, plan.peak_node, plan.unknown) == (0, 0, None, 3)
    # The branch's own plan: its output, held to the end.
    then = m.graph.node[1].attribute[1].g
    assert then.memory_plan({"N": 2}).live == {"t": (0, None)}
    # A value read inside a branch only is held until the If.
    model = _if_model()
    model.graph.node[2].input[:] = ["x", "x"]
    plan = onnxfast.load(model.SerializeToString()).graph.memory_plan({"N": 5})
    assert plan.live == {"a": (0, 1), "y": (1, None), "z": (2, None)}
    assert (plan.peak_bytes, plan.peak_node) == (120, 1)
    with pytest.raises(TypeError, match="mapping"):
        m.graph.memory_plan([("N", 1)])
    with pytest.raises(ValueError, match="below 0"):
        m.graph.memory_plan({"N": -1})


def _bits_per_element() -> dict[int, int]:
    """Bits an element of each fixed-size data type takes in raw_data, as
    onnx's numpy_helper writes 8 of them (sub-byte types packed)."""
    import numpy as np

    bits = {}
    for code in range(1, 29):
        if code == TensorProto.STRING:
            continue
        dtype = helper.tensor_dtype_to_np_dtype(code)
        t = onnx.numpy_helper.from_array(np.zeros(8, dtype).astype(dtype))
        t.data_type = code
        bits[code] = len(t.raw_data)
    return bits


def _dim_at(d: onnx.TensorShapeProto.Dimension, sizes: dict[str, int]) -> int | None:
    if d.HasField("dim_value"):
        # A negative value (an exporter's -1) is no size.
        return d.dim_value if d.dim_value >= 0 else None
    return sizes.get(d.dim_param) if d.HasField("dim_param") else None


def test_memory_plan_matches_onnx_on_every_corpus_wheel_and_case_model() -> None:
    """Every graph's memory plan against onnx, each model stripped of its
    declared types: shapes at the sizes from onnx's inferred types, bytes
    from numpy_helper's element sizes (None from 2**64 on), each node output held from its node
    to the last node reading it (in its subgraphs too, as onnx's protos
    say), graph outputs to the end; totals and peak from those."""
    import math

    bits = _bits_per_element()
    assert (bits[TensorProto.FLOAT], bits[TensorProto.INT4], bits[27]) == (32, 4, 6)
    found, compared, onnx_typed = [], 0, 0
    for path in _models():
        model = onnx.load(str(path))
        if _cmp.bad_node_spec(model):
            continue
        stripped = copy.deepcopy(model)
        _gen.strip(stripped.graph)
        try:
            inferred = onnx.shape_inference.infer_shapes(
                stripped, check_type=True, strict_mode=True
            ).graph
        except Exception:
            inferred = None
        sizes = {s: 3 + k for k, s in enumerate(sorted(_gen.model_symbols(model)))}
        ours_model = onnxfast.load(stripped.SerializeToString())
        walk = _walk(ours_model.graph, stripped.graph, inferred, [], path.parent.name)
        for where, ours, theirs, inf, _ in walk:
            plan = ours.memory_plan(sizes)
            defs = _defs(theirs)
            if list(plan.shapes) != list(defs):
                found.append(f"{where}: names {list(plan.shapes)[:5]} vs {list(defs)[:5]}")
                continue
            values = ours.values
            shapes, sized, total, unknown = {}, {}, 0, 0
            for name in defs:
                t = _onnx_type(inf, name) if inf is not None else None
                if t is not None:
                    onnx_typed += 1
                    kind = t.WhichOneof("value")
                    tt = getattr(t, kind) if kind in ("tensor_type", "sparse_tensor_type") else None
                    shape = (
                        [_dim_at(d, sizes) for d in tt.shape.dim]
                        if tt is not None and tt.HasField("shape")
                        else None
                    )
                    elem = tt.elem_type if tt is not None else 0
                else:
                    # No onnx type to read (onnx refused the model or keeps
                    # no types for this subgraph): the value's own.
                    shape = values[name].shape_at(sizes)
                    vt = values[name].type
                    elem = vt.tensor_type.elem_type if vt is not None and vt.tensor_type else 0
                    if vt is not None and vt.sparse_tensor_type is not None:
                        elem = vt.sparse_tensor_type.elem_type
                shapes[name] = shape
                known = shape is not None and all(d is not None and d >= 0 for d in shape)
                b = (math.prod(shape) * bits[elem] + 7) // 8 if known and elem in bits else None
                # Documented: 2**64 bytes and more (hostile dims) are not counted.
                sized[name] = b if b is None or b < 2**64 else None
            if plan.shapes != shapes or plan.bytes != sized:
                diff = [n for n in defs if (plan.shapes[n], plan.bytes[n]) != (shapes[n], sized[n])]
                n = diff[0]
                found.append(
                    f"{where} {n!r}: {plan.shapes[n]} {plan.bytes[n]} vs {shapes[n]} {sized[n]}"
                )
                continue
            last: dict[str, int] = {}
            for i, node in enumerate(theirs.node):
                for x in node.input:
                    last[x] = i
                for sub in _subgraphs(node):
                    for x in _captured(sub):
                        last[x] = i
            outputs = {o.name for o in theirs.output}
            live = {}
            made = [0] * len(theirs.node)
            freed = [0] * len(theirs.node)
            for name, d in defs.items():
                if d[0] != "node":
                    continue
                end = None if name in outputs else max(last.get(name, d[1]), d[1])
                live[name] = (d[1], end)
                if sized[name] is None:
                    unknown += 1
                    continue
                total += sized[name]
                made[d[1]] += sized[name]
                if end is not None:
                    freed[end] += sized[name]
            held = peak = 0
            peak_node = None
            for i in range(len(theirs.node)):
                held += made[i]
                if held > peak:
                    peak, peak_node = held, i
                held -= freed[i]
            got = (plan.live, plan.total_bytes, plan.peak_bytes, plan.peak_node, plan.unknown)
            if got != (live, total, peak, peak_node, unknown):
                found.append(f"{where}: {got[1:]} vs {(total, peak, peak_node, unknown)}")
            compared += 1
    assert not found, f"{len(found)} differences:\n" + "\n".join(found[:20])
    assert compared > 2000
    assert onnx_typed > 25_000


def test_values_of_a_function_body_subgraph_have_declared_types() -> None:
    """Graphs in function bodies are not below the main graph: no inference
    result there, their declared types only; outer names do not resolve."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["v"], ["o"])],
        "body",
        [],
        [helper.make_tensor_value_info("o", TensorProto.FLOAT, [1])],
    )
    f = helper.make_function(
        "local",
        "F",
        ["v", "c"],
        ["r"],
        [helper.make_node("If", ["c"], ["r"], then_branch=body, else_branch=body)],
        [helper.make_opsetid("", 17)],
    )
    g = helper.make_graph(
        [helper.make_node("F", ["x", "c"], ["y"], domain="local")],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1]),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(
        g,
        functions=[f],
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
    )
    m = onnxfast.load(model.SerializeToString())
    sub = m.functions[0].node[0].attribute[0].g
    values = sub.values
    assert list(values) == ["o"]
    assert values["o"].type.to_onnx() == helper.make_tensor_type_proto(TensorProto.FLOAT, [1])
    assert "v" not in values
    assert m.graph.values["y"].shape == [1]


def test_values_of_a_big_graph_decoded_on_touch() -> None:
    """A 20,000-node chain loaded for decode on touch: one index, lookups by
    name, producer and consumers from nodes decoded then."""
    n = 20_000
    nodes = [helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"r{i}") for i in range(n)]
    g = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("t0", TensorProto.FLOAT, ["B", 8])],
        [helper.make_tensor_value_info(f"t{n}", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m = onnxfast.load(model.SerializeToString())
    values = m.graph.values
    assert len(values) == n + 1
    mid = values[f"t{n // 2}"]
    assert mid.producer[0].name == f"r{n // 2 - 1}"
    assert [(c.name, k) for c, k in mid.consumers] == [(f"r{n // 2}", 0)]
    assert values[f"t{n}"].shape == ["B", 8]
    assert values[f"t{n}"].is_output


def test_types_of_a_graph_decoded_on_touch_are_what_infer_shapes_writes() -> None:
    """Value.type on a lazily loaded model reads each value's written-back
    entry: the type `onnxfast.infer_shapes` gives it (merged declarations,
    appended entries, fresh dim names, outputs, initializers), and onnx's
    dims."""
    n = 3_000
    nodes, inits, infos = [], [], []
    prev = "x"
    for i in range(n):
        w, out = f"w{i}", f"t{i}"
        inits.append(helper.make_tensor(w, TensorProto.FLOAT, [4], [0.5] * 4))
        op = "Add" if i % 2 else "Mul"
        nodes.append(helper.make_node(op, [prev, w], [out], name=f"n{i}"))
        if i % 100 == 7:
            # A side branch with a dim no rule can know (fresh names).
            nodes.append(helper.make_node("NonZero", [out], [f"nz{i}"], name=f"z{i}"))
        if i % 3 == 0:
            infos.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, None))
        elif i % 3 == 1:
            infos.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, ["N", None]))
        elif i % 50 == 2:
            infos.append(helper.make_value_info(out, onnx.TypeProto()))
        prev = out
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)],
        initializer=inits,
        value_info=infos,
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    blob = model.SerializeToString()
    theirs = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True).graph
    ours = onnxfast.infer_shapes(blob).to_onnx().graph
    values = onnxfast.load(blob).graph.values
    written = {v.name: v.type for v in [*ours.output, *ours.input, *ours.value_info]}
    expected = {v.name: v.type for v in [*theirs.output, *theirs.input, *theirs.value_info]}
    given = {"N"}
    compared = 0
    for name in values:
        got = values[name].type
        got = got.to_onnx() if got is not None else None
        if name.startswith("w"):
            assert got == helper.make_tensor_type_proto(TensorProto.FLOAT, [4]), name
            continue
        assert got == written[name], name
        assert _cmp.dims(got, given) == _cmp.dims(expected[name], given), name
        compared += 1
    assert compared == len(values) - n
    assert sum(1 for v in written.values() if "unk__" in str(v)) >= 30


def test_a_negative_dim_value_is_no_size() -> None:
    """Paddle2ONNX declares dynamic dims as -1, and onnx's inference carries
    the -1 to every value computed from it: Value.shape shows it as the model
    says, shape_at and memory_plan read it as unknown."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3, "h"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    model = onnxfast.infer_shapes(helper.make_model(graph))
    value = model.graph.values["y"]
    assert value.shape == [-1, 3, "h"]
    assert value.shape_at({"h": 5}) == [None, 3, 5]
    plan = model.graph.memory_plan({"h": 5})
    assert plan.shapes["y"] == [None, 3, 5]
    assert plan.bytes["y"] is None
