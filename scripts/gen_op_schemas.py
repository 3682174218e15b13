"""Regenerates rust/onnxfast-core/data/op_schemas.txt from the installed onnx.

    python scripts/gen_op_schemas.py

Rerun when onnx releases (the checker's verdicts follow this table). The file
is plain text, one record per line, fields separated by a single space:

    # onnx <version>
    D <domain> <min_version> <max_version>            (opset range of a domain)
    S <domain> <op_type> <since_version> <deprecated 0|1> <min_in> <max_in> <min_out> <max_out>
    I <name> <option S|O|V> <min_arity> <homogeneous 0|1>   (inputs of the S above, in order)
    O <name> <option S|O|V> <min_arity> <homogeneous 0|1>   (outputs)
    A <name> <AttributeProto type code> <required 0|1>       (attributes)

`-` stands for the empty domain (ai.onnx) and for empty names.
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


def main() -> None:
    schemas = sorted(
        onnx.defs.get_all_schemas_with_history(),
        key=lambda s: (s.domain, s.name, s.since_version),
    )
    lines = [f"# onnx {onnx.__version__}"]
    for domain, (low, high) in sorted(onnx.defs.C.schema_version_map().items()):
        lines.append(f"D {_token(domain)} {low} {high}")
    for s in schemas:
        lines.append(
            f"S {_token(s.domain)} {_token(s.name)} {s.since_version} {int(s.deprecated)} "
            f"{s.min_input} {s.max_input} {s.min_output} {s.max_output}"
        )
        for tag, params in (("I", s.inputs), ("O", s.outputs)):
            for p in params:
                option = _OPTION[p.option]
                lines.append(
                    f"{tag} {_token(p.name)} {option} {p.min_arity} {int(p.is_homogeneous)}"
                )
        for name, attr in sorted(s.attributes.items()):
            lines.append(f"A {_token(name)} {int(attr.type.value)} {int(attr.required)}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {len(schemas)} schemas to {OUT}")


if __name__ == "__main__":
    main()
