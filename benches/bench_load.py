"""Load benchmark: onnxfast.load against onnx.load and onnx_ir.load, same run.

    python benches/bench_load.py [--quick]

Inputs are built on first use under bench-data/ (ONNXFAST_BENCH_DATA):
a ~1.5 GB fp16 transformer-shaped model with inline weights, a 200,000-node
graph of name-only nodes, three exporter-shaped graphs (an attribute per
node; plus a value_info per node; plus a small initializer and a doc string
per node), and a 2.5 GiB single-file model (onnx cannot read it). Prints a
markdown table of median wall time (and the farthest run from it), peak RSS
growth and ratios; the transformer is also loaded from an open file object
(onnx reads it, onnxfast maps it); graphs are also loaded and iterated from Python (every
node and initializer object made, no field read: the floor under a walk),
walked (every node's inputs, every initializer's dims), loaded with a histogram of the
nodes' op types made, and loaded with every node and initializer object
kept in a list.
"""

from __future__ import annotations

import argparse
import sys

from _common import (
    DATA,
    chain_model,
    exporter_model,
    fmt_bytes,
    fmt_seconds,
    fmt_spread,
    huge_model,
    measure_interleaved,
    table,
    transformer_model,
    warm,
)

LOADERS = {
    "onnx": ("import onnx", "m = onnx.load({path!r})"),
    "onnx_ir": ("import onnx_ir", "m = onnx_ir.load({path!r})"),
    "onnxfast": ("import onnxfast", "m = onnxfast.load({path!r})"),
}

# The same file handed over as an open file object (onnx reads it; onnxfast
# maps it from the object's position).
FROM_OPEN_FILE = {
    "onnx": ("import onnx", "with open({path!r}, 'rb') as f:\n    m = onnx.load(f)"),
    "onnxfast": ("import onnxfast", "with open({path!r}, 'rb') as f:\n    m = onnxfast.load(f)"),
}

# The floor under a walk: every node and initializer object made, no field
# read (what any loop over the lists pays before its first getter).
ITERATE = {
    "onnx": "n = sum(1 for x in m.graph.node) + sum(1 for t in m.graph.initializer)",
    "onnxfast": "n = sum(1 for x in m.graph.node) + sum(1 for t in m.graph.initializer)",
}

# What a user does next: walk every node and initializer (forces object
# creation, and for onnxfast decoding, where lazy).
TOUCH = {
    "onnx": "n = sum(len(x.input) for x in m.graph.node)"
    " + sum(len(t.dims) for t in m.graph.initializer)",
    "onnxfast": "n = sum(len(x.input) for x in m.graph.node)"
    " + sum(len(t.dims) for t in m.graph.initializer)",
}


# What most programs read of each node: its op type (a histogram of them).
OP_TYPES = {
    "onnx": "import collections\nn = collections.Counter(x.op_type for x in m.graph.node)",
    "onnxfast": "import collections\nn = collections.Counter(x.op_type for x in m.graph.node)",
}


# What a program that keeps the objects does (an index by name, a list to
# sort or filter): every node and initializer object alive at once.
KEEP = {
    "onnx": "nodes = list(m.graph.node)\ninits = list(m.graph.initializer)",
    "onnxfast": "nodes = list(m.graph.node)\ninits = list(m.graph.initializer)",
}


def _after_load(title: str, path, size: int, stmts: dict, repeat: int) -> list[list[str]]:
    """Rows for loading `path` then running each library's statement."""
    runs = measure_interleaved(
        {
            lib: (LOADERS[lib][0], LOADERS[lib][1].format(path=str(path)) + "\n" + stmt)
            for lib, stmt in stmts.items()
        },
        repeat=repeat,
    )
    return _rows(title, size, runs, failures=False)


def _rows(title: str, size: int, runs: dict, *, failures: bool) -> list[list[str]]:
    """A table row per library, ratios against onnxfast; a failed run gets
    a row with its error when `failures`."""
    ours = runs["onnxfast"]
    rows = []
    for lib, r in runs.items():
        if "error" in r:
            if failures:
                rows.append([title, fmt_bytes(size), lib, "fails: " + r["error"][:60], "", "", ""])
            continue
        speed = r["seconds"] / ours["seconds"] if "seconds" in ours else float("nan")
        rows.append(
            [
                title,
                fmt_bytes(size),
                lib,
                f"{fmt_seconds(r['seconds'])} {fmt_spread(r)}",
                fmt_bytes(r["peak_growth"]),
                "1.0×" if lib == "onnxfast" else f"{speed:.1f}× slower",
            ]
        )
    return rows


def inputs(quick: bool, graphs_only: bool = False) -> list[tuple[str, object, bool]]:
    """(title, path, walk it too) for each input (the graphs alone: those walked)."""
    scale = 10 if quick else 1
    made = []
    if not graphs_only:
        transformer = DATA / ("transformer_small.onnx" if quick else "transformer_1p5gb.onnx")
        model = transformer_model(transformer, layers=2 if quick else 15)
        made.append(("fp16 transformer, inline", model, False))
    made.append(("200k-node graph", chain_model(DATA / "chain_200k.onnx"), True))
    for title, name, n, extra in (
        ("150k nodes, an attribute each", "exp_150k_attr", 150_000, {}),
        ("150k nodes, attribute + value_info", "exp_150k_vi", 150_000, {"value_info": True}),
        (
            "200k nodes + 200k initializers + doc strings",
            "exp_200k_init_doc",
            200_000,
            {"initializers": True, "doc_strings": True},
        ),
    ):
        if quick:
            name, title = name + "_quick", title + f" (/{scale})"
        made.append((title, exporter_model(DATA / f"{name}.onnx", nodes=n // scale, **extra), True))
    if not quick and not graphs_only:
        made.append(("2.5 GiB single file", huge_model(DATA / "huge_2p5gib.onnx"), False))
    return made


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller inputs, one repeat")
    parser.add_argument(
        "--graphs-only",
        action="store_true",
        help="only the graph shapes (load and walk), against onnx alone (onnx_ir takes"
        " 3-8 s a load of these), 7 rounds",
    )
    args = parser.parse_args()
    # Medians of 5 fresh processes: single runs on this shared VM move by tens of percent.
    repeat = 1 if args.quick else 7 if args.graphs_only else 5
    loaders = {k: v for k, v in LOADERS.items() if not (args.graphs_only and k == "onnx_ir")}
    rows = []
    for title, path, walk in inputs(args.quick, args.graphs_only):
        warm(path)
        size = path.stat().st_size
        results = measure_interleaved(
            {lib: (setup, stmt.format(path=str(path))) for lib, (setup, stmt) in loaders.items()},
            repeat=repeat,
        )
        rows.extend(_rows(title, size, results, failures=True))
        if title.startswith("fp16 transformer"):
            opened = measure_interleaved(
                {
                    lib: (setup, stmt.format(path=str(path)))
                    for lib, (setup, stmt) in FROM_OPEN_FILE.items()
                },
                repeat=repeat,
            )
            rows.extend(_rows(title + ", open file", size, opened, failures=True))
        if not walk:
            continue
        for suffix, stmts in (
            (" + iterate", ITERATE),
            (" + walk", TOUCH),
            (" + op types", OP_TYPES),
            (" + keep", KEEP),
        ):
            rows.extend(_after_load(title + suffix, path, size, stmts, repeat))
    print(table(rows, ["input", "file", "library", "load time", "peak RSS growth", "vs onnxfast"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
