"""Runs onnxruntime on each (label, model bytes, feeds) of a pickle and prints
one JSON line before each run and one with its output shapes (null when
onnxruntime refuses the model or fails running it), flushed: a run that
aborts the process leaves the results before it and names itself.

    python tests/_ort_outputs.py ITEMS.pkl

Used by tests/test_data_prop_runtime.py, in a subprocess (onnxruntime
aborts on some hostile models)."""

from __future__ import annotations

import json
import pickle
import sys

import onnxruntime as ort


def main(path: str) -> None:
    with open(path, "rb") as f:
        items = pickle.load(f)
    options = ort.SessionOptions()
    options.log_severity_level = 4
    for label, data, feeds in items:
        print(json.dumps({"label": label, "start": True}), flush=True)
        try:
            session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
            arrays = session.run(None, feeds)
            shapes = {o.name: list(a.shape) for o, a in zip(session.get_outputs(), arrays)}
        except Exception:  # any refusal or failure: it does not run
            shapes = None
        print(json.dumps({"label": label, "shapes": shapes}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
