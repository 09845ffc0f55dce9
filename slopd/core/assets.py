"""Attachments (SPEC §3, SLOP §6 priority 3): an envelope's `assets` references. Pure.

Rules:
1. `assets` is a list of strings `assets/NAME sha256:HEX`: NAME a plain file name in the hub's
   `assets/` folder (no `/`, no leading dot, no `..`), HEX the 64 hex digits of its SHA-256
   (any case; kept lower-case). At most `MAX_ASSETS`, no NAME twice.
2. The references are part of the envelope's bytes, so a signature over an order covers its
   attachments: the verdict on the files is `check` of the digest each one has now.
3. A file that is not there yet is `missing` (waited for, like a late signature); one that is
   not a regular file, or whose digest differs, is refused naming it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_ASSETS = 64
LANE = "assets"
_REFERENCE = re.compile(r"assets/([A-Za-z0-9_][A-Za-z0-9._ ()+-]{0,250}) sha256:([0-9A-Fa-f]{64})")


@dataclass(frozen=True, slots=True)
class Asset:
    name: str
    sha256: str

    @property
    def reference(self) -> str:
        return f"{LANE}/{self.name} sha256:{self.sha256}"


def parse(value: object) -> tuple[tuple[Asset, ...], list[str]]:
    """Rule 1: the references of an `assets` value, and every reason it breaks the rule."""
    if not isinstance(value, list):
        return (), ["assets: must be a list of 'assets/NAME sha256:HEX'"]
    if len(value) > MAX_ASSETS:
        return (), [f"assets: at most {MAX_ASSETS} references, got {len(value)}"]
    found: list[Asset] = []
    reasons: list[str] = []
    for item in value:
        match = _REFERENCE.fullmatch(item) if isinstance(item, str) else None
        if match is None or ".." in match.group(1):
            reasons.append(f"assets: {ascii(item)[:60]} is not 'assets/NAME sha256:HEX' with a plain NAME")
        elif any(asset.name == match.group(1) for asset in found):
            reasons.append(f"assets: {match.group(1)} is listed twice")
        else:
            found.append(Asset(match.group(1), match.group(2).lower()))
    return tuple(found), reasons


def check(asset: Asset, digest: str | None, problem: str | None) -> str | None:
    """Rules 2-3: why the file now at `assets/NAME` is not the one referenced (None: it is).
    `digest` is its SHA-256, or None with `problem` saying why it could not be read."""
    if problem is not None:
        return f"asset {LANE}/{asset.name} {problem}"
    if digest != asset.sha256:
        return (
            f"asset {LANE}/{asset.name} does not match: sha256 is {digest}, the envelope says {asset.sha256}"
        )
    return None
