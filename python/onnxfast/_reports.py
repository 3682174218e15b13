"""Reports of `onnxfast check` for the places people look: SARIF 2.1.0 (code
scanning), GitHub workflow annotations, and the summary table by code.

Each function takes the command's results: one dict per file with ``path``
and either ``diagnostics`` (dicts of code, severity, message, location,
suggestion) or ``error`` (the file could not be read; reported as code
F001).
"""

from __future__ import annotations

import collections
import hashlib
import os
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from . import __version__, _onnxfast

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
UNREADABLE = "F001"


@lru_cache(maxsize=1)
def codes() -> dict[str, tuple[str, str]]:
    """Every diagnostic code: id -> (severity, one-line meaning)."""
    return {code: (severity, summary) for code, severity, summary in _onnxfast.diagnostic_codes()}


def findings(result: dict[str, Any]) -> list[dict[str, Any]]:
    """A result's diagnostics; an unreadable file is one F001 error."""
    if "error" in result:
        return [
            {
                "code": UNREADABLE,
                "severity": "error",
                "message": f"cannot check: {result['error']}",
                "location": "",
                "suggestion": None,
            }
        ]
    return list(result.get("diagnostics", ()))


def _plain(markdown: str) -> str:
    return markdown.replace("`", "")


def _uri(path: str) -> str:
    """A relative path as a relative URI (forward slashes, escaped); an
    absolute one as a file: URI."""
    p = Path(path)
    if p.is_absolute():
        return p.as_uri()
    # As bytes: a name that is not UTF-8 (surrogates in Python) is escaped
    # byte by byte, as as_uri() escapes it.
    return quote(os.fsencode(PurePath(os.path.normpath(path)).as_posix()))


def _text(d: dict[str, Any]) -> str:
    text = d["message"]
    if d.get("location"):
        text += f" (at {d['location']})"
    if d.get("suggestion"):
        text += f". Help: {d['suggestion']}"
    return text


def sarif(results: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """One SARIF 2.1.0 log with one run: the tool's rules are every
    diagnostic code; one result per finding, located at the file (a model
    has no lines: the region is its first line) and, as a logical location,
    at the finding's path inside the model."""
    table = codes()
    index = {code: i for i, code in enumerate(table)}
    rules = []
    for code, (severity, summary) in table.items():
        rules.append(
            {
                "id": code,
                "shortDescription": {"text": _plain(summary)},
                "fullDescription": {"text": _plain(summary)},
                "help": {"text": _plain(summary), "markdown": summary},
                "defaultConfiguration": {"level": severity},
            }
        )
    out = []
    unreadable = []
    for result in results:
        uri = _uri(result["path"])
        if "error" in result:
            unreadable.append(
                {
                    "level": "error",
                    "message": {"text": f"{result['path']}: {result['error']}"},
                    "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}}}],
                }
            )
        for d in findings(result):
            where = d.get("location") or "model"
            fingerprint = hashlib.sha256(f"{d['code']}\0{where}".encode()).hexdigest()
            location: dict[str, Any] = {
                "physicalLocation": {
                    "artifactLocation": {"uri": uri},
                    "region": {"startLine": 1},
                },
                "logicalLocations": [{"fullyQualifiedName": where, "kind": "object"}],
            }
            entry: dict[str, Any] = {
                "ruleId": d["code"],
                "level": "error" if d["severity"] == "error" else "warning",
                "message": {"text": _text(d)},
                "locations": [location],
                "partialFingerprints": {"onnxfastLocation/v1": fingerprint},
            }
            if d["code"] in index:
                entry["ruleIndex"] = index[d["code"]]
            out.append(entry)
    invocation: dict[str, Any] = {"executionSuccessful": not unreadable}
    if unreadable:
        invocation["toolExecutionNotifications"] = unreadable
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "onnxfast",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": rules,
                    }
                },
                "invocations": [invocation],
                "results": out,
            }
        ],
    }


def shown(text: str) -> str:
    """Text from a model or a file name as it is safe to print to a
    terminal: a character that is not printable (ESC, BEL, CR, a line
    break, a bidirectional override, ...), which a hostile model could use
    to rewrite the screen or forge lines, is written as an escape, as the
    checker's messages write them (\\u{1b}); a byte of a file name that is
    not UTF-8 as \\xff."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escaped_char(c) for c in text)


def _escaped_char(c: str) -> str:
    code = ord(c)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{{{code:x}}}"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(results: Iterable[dict[str, Any]]) -> Iterator[str]:
    """GitHub Actions workflow commands, one annotation per finding
    (``::error file=...,title=E212::message``)."""
    for result in results:
        path = _escape_property(shown(result["path"]))
        for d in findings(result):
            kind = "error" if d["severity"] == "error" else "warning"
            title = _escape_property(f"onnxfast {d['code']}")
            yield f"::{kind} file={path},title={title}::{_escape_data(_text(d))}"


def by_code(results: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The summary table: for each code found, its severity, how many
    findings and in how many files, and its meaning; errors first, then by
    count (of the findings kept: see ``max_diagnostics``)."""
    count: collections.Counter[str] = collections.Counter()
    files: dict[str, set[str]] = collections.defaultdict(set)
    for result in results:
        for d in findings(result):
            count[d["code"]] += 1
            files[d["code"]].add(result["path"])
    table = codes()
    rows: list[dict[str, Any]] = []
    for code, n in count.items():
        severity, summary = table.get(code, ("error", ""))
        rows.append(
            {
                "code": code,
                "severity": severity,
                "count": n,
                "files": len(files[code]),
                "meaning": _plain(summary),
            }
        )
    rows.sort(key=lambda r: (r["severity"] != "error", -int(r["count"]), r["code"]))
    return rows
