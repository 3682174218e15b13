"""Writes what onnx infers for a set of models, for onnxfast's Rust inference tests.

    python scripts/gen_infer_expected.py OUT.jsonl MODEL_OR_FOLDER...

For each model (folders are searched for `*.onnx`), one JSON object per line:

    {"path": "/abs/model.onnx",
     "full_check": null | "<onnx's error>",      # onnx.checker.check_model(full_check=True)
     "graphs": null | {"main": {"x": "tensor(float)[N,3,?]", ...},
                       "main/4.then_branch": {...}, ...}}

and, for each model the structural check accepts, a second record for a
"stripped" copy (`"stripped": true`, written beside OUT in OUT.stripped/):
the same model without `value_info` and without the types of its graph
outputs, in every graph, so that what onnx gives for them comes from
inference alone (declared types would otherwise mask a missing rule). Its
`full_check` is not recorded (the structural check needs output types).

`graphs` holds the type of every input, value_info entry and output of every
graph after `onnx.shape_inference.infer_shapes(model, check_type=True,
strict_mode=True)` (null when that fails or the structural check fails).
Subgraphs are named by the node index and attribute name at each level. In
type strings, a dim is its value, its symbol when the symbol comes from the
model, and `?` otherwise (unknown, or a symbol onnx made up: `unk__N`).

`tests/conftest.py` runs this over the node-test corpus and the onnx wheel's
models (the file is generated, not committed); the Rust test
`rust/onnxfast-core/tests/infer_corpus.rs` reads it.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import onnx
from onnx import shape_inference

ELEM = {v: k.lower() for k, v in onnx.TensorProto.DataType.items() if k != "UNDEFINED"}


def model_symbols(model: onnx.ModelProto) -> set[str]:
    """Every dim_param the model itself writes."""
    found: set[str] = set()

    def type_symbols(t: onnx.TypeProto) -> None:
        kind = t.WhichOneof("value")
        if kind in ("tensor_type", "sparse_tensor_type"):
            tt = getattr(t, kind)
            if tt.HasField("shape"):
                found.update(d.dim_param for d in tt.shape.dim if d.HasField("dim_param"))
        elif kind in ("sequence_type", "optional_type"):
            type_symbols(getattr(t, kind).elem_type)
        elif kind == "map_type":
            type_symbols(t.map_type.value_type)

    def graph_symbols(g: onnx.GraphProto) -> None:
        for vi in [*g.input, *g.output, *g.value_info]:
            type_symbols(vi.type)
        for n in g.node:
            for a in n.attribute:
                if a.HasField("g"):
                    graph_symbols(a.g)
                for sub in a.graphs:
                    graph_symbols(sub)
                if a.HasField("tp"):
                    type_symbols(a.tp)
                for tp in a.type_protos:
                    type_symbols(tp)

    graph_symbols(model.graph)
    for f in model.functions:
        for vi in f.value_info:
            type_symbols(vi.type)
    return found


def type_str(t: onnx.TypeProto, symbols: set[str]) -> str | None:
    kind = t.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        tt = getattr(t, kind)
        name = "tensor" if kind == "tensor_type" else "sparse_tensor"
        elem = ELEM.get(tt.elem_type, "undefined" if tt.elem_type == 0 else f"<{tt.elem_type}>")
        text = f"{name}({elem})"
        if tt.HasField("shape"):
            dims = []
            for d in tt.shape.dim:
                if d.HasField("dim_value"):
                    dims.append(str(d.dim_value))
                elif d.HasField("dim_param") and d.dim_param in symbols:
                    dims.append(d.dim_param)
                else:
                    dims.append("?")
            text += "[" + ",".join(dims) + "]"
        return text
    if kind in ("sequence_type", "optional_type"):
        inner = getattr(t, kind)
        name = "seq" if kind == "sequence_type" else "optional"
        elem = type_str(inner.elem_type, symbols) if inner.HasField("elem_type") else None
        return f"{name}({elem or '?'})"
    if kind == "map_type":
        key = ELEM.get(t.map_type.key_type, "undefined")
        has_value = t.map_type.HasField("value_type")
        value = type_str(t.map_type.value_type, symbols) if has_value else None
        return f"map({key},{value or '?'})"
    if kind == "opaque_type":
        return f"opaque({t.opaque_type.domain},{t.opaque_type.name})"
    return None


def graph_types(g: onnx.GraphProto, path: str, symbols: set[str], out: dict) -> None:
    values: dict[str, str] = {}
    for vi in [*g.input, *g.value_info, *g.output]:
        text = type_str(vi.type, symbols) if vi.HasField("type") else None
        if text is not None and vi.name:
            values[vi.name] = text
    out[path] = values
    for i, n in enumerate(g.node):
        for a in n.attribute:
            if a.HasField("g"):
                graph_types(a.g, f"{path}/{i}.{a.name}", symbols, out)


def strip(g: onnx.GraphProto) -> None:
    """Removes value_info and output types, in `g` and its subgraphs."""
    del g.value_info[:]
    for vi in g.output:
        vi.ClearField("type")
    for n in g.node:
        for a in n.attribute:
            if a.HasField("g"):
                strip(a.g)
            for sub in a.graphs:
                strip(sub)


def inferred_types(model: onnx.ModelProto, symbols: set[str]) -> dict | None:
    try:
        inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    except Exception:
        return None
    graphs: dict = {}
    graph_types(inferred.graph, "main", symbols, graphs)
    return graphs


def expected(path: Path, stripped_dir: Path, index: int) -> list[dict]:
    model = onnx.load(path, load_external_data=False)
    record: dict = {"path": str(path.resolve()), "full_check": None, "graphs": None}
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:
        record["full_check"] = f"{type(e).__name__}: {e}"[:500]
    try:
        onnx.checker.check_model(model)
    except Exception:
        return [record]
    symbols = model_symbols(model)
    record["graphs"] = inferred_types(model, symbols)
    strip(model.graph)
    stripped_path = stripped_dir / f"{index}-{path.parent.name}-{path.stem}.onnx"
    stripped_path.write_bytes(model.SerializeToString())
    graphs = inferred_types(model, symbols)
    if graphs is None:
        return [record]
    return [record, {"path": str(stripped_path.resolve()), "stripped": True, "graphs": graphs}]


def generate(out: Path, sources: list[Path]) -> Path:
    stripped_dir = out.parent / (out.name + ".stripped")
    paths: list[Path] = []
    for s in sources:
        found = sorted(s.rglob("*.onnx")) if s.is_dir() else [s]
        paths.extend(p for p in found if stripped_dir.resolve() not in p.resolve().parents)
    stripped_dir.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with warnings.catch_warnings(), tmp.open("w") as f:
        warnings.simplefilter("ignore")
        for i, p in enumerate(paths):
            for record in expected(p, stripped_dir, i):
                f.write(json.dumps(record) + "\n")
    tmp.replace(out)
    return out


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    target = generate(Path(sys.argv[1]), [Path(a) for a in sys.argv[2:]])
    print(f"wrote {target}")
