"""The onnxfast command line: ``onnxfast info PATH``."""

from __future__ import annotations

import argparse
import collections
import json
import sys
from typing import Any

from . import __version__, load
from .errors import OnnxFastError


def _describe_type(vi: Any) -> str:
    text = repr(vi.type) if vi.type is not None else "?"
    return text[len("Type(") : -1] if text.startswith("Type(") else text


def model_info(model: Any) -> dict[str, Any]:
    graph = model.graph
    nodes = graph.node if graph is not None else []
    by_op = collections.Counter(
        (f"{n.domain}::{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type)
        for n in nodes
    )
    return {
        "ir_version": model.ir_version,
        "producer": f"{model.producer_name} {model.producer_version}".strip(),
        "opsets": {d or "ai.onnx": v for d, v in model.opsets.items()},
        "graph": graph.name if graph is not None else None,
        "inputs": [
            (vi.name, _describe_type(vi)) for vi in (graph.input if graph is not None else [])
        ],
        "outputs": [
            (vi.name, _describe_type(vi)) for vi in (graph.output if graph is not None else [])
        ],
        "nodes": len(nodes),
        "ops": dict(by_op.most_common()),
        "initializers": len(graph.initializer) if graph is not None else 0,
        "functions": [f"{f.domain}::{f.name}" for f in model.functions],
        "metadata": {p.key: p.value for p in model.metadata_props},
    }


def _print_info(path: str, info: dict[str, Any]) -> None:
    print(path)
    print(f"  ir_version   {info['ir_version']}")
    print(f"  producer     {info['producer'] or '-'}")
    print("  opsets       " + ", ".join(f"{d} {v}" for d, v in info["opsets"].items()))
    print(
        f"  graph        {info['graph']}  "
        f"({info['nodes']} nodes, {info['initializers']} initializers)"
    )
    for title, values in (("inputs", info["inputs"]), ("outputs", info["outputs"])):
        print(f"  {title}")
        width = max((len(n) for n, _ in values), default=0)
        for name, typ in values:
            print(f"    {name:<{width}}  {typ}")
    print("  ops")
    width = max((len(op) for op in info["ops"]), default=0)
    for op, count in info["ops"].items():
        print(f"    {op:<{width}}  {count}")
    if info["functions"]:
        print("  functions    " + ", ".join(info["functions"]))
    for key, value in info["metadata"].items():
        print(f"  meta {key}: {value}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="onnxfast", description="Inspect and validate ONNX models."
    )
    parser.add_argument("--version", action="version", version=f"onnxfast {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="summarise a model (reads no weights)")
    info.add_argument("path")
    info.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)

    if args.command == "info":
        try:
            model = load(args.path)
        except (OSError, OnnxFastError) as e:
            print(f"onnxfast: error: {e}", file=sys.stderr)
            return 2
        data = model_info(model)
        if args.json:
            print(json.dumps({"path": args.path, **data}))
        else:
            _print_info(args.path, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
