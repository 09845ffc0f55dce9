"""The parts one MCP seat works with, made once when the seat is: its hub, state dir and seat name,
the ledger's readers and writers, the intake, the waker, the clock.

Rules:
1. Every part is made here (a waker may be given instead) and closed by `close`, in the reverse
   order; `mcp.sending`, `mcp.reading` and `mcp.seat` only use them.
2. The state dir is made (mode 0700) if it is missing, and the ledger's schema with it, so a seat
   started before any daemon reads an empty ledger, never a missing one.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from slopd import submit
from slopd.core.admission import Admit, unheard
from slopd.core.layout import LEDGER_FILE
from slopd.core.orders import Trust
from slopd.shell.config import Config
from slopd.shell.lanes import Hub
from slopd.shell.ledger import Ledger
from slopd.shell.ledger.cursors import Cursors
from slopd.shell.ledger.receipts import Receipts
from slopd.shell.waker import Waker
from slopd.transport.server.intake import Intake


class SeatParts:
    """Rule 1: the seat's parts, and what both its sending and its reading ask of them."""

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

    def _places(self, id: str) -> list[str]:
        """Where the envelope `id` this seat sent may be: its file in `inbox/`, and its archived copy."""
        receipt = self.receipts.get(id.lower())
        names = [receipt.file] if receipt is not None else [f"{id}.md", f"{id}.json"]
        archived = self.receipts.archive_of(id.lower())
        return [*(f"inbox/{name}" for name in names), *([archived] if archived else [])]
