"""Where an item lives in the console (SPEC §15), for links in notifications (§16). Pure.

Rules:
1. `base` is the console's public URL (`[console] public_url`, else the URL the HTTP server
   listens on); a link is `base` without its trailing slash, then one of the paths below.
2. An approval is addressed by where it waits and its file name: `/approvals/drafts/NAME` for a
   draft in `outbox/drafts/`, `/approvals/authorized/NAME` for an order in `authorized/`.
3. An envelope and everything that answers it is `/activity/ID`, the id in its ledger form
   (lower case); a reply's link is the envelope's it answers.
4. Names and ids are percent-encoded: an id may hold `:` and a name anything a lane allows.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import quote

Waiting = Literal["drafts", "authorized"]


def approval(base: str, where: Waiting, name: str) -> str:
    """Rule 2."""
    return f"{base.rstrip('/')}/approvals/{where}/{quote(name, safe='')}"


def activity(base: str, envelope_id: str) -> str:
    """Rule 3."""
    return f"{base.rstrip('/')}/activity/{quote(envelope_id.lower(), safe='')}"
