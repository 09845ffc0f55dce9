"""What one seat does at a hub — the SLOP tools' work, over the same modules as the CLI and HTTP.

`Seat` answers what is neither sending nor reading; its parts are made by `mcp.parts`, its
sending is `mcp.sending`'s and its reading (and `ack`) `mcp.reading`'s, all three mixed into `Seat`.

Rules:
1. The seat is fixed when the `Seat` is made (`--seat`, or the token's seat on `/mcp`); no
   argument of any operation changes `from`.
2. Nothing here writes `authorized/`: `request_approval` writes the order a human would sign
   into `outbox/drafts/` and says how to sign and where to put it.
3. Every result carries `pending`: the replies to this seat it has not acked.
4. The state dir is the running daemon's, found through the hub (`ops.running`, by the
   caller); while no daemon holds it, every answer says so (`daemon_note`, SPEC §14) — the
   receipts are written, but nothing answers them until a daemon runs on that dir.
"""

from __future__ import annotations

from typing import Any

from slopd.core.layout import LANES
from slopd.core.notes import READ_CHARS, READ_LIMIT, page
from slopd.core.replies import ReplyClass
from slopd.core.vocabulary import MAX_WAIT
from slopd.ops import running
from slopd.shell import lock
from slopd.shell.lanes import Hub
from slopd.shell.reads import Contents
from slopd.transport.mcp import approval
from slopd.transport.mcp.reading import Reading
from slopd.transport.mcp.sending import Sending


class Seat(Sending, Reading):
    """One seat at a hub: its parts (`SeatParts`), sending, reading, and the rest here."""

    def guide(self) -> str:
        return guide(self.hub)

    def daemon_note(self) -> str | None:
        """Rule 4: what every answer must say when no daemon holds this seat's state dir."""
        return None if lock.holder(self.state) is not None else running.NOT_FOUND

    def info(self) -> dict[str, Any]:
        holder = lock.holder(self.state)
        text = self.guide()
        return {
            "seat": self.seat,
            "hub": str(self.hub.root),
            "daemon": {
                "running": bool(holder and holder > 0),
                "pid": holder if holder and holder > 0 else None,
                "state": str(self.state),
            },
            "lanes": list(LANES),
            "reply_types": ["ack", "result", "error"],
            "reply_classes": [str(kind) for kind in ReplyClass],
            "limits": {"max_envelope_bytes": self.config.max_envelope_bytes, "max_wait_s": MAX_WAIT},
            "hub_md": "\n".join(text.splitlines()[:40]),
            "pending": self.pending(),
        }

    def notes(
        self,
        search: str | None = None,
        limit: int = READ_LIMIT,
        offset: int = 0,
        max_chars: int = READ_CHARS,
    ) -> dict[str, Any]:
        """The indexed notes, newest first, a page at a time, each with its text (`core.notes` rule 4)."""
        found = self.ledger.notes(search, limit=limit, offset=offset)
        listed = page(found, self.ledger.count_notes(search), offset, max_chars)
        return {**listed, "pending": self.pending()}

    def request_approval(self, action: str, body: str, reason: str) -> dict[str, Any]:
        """Rule 2 (`mcp.approval`)."""
        drafted = approval.draft(
            self.hub, self.config, self.trust, seat=self.seat, action=action, body=body, reason=reason,
            now=self.clock(),
        )  # fmt: skip
        return {**drafted, "pending": self.pending()}


def guide(hub: Hub) -> str:
    """The hub's HUB.md ("" when it has none)."""
    found = hub.read_path("HUB.md", 256 << 10)
    return found.data.decode("utf-8", "replace") if isinstance(found, Contents) else ""
