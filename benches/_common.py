"""Shared bench helpers: input builders and isolated measurements.

Every measurement runs in a fresh Python process so that peak RSS is that of
one load, and reports (wall seconds, RSS growth in bytes over the process's
baseline after imports). Timings are medians over repeats; page-cache state is
warmed by a first untimed read of each file.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

DATA = Path(
    os.environ.get("ONNXFAST_BENCH_DATA", Path(__file__).resolve().parent.parent / "bench-data")
)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def transformer_model(path: Path, *, layers: int = 15, d: int = 2048) -> Path:
    """A transformer-shaped fp16 model with inline weights (~100 MB a layer at d=2048)."""
    if path.exists():
        return path
    import onnx
    from onnx import TensorProto, helper

    rng = np.random.default_rng(0)
    inits, nodes = [], []
    x = "x"

    def weight(name: str, *shape: int) -> str:
        n = int(np.prod(shape))
        raw = rng.integers(0, 0x3C00, size=n, dtype=np.uint16).astype(np.uint16).tobytes()
        inits.append(helper.make_tensor(name, TensorProto.FLOAT16, shape, raw, raw=True))
        return name

    for i in range(layers):
        p = f"l{i}."
        ln = weight(p + "ln.w", d)
        nodes.append(helper.make_node("LayerNormalization", [x, ln], [p + "ln"], axis=-1))
        heads = []
        for proj in ("q", "k", "v"):
            w = weight(p + proj, d, d)
            nodes.append(helper.make_node("MatMul", [p + "ln", w], [p + proj + "_out"]))
            heads.append(p + proj + "_out")
        nodes.append(helper.make_node("Add", [heads[0], heads[1]], [p + "qk"]))
        nodes.append(helper.make_node("Add", [p + "qk", heads[2]], [p + "attn"]))
        wo = weight(p + "o", d, d)
        nodes.append(helper.make_node("MatMul", [p + "attn", wo], [p + "attn_o"]))
        nodes.append(helper.make_node("Add", [x, p + "attn_o"], [p + "res1"]))
        up = weight(p + "up", d, 4 * d)
        down = weight(p + "down", 4 * d, d)
        nodes.append(helper.make_node("MatMul", [p + "res1", up], [p + "up_out"]))
        nodes.append(helper.make_node("Relu", [p + "up_out"], [p + "act"]))
        nodes.append(helper.make_node("MatMul", [p + "act", down], [p + "down_out"]))
        nodes.append(helper.make_node("Add", [p + "res1", p + "down_out"], [p + "out"]))
        x = p + "out"
    graph = helper.make_graph(
        nodes,
        "transformer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, ["batch", "seq", d])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT16, ["batch", "seq", d])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, path)
    return path


def chain_model(path: Path, *, nodes: int = 200_000, weights: int = 0) -> Path:
    """A graph of `nodes` alternating Add/Relu nodes (names, 1-2 inputs each),
    with `weights` bytes of fp16 initializer when non-zero."""
    if path.exists():
        return path
    import onnx
    from onnx import TensorProto, helper

    made = []
    prev = "x"
    for i in range(nodes):
        out = f"t{i}"
        if i % 2:
            made.append(helper.make_node("Relu", [prev], [out], name=f"n{i}"))
        else:
            made.append(helper.make_node("Add", [prev, "b"], [out], name=f"n{i}"))
        prev = out
    vi = helper.make_tensor_value_info
    inits = []
    if weights:
        raw = np.random.default_rng(1).integers(0, 0x3C00, weights // 2, dtype=np.uint16).tobytes()
        inits.append(helper.make_tensor("w", TensorProto.FLOAT16, [weights // 2], raw, raw=True))
    graph = helper.make_graph(
        made,
        "chain",
        [vi("x", TensorProto.FLOAT, [1, 16]), vi("b", TensorProto.FLOAT, [1, 16])],
        [vi(prev, TensorProto.FLOAT, [1, 16])],
        initializer=inits,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    return path


def exporter_model(
    path: Path,
    *,
    nodes: int,
    value_info: bool = False,
    initializers: bool = False,
    doc_strings: bool = False,
) -> Path:
    """An exporter-shaped graph: `nodes` nodes with one attribute each
    (Transpose `perm` / LeakyRelu `alpha`) and short names, optionally a
    value_info entry, a small initializer and a doc string per node (as
    models with external weights have: the file is the graph)."""
    if path.exists():
        return path
    import onnx
    from onnx import TensorProto, helper

    made = []
    infos = []
    inits = []
    prev = "x"
    for i in range(nodes):
        out = f"t{i}"
        inputs = [prev]
        if initializers:
            inputs.append(f"w{i}")
            inits.append(helper.make_tensor(f"w{i}", TensorProto.FLOAT, [4], [0.5] * 4))
        if i % 2:
            node = helper.make_node("LeakyRelu", inputs[:1], [out], name=f"/l{i}/act", alpha=0.1)
            if initializers:
                node = helper.make_node("Add", inputs, [out], name=f"/l{i}/add")
        else:
            node = helper.make_node("Transpose", inputs[:1], [out], name=f"/l{i}/t", perm=[0, 2, 1])
            if initializers:
                node = helper.make_node("Mul", inputs, [out], name=f"/l{i}/mul")
        if doc_strings:
            node.doc_string = f"exported from layers.{i} (torch.nn.Module)"
        made.append(node)
        if value_info:
            infos.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, ["b", 4, 4]))
        prev = out
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        made,
        "exported",
        [vi("x", TensorProto.FLOAT, ["b", 4, 4])],
        [vi(prev, TensorProto.FLOAT, ["b", 4, 4])],
        initializer=inits,
        value_info=infos,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    return path


def shape_ops_model(path: Path, *, layers: int = 15_000) -> Path:
    """A graph of the shape computations a dynamic-axes export makes: per
    layer, Shape -> Gather (batch, sequence, width) -> Unsqueeze -> the
    head size as width / 4 (Div) -> Concat -> Reshape into heads ->
    Transpose -> Reshape back from Shape(x) (14 nodes a layer; x is
    [batch, seq, 64], batch and seq symbols)."""
    if path.exists():
        return path
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    consts = {
        "i0": np.array(0, np.int64),
        "i1": np.array(1, np.int64),
        "i2": np.array(2, np.int64),
        "four": np.array(4, np.int64),
        "ax0": np.array([0], np.int64),
        "heads": np.array([4], np.int64),
    }
    nodes = []
    prev = "x"
    for i in range(layers):
        p = f"l{i}_"
        nodes += [
            helper.make_node("Shape", [prev], [p + "s"]),
            helper.make_node("Gather", [p + "s", "i0"], [p + "b"], axis=0),
            helper.make_node("Gather", [p + "s", "i1"], [p + "t"], axis=0),
            helper.make_node("Unsqueeze", [p + "b", "ax0"], [p + "bu"]),
            helper.make_node("Unsqueeze", [p + "t", "ax0"], [p + "tu"]),
            helper.make_node("Gather", [p + "s", "i2"], [p + "w"], axis=0),
            helper.make_node("Div", [p + "w", "four"], [p + "hd"]),
            helper.make_node("Unsqueeze", [p + "hd", "ax0"], [p + "hdu"]),
            helper.make_node(
                "Concat", [p + "bu", p + "tu", "heads", p + "hdu"], [p + "hs"], axis=0
            ),
            helper.make_node("Reshape", [prev, p + "hs"], [p + "h"]),
            helper.make_node("Transpose", [p + "h"], [p + "ht"], perm=[0, 1, 2, 3]),
            helper.make_node("Shape", [prev], [p + "s2"]),
            helper.make_node("Reshape", [p + "ht", p + "s2"], [p + "y"]),
        ]
        prev = p + "y"
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes,
        "shapes",
        [vi("x", TensorProto.FLOAT, ["batch", "seq", 64])],
        [vi(prev, TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in consts.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, path)
    return path


def llm_model(path: Path, *, layers: int = 32, d: int = 64) -> Path:
    """A 4-bit LLM decoder as onnxruntime's optimizer and quantizer write it
    (20 nodes a layer): RMS norms (SimplifiedLayerNormalization,
    SkipSimplifiedLayerNormalization), MatMulNBits projections,
    GroupQueryAttention over a key/value cache per layer (4 query heads, 2
    key/value heads), a QuickGelu MLP; the total length and each sequence's
    last position computed from the attention mask (B, T); x is (B, S, d)."""
    if path.exists():
        return path
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    heads, kv, block = 4, 2, 16
    head = d // heads
    inits = [
        numpy_helper.from_array(np.array(1, np.int64), "one"),
        numpy_helper.from_array(np.array([1], np.int64), "axes1"),
    ]

    def ms(op: str, inputs: list[str], outputs: list[str], **attrs) -> onnx.NodeProto:
        return helper.make_node(op, inputs, outputs, domain="com.microsoft", **attrs)

    def nbits(name: str, x: str, k: int, n: int) -> onnx.NodeProto:
        blocks = k // block
        w = rng.integers(0, 255, (n, blocks, block // 2), dtype=np.uint8)
        inits.append(numpy_helper.from_array(w, name + "_w"))
        inits.append(numpy_helper.from_array(np.ones(n * blocks, np.float32), name + "_s"))
        return ms("MatMulNBits", [x, name + "_w", name + "_s"], [name], K=k, N=n, block_size=block)

    nodes = [
        helper.make_node("Shape", ["mask"], ["mask_shape"]),
        helper.make_node("Gather", ["mask_shape", "one"], ["total64"]),
        helper.make_node("Cast", ["total64"], ["total"], to=TensorProto.INT32),
        helper.make_node("ReduceSum", ["mask", "axes1"], ["count"], keepdims=0),
        helper.make_node("Sub", ["count", "one"], ["last"]),
        helper.make_node("Cast", ["last"], ["seqlens"], to=TensorProto.INT32),
    ]
    vi = helper.make_tensor_value_info
    inputs = [vi("x", TensorProto.FLOAT, ["B", "S", d]), vi("mask", TensorProto.INT64, ["B", "T"])]
    outputs = []
    x = "x"
    for i in range(layers):
        p = f"l{i}_"
        for n in ("norm1", "norm2"):
            inits.append(numpy_helper.from_array(np.ones(d, np.float32), p + n))
        inputs += [vi(p + c, TensorProto.FLOAT, ["B", kv, "P", head]) for c in ("past_k", "past_v")]
        nodes += [
            helper.make_node("SimplifiedLayerNormalization", [x, p + "norm1"], [p + "h"]),
            nbits(p + "q", p + "h", d, d),
            nbits(p + "k", p + "h", d, kv * head),
            nbits(p + "v", p + "h", d, kv * head),
            ms(
                "GroupQueryAttention",
                [p + c for c in ("q", "k", "v", "past_k", "past_v")] + ["seqlens", "total"],
                [p + "attn", p + "present_k", p + "present_v"],
                num_heads=heads,
                kv_num_heads=kv,
            ),
            nbits(p + "o", p + "attn", d, d),
            ms(
                "SkipSimplifiedLayerNormalization",
                [p + "o", x, p + "norm2"],
                [p + "n2", "", "", p + "res"],
            ),
            nbits(p + "up", p + "n2", d, 4 * d),
            ms("QuickGelu", [p + "up"], [p + "act"]),
            nbits(p + "down", p + "act", 4 * d, d),
            helper.make_node("Add", [p + "res", p + "down"], [p + "y"]),
        ]
        outputs += [vi(p + c, TensorProto.FLOAT, None) for c in ("present_k", "present_v")]
        x = p + "y"
    outputs.insert(0, vi(x, TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, "llm", inputs, outputs, inits)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, path)
    return path


def huge_model(path: Path, *, size: int = (2 << 30) + (512 << 20)) -> Path:
    """A single-file model over 2 GiB (one big FLOAT initializer, real bytes)."""
    if path.exists():
        return path
    from onnx import TensorProto, helper

    n = size // 4
    tensor = TensorProto(name="huge", data_type=TensorProto.FLOAT, dims=[n]).SerializeToString()
    tensor_prefix = tensor + b"\x4a" + _varint(n * 4)  # field 9 raw_data
    node = helper.make_node("Relu", ["huge"], ["y"], name="relu").SerializeToString()
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [n]).SerializeToString()
    tail = b"\x0a" + _varint(len(node)) + node + b"\x62" + _varint(len(out)) + out
    init_len = len(tensor_prefix) + n * 4
    graph_head = b"\x2a" + _varint(init_len) + tensor_prefix
    graph_len = len(graph_head) + n * 4 + len(tail)
    opset = helper.make_opsetid("", 21).SerializeToString()
    head = (
        b"\x08\x0a"
        + b"\x42"
        + _varint(len(opset))
        + opset
        + b"\x3a"
        + _varint(graph_len)
        + graph_head
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    chunk = np.arange(1 << 22, dtype=np.float32).tobytes()  # 16 MiB
    with open(path, "wb") as f:
        f.write(head)
        left = n * 4
        while left:
            piece = chunk[: min(len(chunk), left)]
            f.write(piece)
            left -= len(piece)
        f.write(tail)
    return path


_RUNNER = textwrap.dedent(
    """
    import gc, json, sys, time
    def rss():
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f)
        return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024
    setup = {setup!r}
    stmt = {stmt!r}
    ns = {{}}
    exec(setup, ns)
    gc.collect()
    base, _ = rss()
    # reset the high-water mark so VmHWM measures this statement only
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    t = time.perf_counter()
    exec(stmt, ns)
    elapsed = time.perf_counter() - t
    now, peak = rss()
    growth = {{"peak_growth": max(peak, now) - base, "rss_growth": now - base}}
    print(json.dumps({{"seconds": elapsed, **growth}}))
    """
)


def _run_once(setup: str, stmt: str) -> dict[str, float] | str:
    """One fresh process: its measurement, or the error it ended with."""
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER.format(setup=setup, stmt=stmt)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return proc.stderr.strip().splitlines()[-1] if proc.stderr else f"exit {proc.returncode}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _summary(runs: list[dict[str, float]]) -> dict[str, float]:
    median = statistics.median(r["seconds"] for r in runs)
    return {
        "seconds": median,
        # The farthest run from the median, as a fraction of it.
        "spread": max(abs(r["seconds"] - median) for r in runs) / median if median else 0.0,
        "peak_growth": max(r["peak_growth"] for r in runs),
        "rss_growth": max(r["rss_growth"] for r in runs),
    }


def measure(setup: str, stmt: str, *, repeat: int = 3) -> dict[str, float]:
    """Runs `stmt` after `setup` in `repeat` fresh processes; median time, max memory."""
    return measure_interleaved({"only": (setup, stmt)}, repeat=repeat)["only"]


def measure_interleaved(
    cases: dict[str, tuple[str, str]], *, repeat: int = 3
) -> dict[str, dict[str, float]]:
    """Like `measure` for several (setup, stmt) cases, taking turns: round k
    runs every case once, so a slow spell of this shared VM lands on all of
    them rather than on whichever library happened to run then. A case that
    fails is not run again; its result is {"error": message}."""
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in cases}
    errors: dict[str, str] = {}
    for _ in range(repeat):
        for name, (setup, stmt) in cases.items():
            if name in errors:
                continue
            result = _run_once(setup, stmt)
            if isinstance(result, str):
                errors[name] = result
            else:
                runs[name].append(result)
    return {
        name: {"error": errors[name]} if name in errors else _summary(runs[name]) for name in cases
    }


def warm(path: Path) -> None:
    """Reads a file once so every library starts from a warm page cache."""
    with open(path, "rb") as f:
        while f.read(64 << 20):
            pass


def graph_models(quick: bool) -> tuple[Path, Path]:
    """The 200k-node chain and the 150k-node exporter graph with attributes
    and value_info (20k and 15k with `quick`), built on first use."""
    chain = (
        chain_model(DATA / "chain_20k.onnx", nodes=20_000)
        if quick
        else chain_model(DATA / "chain_200k.onnx")
    )
    exporter = exporter_model(
        DATA / f"exp_150k_vi{'_quick' if quick else ''}.onnx",
        nodes=15_000 if quick else 150_000,
        value_info=True,
    )
    return chain, exporter


def result_rows(case: str, results: dict[str, dict], base: str = "onnx") -> list[list[str]]:
    """Table rows of one case measured for several libraries (`results` as
    `measure_interleaved` returns, `base` first): time, spread, peak RSS
    growth, and `base`'s time over each other library's."""
    baseline = results[base]
    rows = []
    for who, r in results.items():
        if "error" in r:
            rows.append([case, who, "fails: " + r["error"][:70], "", "", ""])
            continue
        ratio = ""
        if who != base and "error" not in baseline:
            ratio = f"{baseline['seconds'] / r['seconds']:.1f}×"
        rows.append(
            [
                case,
                who,
                fmt_seconds(r["seconds"]),
                fmt_spread(r),
                fmt_bytes(r["peak_growth"]),
                ratio,
            ]
        )
    return rows


def fmt_seconds(s: float) -> str:
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def fmt_spread(r: dict[str, float]) -> str:
    """The runs' spread around their median, as ±%."""
    return f"±{r.get('spread', 0.0) * 100:.0f}%"


def fmt_bytes(b: float) -> str:
    return f"{b / (1 << 20):.0f} MiB"


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in rows)])
