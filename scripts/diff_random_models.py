"""Compares onnxfast with onnx on random models of real operators.

The models come from the inference fuzz target's generator (every schema of
every domain and version, odd types and shapes, attributes of the right and
wrong values, subgraphs, onnxruntime's operators):

    cargo run --release --example write_random_models -- /tmp/random 5000 1
    python scripts/diff_random_models.py /tmp/random [--jobs 2] [--json out.jsonl]

For each model it compares, with onnx 1.23's answers:
- the verdict of `infer_shapes(strict)` (onnx: `check_type=True, strict_mode=True`)
  and, when both infer it, every value's type (fresh dim names aside);
- the same with data propagation (`data_prop=True`), where every value's type
  must be onnx's or refine it (a dim onnx leaves unknown may be known);
- the verdict of the full check (`onnx.checker.check_model(full_check=True)`).
It also checks that onnxfast's `infer_shapes` without strict mode returns a
model (it never raises for a model's defects).

Models with a node onnx's structural checker refuses against its schema
(counts, attribute types, required attributes) are counted apart: onnxfast
does not infer a node whose input or output count misfits, where onnx may
run its rule anyway (the documented difference, README "Inferred shapes").
Each model runs in a child
process, so a crash of either library is reported as such, with the file.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import multiprocessing
import os
import subprocess
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _verdict(f, *args, **kwargs):
    try:
        return True, f(*args, **kwargs), ""
    except Exception as e:
        text = str(e).strip().splitlines()
        return False, None, (text[0] if text else type(e).__name__)[:300]


def compare(path: str) -> dict:
    """One model's comparison: {"file", "unfit", "found": [(kind, detail), ...]}."""
    import onnx
    from _onnx_compare import bad_node_spec, first_difference, first_unrefined, forget_fresh
    from gen_infer_expected import model_symbols

    import onnxfast

    data = Path(path).read_bytes()
    model = onnx.load_from_string(data)
    unfit = bad_node_spec(model)
    found: list[tuple[str, str]] = []
    infer = onnx.shape_inference.infer_shapes
    given = model_symbols(model)

    def same_values(ours, theirs, what: str) -> None:
        a, b = forget_fresh(ours, given), forget_fresh(theirs, given)
        if a != b:
            found.append((what, first_difference(a.graph, b.graph, "main")[:500]))

    # infer_shapes, strict.
    ok_onnx, theirs, why_onnx = _verdict(infer, model, check_type=True, strict_mode=True)
    ok_ours, ours, why_ours = _verdict(onnxfast.infer_shapes, data, strict=True)
    if ok_onnx != ok_ours:
        verdicts = f"onnx {ok_onnx} {why_onnx} | onnxfast {ok_ours} {why_ours}"
        found.append(("strict verdict", verdicts))
    elif ok_onnx:
        same_values(ours.to_onnx(), theirs, "strict values")

    # With data propagation, strict: onnx's verdict, and every value's type
    # onnx's or a refinement of it (onnxfast follows values where onnx's
    # data propagation gives up).
    ok_onnx, theirs, why_onnx = _verdict(
        infer, model, check_type=True, strict_mode=True, data_prop=True
    )
    ok_ours, ours, why_ours = _verdict(onnxfast.infer_shapes, data, strict=True, data_prop=True)
    if ok_onnx != ok_ours:
        verdicts = f"onnx {ok_onnx} {why_onnx} | onnxfast {ok_ours} {why_ours}"
        found.append(("data_prop verdict", verdicts))
    elif ok_onnx:
        unrefined = first_unrefined(ours.to_onnx().graph, theirs.graph, given)
        if unrefined is not None:
            found.append(("data_prop values", unrefined[:500]))

    # Without strict mode onnx types more values of a model with defects (a
    # failed function body's outputs get their type constraints' types);
    # onnxfast gives strict mode's types either way (the bar is onnx's
    # strict mode) and never raises: nothing more to compare there.
    ok_ours, _, why_ours = _verdict(onnxfast.infer_shapes, data)
    if not ok_ours:
        found.append(("raises without strict", f"onnxfast {why_ours}"))

    # The full check.
    ok_onnx, _, why_onnx = _verdict(onnx.checker.check_model, model, full_check=True)
    report = onnxfast.check(data, full=True)
    if ok_onnx != report.ok:
        first = str(report.errors[0]).replace("\n", " ")[:300] if report.errors else ""
        found.append(("full check", f"onnx {ok_onnx} {why_onnx} | onnxfast {report.ok} {first}"))
    return {"file": path, "unfit": unfit, "found": found}


def _child(path: str, out) -> None:
    try:
        out.send(compare(path))
    except Exception:
        out.send({"file": path, "unfit": False, "found": [("script", traceback.format_exc())]})


def run_one(path: str, timeout: float) -> dict:
    """`compare(path)` in a child process: a crash or a hang is a finding."""
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(path, send))
    proc.start()
    send.close()
    result = None
    if receive.poll(timeout):
        # EOFError: the child died before sending.
        with contextlib.suppress(EOFError):
            result = receive.recv()
    proc.join(1 if result is not None else 0)
    if proc.is_alive():
        proc.kill()
        proc.join()
    if result is None:
        what = "hang" if proc.exitcode in (None, -9) else f"crash (exit {proc.exitcode})"
        # Whose? onnxfast's calls alone, in a fresh interpreter.
        try:
            alone = subprocess.run(
                [sys.executable, __file__, "--onnxfast-only", path],
                capture_output=True,
                timeout=timeout,
                check=False,
            )
            who = "onnx" if alone.returncode == 0 else "onnxfast"
        except subprocess.TimeoutExpired:
            who = "onnxfast"
        return {"file": path, "unfit": False, "found": [(f"{who}: {what}", "")]}
    return result


def _onnxfast_only(path: str) -> None:
    import onnxfast

    data = Path(path).read_bytes()
    with contextlib.suppress(onnxfast.InferenceError):
        onnxfast.infer_shapes(data, strict=True)
    with contextlib.suppress(onnxfast.InferenceError):
        onnxfast.infer_shapes(data, strict=True, data_prop=True)
    onnxfast.infer_shapes(data)
    onnxfast.check(data, full=True)


def main() -> int:
    if sys.argv[1:2] == ["--onnxfast-only"]:
        _onnxfast_only(sys.argv[2])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--json", type=Path, help="write one JSON object per model")
    parser.add_argument("--show", type=int, default=3, help="examples shown per kind")
    args = parser.parse_args()
    files = sorted(str(p) for p in args.folder.glob("*.onnx"))
    if not files:
        parser.error(f"no .onnx files in {args.folder}")
    # Import both libraries once, so each forked child starts with them.
    from concurrent.futures import ThreadPoolExecutor

    import onnx  # noqa: F401

    import onnxfast  # noqa: F401

    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda p: run_one(p, args.timeout), files))
    if args.json:
        with args.json.open("w") as f:
            for r in results:
                f.write(json.dumps(r) + "\n")
    kinds: dict[tuple[bool, str], list] = collections.defaultdict(list)
    for r in results:
        for kind, detail in r["found"]:
            kinds[(r["unfit"], kind)].append((r["file"], detail))
    unfit = sum(r["unfit"] for r in results)
    agree = sum(not r["found"] for r in results)
    print(f"{len(files)} models: {agree} agree on everything compared")
    print(f"  ({unfit} have a node onnx's checker refuses against its schema)")
    for (is_unfit, kind), items in sorted(kinds.items()):
        # A difference either way: the models with a misfit node are only
        # counted apart (their differences may be the documented kind).
        label = "models with a misfit node differ in" if is_unfit else "models differ in"
        print(f"{len(items):6d} {label}: {kind}")
        for file, detail in items[: args.show]:
            print(f"         {Path(file).name}: {detail[:400]}")
    fitting = [k for k in kinds if not k[0]]
    return 1 if fitting else 0


if __name__ == "__main__":
    sys.exit(main())
