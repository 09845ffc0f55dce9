"""What one seat reads of the envelopes it sent and the replies to them, and `ack`, its one act.

Rules:
1. Reading never consumes: `status`, `replies`, `read` change nothing; `ack` is its own act.
2. `wait` blocks (≤ 50 s) for the first terminal reply to one of `ids`, or for the first reply
   new to this seat (its wake cursor, shared with `slopd wait` and the hooks; `transport.wakeups`).
"""

from __future__ import annotations

from typing import Any

from slopd import submit
from slopd.core.ids import timestamp
from slopd.core.receipts import is_terminal
from slopd.core.vocabulary import MAX_WAIT
from slopd.shell.reads import Contents
from slopd.transport.mcp.parts import SeatParts
from slopd.transport.server import views
from slopd.transport.wakeups import Wakeups

MAX_CHARS = 20_000


class Reading(SeatParts):
    """`Seat`'s reading (`mcp.seat`), over the seat's parts (`mcp.parts`)."""

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
        """Rule 2 (`transport.wakeups`): with `ids`, their first terminal reply; else the first new one."""
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


def _summary(reply: dict[str, Any]) -> dict[str, Any]:
    """A reply without its whole text: `slop_read` pages through that."""
    text = reply.pop("text") or ""
    body = text.split("\n---\n", 1)[-1].strip()
    return {**reply, "summary": body[:300]}
