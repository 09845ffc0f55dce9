"""The hub's `standups/` folder: reading a standup, and changing it without losing a human's edit.

Rules (SPEC §10):
1. slopd is a standup's only writer, but humans edit Scope, Artifacts and Pointers by hand. A
   change is computed from the file as read, staged, synced, and swapped into place with an
   atomic exchange (`shell.exchange`); the file that comes out is read: if it is not the one
   the change was computed from, an edit slipped in, so the change is made again on it and
   swapped in again — no edit is ever lost. Where no exchange exists, the file is read again
   just before a plain replace, and a change is recomputed when it differs (up to `ATTEMPTS`).
2. Every write is atomic and durable (`shell.fs`); files are opened without following links.
3. `file_handoff` and `tag_in` apply the idempotent changes of `handoff.standup`: doing one
   again after a crash changes nothing.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from slopd.handoff import standup
from slopd.handoff.lint import Finding
from slopd.shell import exchange, fs, reads
from slopd.shell.lanes import Hub

FOLDER = "standups"
MAX_BYTES = 16 << 20
ATTEMPTS = 20


class StandupError(OSError):
    pass


@dataclass(frozen=True, slots=True)
class Filed:
    """What filing one handoff came to: the file's text after, and why the entry was refused."""

    text: str
    findings: tuple[Finding, ...]

    @property
    def added(self) -> bool:
        return not self.findings


class Board:
    def __init__(self, hub: Hub, *, before_replace: Callable[[], None] | None = None) -> None:
        self.hub = hub
        self._before_replace = before_replace or (lambda: None)  # a seam for the race tests

    def read(self, project: str) -> str | None:
        if self.hub.stat_path(FOLDER) is None:
            return None
        found = self.hub.read(FOLDER, f"{project}.md", MAX_BYTES)
        if isinstance(found, reads.Unreadable):
            if found.stat is None and not self.hub.exists(FOLDER, f"{project}.md"):
                return None
            raise StandupError(errno.EIO, f"the file {found.reason}", f"{FOLDER}/{project}.md")
        return found.data.decode("utf-8", "surrogateescape")

    def file_handoff(self, project: str, seat: str, entry: str) -> Filed:
        refused: list[Finding] = []

        def change(text: str | None) -> str | None:
            changed, refused[:] = standup.file(text, project, seat, entry)
            return changed

        text = self._update(project, change)
        return Filed(text or "", tuple(refused))

    def tag_in(self, project: str, seat: str, since: str) -> str:
        text = self._update(
            project, lambda text: standup.tag_in(text or standup.create(project), seat, since)
        )
        return text or ""

    def _update(self, project: str, change: Callable[[str | None], str | None]) -> str | None:
        """Rule 1: the text the file holds after the change."""
        name = f"{project}.md"
        for attempt in range(ATTEMPTS):
            before = self.read(project)
            after = change(before)
            if after is None or after == before:
                return before
            fd = self.hub.folder_fd(FOLDER)
            if before is None:
                staged = self._stage(fd, name, after)
                try:
                    fs.commit([staged], replace=False)
                except FileExistsError:
                    continue  # created meanwhile: change that instead
                return after
            done = self._swap_in(fd, name, before, after, change)
            if done is not None:
                return done
            time.sleep(0.001 * attempt)  # out of step with an editor saving in a loop
        raise StandupError(
            errno.EAGAIN, f"kept changing while slopd wrote it ({ATTEMPTS} tries)", f"{FOLDER}/{name}"
        )

    def _stage(self, fd: int, name: str, text: str) -> fs.Staged:
        staged = fs.stage(fd, name, text.encode("utf-8", "surrogateescape"))
        os.fsync(staged.fd)  # the slow part, before the look: only the rename follows it
        self._before_replace()
        return staged

    def _swap_in(
        self, fd: int, name: str, before: str, after: str, change: Callable[[str | None], str | None]
    ) -> str | None:
        """Put `after` in place of `before`. With an atomic exchange, what comes out is read: an
        edit that slipped in is swapped straight back (the stale text was in place only for that
        read) and the change is made again on it. Without an exchange, the file is read again
        just before a plain replace. None: try again from the start."""
        expected = before
        for _ in range(ATTEMPTS):
            staged = self._stage(fd, name, after)
            try:
                swapped = exchange.swap(staged.dir_fd, staged.temp, name)
            except FileNotFoundError:
                staged.discard()
                return None
            if not swapped:
                if self.read(name.removesuffix(".md")) != expected:
                    staged.discard()
                    return None
                fs.commit([staged])
                return after
            displaced = reads.read_once(staged.temp, MAX_BYTES, dir_fd=staged.dir_fd)
            text = (
                displaced.data.decode("utf-8", "surrogateescape")
                if isinstance(displaced, reads.Contents)
                else None
            )
            if text == expected:
                staged.discard()  # it names the file that was in place
                fs.fsync_dir(fd)
                return after
            exchange.swap(staged.dir_fd, staged.temp, name)  # give the edited file back at once
            staged.discard()
            if text is None:
                return None
            expected, after = text, change(text) or text
        path = f"{FOLDER}/{name}"
        raise StandupError(errno.EAGAIN, f"kept changing while slopd wrote it ({ATTEMPTS} tries)", path)
