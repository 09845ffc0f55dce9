"""The verdict on a signed order: `Valid` or `Invalid` with its reason — a value, never raised."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Valid:
    """Signed by `principal` (the order's `from`) with the key `fingerprint` of allowed_signers
    line `line`; `cosigners` are the other humans counted for a quorum, as `principal (SHA256:…)`.
    A security key's signature also gives its flags and counter, a passkey's its web origin."""

    principal: str
    fingerprint: str
    line: int
    cosigners: tuple[str, ...] = ()
    flags: int | None = None
    counter: int | None = None
    origin: str | None = None


@dataclass(frozen=True, slots=True)
class Invalid:
    reason: str


Verification = Valid | Invalid
