"""The SSH wire format (RFC 4251 §5) as slopd reads it: every read fully satisfied, or an error.

`SignatureError` is the one exception the key and signature parsers raise; its `reason` is a
short sentence that ends up in a reply or a log line.
"""

from __future__ import annotations

import struct


class SignatureError(ValueError):
    """A malformed signature file or key; `reason` says why."""

    reason: str

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class Reader:
    """Reads SSH wire data; `context` names what is read ("signature", "key") in the reasons."""

    __slots__ = ("_at", "_context", "_data", "_where")

    def __init__(self, data: bytes, context: str, where: str = "") -> None:
        self._data, self._at, self._context, self._where = data, 0, context, where

    def fail(self, reason: str) -> SignatureError:
        return SignatureError(f"malformed {self._context}: {reason}")

    def take(self, size: int, field: str) -> bytes:
        if self._at + size > len(self._data):
            raise self.fail(f"truncated {field}")
        chunk = self._data[self._at : self._at + size]
        self._at += size
        return chunk

    def byte(self, field: str) -> int:
        return self.take(1, field)[0]

    def uint32(self, field: str) -> int:
        value: int = struct.unpack(">I", self.take(4, field))[0]
        return value

    def string(self, field: str) -> bytes:
        return self.take(self.uint32(field), field)

    def mpint(self, field: str) -> int:
        """A positive multiple-precision integer in its canonical form (as `sshbuf_get_bignum2`)."""
        data = self.string(field)
        if data and data[0] & 0x80:
            raise self.fail(f"negative {field}")
        if len(data) > 1 and data[0] == 0 and not data[1] & 0x80:
            raise self.fail(f"{field} has a needless leading zero")
        return int.from_bytes(data, "big")

    def rest(self) -> bytes:
        chunk, self._at = self._data[self._at :], len(self._data)
        return chunk

    def end(self) -> None:
        if self._at != len(self._data):
            raise self.fail(f"trailing data{self._where}")


def string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def mpint(value: int) -> bytes:
    data = value.to_bytes((value.bit_length() + 8) // 8, "big") if value else b""
    return string(data)


def show(value: object) -> str:
    """A value quoted for a reason: ASCII-escaped (bytes read as UTF-8), cut at 60 characters."""
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    shown = ascii(text)
    return shown if len(shown) <= 60 else shown[:57] + "..."
