"""Shape inference as a product: :func:`infer_shapes`, and
:func:`infer_shapes_path` (onnx's function of that name)."""

from __future__ import annotations

import os
from typing import Any

from . import _onnxfast
from ._check import Diagnostic, Report, _model_and_dir
from .errors import InferenceError


def infer_shapes(
    model_or_path: Any,
    *,
    strict: bool = False,
    data_prop: bool = False,
    symbolic: bool = False,
    max_diagnostics: int = 10_000,
    check_type: bool = True,
    contrib_ops: bool = False,
) -> _onnxfast.Model:
    """Infers the type and shape of every value, as
    ``onnx.shape_inference.infer_shapes(model, check_type=True)``, and returns
    a new :class:`Model` holding them.

    ``model_or_path``: an onnxfast ``Model``, a path (memory-mapped), bytes,
    or an ``onnx.ModelProto``, as :func:`load` takes. The input is not
    changed. The result follows onnx's convention: every node output with an
    inferred type is in its graph's ``value_info`` (subgraphs too), merged
    into an entry of the same name when the model declares one, and the
    graph outputs carry their inferred types. Dims inference can only tell
    are "some size" are named ``unk__0``, ``unk__1``, ... (onnx's spelling;
    names the model uses are skipped); two dims inference knows to be equal
    get the same name. Weights are not read or copied: the result's tensors
    are the same bytes as the input's. ``result.to_onnx()`` gives the
    ``onnx.ModelProto``.

    A model with defects is annotated with what could be inferred (onnx's
    non-strict mode). ``strict=True`` raises :class:`~onnxfast.errors.InferenceError`
    instead, whose ``report`` lists every defect with its location (onnx's
    ``strict_mode=True`` stops at the first).

    ``check_type=True`` (the default, and what onnx's full check runs)
    checks every node's input and output types against its operator's type
    constraints (``Greater`` of two bool tensors is a defect, E701) and
    leaves the outputs of a node that fails unknown. ``check_type=False`` is
    onnx's default for ``infer_shapes``: such a node is inferred as its rule
    reads it (``Greater`` gives a bool tensor of the broadcast shape), as
    onnx does; defects of the rules themselves (shapes that do not fit, a
    missing input type) are still reported.

    ``data_prop=True`` follows the values of shape computations (onnx's
    option of the same name): ``Shape``, ``Gather``, ``Slice``, ``Concat``,
    ``Squeeze``, ``Unsqueeze``, ``Cast``, ``Size``, ``Add``, ``Sub``,
    ``Mul`` as onnx does, and beyond onnx ``Div``, ``Range``,
    ``Identity``, ``Reshape`` and the older versions of those operators; a
    ``Reshape``, ``Expand``, ``ConstantOfShape``, ``Resize`` or
    ``AffineGrid`` whose target is computed gets its dims (model symbols
    included) as with onnx, and values that are all known serve every rule
    that reads a constant input (``Tile``'s repeats, ``Slice``'s starts,
    ``Pad``'s pads, ``Range``, axes inputs, ...), where onnx gives up;
    ``Reshape`` 5 and 13 and ``Expand`` 8 read computed shapes as their
    newer versions do (onnx reads a constant there).
    Invalid values (an index out of range) are defects (code E732).

    ``symbolic=True`` (beyond onnx) gives dims that rules compute from
    other dims as expressions over the model's symbols, where onnx leaves
    them unknown: ``seq + 1`` (Concat, Pad), ``12*batch`` (Tile, Flatten,
    DepthToSpace, shape arithmetic with ``data_prop``), ``floor((h + 1)/2)``
    (Conv and pooling windows), ``seq - 1`` (Slice with open or negative
    bounds, or with ``data_prop`` bounds computed from shapes; Range over
    computed sizes), ``min(seq, 512)`` (Slice cutting a dim to a constant
    length; Min, Max and Clip of sizes with ``data_prop``). Expressions are
    Python-readable (with ``floor``, ``min`` and ``max``), in canonical
    form (equal expressions are equal strings), and assume the sizes are
    large enough for the model to be valid; ``Value.shape_at(sizes)`` and
    ``onnxfast.evaluate_dim(dim, sizes)`` evaluate them at given sizes.

    ``contrib_ops=True`` (beyond onnx) infers onnxruntime's own operators,
    which onnx does not know (their outputs stay untyped, and onnx stops
    checking the graph after the first): the com.microsoft operators of
    onnxruntime's transformer optimizer and quantizers (``Attention``,
    ``MultiHeadAttention``, ``GroupQueryAttention``,
    ``SkipLayerNormalization``, ``MatMulNBits``, ...) and the default-domain
    ``SimplifiedLayerNormalization`` (and ``LayerNormalization`` before
    opset 17), as onnxruntime infers them and, where its kernels give a dim
    its inference leaves unknown (a present key's length), as the kernels
    do. The README lists them.
    """
    result, report = infer_with_report(
        model_or_path,
        data_prop=data_prop,
        symbolic=symbolic,
        max_diagnostics=max_diagnostics,
        check_type=check_type,
        contrib_ops=contrib_ops,
    )
    if strict and not report.ok:
        raise InferenceError(str(report), report=report)
    return result


def infer_shapes_path(
    model_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str] = "",
    *,
    check_type: bool = True,
    strict_mode: bool = False,
    data_prop: bool = False,
    symbolic: bool = False,
    contrib_ops: bool = False,
) -> None:
    """Infers the model at `model_path` and writes it, every value typed, to
    `output_path` (by default over `model_path`), as
    ``onnx.shape_inference.infer_shapes_path`` does, with its argument
    names: a drop-in for it, without its 2 GiB limit on the model.

    The model is mapped and its weights are not read into memory: the
    output is written from the map (see :meth:`Model.save`), through a
    temporary file renamed into place, so writing over the input is safe.
    Tensors with external data keep their locations, which are relative to
    the output's folder: an :class:`~onnxfast.errors.ExternalDataWarning`
    says so when that folder does not have their files (onnx writes such a
    model silently). The output's format follows its extension, as onnx's.

    ``strict_mode=True`` raises :class:`~onnxfast.errors.InferenceError`,
    listing every defect, and writes nothing. ``check_type`` defaults to
    True, as :func:`infer_shapes` (onnx's default is False: pass
    ``check_type=False`` for its results on models with type defects);
    ``data_prop``, ``symbolic`` and ``contrib_ops`` are :func:`infer_shapes`'s.
    """
    if not isinstance(model_path, (str, os.PathLike)):
        raise TypeError(
            "infer_shapes_path takes the model's path (str or os.PathLike), got "
            f"{type(model_path).__name__}: use infer_shapes for a model object"
        )
    if not isinstance(output_path, (str, os.PathLike)):
        raise TypeError(
            "infer_shapes_path takes the output's path (str or os.PathLike), got "
            f"{type(output_path).__name__}"
        )
    output = os.fsdecode(output_path) or os.fsdecode(model_path)
    inferred = infer_shapes(
        model_path,
        strict=strict_mode,
        data_prop=data_prop,
        symbolic=symbolic,
        check_type=check_type,
        contrib_ops=contrib_ops,
    )
    inferred.save(output)


def infer_with_report(
    model_or_path: Any,
    *,
    data_prop: bool = False,
    symbolic: bool = False,
    max_diagnostics: int = 10_000,
    check_type: bool = True,
    contrib_ops: bool = False,
) -> tuple[_onnxfast.Model, Report]:
    """:func:`infer_shapes` and the findings of inference (errors and
    warnings, e.g. operators without a schema), without raising."""
    model, _ = _model_and_dir(model_or_path)
    result, (found, omitted, errors, warnings) = _onnxfast.infer_shapes(
        model,
        max_diagnostics=max_diagnostics,
        data_prop=data_prop,
        symbolic=symbolic,
        check_type=check_type,
        contrib_ops=contrib_ops,
    )
    return result, Report([Diagnostic(*d) for d in found], omitted, errors, warnings)
