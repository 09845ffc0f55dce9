"""Drafts: the orders agents ask a human to sign, in `outbox/drafts/` (SPEC §13, §16). Pure.

Rules:
1. A draft's body ends with the line `Requested by SEAT: REASON` (`footer`), written by
   `slop_request_approval`; `requester` reads the seat back from the last such line. The hub
   is untrusted, so what it says is a label for the human and the agent, never an authority.
2. A file of `outbox/drafts/` is a draft when its name ends `.md` and is no hidden or
   temporary name (`core.layout`, `core.names`).
"""

from __future__ import annotations

import re

from slopd.core.envelope import PARTY_PATTERN

FOLDER = "outbox/drafts"
_REQUESTED = re.compile(r"^Requested by (\S+?): ", re.MULTILINE)


def footer(seat: str, reason: str) -> str:
    """Rule 1."""
    return f"Requested by {seat}: {reason.strip()}\n"


def requester(body: str) -> str | None:
    """Rule 1: the seat named by the body's last `Requested by` line, if it is a valid name."""
    found = _REQUESTED.findall(body)
    if not found or PARTY_PATTERN.fullmatch(found[-1]) is None:
        return None
    return str(found[-1])


def is_draft(name: str) -> bool:
    """Rule 2."""
    return name.endswith(".md") and not name.startswith((".", "~")) and len(name) > 3
