"""Writes the onnx node-test corpus (models and .pb test data) to a folder.

The corpus is generated from the installed onnx package, never committed:

    python scripts/gen_node_corpus.py OUTDIR

Layout: OUTDIR/<case>/model.onnx and OUTDIR/<case>/test_data_set_<i>/
{input,output}_<j>.pb, where each .pb holds a TensorProto, SequenceProto,
MapProto or OptionalProto according to the graph's declared input/output type.
A file OUTDIR/DONE marks a complete corpus.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path


def _serialize(value, value_info) -> bytes:
    from onnx import TensorProto, numpy_helper

    kind = value_info.type.WhichOneof("value")
    if kind == "map_type":
        return numpy_helper.from_dict(value, value_info.name).SerializeToString()
    if kind == "sequence_type":
        return numpy_helper.from_list(value, value_info.name).SerializeToString()
    if kind == "optional_type":
        return numpy_helper.from_optional(value, value_info.name).SerializeToString()
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, value_info.name).SerializeToString()


def generate(out: Path) -> Path:
    """Generates the corpus into `out` unless it is already complete."""
    done = out / "DONE"
    if done.exists():
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case import node

        cases = node.collect_testcases()
    for case in cases:
        case_dir = out / case.name
        case_dir.mkdir(parents=True, exist_ok=True)
        (case_dir / "model.onnx").write_bytes(case.model.SerializeToString())
        graph = case.model.graph
        for i, (inputs, outputs) in enumerate(case.data_sets):
            data_dir = case_dir / f"test_data_set_{i}"
            data_dir.mkdir(exist_ok=True)
            for prefix, values, infos in (
                ("input", inputs, graph.input),
                ("output", outputs, graph.output),
            ):
                for j, value in enumerate(values):
                    (data_dir / f"{prefix}_{j}.pb").write_bytes(_serialize(value, infos[j]))
    done.write_text(f"{len(cases)} cases\n")
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    target = generate(Path(sys.argv[1]))
    print(f"corpus in {os.fspath(target)}")
