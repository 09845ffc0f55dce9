"""Replies the console asks the daemon to send: a human approved or declined an agent's draft.

The console runs in the HTTP server's threads; the ledger, `outbox/` and `archive/` belong to the
daemon's loop (`daemon.loop` rule 1). So the console never writes them: it hands the loop a
`Notice` (as the HTTP intake hands it `arrived` hints) and waits for its outcome.

Rules:
1. `Notices.send` is thread-safe and wakes the loop; the loop takes every queued notice on its
   next turn (`Daemon.process_notices`) and resolves each notice's future with the reply's path,
   or with the error that stopped it.
2. A notice's reply is written like every reply: into `outbox/` and the ledger's `replies` table
   (with its recipient, so it appears in that seat's feed), in a batch of one whose commit rings
   the bell. Its id is derived from the draft's in names no other reply takes (`ID.approved`,
   `ID.declined`): a notice sent again replaces its own reply instead of adding a second one,
   and never one that answers an envelope of that id (a draft's id is the agent's to choose).
3. A declined draft (and an approved one, which became the order) leaves `outbox/drafts/` for
   `archive/DAY/` in the same batch: linked there, the day folder synced, then unlinked — never
   deleted. A draft already gone is not an error (another human acted first).
"""

from __future__ import annotations

import os
import queue
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from slopd.core import replies
from slopd.core.envelope import Envelope, render
from slopd.core.names import Kind
from slopd.daemon.parts import Parts
from slopd.shell import fs

DRAFTS = "drafts"  # under outbox/


@dataclass(frozen=True, slots=True)
class Notice:
    reply: Envelope | None  # None: only the draft is archived (no agent to tell)
    draft: str | None  # a file name in outbox/drafts/ to archive with the reply
    done: Future[str] = field(default_factory=Future)


class Notices:
    """Rule 1: the queue between the console's threads and the daemon's loop."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Notice] = queue.SimpleQueue()
        self._wake: Callable[[], None] = lambda: None

    def connect(self, wake: Callable[[], None]) -> None:
        """The daemon's loop: `wake` is called for each notice sent from now on."""
        self._wake = wake

    def send(self, reply: Envelope | None, draft: str | None = None) -> Future[str]:
        notice = Notice(reply, draft)
        self._queue.put(notice)
        self._wake()
        return notice.done

    def take(self) -> list[Notice]:
        taken = []
        while True:
            try:
                taken.append(self._queue.get_nowait())
            except queue.Empty:
                return taken


def carry_out(parts: Parts, notice: Notice) -> str:
    """Rules 2 and 3 for one notice, on the loop's thread; the reply's path ("" without one)."""
    reply = notice.reply
    path = "" if reply is None else _reply(parts, reply)
    if notice.draft is not None:
        archived = _archive_draft(parts, notice.draft)
        if archived is not None:
            parts.log.info("draft.archived", draft=f"outbox/drafts/{notice.draft}", archive=archived)
    return path


def _reply(parts: Parts, reply: Envelope) -> str:
    """Rule 2."""
    log = parts.log.bind(id=reply.in_reply_to)
    path = f"outbox/{reply.id}.md"
    batch = parts.commits.open(stage=False)
    batch.inputs.append((("outbox", f"{reply.id}.md"), Kind.INPUT))  # so a failed commit says so
    parts.commits.write(batch, "outbox", f"{reply.id}.md", render(reply))
    batch.ledger.add_reply(
        (reply.in_reply_to or reply.id).lower(),
        reply_id=reply.id,
        in_reply_to=reply.in_reply_to,
        type=reply.type,
        reply_class=replies.reply_class(reply),
        path=path,
        now=parts.clock.stamp(),
        recipient=reply.to,
    )
    committed = parts.commits.commit(batch)
    if committed.failed:
        raise OSError(committed.failed[0][1])
    log.info("reply.written", reply=reply.id, reply_type=reply.type, to=reply.to, by="console")
    return path


def _archive_draft(parts: Parts, name: str) -> str | None:
    """Rule 3: the draft's archive path, or None when it was already gone."""
    drafts = os.open(DRAFTS, fs.DIR_FLAGS, dir_fd=parts.hub.lane_fd("outbox"))
    try:
        try:
            os.stat(name, dir_fd=drafts, follow_symlinks=False)
        except FileNotFoundError:
            return None
        target = parts.archive.target(name, parts.clock.wall())
        day, _, archived_name = target.removeprefix("archive/").partition("/")
        day_fd = os.open(day, fs.DIR_FLAGS, dir_fd=parts.hub.lane_fd("archive"))
        try:
            os.link(name, archived_name, src_dir_fd=drafts, dst_dir_fd=day_fd, follow_symlinks=False)
            fs.fsync_dir(day_fd)
        finally:
            os.close(day_fd)
        os.unlink(name, dir_fd=drafts)
        fs.fsync_dir(drafts)
        return target
    finally:
        os.close(drafts)
