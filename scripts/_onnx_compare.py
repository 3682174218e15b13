"""How the scripts and tests compare onnxfast's inferred models with onnx's
(diff_random_models.py, tests/test_infer_shapes.py, tests/test_values.py):
fresh dim names forgotten, the first difference named, whether onnx's
structural checker refuses a node against its schema, and each value's type
as (kind, element type, dims) for data propagation, where onnxfast may know
more than onnx (`refines`)."""

from __future__ import annotations

import copy
import re

import onnx

UNK = re.compile(r"unk__\d+")


def forget_fresh(model: onnx.ModelProto, given: set[str]) -> onnx.ModelProto:
    """`model` with every dim named by inference (a dim_param not in `given`,
    the input model's symbols, in the unk__N style) made "?": both sides name
    them, each in its own order."""
    model = copy.deepcopy(model)

    def fix_type(t: onnx.TypeProto) -> None:
        kind = t.WhichOneof("value")
        if kind in ("tensor_type", "sparse_tensor_type"):
            tt = getattr(t, kind)
            for d in tt.shape.dim:
                if (
                    d.HasField("dim_param")
                    and d.dim_param not in given
                    and UNK.fullmatch(d.dim_param)
                ):
                    d.dim_param = "?"
        elif kind in ("sequence_type", "optional_type"):
            fix_type(getattr(t, kind).elem_type)
        elif kind == "map_type":
            fix_type(t.map_type.value_type)

    def fix_graph(g: onnx.GraphProto) -> None:
        for vi in [*g.input, *g.output, *g.value_info]:
            fix_type(vi.type)
        for n in g.node:
            for a in n.attribute:
                if a.HasField("g"):
                    fix_graph(a.g)
                for sub in a.graphs:
                    fix_graph(sub)

    fix_graph(model.graph)
    return model


def first_difference(ours: onnx.GraphProto, theirs: onnx.GraphProto, where: str) -> str:
    for field in ("input", "output", "value_info"):
        a, b = getattr(ours, field), getattr(theirs, field)
        if len(a) != len(b):
            names_a, names_b = [v.name for v in a], [v.name for v in b]
            return f"{where}.{field}: {len(a)} entries, onnx {len(b)}: {names_a} vs {names_b}"
        for x, y in zip(a, b):
            if x != y:
                return f"{where}.{field} {x.name!r}: ours {x.type} onnx {y.type}"
    for i, (n, m) in enumerate(zip(ours.node, theirs.node)):
        for a, b in zip(n.attribute, m.attribute):
            if a.HasField("g") and a.g != b.g:
                return first_difference(a.g, b.g, f"{where}/{i}.{a.name}")
    return f"{where}: other fields differ"


def bad_node_spec(model: onnx.ModelProto) -> bool:
    """onnx's structural checker rejects a node of `model` against its schema
    (counts, attribute types, required attributes)."""
    ctx = onnx.checker.C.CheckerContext()
    ctx.ir_version = model.ir_version
    ctx.opset_imports = {o.domain: o.version for o in model.opset_import}
    lex = onnx.checker.C.LexicalScopeContext()
    for node in model.graph.node:
        try:
            onnx.checker.check_node(node, ctx, lex)
        except onnx.checker.ValidationError:
            return True
    return False


def dims(t: onnx.TypeProto, given: set[str]) -> tuple | None:
    """(kind, element type, dims) with fresh dim names as None."""
    kind = t.WhichOneof("value")
    if kind not in ("tensor_type", "sparse_tensor_type"):
        return (kind, str(t))
    tt = getattr(t, kind)
    if not tt.HasField("shape"):
        return (kind, tt.elem_type, None)
    shown: list = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            shown.append(d.dim_value)
        elif d.HasField("dim_param") and not (
            d.dim_param not in given and UNK.fullmatch(d.dim_param)
        ):
            shown.append(d.dim_param)
        else:
            shown.append(None)
    return (kind, tt.elem_type, shown)


def refines(ours: tuple | None, theirs: tuple | None, free: frozenset[str] = frozenset()) -> bool:
    """`ours` says what `theirs` says, and maybe more: a dim onnx leaves
    unknown may be known, and so may a dim onnx leaves as the model declared
    it with a symbol that no graph input has (`free`: the inputs' symbols;
    onnx's merge would write an inferred number over such a symbol). A
    negative dim value of onnx's (a declared -1 carried on: no size) says
    nothing: ours may be unknown there."""
    if ours == theirs:
        return True
    if ours is None or theirs is None or ours[:2] != theirs[:2] or len(ours) != 3:
        return False
    if theirs[2] is None:
        return True
    if ours[2] is None or len(ours[2]) != len(theirs[2]):
        return False
    return all(
        t is None
        or o == t
        or (isinstance(t, str) and t not in free and isinstance(o, int))
        or (isinstance(t, int) and t < 0 and (o is None or isinstance(o, int)))
        for o, t in zip(ours[2], theirs[2])
    )


def input_symbols(g: onnx.GraphProto) -> frozenset[str]:
    """The dim symbols of the inputs of `g` and of its subgraphs."""
    found = {
        d.dim_param
        for v in g.input
        if v.type.WhichOneof("value") == "tensor_type"
        for d in v.type.tensor_type.shape.dim
        if d.dim_param
    }
    for n in g.node:
        for a in n.attribute:
            if a.HasField("g"):
                found |= input_symbols(a.g)
    return frozenset(found)


def typed_values(g: onnx.GraphProto, given: set[str], at: str = "main") -> dict:
    """Every typed entry of `g` and its subgraphs, by (graph path, field,
    name), as `dims` gives it (None: declared without a type)."""
    out = {}
    for field in ("input", "output", "value_info"):
        for v in getattr(g, field):
            out[(at, field, v.name)] = dims(v.type, given) if v.HasField("type") else None
    for i, n in enumerate(g.node):
        for a in n.attribute:
            if a.HasField("g"):
                out.update(typed_values(a.g, given, f"{at}/{i}.{a.name}"))
    return out


def first_unrefined(ours: onnx.GraphProto, theirs: onnx.GraphProto, given: set[str]) -> str | None:
    """None when every value's type in `ours` is onnx's or refines it (see
    `refines`), else the first that does not."""
    a, b = typed_values(ours, given), typed_values(theirs, given)
    if a.keys() != b.keys():
        return f"values {sorted(set(a) ^ set(b))[:5]}"
    free = input_symbols(theirs)
    for k in a:
        if not refines(a[k], b[k], free):
            return f"{k} ours {a[k]} onnx {b[k]}"
    return None
