"""Intake: which lane entries are candidates, and when each may be read. Pure: time comes in.

Rules:
1. A file renamed into the lane (`arrived`) right after its last write is complete: it is due at
   once. One renamed in long after its last write is a sync engine delivering a remote file —
   which may still be being written over there — so it is due once its mtime is `settle` old;
   so is one renamed in from a sync client's temporary name (`delivered`), however soon after
   its last write: a fast delivery of a half-written file is still half-written.
2. A file written in place is due once its signature (inode, size, mtime, ctime) has stayed the
   same for `settle` seconds. For a file a scan finds, its mtime says since when: it is due once
   its last write is `settle` old (at once if it already is), unless it changes meanwhile.
3. While inotify says a writer has the file open (`written`, or `created` empty, and no
   `closed` since), it is not due, however still it looks; if no `closed` comes within `writer_timeout` of the
   last write, the writer is presumed gone (a lost event) and rule 2 applies.
4. Names that are not inputs, and inputs left for another watcher, stay quiet until their
   signature changes; a failed input waits for the next full scan.
5. A candidate keeps the `Kind` its name was classified as when it was first offered, so a
   name is classified once per sighting.
6. A candidate known complete and due stays so while its signature is unchanged: a later event
   about the same, unchanged file — the `created` of the link that named it, delivered after
   its writer's own `arrived` (the HTTP transport, in the daemon's process) — changes nothing.
   A candidate deferred to a later time (a held order) is still woken by an `arrived`.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

from slopd.core.layout import Signature
from slopd.core.names import Kind

FRESH_RENAME = 0.25  # seconds between a file's last write and its rename that still mean "just written"
Where = tuple[str, str]
T = TypeVar("T")


class Hint(StrEnum):
    """What a filesystem event said about a lane entry (`shell.watcher` makes them)."""

    ARRIVED = "arrived"  # renamed into the lane: complete
    DELIVERED = "delivered"  # renamed in from a sync client's temporary name: a remote file
    CREATED = "created"  # being written in place
    WRITTEN = "written"
    CLOSED = "closed"  # its writer closed it (inotify only)
    RESCAN = "rescan"  # events were lost: scan everything


class Oldest(Generic[T]):
    """The `room` oldest items offered, in memory for `room` only; of items with the same mtime
    the first offered is kept."""

    def __init__(self, room: int) -> None:
        self.room = room
        self.overflowed = False  # something offered was left out: there is more to take later
        self._newest_first: list[tuple[int, int, Where]] = []  # a heap: its top is the newest kept
        self._items: dict[Where, tuple[int, T]] = {}
        self._offered = 0

    def offer(self, where: Where, mtime_ns: int, item: T) -> None:
        self._offered += 1
        key = (-mtime_ns, -self._offered, where)  # the count is unique: `where` is never compared
        if len(self._newest_first) < self.room:
            heapq.heappush(self._newest_first, key)
        elif self._newest_first and key > self._newest_first[0]:  # older than the newest kept
            dropped = heapq.heapreplace(self._newest_first, key)[2]
            del self._items[dropped]
            self.overflowed = True
        else:
            self.overflowed = True
            return
        self._items[where] = (mtime_ns, item)

    def sorted(self) -> list[tuple[Where, T]]:
        """What was kept, oldest first."""
        ordered = sorted(self._items.items(), key=lambda pair: (pair[1][0], pair[0]))
        return [(where, item) for where, (_, item) in ordered]


@dataclass
class _Candidate:
    signature: Signature | None
    since: float
    complete: bool = False
    kind: Kind = Kind.INPUT


class Intake:
    def __init__(self, *, settle: float, writer_timeout: float, track_writers: bool) -> None:
        self.settle, self.writer_timeout, self.track_writers = settle, writer_timeout, track_writers
        self._candidates: dict[Where, _Candidate] = {}
        self._writing: dict[Where, float] = {}
        self._quiet: dict[Where, Signature] = {}
        self._failed: set[Where] = set()

    def __len__(self) -> int:
        return len(self._candidates)

    def reconfigure(self, *, settle: float) -> None:
        """A reload's `settle`."""
        self.settle = settle

    def track(self, *, writers: bool) -> None:
        """Whether events say when a writer closes a file (inotify's close-write): rule 3 then."""
        self.track_writers = writers

    def has(self, where: Where) -> bool:
        return where in self._candidates

    def tracks(self, where: Where) -> bool:
        return where in self._candidates or where in self._writing or where in self._quiet

    def is_quiet(self, where: Where, signature: Signature) -> bool:
        return self._quiet.get(where) == signature

    def quiet(self, where: Where, signature: Signature) -> None:
        self._quiet[where] = signature

    def release(self, where: Where) -> None:
        self._quiet.pop(where, None)

    def release_all(self) -> None:
        """Look at every quiet name again (after a reload, what was left may now be ours)."""
        self._quiet.clear()

    def failed(self, where: Where) -> None:
        self._failed.add(where)

    def scan_started(self) -> None:
        self._failed.clear()

    def scanned(
        self, where: Where, signature: Signature, *, age: float, now: float, kind: Kind = Kind.INPUT
    ) -> None:
        """A full scan saw `where`, last written `age` seconds ago."""
        if where in self._candidates or where in self._failed or self.is_quiet(where, signature):
            return
        since = now - min(max(age, 0.0), self.settle)  # unchanged since its last write, `age` ago
        self._candidates[where] = _Candidate(signature, since, kind=kind)

    def hinted(
        self,
        where: Where,
        hint: Hint,
        signature: Signature | None,
        *,
        now: float,
        wall: float | None = None,
        kind: Kind = Kind.INPUT,
    ) -> None:
        """An event said something about `where`; `signature` is its lstat now (None: gone).

        `wall` (the wall clock) lets an arrival be judged by its mtime (rule 1's exception).
        """
        if signature is None:
            self._candidates.pop(where, None)
            self._writing.pop(where, None)
            return
        known = self._candidates.get(where)
        if known is not None and known.complete and known.since <= now and known.signature == signature:
            return  # rule 6
        if hint in (Hint.ARRIVED, Hint.DELIVERED):
            self._writing.pop(where, None)
            renamed_after = (signature[3] - signature[2]) / 1e9  # ctime - mtime
            if hint is Hint.ARRIVED and (wall is None or renamed_after <= FRESH_RENAME):
                self._candidates[where] = _Candidate(signature, now, complete=True, kind=kind)
            else:
                age = min(max(wall - signature[2] / 1e9, 0.0), self.settle) if wall is not None else 0.0
                self._candidates[where] = _Candidate(signature, now - age, kind=kind)
            return
        if hint is Hint.CLOSED:
            self._writing.pop(where, None)
        elif self.track_writers and (hint is Hint.WRITTEN or signature[1] == 0):
            # A hard link lands as `created` with its content already there; an empty new file
            # has a writer about to write.
            self._writing[where] = now
        current = self._candidates.get(where)
        if current is None or current.signature != signature or hint is not Hint.CLOSED:
            self._candidates[where] = _Candidate(signature, now, kind=kind)

    def defer(self, where: Where, signature: Signature, *, until: float, kind: Kind = Kind.INPUT) -> None:
        """Look at `where` again at `until` (a held order, a sidecar waiting for its order)."""
        self._candidates[where] = _Candidate(signature, until, complete=True, kind=kind)

    def forget_missing(self, present: set[Where]) -> None:
        for table in (self._candidates, self._writing, self._quiet):
            for where in [where for where in table if where not in present]:
                del table[where]

    def _ready_at(self, where: Where, candidate: _Candidate) -> float:
        if candidate.complete:
            return candidate.since
        ready = candidate.since + self.settle
        writing = self._writing.get(where)
        if writing is not None:
            ready = max(ready, writing + self.writer_timeout)
        return ready

    def due(self, now: float) -> list[Where]:
        """Candidates whose wait is over; each must be `confirm`ed with a fresh signature."""
        return [
            where for where, candidate in self._candidates.items() if self._ready_at(where, candidate) <= now
        ]

    def next_deadline(self) -> float:
        return min((self._ready_at(where, c) for where, c in self._candidates.items()), default=float("inf"))

    def confirm(self, where: Where, signature: Signature | None, *, now: float) -> bool:
        """True when `where` is still as it was and may be read now (it leaves the candidates)."""
        return self.take(where, signature, now=now) is not None

    def take(self, where: Where, signature: Signature | None, *, now: float) -> Kind | None:
        """`confirm`, returning the candidate's kind when it may be read now, else None."""
        candidate = self._candidates.get(where)
        if candidate is None:
            return None
        if signature is None:
            del self._candidates[where]
            self._writing.pop(where, None)
            return None
        if candidate.complete or signature == candidate.signature:
            del self._candidates[where]
            self._writing.pop(where, None)
            return candidate.kind
        self._candidates[where] = _Candidate(signature, now, kind=candidate.kind)
        return None
