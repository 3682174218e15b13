"""Compare `infer_shapes(symbolic=True)` with torch's own symbolic shapes.

torch.onnx's dynamo exporter writes, for every value of the graph, the
shape torch.export's symbolic tracing gave it: dims over the symbols of the
dynamic inputs (`s20`, `4*s52`, `Min(512, s53)`, `((s20*s52)//s97)`, in
SymPy's syntax). That is an independent reference for onnxfast's symbolic
dims: this script removes the exporter's `value_info` from each model,
infers the model again with `symbolic=True, data_prop=True` and compares
every dim torch wrote with onnxfast's, by text and, where the texts differ,
by value (both expressions evaluated with SymPy at several sizes of the
symbols).

    python scripts/torch_symbolic_compare.py MODEL_OR_FOLDER... [--show N]
    python scripts/torch_symbolic_compare.py --export FOLDER

`--export` writes the models first (needs torch, torchvision, transformers
and onnxscript; the models are built from small configurations with random
weights, nothing is downloaded): torchvision's classifiers and transformers'
encoders and decoders, with the batch (and the sequence) dynamic.

Classes of dims:
- same: the same text;
- equal: different texts of the same value at every size tried
  (`((s20**2)//s20)` and `s20`);
- ours unknown: torch has an expression, onnxfast a fresh symbol;
- differ: different values at some size tried, listed with `--show`;
- torch unknown: torch wrote no dim (not compared).
"""

from __future__ import annotations

import argparse
import collections
import itertools
import sys
from pathlib import Path

import onnx
import sympy

import onnxfast

# Sizes the symbols take, together and mixed: small and large, around the
# bounds models hold (512 positions).
_SIZES = (1, 2, 7, 300, 1000)


def _dims(value: onnx.ValueInfoProto) -> list[int | str | None] | None:
    t = value.type
    if t.WhichOneof("value") != "tensor_type" or not t.tensor_type.HasField("shape"):
        return None
    return [
        d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
        for d in t.tensor_type.shape.dim
    ]


def _expr(text: int | str) -> sympy.Expr | None:
    if isinstance(text, int):
        return sympy.Integer(text)
    names = {"min": sympy.Min, "max": sympy.Max, "Min": sympy.Min, "Max": sympy.Max}
    try:
        return sympy.sympify(text, locals=names)
    except (sympy.SympifyError, SyntaxError, TypeError):
        return None


def _same_value(a: int | str, b: int | str) -> bool | None:
    """Whether two dims have the same value at every size tried (None: a
    text that does not parse)."""
    x, y = _expr(a), _expr(b)
    if x is None or y is None:
        return None
    symbols = sorted(x.free_symbols | y.free_symbols, key=str)
    grid = itertools.product(_SIZES, repeat=len(symbols)) if len(symbols) <= 3 else []
    points = [dict(zip(symbols, p, strict=True)) for p in grid] or [
        dict.fromkeys(symbols, s) for s in _SIZES
    ]
    return all(sympy.simplify(x.subs(p) - y.subs(p)) == 0 for p in points)


def compare(path: Path) -> tuple[collections.Counter, list[str]]:
    model = onnx.load(path, load_external_data=False)
    declared = {v.name: _dims(v) for v in model.graph.value_info}
    stripped = onnx.ModelProto()
    stripped.CopyFrom(model)
    del stripped.graph.value_info[:]
    values = onnxfast.infer_shapes(stripped, symbolic=True, data_prop=True).graph.values
    counts: collections.Counter = collections.Counter()
    shown: list[str] = []
    for name, theirs in declared.items():
        if theirs is None:
            continue
        ours = values[name].shape if name in values else None
        if ours is None or len(ours) != len(theirs):
            counts["rank differs"] += 1
            shown.append(f"{path.name} {name}: torch {theirs}, onnxfast {ours}")
            continue
        for t, o in zip(theirs, ours, strict=True):
            if t is None:
                counts["torch unknown"] += 1
            elif t == o:
                counts["same"] += 1
            elif o is None or (isinstance(o, str) and o.startswith("unk__")):
                counts["ours unknown"] += 1
            elif _same_value(t, o):
                counts["equal"] += 1
            else:
                counts["differ"] += 1
                shown.append(f"{path.name} {name}: torch {t!r}, onnxfast {o!r}")
    return counts, shown


def export(folder: Path) -> None:
    """Dynamo exports of torchvision and transformers models into folder."""
    import torch
    import torchvision.models as tvm
    import transformers as tf

    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    auto = torch.export.Dim.AUTO

    def save(name: str, model: torch.nn.Module, args: tuple, dynamic: tuple) -> None:
        path = folder / f"{name}.onnx"
        try:
            program = torch.onnx.export(model.eval(), args, dynamo=True, dynamic_shapes=dynamic)
            program.save(str(path), external_data=False)
        except Exception as e:  # a model torch cannot export: reported, skipped
            print(f"{name}: not exported: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr)

    for name in ("resnet18", "mobilenet_v3_small", "efficientnet_b0", "convnext_tiny", "swin_t"):
        model = getattr(tvm, name)(weights=None)
        save(name, model, (torch.rand(2, 3, 224, 224),), ({0: auto},))

    class Hidden(torch.nn.Module):
        """The last hidden state, without caches."""

        def __init__(self, inner: torch.nn.Module, text: bool) -> None:
            super().__init__()
            self.inner, self.text = inner, text

        def forward(self, a: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
            if self.text:
                out = self.inner(input_ids=a, attention_mask=b, use_cache=False)
            else:
                out = self.inner(pixel_values=a)
            return out.last_hidden_state

    small = {
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "intermediate_size": 128,
        "vocab_size": 1000,
    }
    text = {
        "bert": (tf.BertConfig, tf.BertModel, small),
        "roberta": (tf.RobertaConfig, tf.RobertaModel, small),
        "gpt2": (tf.GPT2Config, tf.GPT2Model, {"n_embd": 64, "n_layer": 2, "n_head": 4}),
        "llama": (tf.LlamaConfig, tf.LlamaModel, {**small, "num_key_value_heads": 2}),
        "qwen2": (tf.Qwen2Config, tf.Qwen2Model, {**small, "num_key_value_heads": 2}),
        "phi": (tf.PhiConfig, tf.PhiModel, small),
        "bloom": (tf.BloomConfig, tf.BloomModel, {"hidden_size": 64, "n_layer": 2, "n_head": 4}),
    }
    ids = torch.randint(0, 1000, (2, 7))
    mask = torch.ones(2, 7, dtype=torch.int64)
    for name, (config, cls, kw) in text.items():
        model = Hidden(cls(config(**kw)), text=True)
        save(name, model, (ids, mask), ({0: auto, 1: auto}, {0: auto, 1: auto}))
    vit = tf.ViTModel(tf.ViTConfig(**small, image_size=32, patch_size=8))
    save("vit", Hidden(vit, text=False), (torch.rand(2, 3, 32, 32),), ({0: auto},))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--export", type=Path, help="write the models into this folder first")
    parser.add_argument("--show", type=int, default=10, help="dims that differ to list")
    args = parser.parse_args()
    paths = list(args.paths)
    if args.export:
        export(args.export)
        paths.append(args.export)
    files = sorted(f for p in paths for f in (sorted(p.glob("*.onnx")) if p.is_dir() else [p]))
    if not files:
        parser.error("no model given")
    total: collections.Counter = collections.Counter()
    shown: list[str] = []
    for path in files:
        counts, found = compare(path)
        total += counts
        shown.extend(found)
    print(f"{len(files)} models")
    for kind in ("same", "equal", "ours unknown", "differ", "rank differs", "torch unknown"):
        print(f"  {kind:14} {total[kind]:8,}")
    for line in shown[: args.show]:
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
