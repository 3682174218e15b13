"""Builds hostile inputs and runs each one in isolation, reporting what happened.

Used by tests/test_hostile.py, which runs this file as a script in a fresh
process so that the peak-RSS readings belong to one case at a time:

    python tests/_adversarial.py MODEL_FOR_MUTATIONS OUT.json
"""

from __future__ import annotations

import itertools
import json
import random
import sys
import time

from _wire import key, ld, varint, vint


def nested_if(levels: int, inner_node: bool) -> bytes:
    """A model whose graphs nest `levels` If-subgraphs deep."""
    graph = ld(2, b"g")
    if inner_node:
        graph = ld(1, ld(1, b"x") + ld(2, b"y") + ld(4, b"Relu")) + graph
    for _ in range(levels):
        attr = ld(1, b"then_branch") + vint(20, 5) + ld(6, graph)
        node = ld(1, b"c") + ld(2, b"o") + ld(4, b"If") + ld(5, attr)
        graph = ld(1, node) + ld(2, b"g")
    return vint(1, 10) + ld(8, ld(1, b"") + vint(2, 21)) + ld(7, graph)


def cases(model_bytes: bytes) -> list[tuple[str, bytes]]:
    rng = random.Random(7)
    out: list[tuple[str, bytes]] = []
    n = len(model_bytes)
    for cut in sorted(set([1, 2, 3, n // 7, n // 3, n // 2, n - 1, *rng.sample(range(1, n), 40)])):
        out.append((f"truncated at {cut}", model_bytes[:cut]))
    for i in range(60):
        b = bytearray(model_bytes)
        for _ in range(rng.randint(1, 8)):
            p = rng.randrange(n)
            b[p] ^= 1 << rng.randrange(8)
        out.append((f"bit flips #{i}", bytes(b)))
    out.append(("nesting bomb (10,000 levels)", nested_if(3333, False)))
    out.append(("nesting at the limit (33 Ifs, depth 100)", nested_if(33, False)))
    out.append(("nesting past the limit (depth 101)", nested_if(33, True)))
    out.append(("memory bomb: 10 MB of empty nodes", ld(7, b"\x0a\x00" * 5_000_000)))
    out.append(("memory bomb: empty attributes", ld(7, ld(1, b"\x2a\x00" * 3_000_000))))
    out.append(("huge declared length", key(7, 2) + varint(1 << 62) + b"\x00" * 16))
    out.append(
        ("huge declared length in a tensor", ld(7, key(5, 2) + varint(1 << 40) + b"\x0a\x01"))
    )
    dims = b"".join(vint(1, (1 << 62) - 1) for _ in range(4))
    out.append(
        ("dims overflow", ld(7, ld(2, b"g") + ld(5, dims + vint(2, 1) + ld(8, b"w") + ld(9, b""))))
    )
    for wt in (3, 4, 6, 7):
        out.append((f"wire type {wt}", key(9, wt) + b"\x00" * 8))
    out.append(("over-long varint", key(1, 0) + b"\xff" * 20))
    nodes = b"".join(
        ld(1, ld(1, b"u%d" % i) + ld(2, b"v%d" % i) + ld(4, b"Relu")) for i in range(300_000)
    )
    out.append(
        (
            "300k undefined inputs (diagnostics bomb)",
            vint(1, 10) + ld(8, vint(2, 21)) + ld(7, ld(2, b"g") + nodes),
        )
    )
    return out


def rss() -> tuple[int, int]:
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024


def reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def run(model_path: str, out_path: str) -> None:
    import onnxfast

    with open(model_path, "rb") as f:
        model_bytes = f.read()
    onnxfast.check(onnxfast.load(model_bytes))  # warm up imports and tables
    results = []
    for name, data in cases(model_bytes):
        base, _ = rss()
        reset_peak()
        t = time.perf_counter()
        outcome = "valid"
        model = None
        try:
            model = onnxfast.load(data)
            report = onnxfast.check(model, strict=True)
            outcome = "valid" if report.ok else f"invalid ({len(report)}+{report.omitted} findings)"
            del report
        except onnxfast.OnnxFastError as e:
            outcome = f"{type(e).__name__}: {getattr(e, 'reason', str(e))[:200]}"
        except Exception as e:
            outcome = f"UNEXPECTED {type(e).__name__}: {e}"
        elapsed = time.perf_counter() - t
        # The bound is the decode budget's, for load + check.
        _, peak = rss()
        try:
            # Then the value index, and a few values' uses and types (one
            # inference run): no crash, no unexpected error.
            if model is not None and model.graph is not None:
                values = model.graph.values
                for value_name in itertools.islice(values, 50):
                    value = values[value_name]
                    _ = (value.consumers, value.producer, value.type, value.shape)
        except onnxfast.OnnxFastError:
            pass
        except Exception as e:
            outcome = f"UNEXPECTED in graph.values: {type(e).__name__}: {e}"
        del model
        results.append(
            {
                "case": name,
                "size": len(data),
                "outcome": outcome,
                "seconds": elapsed,
                "peak_growth": max(0, peak - base),
            }
        )
    with open(out_path, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2])
