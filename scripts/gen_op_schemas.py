"""Regenerates rust/onnxfast-core/data/op_schemas.txt from the installed onnx.

    python scripts/gen_op_schemas.py

Rerun when onnx releases (the checker's verdicts follow this table). The file
is plain text, one record per line, fields separated by a single space:

    # onnx <version>
    D <domain> <min_version> <max_version>            (opset range of a domain)
    S <domain> <op_type> <since_version> <deprecated 0|1> <min_in> <max_in> <min_out> <max_out>
      <how>                                           (i: onnx has a type-and-shape inference
                                                       function, f: a function body, c: a
                                                       context-dependent body; - none)
    I <name> <option S|O|V> <min_arity> <homogeneous 0|1> <type_str>
                                                      (inputs of the S above, in order)
    O <name> <option S|O|V> <min_arity> <homogeneous 0|1> <type_str>   (outputs)
    T <type_str> <allowed types, ';'-separated>       (type constraints)
    A <name> <AttributeProto type code> <required 0|1> <default>       (attributes)
    F <hex of the FunctionProto>                      (the body onnx infers through: only for
                                                       schemas with a body and no inference
                                                       function)

`-` stands for the empty domain (ai.onnx), for empty names and for "no default".
Types are written canonically, as onnx's DataTypeUtils::ToString prints them
(`tensor(float)`, `seq(tensor(int64))`, `map(int64,tensor(float))`): a scalar
element type inside a map or sequence stands for a tensor of it. Defaults:
INT as a decimal, FLOAT as Python's repr, INTS / FLOATS comma-separated,
STRING as `s` + the text when it is printable ASCII without spaces or
commas, else `x` + hex (STRINGS: comma-separated), TENSOR as `x` + hex of the
serialized TensorProto.
"""

from __future__ import annotations

from pathlib import Path

import onnx
import onnx.defs

OUT = Path(__file__).resolve().parent.parent / "rust" / "onnxfast-core" / "data" / "op_schemas.txt"

_OPTION = {
    onnx.defs.OpSchema.FormalParameterOption.Single: "S",
    onnx.defs.OpSchema.FormalParameterOption.Optional: "O",
    onnx.defs.OpSchema.FormalParameterOption.Variadic: "V",
}


def _token(text: str) -> str:
    if not text:
        return "-"
    if any(c.isspace() for c in text):
        raise ValueError(f"unexpected white space in {text!r}")
    return text


def _canonical(type_str: str) -> str:
    """onnx's canonical spelling of a type string (DataTypeUtils::ToString of
    DataTypeUtils::FromString): no spaces, scalars inside containers as tensors."""
    t = type_str.replace(" ", "")
    for prefix in ("seq", "optional"):
        if t.startswith(prefix + "("):
            return f"{prefix}({_canonical(t[len(prefix) + 1 : -1])})"
    if t.startswith("map("):
        key, value = t[4:-1].split(",", 1)
        return f"map({key},{_canonical(value)})"
    if t.startswith(("tensor(", "sparse_tensor(", "opaque(")):
        return t
    return f"tensor({t})"


def _text(data: bytes) -> str:
    """`s` + the text when it is plain (printable ASCII, no space or comma),
    else `x` + hex."""
    if all(0x21 <= b < 0x7F and b != ord(",") for b in data):
        return "s" + data.decode("ascii")
    return "x" + data.hex()


def _default(attr) -> str:
    dv = attr.default_value
    kind = onnx.AttributeProto
    if dv.type == kind.UNDEFINED:
        return "-"
    if dv.type == kind.INT:
        return str(dv.i)
    if dv.type == kind.FLOAT:
        return repr(dv.f)
    if dv.type == kind.STRING:
        return _text(dv.s)
    if dv.type == kind.INTS:
        return ",".join(str(v) for v in dv.ints) or "-"
    if dv.type == kind.FLOATS:
        return ",".join(repr(v) for v in dv.floats) or "-"
    if dv.type == kind.STRINGS:
        return ",".join(_text(v) for v in dv.strings) or "-"
    if dv.type == kind.TENSOR:
        return "x" + dv.t.SerializeToString().hex()
    raise ValueError(f"unexpected default of type {dv.type}")


def _how(s) -> str:
    flags = ""
    if s.has_type_and_shape_inference_function:
        flags += "i"
    if s.has_function:
        flags += "f"
    if s.has_context_dependent_function:
        flags += "c"
    return flags or "-"


def schema_lines(
    s,
    how: str,
    params: list[tuple[str, str, str, int, bool, str]],
    attributes: list[tuple[str, int, bool, str]],
) -> list[str]:
    """The records of one schema `s` (its domain, name, since_version,
    deprecated and counts are read from it; the rest is given, as each
    generator reads it from its library's schema objects): `params` as (tag
    I or O, name, option S/O/V, min_arity, homogeneous, type string) and
    `attributes` as (name, type code, required, default text)."""
    lines = [
        f"S {_token(s.domain)} {_token(s.name)} {s.since_version} {int(s.deprecated)} "
        f"{s.min_input} {s.max_input} {s.min_output} {s.max_output} {how}"
    ]
    constraints = {c.type_param_str for c in s.type_constraints}
    for tag, name, option, min_arity, homogeneous, type_str in params:
        type_str = type_str if type_str in constraints else _canonical(type_str)
        lines.append(
            f"{tag} {_token(name)} {option} {min_arity} {int(homogeneous)} {_token(type_str)}"
        )
    for c in s.type_constraints:
        allowed = ";".join(_canonical(t) for t in c.allowed_type_strs)
        lines.append(f"T {_token(c.type_param_str)} {_token(allowed)}")
    for name, code, required, default in sorted(attributes):
        lines.append(f"A {_token(name)} {code} {int(required)} {default}")
    return lines


def main() -> None:
    schemas = sorted(
        onnx.defs.get_all_schemas_with_history(),
        key=lambda s: (s.domain, s.name, s.since_version),
    )
    lines = [f"# onnx {onnx.__version__}"]
    for domain, (low, high) in sorted(onnx.defs.C.schema_version_map().items()):
        lines.append(f"D {_token(domain)} {low} {high}")
    for s in schemas:
        params = [
            (tag, p.name, _OPTION[p.option], p.min_arity, p.is_homogeneous, p.type_str)
            for tag, group in (("I", s.inputs), ("O", s.outputs))
            for p in group
        ]
        attributes = [
            (name, int(a.type.value), a.required, _default(a)) for name, a in s.attributes.items()
        ]
        lines += schema_lines(s, _how(s), params, attributes)
        if s.has_function and not s.has_type_and_shape_inference_function:
            lines.append(f"F {s.function_body.SerializeToString().hex()}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {len(schemas)} schemas to {OUT}")


if __name__ == "__main__":
    main()
