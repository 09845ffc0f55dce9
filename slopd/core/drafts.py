"""Drafts: the orders agents ask a human to sign, in `outbox/drafts/` (SPEC §13, §16). Pure.

Rules:
1. A draft names who asked for it twice, as `slop_request_approval` writes it: the front-matter
   key `requested_by: SEAT`, and its body's last line `Requested by SEAT: REASON` (`footer`).
   `requester` reads the key, else the line — the one answer the console, the hooks and the
   approval notices all use. The hub is untrusted, so what it says is a label for the human and
   the agent, never an authority.
2. A file of `outbox/drafts/` is a draft when its name ends `.md` and is no hidden or
   temporary name (`core.layout`, `core.names`).
"""

from __future__ import annotations

import re

from slopd.core.envelope import Envelope
from slopd.core.validation import PARTY_PATTERN

FOLDER = "outbox/drafts"
_REQUESTED = re.compile(r"^Requested by (\S+?): ", re.MULTILINE)


def footer(seat: str, reason: str) -> str:
    """Rule 1."""
    return f"Requested by {seat}: {reason.strip()}\n"


def requester(envelope: Envelope) -> str | None:
    """Rule 1: the seat that asked for the draft `envelope`, if it names a valid one."""
    named = envelope.extra.get("requested_by")
    if isinstance(named, str) and PARTY_PATTERN.fullmatch(named):
        return named
    found = _REQUESTED.findall(envelope.body)
    if not found or PARTY_PATTERN.fullmatch(found[-1]) is None:
        return None
    return str(found[-1])


def is_draft(name: str) -> bool:
    """Rule 2."""
    return name.endswith(".md") and not name.startswith((".", "~")) and len(name) > 3
