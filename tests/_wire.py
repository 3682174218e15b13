"""Tiny protobuf wire-format writer for crafting test inputs by hand."""

from __future__ import annotations


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def key(field: int, wire_type: int) -> bytes:
    return varint((field << 3) | wire_type)


def ld(field: int, payload: bytes) -> bytes:
    """A length-delimited field."""
    return key(field, 2) + varint(len(payload)) + payload


def vint(field: int, value: int) -> bytes:
    """A varint field."""
    return key(field, 0) + varint(value)
