"""Runs onnxruntime on each (label, model bytes, feeds) of a pickle and prints
one JSON line before each run and one with its output shapes (null when
onnxruntime refuses the model or fails running it), flushed: a run that
aborts the process leaves the results before it and names itself.

    python tests/_ort_outputs.py ITEMS.pkl

Used by tests/test_data_prop_runtime.py and tests/test_real_models.py, in a
subprocess (onnxruntime aborts on some hostile models, and a real model fed
sizes it cannot take may stop it with a floating-point exception)."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

WORKER = Path(__file__).resolve()


def run_groups(groups: dict[str, list]) -> tuple[dict, list]:
    """Each group's items (label, model bytes, feeds) run by this script in a
    subprocess (two at a time): onnxruntime's output shapes (None: it does not
    run) by label, and the labels of the runs that aborted it (the rest of
    their group runs on, in a new process)."""
    results: dict[str, dict | None] = {}
    aborted: list[str] = []
    # The pickles hold every model's bytes (~0.5-1 GB for the real models):
    # removed when the runs end, however they end.
    with tempfile.TemporaryDirectory(prefix="onnxfast-ort-") as scratch:
        _run_all(Path(scratch), groups, results, aborted)
    return results, aborted


def _run_all(scratch: Path, groups: dict[str, list], results: dict, aborted: list[str]) -> None:
    count = iter(range(1 << 62))

    def run(item: tuple[str, list]) -> tuple[dict, str | None, list]:
        _, items = item
        pkl = scratch / f"{next(count)}.pkl"
        with open(pkl, "wb") as f:
            pickle.dump(items, f)
        try:
            done = subprocess.run(
                [sys.executable, str(WORKER), str(pkl)],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
        finally:
            pkl.unlink()
        out, started = {}, None
        for line in done.stdout.splitlines():
            record = json.loads(line)
            if record.get("start"):
                started = record["label"]
            else:
                out[record["label"]] = record["shapes"]
                started = None
        return out, started if done.returncode != 0 else None, items

    pending = list(groups.items())
    while pending:
        with ThreadPoolExecutor(2) as pool:
            finished = list(pool.map(run, pending))
        pending = []
        for out, abort, items in finished:
            results.update(out)
            if abort is not None:
                aborted.append(abort)
                rest = [it for it in items if it[0] not in out and it[0] != abort]
                if rest:
                    pending.append((f"{len(aborted)}-rest", rest))


def main(path: str) -> None:
    import onnxruntime as ort

    with open(path, "rb") as f:
        items = pickle.load(f)
    options = ort.SessionOptions()
    options.log_severity_level = 4
    # One thread: two workers run at once on a 2-core machine, and the
    # runtime's spinning pool threads would take turns on the same cores.
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    # Consecutive items of one model (the same bytes object) share a session.
    last, session = None, None
    for label, data, feeds in items:
        print(json.dumps({"label": label, "start": True}), flush=True)
        try:
            if data is not last:
                last, session = data, None
                session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
            if session is None:
                raise RuntimeError("the model does not load")
            arrays = session.run(None, feeds)
            # Tensors only (a classifier's ZipMap gives a list of dicts).
            shapes = {
                o.name: list(a.shape)
                for o, a in zip(session.get_outputs(), arrays)
                if hasattr(a, "shape")
            }
        except Exception:  # any refusal or failure: it does not run
            shapes = None
        print(json.dumps({"label": label, "shapes": shapes}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
