"""What waits for a human, and the one write the console makes: a signed order into `authorized/`.

Rules (SPEC §15):
1. Waiting: every `*.md` draft in `outbox/drafts/` (what an agent asked a human to sign), and
   every order in `authorized/` that names a signature not yet in the lane (a quorum's, or its
   own `.sig`). Each is read once, without following a link; an unreadable or invalid one is
   listed with its reason and cannot be approved.
2. A draft approved becomes the order: the draft's bytes with `from` the signed-in principal,
   a fresh `created_at`, `to` this watcher and `auth` naming `NAME.md.sig` (and, for an action
   with `quorum = M`, `NAME.md.2.sig` … `NAME.md.M.sig` for the co-signers); everything else,
   the body included, is the draft's. The human is shown these exact bytes before signing.
3. A co-signer of an order already in `authorized/` signs its bytes as read, into the first
   missing sidecar that names them (`NAME.md.WHO.sig` with WHO their principal or its part
   before `@`), else the first missing one that is not the order's own `NAME.md.sig`; the
   order's `from` fills `NAME.md.sig`.
4. The write (SPEC §1's one exception, made exactly as a human at a terminal would): the `.sig`
   first, then the order, each atomically (a temp name, fsync, rename, fsync of the lane), never
   over a name already there; then the daemon is told it arrived. The daemon's verifier decides as for
   every order: nothing here runs or approves anything by itself.
5. The requesting agent is the draft's `requested_by` (written by `slop_request_approval`), else
   the seat its closing "Requested by SEAT:" line names; the hub is hostile, so this only says
   whom the notice goes to — it never grants anything.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, replace
from datetime import datetime

from slopd.core import drafts
from slopd.core.envelope import Envelope, EnvelopeError, parse, render
from slopd.core.ids import timestamp
from slopd.core.vocabulary import MAX_ENVELOPE_BYTES
from slopd.ops import status
from slopd.shell import fs
from slopd.shell.lanes import Hub, LaneError

DRAFTS = "drafts"


@dataclass(frozen=True, slots=True)
class Waiting:
    where: str  # "drafts" or "authorized"
    name: str
    data: bytes | None
    envelope: Envelope | None
    problem: str | None = None
    missing: tuple[str, ...] = ()  # sidecars the order names that are not in the lane
    present: tuple[str, ...] = ()

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest() if self.data is not None else ""

    @property
    def requested_by(self) -> str | None:
        """Rule 5 (`core.drafts.requester`)."""
        return drafts.requester(self.envelope) if self.envelope is not None else None


def _drafts_fd(hub: Hub) -> int | None:
    try:
        return os.open(DRAFTS, fs.DIR_FLAGS, dir_fd=hub.lane_fd("outbox"))
    except (OSError, LaneError):
        return None


def draft_names(hub: Hub) -> list[str]:
    fd = _drafts_fd(hub)
    if fd is None:
        return []
    try:
        return sorted(name for name in os.listdir(fd) if drafts.is_draft(name))
    finally:
        os.close(fd)


def held_orders(hub: Hub) -> dict[str, list[str]]:
    """Rule 1: the orders in `authorized/` waiting for signatures, with the sidecars missing."""
    missing: dict[str, list[str]] = status.lanes(hub)["authorized"].get("missing", {})
    return missing


def _contents(hub: Hub, where: str, name: str) -> tuple[fs.Contents | fs.Unreadable, tuple[str, ...]] | None:
    if where == "drafts":
        fd = _drafts_fd(hub)
        if fd is None:
            return None
        try:
            return fs.read_once(name, MAX_ENVELOPE_BYTES, dir_fd=fd), ()
        finally:
            os.close(fd)
    waiting = held_orders(hub) if where == "authorized" else {}
    if name not in waiting:
        return None
    return hub.read("authorized", name, MAX_ENVELOPE_BYTES), tuple(waiting[name])


def read(hub: Hub, where: str, name: str) -> Waiting | None:
    """Rule 1 for one item; None when there is no such draft or waiting order."""
    found = None if "/" in name or name.startswith(".") else _contents(hub, where, name)
    if found is None:
        return None
    contents, missing = found
    if isinstance(contents, fs.Unreadable):
        return (
            None if contents.stat is None else Waiting(where, name, None, None, f"the file {contents.reason}")
        )
    try:
        envelope = parse(contents.data, name=name)
    except EnvelopeError as error:
        return Waiting(where, name, contents.data, None, "not a valid envelope: " + "; ".join(error.reasons))
    present = tuple(sidecar for sidecar in envelope.sidecars if sidecar not in missing)
    return Waiting(where, name, contents.data, envelope, None, missing, present)


def order_from_draft(
    draft: Envelope, name: str, principal: str, watcher: str, quorum: int, now: datetime
) -> bytes:
    """Rule 2."""
    sidecars = [f"{name}.sig", *(f"{name}.{number}.sig" for number in range(2, quorum + 1))]
    order = replace(
        draft, sender=principal, to=watcher, created_at=timestamp(now), auth="signed:" + ",".join(sidecars)
    )
    data = render(order)
    parse(data, name=name)  # what the human signs is an order the daemon will read
    return data


def sidecar_for(item: Waiting, principal: str) -> str | None:
    """Rule 3: the sidecar this principal's signature goes into, or None (nothing left to sign)."""
    if item.envelope is None:
        return None
    own = f"{item.name}.sig"
    if item.envelope.sender == principal:
        return own if own in item.missing else None
    local = principal.partition("@")[0]
    for sidecar in item.missing:
        if sidecar in (f"{item.name}.{principal}.sig", f"{item.name}.{local}.sig"):
            return sidecar
    return next((sidecar for sidecar in item.missing if sidecar != own), None)


def write_signed(hub: Hub, name: str, order: bytes | None, sidecar: str, signature: bytes) -> None:
    """Rule 4: the signature, then (for a draft approved) the order, into `authorized/`.

    Each lands by a rename that never replaces (`fs`'s never-clobbering write): the daemon reads
    a sidecar the moment it appears, whole and with one link. A name already taken is
    FileExistsError, before anything is written when it can be seen first (the lane is the
    humans'; a race with a human's own `mv` loses nothing of theirs)."""
    lane = hub.lane_fd("authorized")
    for taken in (sidecar, name) if order is not None else (sidecar,):
        if fs.exists_at(lane, taken):
            raise FileExistsError(taken)
    fs.atomic_write(lane, sidecar, signature, replace=False)
    if order is not None:
        fs.atomic_write(lane, name, order, replace=False)
