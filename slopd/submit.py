"""Handing an envelope to a hub and awaiting its terminal reply: what every producer shares.

`slopd send` uses this module now; the HTTP and MCP transports and the Baton projection drop
envelopes through it too, so an envelope is indistinguishable after intake, whoever sent it.

Rules:
1. `compose` builds an envelope in the canonical form: an id `YYYYMMDDtHHMMSSz-SLUG-HEX`
   (lower-case; HEX is 64 random bits, so two sends in one second never collide in practice),
   `created_at` in whole UTC seconds, `auth: none`. The same arguments and `now` give the same
   bytes but for the id.
2. `drop` refuses bytes the daemon would refuse — the same strict parser, `EnvelopeError`
   with every reason, nothing written — then writes them atomically into `inbox/ID.md`,
   never replacing a file that is there (FileExistsError). Bytes a surface already admitted
   are not parsed again (`core.admission` rule 7).
3. The terminal reply of a handshake or note is its `ack`; of any other request, its
   `result` or `error`; a reply (`ack`, `result`, `error`) gets none.
4. `await_reply` is woken by the filesystem (`shell.waker`: a watch on `outbox/`), looks once
   after the watch has begun — so a reply written before is not missed — and again at each
   event, with a look every second besides in case events are lost (network filesystems).
5. `attach` copies a file into `assets/` atomically (never replacing other bytes of that name)
   and gives its SHA-256 reference, for `compose(assets=…)`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from slopd.core import assets as attachments
from slopd.core.assets import Asset
from slopd.core.envelope import Envelope, render
from slopd.core.ids import reply_id, timestamp
from slopd.core.validation import parse
from slopd.core.vocabulary import PROTOCOL, REPLY_TYPES
from slopd.shell.lanes import Hub

_SLUG = re.compile(r"[^a-z0-9-]+")
GENERATED_ID_TRIES = 3  # a generated id already taken (never, in practice: 64 bits) is replaced this often


@dataclass(frozen=True, slots=True)
class Reply:
    """A terminal reply found in `outbox/`."""

    kind: str  # ack, result or error
    path: Path
    text: str


def compose(
    *,
    type: str,
    sender: str,
    to: str,
    body: str,
    in_reply_to: str | None = None,
    mode: str | None = None,
    slug: str | None = None,
    assets: tuple[Asset, ...] = (),
    project: str | None = None,
    now: datetime | None = None,
    token: Callable[[], str] | None = None,
) -> Envelope:
    """Rule 1 (`project`: the Standing Standup a handoff or handshake goes to, SPEC §10)."""
    now = now or datetime.now(UTC)
    words = _SLUG.sub("-", (slug or type).lower()).strip("-")[:60] or type
    return Envelope(
        protocol=PROTOCOL,
        id=f"{now:%Y%m%dt%H%M%Sz}-{words}-{(token or random_token)()}",
        type=type,
        sender=sender,
        to=to,
        created_at=timestamp(now),
        in_reply_to=in_reply_to,
        mode=mode,
        assets=assets,
        body=body,
        extra={"project": project} if project is not None else {},
    )


def random_token() -> str:
    """Rule 1's HEX: 64 random bits."""
    return os.urandom(8).hex()


def attach(hub: Hub, source: Path) -> Asset:
    """Rule 5: copy the file `source` into `assets/` under its own name; its reference."""
    name = source.name
    reference, problems = attachments.parse([f"{attachments.LANE}/{name} sha256:{'0' * 64}"])
    if problems:
        raise ValueError(f"{source}: its name cannot be an asset name ({problems[0]})")
    try:
        digest = hub.add_asset(source, name)
    except FileExistsError:
        raise FileExistsError(
            f"assets/{name} already holds other bytes: rename {source} and send again"
        ) from None
    return Asset(reference[0].name, digest)


def drop(hub: Hub, data: bytes, *, name: str, admitted: Envelope | None = None) -> Envelope:
    """Rule 2: validate `data` as the daemon would, then drop it into `inbox/` under `name`
    (`admitted`: what admission already parsed these very bytes to — not parsed again)."""
    envelope = admitted if admitted is not None else parse(data, name=name)
    hub.write("inbox", name, data, replace=False)
    return envelope


def submit(hub: Hub, envelope: Envelope) -> Envelope:
    """Drop `envelope` into the inbox as `ID.md` (rule 2)."""
    return drop(hub, render(envelope), name=f"{envelope.id}.md")


def terminal_kinds(type: str) -> tuple[str, ...]:
    """Rule 3."""
    if type in REPLY_TYPES:
        return ()
    return ("ack",) if type in ("handshake", "note") else ("result", "error")


def find_reply(root: Path, envelope_id: str, kinds: tuple[str, ...]) -> Reply | None:
    """The first of `kinds` already answering `envelope_id`, read whole."""
    for kind in kinds:
        path = root / "outbox" / f"{reply_id(envelope_id, kind)}.md"
        try:
            return Reply(kind, path, path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
    return None


def await_reply(root: Path, envelope_id: str, kinds: tuple[str, ...], timeout: float) -> Reply | None:
    """Rule 4: the terminal reply to `envelope_id`, or None when none came within `timeout`."""
    from slopd.shell.waker import Waker  # noqa: PLC0415  # threads and watchdog: only for --wait

    waker = Waker(root)  # a watch on outbox/, begun before the first look
    try:
        return waker.wait_for(
            lambda: find_reply(root, envelope_id, kinds), lambda found: found is not None, timeout
        )
    finally:
        waker.close()
