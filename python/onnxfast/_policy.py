"""Ingestion policies: `Policy`, read from the `[policy]` table of a TOML file.

The rules are enforced in Rust, in the checker's own walk (codes P0…,
docs/checks.md); this module reads and validates them, naming the key and
line of anything wrong.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from typing import Any

from .errors import PolicyError

_LISTS = ("allowed_domains", "denied_domains", "allowed_ops", "denied_ops", "required_metadata")
_OPSETS = ("min_opset", "max_opset")
#: Integer keys and their smallest value.
_INTS = {
    "min_ir_version": 1,
    "max_ir_version": 1,
    "max_file_bytes": 0,
    "max_parameters": 0,
    "max_nodes": 0,
    "max_subgraph_depth": 0,
    "max_external_bytes": 0,
}
_BOOLS = ("allow_external_data", "allow_functions")
KEYS = (*_LISTS, *_OPSETS, *_INTS, *_BOOLS)

#: Largest value an integer key takes (the core keeps them in 64 bits).
_MAX_INT = 2**63 - 1


def _domain(name: str) -> str:
    """`ai.onnx` and the empty domain are the same."""
    return "" if name == "ai.onnx" else name


def _op_rule(text: str) -> str:
    domain, sep, op = text.rpartition("::")
    if not op or (sep and not domain and text.startswith("::")):
        raise ValueError(f"{text!r} names no operator (write 'Op', 'domain::Op' or 'domain::*')")
    if not sep:
        return op
    domain = _domain(domain)
    return f"{domain}::{op}" if domain else op


class Policy:
    """Rules a model must follow on top of validity, for
    ``onnxfast.check(model, policy=...)`` and ``onnxfast check --policy``.

    Build one from keyword arguments (the keys of the TOML schema in the
    README: ``Policy(allowed_domains=["", "ai.onnx.ml"], max_opset=21)``),
    :meth:`load` a TOML file, or :meth:`from_toml` a string. Every key is
    optional; an absent key allows everything. Invalid keys, types or ranges
    raise :class:`onnxfast.errors.PolicyError` naming the key (and its line,
    from a file). A policy is immutable, comparable and picklable.
    """

    __slots__ = ("_rules", "source")

    def __init__(self, **rules: Any) -> None:
        self._rules = _validate(rules, lambda key: None, "<arguments>")
        #: Where the policy was read from (a path, or None).
        self.source: str | None = None

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Policy:
        """Reads the ``[policy]`` table of the TOML file at ``path``."""
        path = os.fspath(path)
        with open(path, "rb") as f:
            data = f.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise PolicyError(
                f"{path}: not UTF-8 text (byte {e.start})", path=path, key=None, line=None
            ) from None
        return cls.from_toml(text, source=path)

    @classmethod
    def from_toml(cls, text: str, *, source: str = "<string>") -> Policy:
        """Reads the ``[policy]`` table of TOML ``text``; ``source`` names it
        in errors."""
        # Imported here: `import onnxfast` should not pay for a TOML parser.
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - exercised on 3.9/3.10 only
            import tomli as tomllib

        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            match = re.search(r"line (\d+)", str(e))
            if match:
                line: int | None = int(match.group(1))
            elif "end of document" in str(e):
                line = text.count("\n") + 1
            else:
                line = None
            place = f"{source}:{line}" if line else source
            raise PolicyError(
                f"{place}: not valid TOML: {e}", path=source, key=None, line=line
            ) from None

        def where(key: str | None) -> int | None:
            return _line_of(text, key)

        extra = sorted(k for k in document if k != "policy")
        if extra:
            key = extra[0]
            raise _error(source, where(key), key, "unknown table or key (only [policy] is read)")
        table = document.get("policy")
        if table is None:
            raise PolicyError(f"{source}: no [policy] table", path=source, key="policy", line=None)
        if not isinstance(table, dict):
            raise _error(source, where("policy"), "policy", "must be a table ([policy])")
        policy = cls.__new__(cls)
        policy._rules = _validate(table, where, source)
        policy.source = source
        return policy

    def to_dict(self) -> dict[str, Any]:
        """The rules that are set, as plain data (normalised: ``ai.onnx`` is
        written as the empty domain; opset limits are per domain)."""
        return {
            k: (dict(v) if isinstance(v, dict) else list(v) if isinstance(v, tuple) else v)
            for k, v in self._rules.items()
        }

    def __getattr__(self, key: str) -> Any:
        if key in KEYS:
            value = self._rules.get(key)
            if value is None and key in _BOOLS:
                return True
            if value is None and key in ("denied_domains", "denied_ops", "required_metadata"):
                return ()
            return dict(value) if isinstance(value, dict) else value
        raise AttributeError(key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Policy) and self._rules == other._rules

    def __hash__(self) -> int:
        return hash(repr(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore, (self.to_dict(), self.source))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._rules.items())
        return f"Policy({inner})"


def _restore(rules: dict[str, Any], source: str | None) -> Policy:
    policy = Policy(**rules)
    policy.source = source
    return policy


def _error(source: str, line: int | None, key: str, what: str) -> PolicyError:
    where = f"{source}:{line}" if line else source
    return PolicyError(f"{where}: policy key {key!r}: {what}", path=source, key=key, line=line)


def _validate(rules: Mapping[str, Any], where: Any, source: str) -> dict[str, Any]:
    out: dict[str, Any] = {}

    def fail(key: str, what: str) -> PolicyError:
        return _error(source, where(key), key, what)

    for key, value in rules.items():
        if key not in KEYS:
            import difflib

            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise fail(key, f"unknown key{hint}; known keys: {', '.join(KEYS)}")
        if value is None:
            continue
        if key in _LISTS:
            if isinstance(value, str) or not isinstance(value, (list, tuple)):
                raise fail(key, f"must be a list of strings, not {type(value).__name__}")
            items = []
            for item in value:
                if not isinstance(item, str):
                    raise fail(key, f"must be a list of strings; {item!r} is not a string")
                if key.endswith("_ops"):
                    try:
                        item = _op_rule(item)
                    except ValueError as e:
                        raise fail(key, str(e)) from None
                elif key.endswith("_domains"):
                    item = _domain(item)
                items.append(item)
            out[key] = tuple(items)
        elif key in _OPSETS:
            if isinstance(value, int) and not isinstance(value, bool):
                value = {"": value}
            if not isinstance(value, Mapping):
                raise fail(
                    key,
                    "must be an integer (the ai.onnx opset) or a table of domain = version, "
                    f"not {type(value).__name__}",
                )
            limits: dict[str, int] = {}
            for domain, version in value.items():
                sub = f"{key}.{domain}" if domain else key
                if isinstance(version, bool) or not isinstance(version, int):
                    raise _error(source, where(sub), sub, f"must be an integer, not {version!r}")
                if not 1 <= version <= _MAX_INT:
                    raise _error(
                        source, where(sub), sub, f"must be an opset version ≥ 1, not {version}"
                    )
                limits[_domain(domain)] = version
            out[key] = limits
        elif key in _INTS:
            if isinstance(value, bool) or not isinstance(value, int):
                raise fail(key, f"must be an integer, not {value!r}")
            low = _INTS[key]
            if not low <= value <= _MAX_INT:
                raise fail(key, f"must be between {low} and {_MAX_INT}, not {value}")
            out[key] = value
        else:
            if not isinstance(value, bool):
                raise fail(key, f"must be true or false, not {value!r}")
            out[key] = value
    for least_key, most_key in (("min_ir_version", "max_ir_version"),):
        if least_key in out and most_key in out and out[least_key] > out[most_key]:
            raise fail(most_key, f"{out[most_key]} is below {least_key} ({out[least_key]})")
    for domain, version in out.get("max_opset", {}).items():
        least = out.get("min_opset", {}).get(domain)
        if least is not None and least > version:
            name = domain or "ai.onnx"
            raise fail("max_opset", f"{name} {version} is below min_opset ({least})")
    return out


# Patterns of a TOML line (compiled on first use: `re` caches them).
_TABLE = r"\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$"
_PART = r"""(?:"[^"]*"|'[^']*'|[A-Za-z0-9_\-]+)"""
_ASSIGN = rf"\s*({_PART}(?:\s*\.\s*{_PART})*)\s*="


def _dotted(text: str) -> tuple[str, ...]:
    parts = re.findall(r""""([^"]*)"|'([^']*)'|([A-Za-z0-9_\-]+)""", text)
    return tuple(a or b or c for a, b, c in parts)


def _line_of(text: str, key: str | None) -> int | None:
    """The line where `key` (a key of [policy], or `table.sub` inside one of
    its tables; a top-level name when there is no [policy] around) is
    written, best effort: TOML parsers keep no positions."""
    if key is None:
        return None
    top = key if key == "policy" or "." not in key else None
    wanted = ("policy", *key.split(".", 1)) if key != "policy" else ("policy",)
    fallback = None
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), 1):
        header = re.match(_TABLE, line)
        if header:
            table = _dotted(header.group(1))
            if table == wanted or (top and table == (top,)):
                return number
            if fallback is None and table == wanted[: len(table)] and len(table) > 1:
                fallback = number
            continue
        assign = re.match(_ASSIGN, line)
        if not assign:
            continue
        path = table + _dotted(assign.group(1))
        if path == wanted or (top and not table and path == (top,)):
            return number
        if fallback is None and path == wanted[: len(path)] and len(path) > len(table):
            fallback = number
    return fallback
