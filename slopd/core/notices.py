"""What the human is told (SPEC §5, §16), and how an ntfy post or a signed webhook carries it. Pure.

Rules:
1. A `Notice` is one notification: its event (`reply`, `incoming`, `approval`, `alert`,
   `coalesced`), the id it is about, its class, a title, the text the human reads, and the
   console path of its item (`core.links`, without a base) — a pointer, never a deliverable's
   payload: a reply's text is `core.replies.notification`'s.
2. Priority: ping, approval and alert are high (ntfy 4); hybrid, deliverable and coalesced
   are the default (3).
3. ntfy: the body is the text; `Title`, `Priority`, `Tags` and, when the console's base URL is
   known, `Click` (the item's page); with a token, `Authorization: Bearer TOKEN`. Header
   values are ASCII: anything else is RFC 2047-encoded (`=?UTF-8?B?…?=`), as ntfy reads it.
4. Webhook: the body is the JSON object `{event, id, class, text, link}` (keys sorted, UTF-8),
   and `X-Slopd-Signature: sha256=HEX` is HMAC-SHA256 over exactly those bytes with the shared
   secret; `verify` is the receiver's check, in constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Literal

from slopd.core import links, replies
from slopd.core.envelope import Envelope

Event = Literal["reply", "incoming", "approval", "alert", "coalesced"]
SIGNATURE_HEADER = "X-Slopd-Signature"
HIGH, DEFAULT = 4, 3
_PRIORITY = {"ping": HIGH, "approval": HIGH, "alert": HIGH}
_TAGS = {"ping": "speech_balloon", "hybrid": "page_facing_up", "deliverable": "package", "approval": "key"}


@dataclass(frozen=True, slots=True)
class Notice:
    event: Event
    text: str
    title: str
    id: str | None = None
    reply_class: str = "ping"
    path: str | None = None  # the console page of the item, e.g. /activity/ID (rule 1)

    def link(self, base: str | None) -> str | None:
        """The item's page under the console's `base` URL; None without a base or a page."""
        if not base or self.path is None:
            return None
        return base.rstrip("/") + self.path


@dataclass(frozen=True, slots=True)
class Post:
    """One HTTP POST to make: the headers and the exact body."""

    headers: tuple[tuple[str, str], ...]
    body: bytes


def of_reply(reply: Envelope, path: str) -> Notice | None:
    """A reply slopd wrote at `path`; None for a silent one. Its page is its envelope's (links rule 3)."""
    text = replies.notification(reply, path)
    if text is None:
        return None
    about = reply.in_reply_to or str(reply.extra.get("file", ""))
    return Notice(
        event="reply",
        text=text,
        title=f"{reply.type} for {about}",
        id=reply.id,
        reply_class=str(replies.reply_class(reply)),
        path=links.activity("", reply.in_reply_to) if reply.in_reply_to else None,
    )


def of_incoming(envelope: Envelope, path: str) -> Notice | None:
    """A reply an agent dropped into the inbox (an ack, result or error to someone here), at `path`.

    Its own `class` says what the human may see, as for slopd's replies (rule 1): nothing for a
    silent one, the path for a deliverable, a summary and the path for a hybrid; one without a
    valid class is told in short (280 characters), as a ping.
    """
    said = envelope.extra.get("class")
    if isinstance(said, str) and said in set(replies.ReplyClass):
        text, reply_class = replies.notification(envelope, path), said
    else:
        text, reply_class = replies.incoming(envelope), str(replies.ReplyClass.PING)
    if text is None:
        return None
    return Notice(
        event="incoming",
        text=text,
        title=f"{envelope.type} from {envelope.sender}",
        id=envelope.id,
        reply_class=reply_class,
        path=links.activity("", envelope.in_reply_to or envelope.id),
    )


def approval(where: links.Waiting, name: str, text: str, id: str | None = None) -> Notice:
    """An approval request: a draft to sign (`drafts`), an order waiting for a signer (`authorized`)."""
    title = "approval requested" if where == "drafts" else "order waits for a signature"
    return Notice(
        event="approval",
        text=text,
        title=f"{title}: {name}",
        id=id,
        reply_class="approval",
        path=links.approval("", where, name),
    )


def alert(text: str) -> Notice:
    """Something wrong with the set-up that the human must fix (two home watchers, say)."""
    return Notice(event="alert", text=text, title="slopd needs attention", reply_class="alert")


def coalesced(text: str) -> Notice:
    """The rate limit's summary of what it held back (`core.ratelimit`)."""
    return Notice(event="coalesced", text=text, title="slopd: more notifications", reply_class="coalesced")


def priority(notice: Notice) -> int:
    """Rule 2."""
    return _PRIORITY.get(notice.reply_class, DEFAULT)


def _header(value: str) -> str:
    """Rule 3: ASCII as is, anything else as an RFC 2047 encoded word."""
    flat = " ".join(value.split())
    if flat.isascii():
        return flat
    return f"=?UTF-8?B?{base64.b64encode(flat.encode()).decode()}?="


def ntfy(notice: Notice, *, base: str | None, token: str | None) -> Post:
    """Rule 3."""
    headers = [
        ("Title", _header(f"slopd: {notice.title}")),
        ("Priority", str(priority(notice))),
        ("Tags", _TAGS.get(notice.reply_class, "bell")),
        ("Content-Type", "text/plain; charset=utf-8"),
    ]
    link = notice.link(base)
    if link is not None:
        headers.append(("Click", link))
    if token:
        headers.append(("Authorization", f"Bearer {token}"))
    return Post(tuple(headers), notice.text.encode())


def webhook_body(notice: Notice, *, base: str | None) -> bytes:
    """Rule 4: the exact bytes that are signed and sent."""
    document = {
        "event": notice.event,
        "id": notice.id,
        "class": notice.reply_class,
        "text": notice.text,
        "link": notice.link(base),
    }
    return json.dumps(document, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def signature(secret: bytes, body: bytes) -> str:
    """Rule 4: the header's value."""
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def webhook(notice: Notice, *, base: str | None, secret: bytes) -> Post:
    body = webhook_body(notice, base=base)
    headers = (("Content-Type", "application/json"), (SIGNATURE_HEADER, signature(secret, body)))
    return Post(headers, body)


def verify(secret: bytes, body: bytes, header: str | None) -> bool:
    """Rule 4, for a receiver: whether `header` is the signature of exactly `body`."""
    return header is not None and hmac.compare_digest(header.strip(), signature(secret, body))
