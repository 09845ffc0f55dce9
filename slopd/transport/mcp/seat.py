"""What one seat does at a hub — the SLOP tools' work, over the same modules as the CLI and HTTP.

`Seat` makes the seat's parts and answers what is neither sending nor reading; its sending is
`mcp.sending`'s, its reading (and `ack`) `mcp.reading`'s, both mixed into `Seat`.

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

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from slopd import submit
from slopd.core.admission import Admit, unheard
from slopd.core.layout import LANES, LEDGER_FILE
from slopd.core.notes import READ_CHARS, READ_LIMIT, page
from slopd.core.orders import Trust
from slopd.core.replies import ReplyClass
from slopd.core.vocabulary import MAX_WAIT
from slopd.ops import running
from slopd.shell import lock
from slopd.shell.config import Config
from slopd.shell.lanes import Hub
from slopd.shell.ledger import Ledger
from slopd.shell.ledger.cursors import Cursors
from slopd.shell.ledger.receipts import Receipts
from slopd.shell.reads import Contents
from slopd.shell.waker import Waker
from slopd.transport.mcp import approval
from slopd.transport.mcp.reading import Reading
from slopd.transport.mcp.sending import Sending
from slopd.transport.server.intake import Intake


class Seat(Sending, Reading):
    def __init__(
        self,
        hub: Hub,
        state: Path,
        seat: str,
        config: Config,
        *,
        trust: Trust | None = None,
        waker: Waker | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        token: Callable[[], str] = submit.random_token,
        arrived: Callable[[str, str], None] = lambda _lane, _name: None,
        admit: Admit = unheard,
    ) -> None:
        self.hub, self.state, self.seat, self.config, self.trust = hub, state, seat, config, trust
        state.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.ledger = Ledger(state / LEDGER_FILE)  # makes the schema if no daemon has; reads notes
        self.receipts = Receipts(state / LEDGER_FILE)
        self.cursors = Cursors(state / LEDGER_FILE)
        self.intake = Intake(hub, self.receipts, config.max_envelope_bytes, clock, arrived, admit=admit)
        self.waker = waker or Waker(hub.root, state / LEDGER_FILE)
        self.clock, self.token = clock, token

    def close(self) -> None:
        self.waker.close()
        self.cursors.close()
        self.receipts.close()
        self.ledger.close()

    def pending(self) -> int:
        return self.receipts.pending(self.seat)

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

    def _places(self, id: str) -> list[str]:
        receipt = self.receipts.get(id.lower())
        names = [receipt.file] if receipt is not None else [f"{id}.md", f"{id}.json"]
        archived = self.receipts.archive_of(id.lower())
        return [*(f"inbox/{name}" for name in names), *([archived] if archived else [])]

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
