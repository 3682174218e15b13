"""What the adapters running onnx's own test files share
(onnx_checker_tests.py, onnx_shape_inference_tests.py): a pytest plugin that
answers one onnx function with a shim while the tests run, and relaxes
`pytest.raises(..., match=...)` to the exception type, noting (not failing
on) the messages that do not match: ours are onnxfast's own words."""

from __future__ import annotations

import os
import re
from typing import Any, Callable

import pytest


class SwapPlugin:
    """Sets `owner.name = shim` for the session and relaxes `match=`;
    `messages` collects (test, pattern, our first line) per mismatch."""

    def __init__(self, owner: Any, name: str, shim: Callable[..., Any]) -> None:
        self.messages: list[tuple[str, str, str]] = []
        self._raises = pytest.raises
        self._owner, self._name, self._shim = owner, name, shim
        self._real = getattr(owner, name)

    def pytest_configure(self, config: Any) -> None:
        setattr(self._owner, self._name, self._shim)
        plugin = self

        def raises(expected: Any, *args: Any, match: Any = None, **kwargs: Any) -> Any:
            ctx = plugin._raises(expected, *args, **kwargs)
            if match is None:
                return ctx
            return _Matching(ctx, str(match), plugin)

        pytest.raises = raises  # type: ignore[assignment]

    def pytest_unconfigure(self, config: Any) -> None:
        setattr(self._owner, self._name, self._real)
        pytest.raises = self._raises  # type: ignore[assignment]

    def print_mismatches(self) -> None:
        if not self.messages:
            return
        print("onnx's message patterns our messages do not match (type and verdict matched):")
        for test, pattern, ours in self.messages:
            print(f"  {test}: expected /{pattern}/, ours: {ours}")


class _Matching:
    """pytest.raises' context, noting (not failing on) a message mismatch."""

    def __init__(self, ctx: Any, pattern: str, plugin: SwapPlugin) -> None:
        self.ctx = ctx
        self.pattern = pattern
        self.plugin = plugin

    def __enter__(self) -> Any:
        return self.ctx.__enter__()

    def __exit__(self, *exc: Any) -> Any:
        suppressed = self.ctx.__exit__(*exc)
        value = exc[1]
        if value is not None and not re.search(self.pattern, str(value)):
            test = os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0]
            self.plugin.messages.append((test, self.pattern, str(value).splitlines()[0]))
        return suppressed
