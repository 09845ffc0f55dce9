"""What one seat does at a hub — the SLOP tools' work, over the same modules as the CLI and HTTP.

Rules:
1. The seat is fixed when the `Seat` is made (`--seat`, or the token's seat on `/mcp`); no
   argument of any operation changes `from`.
2. `send` composes the envelope as `slopd send` does (`submit.compose`) and admits it as the
   HTTP transport does (`Intake`: `core.admission`, the atomic drop into `inbox/`, the receipt
   in the ledger). A resend of an `id` already used is composed with the first envelope's
   `created_at`, so the same arguments are the same bytes — a replay that writes nothing and
   returns the first receipt — and other arguments a conflict (SPEC §14). A generated id that is
   already taken (64 random bits: never, in practice) is replaced by a fresh one.
3. Reading never consumes: `status`, `replies`, `read` change nothing; `ack` is its own act.
4. Nothing here writes `authorized/`: `request_approval` writes the order a human would sign
   into `outbox/drafts/` and says how to sign and where to put it.
5. Every result carries `pending`: the replies to this seat it has not acked.
6. The state dir is the running daemon's, found through the hub (`ops.running`, by the
   caller); while no daemon holds it, every answer says so (`daemon_note`, SPEC §14) — the
   receipts are written, but nothing answers them until a daemon runs on that dir.
7. `wait` blocks (≤ 50 s) for the first terminal reply to one of `ids`, or for the first reply
   new to this seat (its wake cursor, shared with `slopd wait` and the hooks; `transport.wakeups`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from slopd import submit
from slopd.core.admission import Admit, unheard
from slopd.core.envelope import Envelope, EnvelopeError, render
from slopd.core.ids import timestamp
from slopd.core.layout import LANES, LEDGER_FILE
from slopd.core.notes import READ_CHARS, READ_LIMIT, page
from slopd.core.orders import Trust
from slopd.core.receipts import is_terminal
from slopd.core.replies import ReplyClass
from slopd.core.validation import ID_PATTERN, parse
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
from slopd.transport.problems import Problem
from slopd.transport.server import views
from slopd.transport.server.intake import Intake
from slopd.transport.wakeups import Wakeups

MAX_CHARS = 20_000


class Seat:
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
        """Rule 6: what every answer must say when no daemon holds this seat's state dir."""
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

    def send(
        self,
        *,
        type: str,
        to: str,
        body: str,
        in_reply_to: str | None = None,
        mode: str | None = None,
        project: str | None = None,
        id: str | None = None,
    ) -> dict[str, Any]:
        """Rule 2."""
        fields: dict[str, Any] = {
            "type": type, "sender": self.seat, "to": to, "body": body,
            "in_reply_to": in_reply_to, "mode": mode, "project": project,
        }  # fmt: skip
        if id is None:
            return self._send_new(fields)
        envelope = dataclasses.replace(submit.compose(**fields, now=self.clock()), id=id)
        first = self._first(id)
        if first is not None:  # a resend: the same content is the same envelope, created_at and all
            envelope = dataclasses.replace(envelope, created_at=first.created_at)
        return self._accept(envelope)

    def _send_new(self, fields: dict[str, Any]) -> dict[str, Any]:
        """A generated id that is somehow taken already is replaced by another (rule 2)."""
        for attempt in range(1, submit.GENERATED_ID_TRIES + 1):
            envelope = submit.compose(**fields, now=self.clock(), token=self.token)
            try:
                return self._accept(envelope)
            except Problem as problem:
                if problem.kind != "id-conflict" or attempt == submit.GENERATED_ID_TRIES:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _accept(self, envelope: Envelope) -> dict[str, Any]:
        accepted = self.intake.accept(self.seat, render(envelope), json_form=False, idempotency_key=None)
        receipt = accepted.receipt.public(replayed=True) if accepted.replayed else accepted.receipt.public()
        return {**receipt, "pending": self.pending()}

    def _first(self, id: str) -> Envelope | None:
        """The envelope first sent under `id` (any seat's, any surface's), if it can be read."""
        if ID_PATTERN.fullmatch(id) is None:
            return None  # admission refuses the id itself
        for relative in self._places(id):
            found = self.hub.read_path(relative, self.config.max_envelope_bytes)
            if isinstance(found, Contents):
                try:
                    return parse(found.data, name=relative)
                except EnvelopeError:
                    return None
        return None

    def status(self, id: str, wait_s: float = 0.0) -> dict[str, Any]:
        state, type = views.envelope_state(self.receipts, self.seat, id)
        kinds = submit.terminal_kinds(type or "")
        found = self.waker.wait_for(
            lambda: self.receipts.replies_to(id.lower(), self.seat),
            lambda replies: is_terminal((reply.type for reply in replies), kinds),
            min(max(wait_s, 0.0), MAX_WAIT),
        )
        state, _type = views.envelope_state(self.receipts, self.seat, id)
        replies = [_summary(views.reply(self.hub, reply)) for reply in found]
        terminal = is_terminal((reply.type for reply in found), kinds)
        return {
            "id": id,
            "state": state["state"],
            "replies": replies,
            "terminal": terminal,
            "pending": self.pending(),
        }

    def replies(self, after: int = 0, limit: int = 20, wait_s: float = 0.0) -> dict[str, Any]:
        views.check_after(self.receipts, after)
        found = self.waker.wait_for(
            lambda: self.receipts.feed(self.seat, after, limit + 1), bool, min(max(wait_s, 0.0), MAX_WAIT)
        )
        return views.feed_page(
            self.hub, self.receipts, self.seat, found, after=after, limit=limit, shape=_summary
        )

    def wait(self, ids: list[str] | None = None, timeout_s: float = MAX_WAIT) -> dict[str, Any]:
        """Rule 6 (`transport.wakeups`): with `ids`, their first terminal reply; else the first new one."""
        wakeups = Wakeups(self.receipts, self.cursors, self.waker, self.seat, self.clock)
        timeout = min(max(timeout_s, 0.0), MAX_WAIT)
        found = wakeups.terminal(ids, timeout) if ids else wakeups.next_new(timeout)
        shown = views.reply(self.hub, found) if found is not None else None
        text = str(shown["text"] or "") if shown is not None else None
        return {
            "reply": _summary(dict(shown)) if shown is not None else None,
            "text": text[:MAX_CHARS] if text is not None else None,
            "timed_out": found is None,
            "cursor": wakeups.cursor(),  # a read, unless this seat never had one
            "pending": self.pending(),
        }

    def recent(self, limit: int = 20) -> dict[str, Any]:
        """The `slop://replies` resource: the newest `limit` replies, oldest first, summarized."""
        found = self.receipts.recent(self.seat, min(max(limit, 1), 100))
        return {
            "replies": [_summary(views.reply(self.hub, reply)) for reply in found],
            "tail_cursor": self.receipts.last_seq(self.seat),
            "pending": self.pending(),
        }

    def read(self, id: str, offset: int = 0, max_chars: int = MAX_CHARS) -> dict[str, Any]:
        """A reply to this seat, or an envelope it sent, a page of it at a time."""
        reply = self.receipts.reply(id, self.seat)
        if reply is not None:
            text, path = views.reply(self.hub, reply)["text"], reply.path
        else:
            text, path = self._sent(id)
        whole = str(text or "")
        page = whole[offset : offset + min(max_chars, MAX_CHARS)]
        files = self._deliverable(id) if reply is not None else []
        end = offset + len(page)
        return {
            "id": id,
            "path": path,
            "text": page,
            "offset": offset,
            "total_chars": len(whole),
            "next_offset": end if end < len(whole) else None,
            "files": files,
            "pending": self.pending(),
        }

    def _sent(self, id: str) -> tuple[str | None, str]:
        views.envelope_state(self.receipts, self.seat, id)  # 404 unless this seat sent it
        for relative in self._places(id):
            found = self.hub.read_path(relative, self.config.max_envelope_bytes)
            if isinstance(found, Contents):
                return found.data.decode("utf-8", "replace"), relative
        return None, ""

    def _places(self, id: str) -> list[str]:
        receipt = self.receipts.get(id.lower())
        names = [receipt.file] if receipt is not None else [f"{id}.md", f"{id}.json"]
        archived = self.receipts.archive_of(id.lower())
        return [*(f"inbox/{name}" for name in names), *([archived] if archived else [])]

    def _deliverable(self, id: str) -> list[str]:
        folder = self.hub.root / "outbox" / id
        if not folder.is_dir() or folder.is_symlink():
            return []
        return sorted(str(path.relative_to(self.hub.root)) for path in folder.rglob("*") if path.is_file())

    def ack(self, id: str) -> dict[str, Any]:
        now = timestamp(self.clock())
        if not self.receipts.ack(self.seat, id, now):
            raise views.not_found(f"reply {id}")
        return {"id": id, "acked": True, "pending": self.pending()}

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
        """Rule 4 (`mcp.approval`)."""
        drafted = approval.draft(
            self.hub, self.config, self.trust, seat=self.seat, action=action, body=body, reason=reason,
            now=self.clock(),
        )  # fmt: skip
        return {**drafted, "pending": self.pending()}


def _summary(reply: dict[str, Any]) -> dict[str, Any]:
    """A reply without its whole text: `slop_read` pages through that."""
    text = reply.pop("text") or ""
    body = text.split("\n---\n", 1)[-1].strip()
    return {**reply, "summary": body[:300]}


def guide(hub: Hub) -> str:
    """The hub's HUB.md ("" when it has none)."""
    found = hub.read_path("HUB.md", 256 << 10)
    return found.data.decode("utf-8", "replace") if isinstance(found, Contents) else ""
