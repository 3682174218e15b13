"""Checker benchmark: onnxfast.check_model against onnx.checker.check_model, same run.

    python benches/bench_check.py [--quick]

Structural check (onnx's default) and full check (`full_check=True`: type and
shape inference), each on:
- the 200,000-node graph, already loaded (checker time only);
- the ~1.5 GB fp16 inline model checked from its path (onnxfast maps it and
  reads no weight; onnx must load it first): time and peak RSS growth;
- (full check) a model with 2.5 GiB of external data, from its path and
  loaded with its data (onnx's in-memory check cannot take it);
- a policy setting every key, enforced in the same walk, against the check
  alone and against onnx's load + check + the same rules hand-written over
  the onnx objects (what pipelines do today). `--policy-only` runs just this.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _common import (
    DATA,
    chain_model,
    fmt_bytes,
    fmt_seconds,
    fmt_spread,
    graph_models,
    measure_interleaved,
    table,
    transformer_model,
    warm,
)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--policy-only", action="store_true")
    args = parser.parse_args()
    if args.policy_only:
        print(policy_rows(args.quick))
        return 0
    repeat = 1 if args.quick else 5
    chain = chain_model(DATA / "chain_200k.onnx")
    big = transformer_model(
        DATA / ("transformer_small.onnx" if args.quick else "transformer_1p5gb.onnx"),
        layers=2 if args.quick else 15,
    )
    warm(chain)
    warm(big)
    rows = []
    # Checker only (model already in memory, checked once in setup): the mean
    # of `repeat` calls in one process.
    loop = "for _ in range({r}):\n    {call}\n"
    onnx_setup = f"import onnx\nm = onnx.load({str(chain)!r})\nonnx.checker.check_model(m)"
    ours_setup = f"import onnxfast\nm = onnxfast.load({str(chain)!r})\nonnxfast.check_model(m)"
    # Three processes each, taking turns (one process when --quick).
    checked = measure_interleaved(
        {
            "onnx": (onnx_setup, loop.format(r=repeat, call="onnx.checker.check_model(m)")),
            "ours": (ours_setup, loop.format(r=repeat, call="onnxfast.check_model(m)")),
        },
        repeat=1 if args.quick else 3,
    )
    r_onnx, r_ours = checked["onnx"], checked["ours"]
    t_onnx, t_ours = r_onnx["seconds"] / repeat, r_ours["seconds"] / repeat
    rows.append(
        [
            "200k-node graph, loaded",
            "onnx.checker.check_model",
            fmt_seconds(t_onnx),
            "",
            f"{t_onnx / t_ours:.1f}× slower",
        ]
    )
    rows.append(
        ["200k-node graph, loaded", "onnxfast.check_model", fmt_seconds(t_ours), "", "1.0×"]
    )
    # From a path: onnx needs the path variant above 2 GB; below, it loads the protobuf.
    by_path = measure_interleaved(
        {
            "onnx": ("import onnx", f"onnx.checker.check_model({str(big)!r})"),
            "ours": ("import onnxfast", f"onnxfast.check_model({str(big)!r})"),
        },
        repeat=1 if args.quick else 3,
    )
    path_onnx, path_ours = by_path["onnx"], by_path["ours"]
    label = f"{fmt_bytes(big.stat().st_size)} inline model, from its path"
    rows.append(
        [
            label,
            "onnx.checker.check_model(path)",
            fmt_seconds(path_onnx["seconds"]),
            fmt_bytes(path_onnx["peak_growth"]),
            f"{path_onnx['seconds'] / path_ours['seconds']:.0f}× slower",
        ]
    )
    rows.append(
        [
            label,
            "onnxfast.check_model(path)",
            fmt_seconds(path_ours["seconds"]),
            fmt_bytes(path_ours["peak_growth"]),
            "1.0×",
        ]
    )
    print(table(rows, ["input", "call", "time", "peak RSS growth", "vs onnxfast"]))
    print()
    print(full_check_rows(chain, big, args.quick, repeat))
    print()
    print(exporter_rows(args.quick))
    print()
    print(thread_scaling())
    print()
    print(policy_rows(args.quick))
    return 0


#: Every key set, none violated by the benchmark graphs.
POLICY = """
[policy]
allowed_domains = ["ai.onnx"]
denied_domains = ["com.microsoft"]
allowed_ops = ["Add", "Relu", "Mul", "Transpose", "LeakyRelu", "Conv", "MatMul", "Gemm"]
denied_ops = ["Loop", "Scan", "If"]
min_ir_version = 3
max_ir_version = 14
max_file_bytes = 4_000_000_000
max_parameters = 1_000_000_000
max_nodes = 1_000_000
max_subgraph_depth = 0
allow_external_data = false
max_external_bytes = 0
allow_functions = false
required_metadata = []

[policy.min_opset]
"ai.onnx" = 13

[policy.max_opset]
"ai.onnx" = 21
"""

#: The same rules over onnx's objects, as a pipeline writes them today.
ONNX_POLICY = """
import numpy as np
allowed = {"Add", "Relu", "Mul", "Transpose", "LeakyRelu", "Conv", "MatMul", "Gemm"}
denied = {"Loop", "Scan", "If"}
found = []
assert 3 <= m.ir_version <= 14
for o in m.opset_import:
    if o.domain in ("", "ai.onnx") and not 13 <= o.version <= 21:
        found.append(o)
nodes = params = 0
stack = [(m.graph, 0)]
while stack:
    g, depth = stack.pop()
    for t in g.initializer:
        params += int(np.prod(t.dims))
        if t.data_location == 1:
            found.append(t)
    for n in g.node:
        nodes += 1
        if n.domain not in ("", "ai.onnx") or n.op_type not in allowed or n.op_type in denied:
            found.append(n)
        for a in n.attribute:
            if a.HasField("t"):
                params += int(np.prod(a.t.dims))
            for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                found.append(n)  # max_subgraph_depth = 0
                stack.append((sub, depth + 1))
assert not found and nodes <= 1_000_000 and params <= 1_000_000_000 and not m.functions
"""


def alternating(path: str, policy: str, calls: int) -> dict[str, float]:
    """The policy's own cost: one process, the model loaded and checked once,
    then check_model(m) and check_model(m, policy=P) taking turns `calls`
    times each; the median of each (page faults and the VM's noise land on
    both alike)."""
    import statistics
    import time

    import onnxfast

    m = onnxfast.load(path)
    rules = onnxfast.Policy.load(policy)
    onnxfast.check_model(m)
    onnxfast.check_model(m, policy=rules)
    times: dict[str, list[float]] = {"check": [], "check + policy": []}
    for _ in range(calls):
        for who, kw in (("check", {}), ("check + policy", {"policy": rules})):
            start = time.perf_counter()
            onnxfast.check_model(m, **kw)
            times[who].append(time.perf_counter() - start)
    return {who: statistics.median(t) for who, t in times.items()}


def policy_rows(quick: bool) -> str:
    """check_model(path, policy=...) against check_model(path) (fresh
    processes), against the checker alone on a loaded model (the policy's own
    cost), and against onnx's load + check + hand-written rules."""
    chain, exporter = graph_models(quick)
    policy = DATA / "bench_policy.toml"
    policy.write_text(POLICY)
    rows = []
    repeat = 1 if quick else 5
    for title, path in (("200k-node chain", chain), ("150k exporter graph", exporter)):
        if quick:
            title = title.replace("200k", "20k").replace("150k", "15k")
        warm(path)
        p, pol = str(path), str(policy)
        runs = measure_interleaved(
            {
                "onnx": (
                    "import onnx",
                    f"m = onnx.load({p!r})\nonnx.checker.check_model(m)\n{ONNX_POLICY}",
                ),
                "check": ("import onnxfast", f"onnxfast.check_model({p!r})"),
                "check + policy": (
                    "import onnxfast",
                    f"onnxfast.check_model({p!r}, policy={pol!r})",
                ),
            },
            repeat=repeat,
        )
        loaded = alternating(p, pol, calls=5 if quick else 40)
        base = runs["check"]["seconds"]
        for who, r in runs.items():
            rows.append(
                [
                    title,
                    "from its path" if who != "onnx" else "load + check + rules in Python",
                    who,
                    f"{fmt_seconds(r['seconds'])} {fmt_spread(r)}",
                    fmt_bytes(r["peak_growth"]),
                    f"{r['seconds'] / base - 1:+.1%}" if who != "onnx" else "",
                    f"{runs['onnx']['seconds'] / r['seconds']:.1f}×" if who != "onnx" else "",
                ]
            )
        base = loaded["check"]
        for who, seconds in loaded.items():
            rows.append(
                [
                    title,
                    "loaded (checker only)",
                    who,
                    fmt_seconds(seconds),
                    "",
                    f"{seconds / base - 1:+.1%}",
                    "",
                ]
            )
    return table(
        rows,
        ["graph", "input", "call", "time", "peak RSS growth", "vs check alone", "onnx / this"],
    )


def full_check_rows(chain: Path, big: Path, quick: bool, repeat: int) -> str:
    """The full check (type and shape inference) against onnx's full_check=True."""
    from bench_external import build

    rows = []
    loop = "for _ in range({r}):\n    {call}\n"
    onnx_setup = f"import onnx\nm = onnx.load({str(chain)!r})"
    ours_setup = f"import onnxfast\nm = onnxfast.load({str(chain)!r})"
    onnx_call = "onnx.checker.check_model(m, full_check=True)"
    ours_call = "onnxfast.check_model(m, full=True)"
    checked = measure_interleaved(
        {
            "onnx": (onnx_setup + "\n" + onnx_call, loop.format(r=repeat, call=onnx_call)),
            "ours": (ours_setup + "\n" + ours_call, loop.format(r=repeat, call=ours_call)),
        },
        repeat=1 if quick else 3,
    )
    t_onnx = checked["onnx"]["seconds"] / repeat
    t_ours = checked["ours"]["seconds"] / repeat
    label = "200k-node graph, loaded"
    rows.append([label, onnx_call, fmt_seconds(t_onnx), "", f"{t_onnx / t_ours:.1f}× slower"])
    rows.append([label, ours_call, fmt_seconds(t_ours), "", "1.0×"])

    by_path = measure_interleaved(
        {
            "onnx": ("import onnx", f"onnx.checker.check_model({str(big)!r}, full_check=True)"),
            "ours": ("import onnxfast", f"onnxfast.check_model({str(big)!r}, full=True)"),
        },
        repeat=1 if quick else 3,
    )
    label = f"{fmt_bytes(big.stat().st_size)} inline model, from its path"
    p_onnx, p_ours = by_path["onnx"], by_path["ours"]
    rows.append(
        [
            label,
            "onnx.checker.check_model(path, full_check=True)",
            fmt_seconds(p_onnx["seconds"]),
            fmt_bytes(p_onnx["peak_growth"]),
            f"{p_onnx['seconds'] / p_ours['seconds']:.0f}× slower",
        ]
    )
    rows.append(
        [
            label,
            "onnxfast.check_model(path, full=True)",
            fmt_seconds(p_ours["seconds"]),
            fmt_bytes(p_ours["peak_growth"]),
            "1.0×",
        ]
    )

    total = (256 << 20) if quick else (2 << 30) + (512 << 20)
    ext = build(DATA / ("external_small" if quick else "external_2p5gb"), total, 8)
    warm(ext)
    cases = {
        "onnx path": ("import onnx", f"onnx.checker.check_model({str(ext)!r}, full_check=True)"),
        "onnx loaded": (
            f"import onnx\nm = onnx.load({str(ext)!r})",
            "onnx.checker.check_model(m, full_check=True)",
        ),
        "ours path": ("import onnxfast", f"onnxfast.check_model({str(ext)!r}, full=True)"),
        "ours loaded": (
            f"import onnxfast\nm = onnxfast.load({str(ext)!r})",
            "onnxfast.check_model(m, full=True)",
        ),
    }
    ext_runs = measure_interleaved(cases, repeat=1 if quick else 3)
    label = f"{fmt_bytes(total)} of external data"
    calls = {
        "onnx path": "onnx.checker.check_model(path, full_check=True)",
        "onnx loaded": "onnx.load(path) + check_model(m, full_check=True)",
        "ours path": "onnxfast.check_model(path, full=True)",
        "ours loaded": "onnxfast.load(path) + check_model(m, full=True)",
    }
    for name, r in ext_runs.items():
        if "error" in r:
            rows.append([label, calls[name], f"fails: {r['error'][:60]}", "", ""])
        else:
            rows.append(
                [label, calls[name], fmt_seconds(r["seconds"]), fmt_bytes(r["peak_growth"]), ""]
            )
    return table(rows, ["input (full check)", "call", "time", "peak RSS growth", "vs onnxfast"])


def exporter_rows(quick: bool) -> str:
    """check_model(path), structural and full, on the graph shapes of
    bench_load.py, against onnx's load + check_model (medians of 5 fresh
    processes, taking turns)."""
    from bench_load import inputs

    rows = []
    for title, path, walk in inputs(quick):
        if not walk:
            continue
        warm(path)
        p = str(path)
        for full in (False, True):
            flag = ", full_check=True" if full else ""
            ours_flag = ", full=True" if full else ""
            runs = measure_interleaved(
                {
                    "onnx": ("import onnx", f"onnx.checker.check_model(onnx.load({p!r}){flag})"),
                    "ours": ("import onnxfast", f"onnxfast.check_model({p!r}{ours_flag})"),
                },
                repeat=1 if quick else 5,
            )
            theirs, ours = runs["onnx"], runs["ours"]
            kind = "full" if full else "structural"
            rows.append(
                [
                    title,
                    kind,
                    "onnx.load + check_model",
                    f"{fmt_seconds(theirs['seconds'])} {fmt_spread(theirs)}",
                    fmt_bytes(theirs["peak_growth"]),
                    f"{theirs['seconds'] / ours['seconds']:.1f}× slower",
                ]
            )
            rows.append(
                [
                    title,
                    kind,
                    "onnxfast.check_model(path)",
                    f"{fmt_seconds(ours['seconds'])} {fmt_spread(ours)}",
                    fmt_bytes(ours["peak_growth"]),
                    "1.0×",
                ]
            )
    return table(rows, ["graph", "check", "call", "time", "peak RSS growth", "vs onnxfast"])


def thread_scaling() -> str:
    """Load + check 48 medium models (3,000 nodes, 1 MiB of weights each) on
    one thread, then on one thread per core: the GIL is released in Rust for
    inputs of 256 KiB and more."""
    import os
    import time
    from concurrent.futures import ThreadPoolExecutor

    import onnxfast

    folder = DATA / "medium"
    files = [chain_model(folder / f"m{i}.onnx", nodes=3000, weights=1 << 20) for i in range(48)]
    for f in files:
        warm(f)

    def job(path: Path) -> bool:
        model = onnxfast.load(path)
        for t in model.graph.initializer:
            t.numpy(dtype="float32") if t.data_type == 10 else t.numpy()
        return onnxfast.check(model).ok

    list(map(job, files))  # warm up
    t = time.perf_counter()
    list(map(job, files))
    one = time.perf_counter() - t
    cores = os.cpu_count() or 1
    with ThreadPoolExecutor(cores) as pool:
        t = time.perf_counter()
        list(pool.map(job, files))
        many = time.perf_counter() - t
    label = f"{len(files)} models (3k nodes, 1 MiB fp16), load + numpy + check"
    rows = [
        [label, "1 thread", fmt_seconds(one), "1.0×"],
        [label, f"{cores} threads", fmt_seconds(many), f"{one / many:.2f}×"],
    ]
    return table(rows, ["workload", "threads", "time", "speed-up"])


if __name__ == "__main__":
    sys.exit(main())
