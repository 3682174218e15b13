"""The checker's Python side: Report and Diagnostic, check() and check_model()."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from . import _onnxfast
from .errors import CheckError, DecodeError


@dataclass(frozen=True)
class Diagnostic:
    """One finding: a stable ``code`` (see docs/checks.md), ``severity``
    ("error" or "warning"), a ``message``, and where it is (``location``,
    e.g. ``graph 'main' › node[12] 'conv1' (Conv) › input[1] 'w'``)."""

    code: str
    severity: str
    message: str
    location: str
    suggestion: str | None = None

    def __str__(self) -> str:
        text = f"{self.severity}[{self.code}]: {self.message}"
        if self.location:
            text += f"\n  --> {self.location}"
        if self.suggestion:
            text += f"\n  = help: {self.suggestion}"
        return text


class Report:
    """Everything the checker found in one model.

    ``ok`` is True when there is no error (warnings do not make a model
    invalid), counting the findings beyond ``max_diagnostics`` too: a report
    that kept no finding can still be invalid. Iterate or index it for the
    diagnostics that were kept.
    """

    __slots__ = ("diagnostics", "error_count", "omitted", "warning_count")

    def __init__(
        self,
        diagnostics: list[Diagnostic],
        omitted: int = 0,
        error_count: int | None = None,
        warning_count: int | None = None,
    ) -> None:
        self.diagnostics = diagnostics
        #: Findings beyond ``max_diagnostics``: counted, not kept.
        self.omitted = omitted
        #: Errors and warnings in all, kept or not (from the kept ones when
        #: not given).
        self.error_count = (
            sum(d.severity == "error" for d in diagnostics) if error_count is None else error_count
        )
        self.warning_count = (
            sum(d.severity == "warning" for d in diagnostics)
            if warning_count is None
            else warning_count
        )

    @property
    def ok(self) -> bool:
        return self.error_count == 0

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    def __len__(self) -> int:
        return len(self.diagnostics)

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.diagnostics)

    def __getitem__(self, index: int) -> Diagnostic:
        return self.diagnostics[index]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "errors": self.error_count,
            "warnings": self.warning_count,
            "diagnostics": [asdict(d) for d in self.diagnostics],
            "omitted": self.omitted,
        }

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def summary(self) -> str:
        e, w = self.error_count, self.warning_count
        if not e and not w:
            return "valid: no findings"
        parts = []
        if e:
            parts.append(f"{e} error{'s' if e != 1 else ''}")
        if w:
            parts.append(f"{w} warning{'s' if w != 1 else ''}")
        text = ("invalid: " if e else "valid: ") + ", ".join(parts)
        if self.omitted:
            text += f" ({self.omitted} of the findings not kept: max_diagnostics)"
        return text

    def __str__(self) -> str:
        blocks = [str(d) for d in self.diagnostics]
        blocks.append(self.summary())
        return "\n\n".join(blocks)

    def __repr__(self) -> str:
        return f"<Report {self.summary()}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Report) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        # Reports travel between processes (multiprocessing, Dask, Ray).
        return (
            Report,
            (self.diagnostics, self.omitted, self.error_count, self.warning_count),
        )


def _model_and_dir(
    model_or_path: Any,
    max_stream: int | None = None,
    mmap: bool = True,
    format: str | None = None,
) -> tuple[Any, str | None]:
    """The model to check (loaded, as `load(mmap=mmap, format=format)` loads
    it, a stream read up to `max_stream` bytes when given) and the folder it
    came from."""
    from ._load import _load_within

    if isinstance(model_or_path, _onnxfast.Model):
        return model_or_path, None
    model = _load_within(model_or_path, max_stream, mmap=mmap, format=format)
    if isinstance(model_or_path, (str, os.PathLike)):
        return model, os.path.dirname(os.path.abspath(os.fsdecode(model_or_path)))
    return model, None


# The code of the checker's finding on a file over max_file_bytes, given
# here to a stream that went on past it (the checker needs the whole file).
_FILE_TOO_LARGE = "P009"


def _stream_too_large(limit: int) -> Report:
    """The report on a stream that went on past the policy's max_file_bytes
    (`limit`): read that far, no further, and nothing else checked."""
    return Report(
        [
            Diagnostic(
                _FILE_TOO_LARGE,
                "error",
                f"the model stream is more than {limit} bytes, the policy's max_file_bytes "
                "(read no further: nothing else was checked)",
                "model",
            )
        ]
    )


def _policy_rules(policy: Any) -> dict[str, Any] | None:
    """The rules of `policy` as the core takes them."""
    from ._policy import Policy

    if policy is None:
        return None
    if isinstance(policy, (str, os.PathLike)):
        policy = Policy.load(policy)
    elif isinstance(policy, Mapping):
        policy = Policy(**policy)
    elif not isinstance(policy, Policy):
        raise TypeError(
            f"policy must be a Policy, a path or a mapping, not {type(policy).__name__}"
        )
    return policy.to_dict()


def check(
    model_or_path: Any,
    *,
    strict: bool = False,
    skip_opset_compatibility_check: bool = False,
    check_custom_domain: bool = False,
    max_diagnostics: int = 10_000,
    full: bool = False,
    policy: Any = None,
    contrib_ops: bool = False,
    data_prop: bool = False,
    mmap: bool = True,
    format: str | None = None,
) -> Report:
    """Checks a model and returns every finding; never raises for an invalid model.

    ``model_or_path``: an onnxfast ``Model``, a path (memory-mapped: weights
    are not read), bytes, or an ``onnx.ModelProto``. External-data locations
    resolve against the model's folder (the current directory for in-memory
    models, as onnx does). ``strict=True`` adds the checks onnx lacks.
    ``full=True`` adds type and shape inference over the whole model, as
    ``onnx.checker.check_model(model, full_check=True)`` (codes E7…; weights
    are not read: only small constants that decide a shape are).
    At most ``max_diagnostics`` findings are kept (``report.omitted`` counts
    the rest), which bounds memory on hostile models.
    ``policy``: a :class:`Policy`, the path of a policy TOML file, or a
    mapping of its keys; its rules are enforced in the same walk (codes P…,
    errors; ``max_file_bytes`` judges the size of the file or bytes given;
    a stream, such as a pipe, is read no further than it: past it, the
    report holds that one finding, P009, and nothing else is checked).
    ``contrib_ops=True`` checks the model as onnxruntime runs it: its own
    operators (see :func:`infer_shapes`) are known, and with ``full=True``
    inferred, so the graph after them is checked too (onnx stops inferring
    at the first operator it does not know).
    ``data_prop=True`` (implies ``full=True``; beyond onnx, whose full check
    does not propagate values) has inference follow the values of shape
    computations, as :func:`infer_shapes` does with it: a model whose
    computed shapes cannot fit (a Reshape to a computed shape that cannot
    broadcast with what follows, a computed axis out of range, a computed
    output shape that contradicts the declared one) is invalid, as a
    runtime finds when it runs it.
    ``mmap`` and ``format`` load a path, bytes or a stream as :func:`load`
    takes them (``mmap=False`` reads the file, for files that may change
    while they are checked; ``format="protobuf"`` for files of untrusted
    names).
    """
    rules = _policy_rules(policy)
    # A stream (a pipe) is read into memory: the policy's file size bounds
    # how much of it is read.
    limit = rules.get("max_file_bytes") if rules else None
    try:
        model, model_dir = _model_and_dir(model_or_path, limit, mmap, format)
    except DecodeError as e:
        if limit is not None and getattr(e, "stream_limit", None) == limit:
            return _stream_too_large(limit)
        raise
    found, omitted, errors, warnings = _onnxfast.check_model(
        model,
        strict=strict,
        model_dir=model_dir,
        skip_opset_compatibility_check=skip_opset_compatibility_check,
        check_custom_domain=check_custom_domain,
        max_diagnostics=max_diagnostics,
        full=full or data_prop,
        policy=rules,
        contrib_ops=contrib_ops,
        data_prop=data_prop,
    )
    return Report([Diagnostic(*d) for d in found], omitted, errors, warnings)


def check_model(
    model_or_path: Any,
    *,
    strict: bool = False,
    skip_opset_compatibility_check: bool = False,
    check_custom_domain: bool = False,
    full: bool = False,
    full_check: bool | None = None,
    policy: Any = None,
    contrib_ops: bool = False,
    data_prop: bool = False,
    mmap: bool = True,
    format: str | None = None,
) -> None:
    """Drop-in for ``onnx.checker.check_model``: raises :class:`CheckError`
    (a ValueError) carrying the full report when the model has any error.
    ``full`` (or onnx's spelling, ``full_check``) adds type and shape
    inference, as onnx's ``full_check=True``; ``policy``, ``contrib_ops``,
    ``data_prop``, ``mmap`` and ``format`` as in :func:`check`."""
    report = check(
        model_or_path,
        strict=strict,
        skip_opset_compatibility_check=skip_opset_compatibility_check,
        check_custom_domain=check_custom_domain,
        full=full if full_check is None else full_check,
        policy=policy,
        contrib_ops=contrib_ops,
        data_prop=data_prop,
        mmap=mmap,
        format=format,
    )
    if not report.ok:
        raise CheckError(str(report), report=report)
    if report.warnings and strict:
        for d in report.warnings:
            print(f"onnxfast: {d}", file=sys.stderr)
