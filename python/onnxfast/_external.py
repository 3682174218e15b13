"""Plain records describing external data (see Tensor.external_info and
Model.external_files())."""

from __future__ import annotations

from typing import NamedTuple, Optional


class ExternalInfo(NamedTuple):
    """Where a tensor's external data is, as written in the model."""

    location: str
    offset: int
    length: Optional[int]  # noqa: UP045 - NamedTuple fields are evaluated at runtime (3.9)
    checksum: Optional[str]  # noqa: UP045


class ExternalFile(NamedTuple):
    """One external file of a model and the tensors stored in it."""

    location: str
    size: Optional[int]  # noqa: UP045 - None when the file cannot be used
    tensors: list[str]
    error: Optional[str]  # noqa: UP045 - why the file cannot be used
