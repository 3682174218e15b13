"""Value-index benchmark: `graph.values` against onnx_ir's Values (which
keep their producer and uses) and against plain onnx (dicts built by hand
over `graph.node`, as users do today), same run.

    python benches/bench_values.py [--quick]

On the 200,000-node chain and the 150,000-node exporter graph (attributes
and value_info):
- from the path: load, index, and the producer and every use of every
  value (each library's objects: onnxfast `Value.producer` /
  `Value.consumers`, onnx_ir `Value.producer()` / `Value.uses()`);
- loaded: the producer and uses of 1,000 values looked up by name (onnx
  must still build its dicts; onnxfast builds its index on first use);
- from the path: the shape of the graph's output (onnx: load, infer_shapes,
  find it; onnxfast: load, `values[name].shape`, which runs inference once);
- from the path: the memory plan at sizes (onnx: load, infer_shapes, each
  node output's bytes from its inferred type and the peak held in graph
  order, in Python; onnxfast: load, `graph.memory_plan(sizes)`).

Fresh processes, libraries taking turns; median time, farthest run from
it, peak RSS growth.
"""

from __future__ import annotations

import argparse
import sys

from _common import graph_models, measure_interleaved, result_rows, table, warm

ONNX_INDEX = """
producer, uses = {}, {}
for i, n in enumerate(m.graph.node):
    for k, x in enumerate(n.input):
        uses.setdefault(x, []).append((n, k))
    for k, y in enumerate(n.output):
        producer.setdefault(y, (n, k))
names = [v.name for v in m.graph.input] + [t.name for t in m.graph.initializer]
names += [y for n in m.graph.node for y in n.output]
"""

ALL_ONNX = ONNX_INDEX + "for x in names:\n    producer.get(x), uses.get(x, [])\n"

ALL_IR = """
g = m.graph
vals = list(g.inputs) + list(g.initializers.values()) + [y for n in g for y in n.outputs]
for v in vals:
    v.producer(), v.uses()
"""

# The memory plan at sizes (shapes, bytes, peak of node outputs in graph
# order), as a user computes it from onnx's inferred model.
PLAN_ONNX = """
import numpy as np
from onnx import helper
m = onnx.shape_inference.infer_shapes(m)
g = m.graph
types = {v.name: v.type for v in [*g.value_info, *g.output, *g.input]}
sizes = {"b": 4}
made, last = {}, {}
for i, n in enumerate(g.node):
    for x in n.input:
        last[x] = i
    for y in n.output:
        made[y] = i
nbytes = {}
for y in made:
    t = types.get(y)
    if t is None or not t.tensor_type.HasField("shape"):
        continue
    dims = [d.dim_value if d.HasField("dim_value") else sizes.get(d.dim_param)
            for d in t.tensor_type.shape.dim]
    if None not in dims:
        item = np.dtype(helper.tensor_dtype_to_np_dtype(t.tensor_type.elem_type)).itemsize
        nbytes[y] = int(np.prod(dims)) * item
outputs = {o.name for o in g.output}
freed = {}
for y, b in nbytes.items():
    if y not in outputs:
        freed.setdefault(max(last.get(y, made[y]), made[y]), []).append(b)
live = peak = 0
adds = {}
for y, b in nbytes.items():
    adds[made[y]] = adds.get(made[y], 0) + b
for i in range(len(g.node)):
    live += adds.get(i, 0)
    peak = max(peak, live)
    live -= sum(freed.get(i, []))
"""

PLAN_OURS = 'plan = m.graph.memory_plan({"b": 4})\npeak = plan.peak_bytes\n'

ALL_OURS = """
values = m.graph.values
for v in values.values():
    v.producer, v.consumers
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeat = 1 if args.quick else 5
    chain, exporter = graph_models(args.quick)
    rows = []

    def add(case: str, results: dict) -> None:
        rows.extend(result_rows(case, results))

    k = 20 if args.quick else 200
    graphs = ((f"{k}k-node chain", chain), (f"{k * 3 // 4}k exporter nodes + value_info", exporter))
    for label, path in graphs:
        warm(path)
        p = repr(str(path))
        add(
            f"{label}: load, producer and uses of every value",
            measure_interleaved(
                {
                    "onnx": ("import onnx", f"m = onnx.load({p})\n{ALL_ONNX}"),
                    "onnx_ir": ("import onnx_ir as ir", f"m = ir.load({p})\n{ALL_IR}"),
                    "onnxfast": ("import onnxfast", f"m = onnxfast.load({p})\n{ALL_OURS}"),
                },
                repeat=repeat,
            ),
        )
        pick = (
            f"import onnx\nm0 = onnx.load({p})\n"
            "picked = [y for n in m0.graph.node[::max(1, len(m0.graph.node) // 1000)] "
            "for y in n.output][:1000]\ndel m0\n"
        )
        add(
            f"{label}, loaded: producer and uses of 1,000 values by name",
            measure_interleaved(
                {
                    "onnx": (
                        pick + f"m = onnx.load({p})",
                        ONNX_INDEX + "for x in picked:\n    producer.get(x), uses.get(x, [])\n",
                    ),
                    "onnx_ir": (
                        pick + f"import onnx_ir as ir\nm = ir.load({p})",
                        "by = {y.name: y for n in m.graph for y in n.outputs}\n"
                        "for x in picked:\n    v = by[x]\n    v.producer(), v.uses()\n",
                    ),
                    "onnxfast": (
                        pick + f"import onnxfast\nm = onnxfast.load({p})",
                        "values = m.graph.values\n"
                        "for x in picked:\n    v = values[x]\n    v.producer, v.consumers\n",
                    ),
                },
                repeat=repeat,
            ),
        )
        add(
            f"{label}: shape of the graph output, from path",
            measure_interleaved(
                {
                    "onnx": (
                        "import onnx",
                        f"m = onnx.load({p})\n"
                        "name = m.graph.output[0].name\n"
                        "m = onnx.shape_inference.infer_shapes(m)\n"
                        "t = next(v for v in m.graph.output if v.name == name).type\n",
                    ),
                    "onnxfast": (
                        "import onnxfast",
                        f"m = onnxfast.load({p})\n"
                        "shape = m.graph.values[m.graph.output[0].name].shape\n",
                    ),
                },
                repeat=repeat,
            ),
        )
        add(
            f"{label}: memory plan at sizes, from path",
            measure_interleaved(
                {
                    "onnx": ("import onnx", f"m = onnx.load({p})\n{PLAN_ONNX}"),
                    "onnxfast": ("import onnxfast", f"m = onnxfast.load({p})\n{PLAN_OURS}"),
                },
                repeat=repeat,
            ),
        )
    print(table(rows, ["case", "library", "time", "spread", "peak RSS growth", "onnx / it"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
