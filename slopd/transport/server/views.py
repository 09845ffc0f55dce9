"""What the HTTP transport answers, as JSON values: an envelope's state, its replies, the feed.

Rules:
1. A seat sees only its own: an envelope it sent (by receipt, or by the ledger's `from` for
   one dropped as a file) and replies addressed to it; anything else is 404, as if unknown.
2. Each reply carries its text, read from the hub (null once it is gone), and whether this
   seat has acked it; reading never changes anything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from slopd.core.receipts import Cursor, Receipt, check_cursor, public_state
from slopd.core.validation import ID_PATTERN
from slopd.shell.lanes import Hub
from slopd.shell.ledger.receipts import FeedReply, Receipts
from slopd.shell.reads import Contents
from slopd.transport.problems import Problem

_REPLY_BYTES = 1 << 20


def not_found(what: str) -> Problem:
    return Problem("not-found", f"{what} is not known to this seat")


def envelope_state(receipts: Receipts, seat: str, id: str) -> tuple[dict[str, object], str | None]:
    """Rule 1: the receipt and `state` of `id`, and the envelope's type (None if not known)."""
    if ID_PATTERN.fullmatch(id) is None:
        raise not_found("that id")
    key = id.lower()
    receipt = receipts.get(key)
    known = receipts.input(key)
    if receipt is not None and receipt.seat == seat:
        same = known is None or known.sha256 == receipt.sha256
        duplicate = not same and receipts.seen_as_duplicate(key, receipt.sha256)
        status = known.status if known is not None else None
        return receipt.public(
            state=public_state(status, same_bytes=same, seen_as_duplicate=duplicate)
        ), receipt.type
    if receipt is None and known is not None and known.sender == seat:
        body: dict[str, object] = {
            "id": id,
            "seat": seat,
            "received_at": known.received_at,
            "sha256": known.sha256,
            "seq": None,
            "status": "accepted",
            "state": public_state(known.status),
        }
        return body, known.type
    raise not_found(f"envelope {id}")


def reply(hub: Hub, found: FeedReply) -> dict[str, object]:
    """Rule 2."""
    contents = hub.read_path(found.path, _REPLY_BYTES)
    text = contents.data.decode("utf-8", "replace") if isinstance(contents, Contents) else None
    return {
        "seq": found.seq,
        "id": found.id,
        "type": found.type,
        "class": found.reply_class,
        "in_reply_to": found.in_reply_to,
        "path": found.path,
        "written_at": found.written_at,
        "acked": found.acked_at is not None,
        "text": text,
    }


def check_after(receipts: Receipts, after: int) -> None:
    """A feed's cursor, judged by `core.receipts.check_cursor`: 400 ahead, 410 expired."""
    oldest, tail = receipts.bounds()
    match check_cursor(after, oldest=oldest, tail=tail):
        case Cursor.AHEAD:
            raise Problem("cursor-ahead", f"after={after} is past the last reply's seq, {tail}")
        case Cursor.EXPIRED:
            raise Problem("cursor-expired", f"after={after} is older than the oldest reply kept, {oldest}")


def feed_page(
    hub: Hub,
    receipts: Receipts,
    seat: str,
    found: list[FeedReply],
    *,
    after: int,
    limit: int,
    shape: Callable[[dict[str, Any]], dict[str, Any]] = lambda reply: reply,
) -> dict[str, Any]:
    """One page of `seat`'s feed from `found` (read with `limit + 1`, to know `has_more`)."""
    page = found[:limit]
    return {
        "replies": [shape(reply(hub, item)) for item in page],
        "next_cursor": page[-1].seq if page else after,
        "has_more": len(found) > limit,
        "tail_cursor": receipts.last_seq(seat),
        "pending": receipts.pending(seat),
    }


def receipt_location(receipt: Receipt) -> str:
    return f"/v1/envelopes/{receipt.id}"
