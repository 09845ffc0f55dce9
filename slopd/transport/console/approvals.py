"""What waits for a human, and the one write the console makes: a signed order into `authorized/`.

Rules (SPEC §15):
1. Waiting: every draft in `outbox/drafts/` (`core.drafts` rule 2: what an agent asked a human
   to sign), and every order in `authorized/` that names a signature not yet in the lane (a
   quorum's, or its own `.sig`), as `slopd status` holds it. Each is read once, without following
   a link — the list may take an unchanged file from a `Shelf` (`shelf` rule 3), one item is read
   now —; an unreadable or invalid one is listed with its reason and cannot be approved.
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
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial

from slopd.core import drafts
from slopd.core.envelope import Envelope, EnvelopeError, render
from slopd.core.ids import timestamp
from slopd.core.names import Kind, classify
from slopd.core.validation import parse
from slopd.core.vocabulary import MAX_ENVELOPE_BYTES
from slopd.shell import fs, reads
from slopd.shell.lanes import Hub, LaneError
from slopd.transport.console.shelf import Parsed, Shelf

DRAFTS = "drafts"
LANE = "authorized"


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


def waiting_drafts(hub: Hub, limit: int, shelf: Shelf | None = None) -> tuple[list[Waiting], int]:
    """Rule 1: the first `limit` drafts by name (`core.drafts` rule 2), and how many there are."""
    fd = _drafts_fd(hub)
    if fd is None:
        return [], 0
    try:
        names = [name for name in os.listdir(fd) if drafts.is_draft(name)]
        if shelf is not None:
            shelf.forget_others(DRAFTS, set(names))
        items = [
            _waiting(
                DRAFTS,
                name,
                *_load(shelf, DRAFTS, name, _lstat(fd, name, shelf), partial(_read_at, fd, name)),
            )
            for name in sorted(names)[:limit]
        ]
    finally:
        os.close(fd)
    return [item for item in items if item is not None], len(names)


def waiting_orders(hub: Hub, shelf: Shelf | None = None) -> list[Waiting]:
    """Rule 1: every order in `authorized/` waiting for a signature, by name, each read once."""
    try:
        fd = hub.lane_fd(LANE)
        names = set(os.listdir(fd))
    except OSError:  # LaneError too: a missing or replaced lane waits for nothing
        return []
    if shelf is not None:
        shelf.forget_others(LANE, names)
    waiting = (
        _order(hub, name, names.__contains__, shelf, _lstat(fd, name, shelf))
        for name in sorted(names)
        if _is_order(name)
    )
    return [item for item in waiting if item is not None]


def _lstat(fd: int, name: str, shelf: Shelf | None) -> os.stat_result | None:
    """What a shelf compares (`shelf` rule 1); nothing to look at without one."""
    if shelf is None:
        return None
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return None


def read(hub: Hub, where: str, name: str) -> Waiting | None:
    """Rule 1 for one item, read now; None when there is no such draft or waiting order."""
    if "/" in name or name.startswith("."):
        return None
    if where == LANE:
        return _order(hub, name, lambda sidecar: hub.exists(LANE, sidecar)) if _is_order(name) else None
    fd = _drafts_fd(hub) if where == DRAFTS else None
    if fd is None:
        return None
    try:
        return _waiting(DRAFTS, name, *_load(None, DRAFTS, name, None, lambda: _read_at(fd, name)))
    finally:
        os.close(fd)


def _order(
    hub: Hub,
    name: str,
    present: Callable[[str], bool],
    shelf: Shelf | None = None,
    listed: os.stat_result | None = None,
) -> Waiting | None:
    """Rule 1 for one entry of `authorized/`, as `slopd status` holds it: an order (not a
    sidecar, not ignored) that names a sidecar not in the lane — its own `NAME.sig` when it
    cannot be read as an envelope (`name` is an order's, `_is_order`). The bytes read are the bytes
    parsed and shown."""
    contents, envelope, reasons = _load(
        shelf, LANE, name, listed, lambda: hub.read(LANE, name, MAX_ENVELOPE_BYTES)
    )
    named = envelope.sidecars if envelope is not None else (f"{name}.sig",)
    missing = tuple(sidecar for sidecar in named if not present(sidecar))
    if not missing:
        return None
    return _waiting(LANE, name, contents, envelope, reasons, missing)


def _is_order(name: str) -> bool:
    return name.isprintable() and classify(name, lane=LANE) in (Kind.INPUT, Kind.BAD_NAME)


def _read_at(fd: int, name: str) -> reads.Contents | reads.Unreadable:
    return reads.read_once(name, MAX_ENVELOPE_BYTES, dir_fd=fd)


def _load(
    shelf: Shelf | None,
    place: str,
    name: str,
    listed: os.stat_result | None,
    read_now: Callable[[], reads.Contents | reads.Unreadable],
) -> Parsed:
    """The file read and parsed, or what `shelf` kept of it while its lstat `listed` is the same."""
    kept = shelf.get(place, name, listed) if shelf is not None and listed is not None else None
    if kept is not None:
        return kept
    began = time.time()
    contents = read_now()
    if isinstance(contents, reads.Unreadable):
        return contents, None, ()
    try:
        parsed: Parsed = (contents, parse(contents.data, name=name), ())
    except EnvelopeError as error:
        parsed = (contents, None, tuple(error.reasons))
    if shelf is not None:
        shelf.put(place, name, parsed, began)
    return parsed


def _waiting(
    where: str,
    name: str,
    contents: reads.Contents | reads.Unreadable,
    envelope: Envelope | None,
    reasons: tuple[str, ...],
    missing: tuple[str, ...] = (),
) -> Waiting | None:
    if isinstance(contents, reads.Unreadable):
        return (
            None if contents.stat is None else Waiting(where, name, None, None, f"the file {contents.reason}")
        )
    if envelope is None:
        return Waiting(where, name, contents.data, None, "not a valid envelope: " + "; ".join(reasons))
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
        if reads.exists_at(lane, taken):
            raise FileExistsError(taken)
    fs.atomic_write(lane, sidecar, signature, replace=False)
    if order is not None:
        fs.atomic_write(lane, name, order, replace=False)
