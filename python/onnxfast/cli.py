"""The onnxfast command line.

    onnxfast check PATH... [--strict] [--full] [--contrib-ops] [--data-prop]
                           [--policy FILE] [-j N]
                           [--format text|json|sarif|github] [--fail-on error|warning]
    onnxfast info PATH [--shapes [--data-prop] [--symbolic] [--contrib-ops]] [--json]
    onnxfast shapes PATH [--strict] [--data-prop] [--symbolic] [--contrib-ops]
                         [--sizes N=V,...] [--json]

A PATH of "-" reads the model from standard input (a redirected file is
mapped, a pipe read); `shapes -o -` writes the model to standard output.
`--input-format` reads models in one format whatever their extension (by
default .json, .txtpb, .onnxtxt, ... are onnx's text formats).

Exit status of `check`: 0 when every model is valid, 1 when any is invalid
(has an error, or a warning with `--fail-on warning`), 2 for a usage error,
an unreadable policy or a file that cannot be read (missing, not ONNX).
`shapes` exits 1 with `--strict` when inference finds a defect.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import gc
import io
import itertools
import json
import multiprocessing
import os
import re
import sys
import time
import traceback
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from . import __version__, _reports, check, infer_shapes, load
from ._check import Report
from ._onnxfast import Model
from ._policy import Policy
from ._shapes import infer_with_report
from ._types import data_type_name
from .errors import ExternalDataWarning, OnnxFastError, PolicyError

EXIT_OK, EXIT_INVALID, EXIT_ERROR = 0, 1, 2

# --------------------------------------------------------------------- output


class Style:
    """ANSI colours, only on a terminal and when NO_COLOR is not set."""

    def __init__(self, stream: TextIO) -> None:
        self.on = (
            stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        )

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.on else text

    def red(self, text: str) -> str:
        return self._wrap("1;31", text)

    def yellow(self, text: str) -> str:
        return self._wrap("1;33", text)

    def green(self, text: str) -> str:
        return self._wrap("1;32", text)

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)


def _describe_write_failure(exc: OSError) -> str:
    """What a failed write says (a file that cannot be made or written)."""
    return _reports.shown(f"cannot write {exc.filename or ''}: {exc.strerror or exc}")


def _describe_failure(exc: BaseException) -> str:
    """A one-paragraph explanation of an expected failure (no traceback),
    safe to print (see `_reports.shown`)."""
    return _reports.shown(_failure_text(exc))


def _failure_text(exc: BaseException) -> str:
    from .errors import DecodeError, ExternalDataError

    if isinstance(exc, FileNotFoundError):
        return f"no such file: {exc.filename}"
    if isinstance(exc, MemoryError):
        # A stream (standard input from a pipe) is read into memory whole.
        return (
            "out of memory reading the model (a pipe is read into memory: give a file, "
            "which is mapped)"
        )
    if isinstance(exc, IsADirectoryError):
        return f"is a folder, not a model file: {exc.filename}"
    if isinstance(exc, PermissionError):
        return f"permission denied: {exc.filename}"
    text_format = getattr(exc, "text_format", None)
    if isinstance(exc, DecodeError) and text_format:
        # Parsed by onnx as text: no byte offset to give.
        return f"not a valid ONNX model in {text_format} format: {exc.reason}"
    if isinstance(exc, DecodeError):
        where = exc.path or "the top-level message"
        return f"not a valid ONNX model: at byte {exc.offset}, in {where}: {exc.reason}"
    if isinstance(exc, ExternalDataError):
        return f"external data of tensor '{exc.tensor}' ({exc.location!r}) refused: {exc.reason}"
    if isinstance(exc, OSError):
        return f"cannot read {exc.filename or ''}: {exc.strerror or exc}"
    return str(exc)


# ---------------------------------------------------------------------- check


# "-" as a PATH: the model is read from standard input (a file named "-"
# is "./-"); as `shapes -o`, written to standard output.
STDIN = "-"


class _Stdin:
    """The model on standard input, as an item of `check`'s file list."""

    def __str__(self) -> str:
        return STDIN


def _model_source(
    path: Path | _Stdin | str, input_format: str | None = None, mmap: bool = True
) -> Any:
    """What `check`/`infer_shapes` take for a PATH argument: standard input's
    binary stream for "-" (mapped when it is a redirected file, read when a
    pipe), else the path; loaded in `input_format` when one is given (else
    the format follows the extension, as `load` does), and loaded without
    maps (files read, external data read when checked) unless `mmap`."""
    source: Any = sys.stdin.buffer if isinstance(path, _Stdin) or path == STDIN else path
    if input_format is not None or not mmap:
        return load(source, format=input_format, mmap=mmap)
    return source


def _collect(paths: list[str]) -> tuple[list[Path | _Stdin], list[str]]:
    """Files to check (folders are searched recursively for *.onnx; "-" is
    standard input) and arguments that name nothing."""
    files: list[Path | _Stdin] = []
    missing: list[str] = []
    for arg in paths:
        if arg == STDIN:
            files.append(_Stdin())
            continue
        p = Path(arg)
        if p.is_dir():
            files.extend(sorted(q for q in p.rglob("*.onnx") if q.is_file()))
        elif p.exists() or p.is_symlink():
            files.append(p)
        else:
            missing.append(arg)
    return files, missing


def _check_one(
    path: Path | _Stdin,
    strict: bool,
    full: bool = False,
    policy: Policy | None = None,
    contrib_ops: bool = False,
    data_prop: bool = False,
    input_format: str | None = None,
    mmap: bool = True,
) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        report: Report = check(
            sys.stdin.buffer if isinstance(path, _Stdin) else path,
            strict=strict,
            full=full,
            policy=policy,
            contrib_ops=contrib_ops,
            data_prop=data_prop,
            mmap=mmap,
            format=input_format,
        )
    except (OSError, MemoryError, OnnxFastError) as e:
        return {
            "path": str(path),
            "ok": False,
            "error": _describe_failure(e),
            "error_type": type(e).__name__,
            "seconds": time.perf_counter() - started,
            "_exc": e,
        }
    return {
        "path": str(path),
        "ok": report.ok,
        "errors": report.error_count,
        "warnings": report.warning_count,
        "diagnostics": report.to_dict()["diagnostics"],
        "seconds": time.perf_counter() - started,
        "_report": report,
    }


def _check_one_plain(
    path: Path,
    strict: bool,
    full: bool = False,
    policy: Policy | None = None,
    contrib_ops: bool = False,
    data_prop: bool = False,
    input_format: str | None = None,
    mmap: bool = True,
) -> dict[str, Any]:
    """_check_one for worker processes: only picklable values come back."""
    result = _check_one(path, strict, full, policy, contrib_ops, data_prop, input_format, mmap)
    report = result.pop("_report", None)
    exc = result.pop("_exc", None)
    if report is not None:
        result["_report"] = (
            report.diagnostics,
            report.omitted,
            report.error_count,
            report.warning_count,
        )
    if exc is not None:
        result["_traceback"] = "".join(traceback.format_exception(exc))
    return result


class Progress:
    """A progress bar on stderr for runs over many files (rich): files done,
    files/s and invalid files so far. Only on a terminal; rich honours
    NO_COLOR."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.invalid = 0
        self.bar: Any = None
        if not (enabled and total > 1 and sys.stderr.isatty()):
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            ProgressColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.progress import Progress as Bar
        from rich.text import Text

        class Rate(ProgressColumn):
            def render(self, task: Any) -> Text:
                return Text(f"{task.speed or 0:.0f} files/s")

        self.bar = Bar(
            TextColumn("checking"),
            BarColumn(),
            MofNCompleteColumn(),
            Rate(),
            TextColumn("{task.fields[invalid]} invalid"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self.task = self.bar.add_task("check", total=total, invalid=0)
        self.bar.start()

    def step(self, result: dict[str, Any]) -> None:
        if not result.get("ok"):
            self.invalid += 1
        if self.bar is not None:
            self.bar.update(self.task, advance=1, invalid=self.invalid)

    def clear(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _print_human(result: dict[str, Any], style: Style, debug: bool) -> None:
    path = _reports.shown(result["path"])
    if "error" in result:
        print(f"{style.bold(path)}: {style.red('cannot check')}: {_reports.shown(result['error'])}")
        if debug and "_exc" in result:
            traceback.print_exception(result["_exc"], file=sys.stdout)
        elif debug and "_traceback" in result:
            print(result["_traceback"], end="")
        return
    report = result["_report"]
    if isinstance(report, tuple):  # from a worker process
        report = Report(*report)
    if not report.diagnostics:
        print(f"{style.bold(path)}: {style.green('valid')}")
        return
    verdict = style.red("invalid") if not report.ok else style.yellow("valid, with warnings")
    print(f"{style.bold(path)}: {verdict}")
    for d in report:
        colour = style.red if d.severity == "error" else style.yellow
        print(f"{colour(f'{d.severity}[{d.code}]')}: {_reports.shown(d.message)}")
        if d.location:
            print(f"  {style.dim('-->')} {_reports.shown(d.location)}")
        if d.suggestion:
            print(f"  {style.dim('=')} help: {_reports.shown(d.suggestion)}")
    print()


def _failed(result: dict[str, Any], fail_on: str) -> bool:
    """Whether a checked (readable) model fails the run."""
    if not result["ok"]:
        return True
    return fail_on == "warning" and result.get("warnings", 0) > 0


def _print_summary(results: list[dict[str, Any]], style: Style) -> None:
    rows = _reports.by_code(results)
    if not rows:
        return
    print(style.bold("findings by code"))
    table = [["code", "severity", "count", "files", "meaning"]]
    for r in rows:
        meaning = r["meaning"] if len(r["meaning"]) <= 70 else r["meaning"][:69] + "…"
        table.append([r["code"], r["severity"], str(r["count"]), str(r["files"]), meaning])
    for line in _table(table, indent="    ", right=(2, 3)):
        print(line)
    print()


def _run_checks(files: list[Path | _Stdin], args: argparse.Namespace, policy: Policy | None) -> Any:
    """(file, result) in order, in worker processes with -j (standard input
    in this process, which holds it)."""
    # What _check_one takes after the file, in its order.
    options = (
        args.strict,
        args.full,
        policy,
        args.contrib_ops,
        args.data_prop,
        args.input_format,
        not args.no_mmap,
    )
    if (args.jobs == 1 and args.timeout is None) or any(isinstance(f, _Stdin) for f in files):
        for f in files:
            yield f, _check_one(f, *options)
        return
    # Worker processes: small models spend most of their time in Python
    # code, where threads would only contend for the GIL; a worker can be
    # killed at a deadline.
    yield from _checked_by_workers(files, options, args.jobs, args.timeout)


def _check_files_in_worker(conn: Any, options: tuple[Any, ...]) -> None:
    """A worker process: says it is ready (its imports done), then checks
    the batches of files it is sent, lists of (index, path), and sends each
    batch's results back, a list of (index, result); None ends it."""
    conn.send("ready")
    while True:
        task = conn.recv()
        if task is None:
            return
        conn.send([(index, _check_one_plain(path, *options)) for index, path in task])


def _worker_died(path: Path | _Stdin, exitcode: int | None) -> dict[str, Any]:
    """The result of a file whose worker process ended while checking it."""
    how = f"with exit code {exitcode}"
    if exitcode is not None and exitcode < 0:
        import signal

        try:
            how = f"killed by {signal.Signals(-exitcode).name} (signal {-exitcode})"
        except ValueError:
            how = f"killed by signal {-exitcode}"
    return {
        "path": str(path),
        "ok": False,
        "error": f"the process checking it ended abruptly, {how}: out of memory, the file "
        "changed under its map (see --no-mmap), or a crash",
        "error_type": "WorkerDied",
        "seconds": 0.0,
    }


class WorkersFailed(RuntimeError):
    """Worker processes cannot be started (an installation problem, not a
    model's): the run cannot go on."""


def _timed_out(path: Path | _Stdin, timeout: float) -> dict[str, Any]:
    """The result of a file whose check went past --timeout."""
    return {
        "path": str(path),
        "ok": False,
        "error": f"gave up after {timeout:g} s (--timeout): the check did not finish",
        "error_type": "TimedOut",
        "seconds": timeout,
    }


def _checked_by_workers(
    files: list[Path | _Stdin],
    options: tuple[Any, ...],
    jobs: int,
    timeout: float | None = None,
) -> Iterator[tuple[Path | _Stdin, dict[str, Any]]]:
    """(file, result) in order, checked by `jobs` worker processes, each
    sent a batch of files at a time. A worker that dies (killed for memory,
    a signal) costs only the file that killed it: its batch is checked
    again a file at a time, by new workers, and a file whose worker dies
    while it is checked alone is reported unreadable. With a `timeout`,
    files go one at a time and a worker still on one after `timeout`
    seconds is killed, the file reported unreadable. ("spawn": each worker
    clean of this process's threads.)"""
    from multiprocessing.connection import wait

    context = multiprocessing.get_context("spawn")
    batch = 1 if timeout is not None else max(1, min(64, len(files) // (jobs * 8)))
    queue = collections.deque(range(len(files)))
    # Files of a batch whose worker died: checked one by one.
    alone: collections.deque[int] = collections.deque()
    results: dict[int, dict[str, Any]] = {}
    # Each worker's end of its pipe: its process and the batch it holds.
    workers: dict[Any, tuple[Any, list[int]]] = {}
    # When each busy worker was sent its batch.
    sent: dict[Any, float] = {}
    # Workers whose imports were done.
    ready_workers: set[Any] = set()

    def give(conn: Any) -> None:
        process, held = workers[conn]
        if alone:
            held[:] = [alone.popleft()]
        elif queue:
            held[:] = [queue.popleft() for _ in range(min(batch, len(queue)))]
        else:
            conn.send(None)
            del workers[conn]
            sent.pop(conn, None)
            process.join()
            conn.close()
            return
        sent[conn] = time.monotonic()
        conn.send([(i, files[i]) for i in held])

    def start() -> None:
        ours, theirs = context.Pipe()
        process = context.Process(
            target=_check_files_in_worker, args=(theirs, options), daemon=True
        )
        process.start()
        theirs.close()
        workers[ours] = (process, [])

    for _ in range(min(jobs, len(files))):
        start()
    done = 0

    def drop(conn: Any) -> Any:
        """Forgets a worker that ended or was killed: its process."""
        process, _ = workers.pop(conn)
        sent.pop(conn, None)
        process.join()
        conn.close()
        return process

    while workers:
        # Until the next deadline, with a timeout.
        wake = None
        if timeout is not None and sent:
            wake = max(0.0, min(sent.values()) + timeout - time.monotonic())
        ready: list[Any] = wait(list(workers), timeout=wake)
        for conn in ready:
            held = workers[conn][1]
            try:
                message = conn.recv()
            except (EOFError, OSError):
                # The worker died holding `held`.
                process = drop(conn)
                if conn not in ready_workers:
                    # Before its imports were done: no worker can start.
                    raise WorkersFailed(
                        "a worker process could not start (exit code "
                        f"{process.exitcode}): run with -j 1 to see why"
                    ) from None
                if len(held) == 1:
                    results[held[0]] = _worker_died(files[held[0]], process.exitcode)
                else:
                    alone.extend(held)
                if queue or alone:
                    start()
                continue
            if message == "ready":
                ready_workers.add(conn)
            else:
                results.update(message)
            give(conn)
        if timeout is not None:
            now = time.monotonic()
            for conn, since in list(sent.items()):
                if now - since < timeout or conn.poll():
                    continue
                process, held = workers[conn]
                process.kill()
                drop(conn)
                results[held[0]] = _timed_out(files[held[0]], timeout)
                if queue or alone:
                    start()
        while done in results:
            yield files[done], results.pop(done)
            done += 1


def cmd_check(args: argparse.Namespace) -> int:
    fmt = "json" if args.json else args.format
    policy = None
    if args.policy is not None:
        try:
            policy = Policy.load(args.policy)
        except PolicyError as e:
            print(f"onnxfast check: policy: {e}", file=sys.stderr)
            return EXIT_ERROR
        except OSError as e:
            print(f"onnxfast check: policy: {_describe_failure(e)}", file=sys.stderr)
            return EXIT_ERROR
    files, missing = _collect(args.paths)
    try:
        out = (
            open(args.output, "w", encoding="utf-8", errors="backslashreplace")  # noqa: SIM115
            if args.output
            else sys.stdout
        )
    except OSError as e:
        print(f"onnxfast check: --output: {_describe_write_failure(e)}", file=sys.stderr)
        return EXIT_ERROR
    try:
        return _check_files(args, fmt, policy, files, missing, out)
    except WorkersFailed as e:
        print(f"onnxfast check: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        if out is not sys.stdout:
            out.close()


def _check_files(
    args: argparse.Namespace,
    fmt: str,
    policy: Policy | None,
    files: list[Path | _Stdin],
    missing: list[str],
    out: TextIO,
) -> int:
    style = Style(out)
    results: list[dict[str, Any]] = []
    for arg in missing:
        results.append(
            {
                "path": arg,
                "ok": False,
                "error": f"no such file or folder: {arg}",
                "error_type": "FileNotFoundError",
                "seconds": 0.0,
            }
        )
    if not files and not missing:
        print("onnxfast check: no .onnx files found", file=sys.stderr)
        return EXIT_ERROR
    progress = Progress(len(files), enabled=not args.quiet)
    try:
        for _, result in _run_checks(files, args, policy):
            results.append(result)
            progress.step(result)
    finally:
        progress.clear()

    if fmt == "sarif":
        json.dump(_reports.sarif(results), out, indent=1)
        out.write("\n")
    for result in results:
        if fmt == "json":
            public = {k: v for k, v in result.items() if not k.startswith("_")}
            print(json.dumps(public), file=out)
        elif fmt == "github":
            for line in _reports.github([result]):
                print(line, file=out)
        elif fmt == "text" and not (args.quiet and result.get("ok") and not result["diagnostics"]):
            with contextlib.redirect_stdout(out):
                _print_human(result, style, args.debug)

    n_err = sum(1 for r in results if "error" in r)
    n_bad = sum(1 for r in results if "error" not in r and _failed(r, args.fail_on))
    n_ok = len(results) - n_err - n_bad
    if fmt in ("text", "github"):
        parts = [f"{len(results)} model{'s' if len(results) != 1 else ''} checked", f"{n_ok} valid"]
        if n_bad:
            parts.append(style.red(f"{n_bad} invalid"))
        if n_err:
            parts.append(style.red(f"{n_err} unreadable"))
        if fmt == "text":
            with contextlib.redirect_stdout(out):
                _print_summary(results, style)
            print(", ".join(parts), file=out)
        else:
            print(", ".join(parts), file=sys.stderr)
    if n_err:
        return EXIT_ERROR
    return EXIT_INVALID if n_bad else EXIT_OK


# ----------------------------------------------------------------------- info


def _type_text(vi: Any) -> str:
    if vi.type is None:
        return "?"
    text = repr(vi.type)
    return text[len("Type(") : -1] if text.startswith("Type(") else text


def _human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _walk_graphs(graph: Any) -> list[tuple[str, Any]]:
    """(path, graph) for every subgraph below `graph`, iteratively."""
    found = []
    stack = [("", graph)]
    while stack:
        prefix, g = stack.pop()
        for i, node in enumerate(g.node):
            for a in node.attribute:
                subs = ([a.g] if a.g is not None else []) + list(a.graphs)
                for sub in subs:
                    path = f"{prefix}{g.name or '?'}/node[{i}] {node.op_type}.{a.name}"
                    found.append((path, sub))
                    stack.append((path + "/", sub))
    return found


def model_info(model: Any) -> dict[str, Any]:
    """What `onnxfast info` shows, as plain data (reads no weight)."""
    graph = model.graph
    nodes = list(graph.node) if graph is not None else []
    by_op = collections.Counter(
        n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}::{n.op_type}" for n in nodes
    )
    params: dict[str, list[int]] = {}
    if graph is not None:
        for t in graph.initializer:
            count = 1
            for d in t.dims:
                count *= max(d, 0)
            entry = params.setdefault(data_type_name(t.data_type), [0, 0, 0])
            entry[0] += 1
            entry[1] += count
            with contextlib.suppress(OnnxFastError):  # unknown types: no byte size
                entry[2] += t.nbytes
    subgraphs = _walk_graphs(graph) if graph is not None else []
    externals = [
        {"location": f.location, "size": f.size, "tensors": len(f.tensors), "error": f.error}
        for f in model.external_files()
    ]
    return {
        "ir_version": model.ir_version,
        "producer": f"{model.producer_name} {model.producer_version}".strip(),
        "domain": model.domain,
        "model_version": model.model_version,
        "opsets": {d or "ai.onnx": v for d, v in model.opsets.items()},
        "graph": graph.name if graph is not None else None,
        "inputs": [
            {"name": vi.name, "type": _type_text(vi)}
            for vi in (graph.input if graph is not None else [])
        ],
        "outputs": [
            {"name": vi.name, "type": _type_text(vi)}
            for vi in (graph.output if graph is not None else [])
        ],
        "nodes": len(nodes),
        "ops": dict(by_op.most_common()),
        "parameters": {
            k: {"tensors": v[0], "elements": v[1], "bytes": v[2]}
            for k, v in sorted(params.items(), key=lambda kv: -kv[1][2])
        },
        "external_files": externals,
        "functions": [f"{f.domain}::{f.name}" if f.domain else f.name for f in model.functions],
        "subgraphs": [p for p, _ in subgraphs],
        "metadata": {p.key: p.value for p in model.metadata_props},
    }


def _table(rows: list[list[str]], indent: str = "  ", right: tuple[int, ...] = ()) -> list[str]:
    """Rows as lines of aligned columns (those in `right` right-aligned),
    trailing spaces removed. One format string for every row: a table of
    a 200,000-node graph's values is laid out in a tenth of a second."""
    if not rows:
        return []
    if not all(map(str.isprintable, itertools.chain.from_iterable(rows))):
        rows = [[_reports.shown(cell) for cell in row] for row in rows]
    widths = [max(map(len, column)) for column in zip(*rows)]
    line = indent + "  ".join(f"{{:{'>' if i in right else '<'}{w}}}" for i, w in enumerate(widths))
    return [line.format(*r).rstrip() for r in rows]


# External files `info` lists one by one (beyond them, those with a problem).
LISTED_FILES = 20


def _print_info(path: str, info: dict[str, Any], style: Style) -> None:
    print(style.bold(_reports.shown(path)))
    head = [
        ["ir_version", str(info["ir_version"])],
        ["producer", info["producer"] or "-"],
        ["opsets", ", ".join(f"{d} {v}" for d, v in info["opsets"].items()) or "-"],
        ["graph", f"{info['graph']}  ({info['nodes']} nodes)"],
    ]
    if info["domain"]:
        head.append(["domain", info["domain"]])
    for line in _table(head):
        print(line)
    for title, key in (("inputs", "inputs"), ("outputs", "outputs")):
        print(style.bold(title))
        for line in _table([[v["name"], v["type"]] for v in info[key]], indent="    "):
            print(line)
    print(style.bold("operators"))
    for line in _table([[op, str(n)] for op, n in info["ops"].items()], indent="    ", right=(1,)):
        print(line)
    if info["parameters"]:
        print(style.bold("parameters"))
        rows = [["type", "tensors", "elements", "bytes"]]
        total = [0, 0, 0]
        for dt, p in info["parameters"].items():
            rows.append([dt, str(p["tensors"]), f"{p['elements']:,}", _human_bytes(p["bytes"])])
            total = [total[0] + p["tensors"], total[1] + p["elements"], total[2] + p["bytes"]]
        rows.append(["total", str(total[0]), f"{total[1]:,}", _human_bytes(total[2])])
        for line in _table(rows, indent="    ", right=(1, 2, 3)):
            print(line)
    if info["external_files"]:
        files = info["external_files"]
        print(style.bold(f"external files ({len(files)})"))
        # A file per tensor makes thousands: every file with a problem,
        # the first others, and a line for the rest (--json lists all).
        shown: list[dict[str, Any]] = []
        rest: list[dict[str, Any]] = []
        for f in files:
            (shown if f["error"] or len(shown) < LISTED_FILES else rest).append(f)
        rows = []
        for f in shown:
            size = _human_bytes(f["size"]) if f["size"] is not None else "unreadable"
            rows.append([f["location"], size, f"{f['tensors']} tensors", f["error"] or ""])
        for line in _table(rows, indent="    ", right=(1,)):
            print(line)
        if rest:
            rest_bytes = sum(f["size"] or 0 for f in rest)
            tensors = sum(f["tensors"] for f in rest)
            summary = f"{_human_bytes(rest_bytes)}, {tensors} tensors; --json lists all"
            print(f"    … {len(rest)} more ({summary})")
    if info["functions"]:
        print(style.bold("functions"))
        for name in info["functions"]:
            print(f"    {_reports.shown(name)}")
    if info["subgraphs"]:
        print(style.bold(f"subgraphs ({len(info['subgraphs'])})"))
        for name in info["subgraphs"][:20]:
            print(f"    {_reports.shown(name)}")
        if len(info["subgraphs"]) > 20:
            print(f"    … {len(info['subgraphs']) - 20} more")
    if info["metadata"]:
        print(style.bold("metadata"))
        for line in _table([[k, v] for k, v in info["metadata"].items()], indent="    "):
            print(line)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off for the block (back as it was after,
    whatever happens): a table of every value of a large graph is hundreds
    of thousands of dicts and lists, none in a cycle, that the collector
    would traverse again and again as they are made (the 200k-node chain's
    `shapes --sizes`: 2.5 -> 2.2 s). Decorates `info` and `shapes`."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@_collector_paused()
def cmd_info(args: argparse.Namespace) -> int:
    try:
        source = _model_source(args.path, args.input_format, not args.no_mmap)
        model = source if isinstance(source, Model) else load(source)
        info = model_info(model)
        if args.shapes:
            inferred = infer_shapes(
                model,
                data_prop=args.data_prop,
                symbolic=args.symbolic,
                check_type=not args.no_check_type,
                contrib_ops=args.contrib_ops,
            )
            info["values"] = shape_table(inferred)
    except (OSError, MemoryError, OnnxFastError) as e:
        print(f"onnxfast info: {_describe_failure(e)}", file=sys.stderr)
        if args.debug:
            traceback.print_exc()
        return EXIT_ERROR
    if args.json:
        print(json.dumps({"path": args.path, **info}))
    else:
        style = Style(sys.stdout)
        _print_info(args.path, info, style)
        if args.shapes:
            _print_shapes(info["values"], style)
    return EXIT_OK


# --------------------------------------------------------------------- shapes


def _graphs(model: Any) -> list[tuple[str, Any]]:
    """(path, graph) for the main graph and every subgraph below it."""
    if model.graph is None:
        return []
    return [("main", model.graph), *_walk_graphs(model.graph)]


def shape_table(model: Any, *, graphs: list[tuple[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Every value of every graph of an inferred model (see `infer_shapes`):
    graph inputs, then node outputs in node order, with their types (declared,
    else inferred; None when neither) and the node that makes them. `graphs`:
    the model's `_graphs`, when the caller has them."""
    table = []
    for path, g in _graphs(model) if graphs is None else graphs:
        types = {vi.name: vi for vi in g.value_info}
        types.update((vi.name, vi) for vi in g.output)
        types.update((vi.name, vi) for vi in g.input)
        initializers = {t.name for t in g.initializer}
        values = [
            {"name": vi.name, "type": _type_text(vi), "producer": "input"}
            for vi in g.input
            if vi.name not in initializers
        ]
        for i, node in enumerate(g.node):
            producer = f"node[{i}] {node.op_type}"
            for out in node.output:
                if out:
                    vi = types.get(out)
                    text = _type_text(vi) if vi is not None else None
                    values.append({"name": out, "type": text, "producer": producer})
        table.append({"graph": path, "values": values})
    return table


_FRESH = re.compile(r"\bunk__\d+\b")


def unknown_dims(table: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Each dim inference could only name (`unk__N`: a data-dependent size,
    NonZero's count, or one no rule computes) with where it first appears
    in `table` (see `shape_table`: graph inputs, then node outputs in node
    order, main graph first): the graph, the value and what makes it."""
    seen: set[str] = set()
    found = []
    for g in table:
        for v in g["values"]:
            for dim in _FRESH.findall(v["type"] or ""):
                if dim not in seen:
                    seen.add(dim)
                    found.append(
                        {
                            "dim": dim,
                            "graph": g["graph"],
                            "value": v["name"],
                            "producer": v["producer"],
                        }
                    )
    return found


def parse_sizes(text: str) -> dict[str, int]:
    """`--sizes batch=1,seq=128` as a mapping (ValueError naming the part
    that is not NAME=INT)."""
    sizes: dict[str, int] = {}
    for part in text.split(","):
        name, eq, value = part.partition("=")
        name = name.strip()
        try:
            size = int(value)
        except ValueError:
            size = -1
        if not eq or not name or size < 0:
            raise ValueError(f"{part.strip()!r} is not NAME=SIZE (a size is an int, at least 0)")
        sizes[name] = size
    return sizes


def plan_memory(
    graphs: list[tuple[str, Any]], table: list[dict[str, Any]], sizes: dict[str, int]
) -> None:
    """Adds each value's shape at `sizes` ("shape_at") and its bytes to
    `table` (see `shape_table` of the same `graphs`), and to each graph the
    total bytes of its node outputs, their peak in graph order and how many
    are of unknown size ("memory"), from `Graph.memory_plan` (one call a
    graph)."""
    for entry, (_, g) in zip(table, graphs):
        plan = g.memory_plan(sizes)
        shapes, sized = plan.shapes, plan.bytes
        for v in entry["values"]:
            v["shape_at"] = shapes.get(v["name"])
            v["bytes"] = sized.get(v["name"])
        entry["memory"] = {
            "total_bytes": plan.total_bytes,
            "peak_bytes": plan.peak_bytes,
            "unknown": plan.unknown,
        }


def _print_shapes(table: list[dict[str, Any]], style: Style) -> None:
    for g in table:
        title = f"values of {_reports.shown(g['graph'])}" if g["graph"] != "main" else "values"
        print(style.bold(title))
        rows = [[v["name"], v["type"] or "?", v["producer"]] for v in g["values"]]
        if "memory" in g:
            for row, v in zip(rows, g["values"]):
                shape = v["shape_at"]
                at = "?" if shape is None else "[" + ", ".join(map(_dim_text, shape)) + "]"
                row[2:2] = [at, "?" if v["bytes"] is None else _human_bytes(v["bytes"])]
        lines = _table(rows, indent="    ")
        if lines:
            print("\n".join(lines))
        if "memory" in g:
            m = g["memory"]
            more = f" (and {m['unknown']} of unknown size)" if m["unknown"] else ""
            print(
                f"    node outputs: {_human_bytes(m['total_bytes'])} in all, "
                f"{_human_bytes(m['peak_bytes'])} at most at once in graph order{more}"
            )


def _dim_text(d: int | None) -> str:
    return "?" if d is None else str(d)


def _print_inference_report(report: Report) -> None:
    """Inference's findings and summary, on stderr (nothing when clean)."""
    if len(report) or report.omitted:
        err = Style(sys.stderr)
        for d in report:
            print(str(d), file=sys.stderr)
        summary = f"inference: {report.summary()}"
        print(err.red(summary) if not report.ok else err.yellow(summary), file=sys.stderr)


def _shapes_usage_error(args: argparse.Namespace) -> str | None:
    if args.external_data is not None and args.output is None:
        return "--external-data writes beside -o/--output FILE: give -o"
    if args.external_data is not None and args.output == STDIN:
        return "--external-data writes beside -o/--output FILE: not with standard output (-o -)"
    if args.output is not None and (args.json or args.sizes is not None):
        return "-o/--output writes the model instead of printing: --json and --sizes print"
    return None


@_collector_paused()
def cmd_shapes(args: argparse.Namespace) -> int:
    problem = _shapes_usage_error(args)
    if problem is not None:
        print(f"onnxfast shapes: {problem}", file=sys.stderr)
        return EXIT_ERROR
    try:
        sizes = parse_sizes(args.sizes) if args.sizes is not None else None
    except ValueError as e:
        print(f"onnxfast shapes: --sizes: {e}", file=sys.stderr)
        return EXIT_ERROR
    try:
        inferred, report = infer_with_report(
            _model_source(args.path, args.input_format, not args.no_mmap),
            data_prop=args.data_prop,
            symbolic=args.symbolic,
            check_type=not args.no_check_type,
            contrib_ops=args.contrib_ops,
        )
        if args.output is not None:
            # As onnx's infer_shapes_path: the model with every value typed.
            external: dict[str, Any] = {}
            if args.external_data is not None:
                external = {"save_as_external_data": True, "location": args.external_data or None}
            to_stdout = args.output == STDIN
            target = sys.stdout.buffer if to_stdout else args.output
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", ExternalDataWarning)
                    written = inferred.save(target, **external)
                    if to_stdout:
                        sys.stdout.buffer.flush()
            except ValueError as e:  # a refused location
                print(f"onnxfast shapes: --external-data: {e}", file=sys.stderr)
                return EXIT_ERROR
            except OSError as e:  # the output, not the model read
                print(f"onnxfast shapes: {_describe_write_failure(e)}", file=sys.stderr)
                return EXIT_ERROR
            for w in caught:
                print(
                    f"onnxfast shapes: warning: {w.message} (here: --external-data)",
                    file=sys.stderr,
                )
            # With the model on standard output, what is said goes to stderr.
            said = sys.stderr if to_stdout else sys.stdout
            print(f"wrote {_reports.shown(args.output)} ({written} bytes)", file=said)
            _print_inference_report(report)
            return EXIT_INVALID if (args.strict and not report.ok) else EXIT_OK
        graphs = _graphs(inferred)
        table = shape_table(inferred, graphs=graphs)
        if sizes is not None:
            plan_memory(graphs, table, sizes)
    except (OSError, MemoryError, OnnxFastError) as e:
        print(f"onnxfast shapes: {_describe_failure(e)}", file=sys.stderr)
        if args.debug:
            traceback.print_exc()
        return EXIT_ERROR
    unknown = unknown_dims(table)
    if args.json:
        out = {"path": args.path, "graphs": table, "unknown_dims": unknown, **report.to_dict()}
        print(json.dumps(out))
    else:
        _print_shapes(table, Style(sys.stdout))
        if unknown:
            print("unknown dims, where each first appears")
            rows = [[u["dim"], u["value"], u["producer"], u["graph"]] for u in unknown]
            for line in _table(rows, indent="    "):
                print(line)
        _print_inference_report(report)
    return EXIT_INVALID if (args.strict and not report.ok) else EXIT_OK


# ----------------------------------------------------------------------- main


def _add_reading_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--input-format",
        choices=("protobuf", "textproto", "json", "onnxtxt"),
        help="read models in this format whatever their extension (by default a "
        ".json, .txtpb, .onnxtxt, ... file is parsed by onnx as text; untrusted files "
        "of any name: protobuf)",
    )
    parser.add_argument(
        "--no-mmap",
        action="store_true",
        help="read files into memory instead of mapping them (load(mmap=False)): for "
        "files another process may truncate or rewrite meanwhile, which would kill a "
        "process reading them through a map (SIGBUS)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="onnxfast", description="Inspect and validate ONNX models."
    )
    parser.add_argument("--version", action="version", version=f"onnxfast {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p_check = sub.add_parser(
        "check", help="validate models (onnx.checker's verdicts, every defect at once)"
    )
    p_check.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="model files or folders (searched for *.onnx); - reads a model from standard input",
    )
    p_check.add_argument(
        "--strict", action="store_true", help="add the checks onnx lacks (docs/checks.md)"
    )
    _add_reading_options(p_check)
    p_check.add_argument(
        "--full",
        action="store_true",
        help="add type and shape inference (onnx's full_check=True)",
    )
    p_check.add_argument(
        "--contrib-ops",
        action="store_true",
        help="check as onnxruntime runs the model: its own operators (com.microsoft "
        "Attention, MatMulNBits, ...) are known and, with --full, inferred",
    )
    p_check.add_argument(
        "--data-prop",
        action="store_true",
        help="with the full check (implied), follow the values of shape computations: "
        "a model whose computed shapes cannot fit is invalid (beyond onnx)",
    )
    p_check.add_argument(
        "--policy",
        metavar="FILE",
        help="enforce the [policy] table of a TOML file (codes P…; schema in the README)",
    )
    p_check.add_argument(
        "--format",
        choices=("text", "json", "sarif", "github"),
        default="text",
        help="text (default), json (JSON Lines, one object per model), sarif (SARIF 2.1.0 "
        "for code scanning) or github (workflow annotations)",
    )
    p_check.add_argument("--json", action="store_true", help="the same as --format json")
    p_check.add_argument(
        "--fail-on",
        choices=("error", "warning"),
        default="error",
        help="exit 1 when a model has an error (default) or also a warning",
    )
    p_check.add_argument(
        "-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout"
    )
    p_check.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress bar; in text, list only the models with findings",
    )
    p_check.add_argument(
        "-j", "--jobs", type=int, default=1, metavar="N", help="check N files in parallel"
    )
    p_check.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="give up on a model after SECONDS (each is checked in a worker process, "
        "killed at the deadline): it is reported unreadable (F001); not for -",
    )
    p_check.add_argument("--debug", action="store_true", help="show tracebacks of failures")
    p_check.set_defaults(func=cmd_check)

    p_info = sub.add_parser("info", help="summarise a model (reads no weights)")
    p_info.add_argument("path", metavar="PATH", help="a model file; - reads standard input")
    _add_reading_options(p_info)
    p_info.add_argument(
        "--shapes", action="store_true", help="add every value's inferred type (as `shapes`)"
    )
    p_info.add_argument(
        "--data-prop", action="store_true", help="with --shapes: follow shape values"
    )
    p_info.add_argument(
        "--symbolic", action="store_true", help="with --shapes: dims as expressions"
    )
    p_info.add_argument(
        "--contrib-ops",
        action="store_true",
        help="with --shapes: infer onnxruntime's operators too",
    )
    p_info.add_argument(
        "--no-check-type",
        action="store_true",
        help="with --shapes: do not check types against type constraints",
    )
    p_info.add_argument("--json", action="store_true", help="print JSON")
    p_info.add_argument("--debug", action="store_true", help="show tracebacks of failures")
    p_info.set_defaults(func=cmd_info)

    p_shapes = sub.add_parser(
        "shapes", help="infer and print the type of every value (reads no weights)"
    )
    p_shapes.add_argument("path", metavar="PATH", help="a model file; - reads standard input")
    _add_reading_options(p_shapes)
    p_shapes.add_argument(
        "--strict", action="store_true", help="exit 1 when inference finds a defect"
    )
    p_shapes.add_argument(
        "--data-prop",
        action="store_true",
        help="follow the values of shape computations (Shape, Gather, Concat, ...) into "
        "Reshape, Expand, Tile, ... (infer_shapes(data_prop=True))",
    )
    p_shapes.add_argument(
        "--symbolic",
        action="store_true",
        help="dims computed from others as expressions over the model's symbols "
        "(seq + 1, floor((h + 1)/2); infer_shapes(symbolic=True))",
    )
    p_shapes.add_argument(
        "--contrib-ops",
        action="store_true",
        help="infer onnxruntime's own operators too (com.microsoft Attention, "
        "SkipLayerNormalization, MatMulNBits, ...; infer_shapes(contrib_ops=True))",
    )
    p_shapes.add_argument(
        "--no-check-type",
        action="store_true",
        help="do not check node types against their operators' type constraints "
        "(onnx's infer_shapes default; infer_shapes(check_type=False))",
    )
    p_shapes.add_argument(
        "--sizes",
        metavar="NAME=SIZE,...",
        help="evaluate every dim at these sizes of the model's symbols (batch=1,seq=128): "
        "each value's shape and bytes, and the node outputs' total and peak memory",
    )
    p_shapes.add_argument("--json", action="store_true", help="print JSON")
    p_shapes.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the model with every value's inferred type (in value_info) to FILE "
        "instead of printing the table, as onnx's infer_shapes_path (-: to standard "
        "output, the messages to stderr)",
    )
    p_shapes.add_argument(
        "--external-data",
        nargs="?",
        const="",
        metavar="LOCATION",
        help="with -o: write the weights to one data file beside FILE (LOCATION, by "
        "default FILE's name + '.data'), as onnx's save_model(save_as_external_data=True)",
    )
    p_shapes.add_argument("--debug", action="store_true", help="show tracebacks of failures")
    p_shapes.set_defaults(func=cmd_shapes)
    return parser


def _printable_file_names() -> None:
    """File names are bytes: one that is not UTF-8 reaches Python with
    surrogates ('\\udcff' for the byte 0xff), which a strict UTF-8 stream
    (LANG=en_US.UTF-8) refuses to print. Such characters are printed as
    escapes instead of ending the run."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


def main(argv: list[str] | None = None) -> int:
    _printable_file_names()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse exits with 2 on usage errors, 0 on --help
        return int(e.code or 0)
    if getattr(args, "jobs", 1) < 1:
        parser.print_usage(sys.stderr)
        print("onnxfast check: error: -j must be at least 1", file=sys.stderr)
        return EXIT_ERROR
    timeout = getattr(args, "timeout", None)
    if timeout is not None and not timeout > 0:
        parser.print_usage(sys.stderr)
        print("onnxfast check: error: --timeout must be a positive number", file=sys.stderr)
        return EXIT_ERROR
    if timeout is not None and STDIN in getattr(args, "paths", ()):
        parser.print_usage(sys.stderr)
        print(
            "onnxfast check: error: --timeout needs files: standard input (-) is read "
            "by this process",
            file=sys.stderr,
        )
        return EXIT_ERROR
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
