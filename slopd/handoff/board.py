"""The hub's `standups/` folder: reading a standup, and changing it without losing a human's edit.

Rules (SPEC §10):
1. slopd is a standup's only writer, but humans edit Scope, Artifacts and Pointers by hand. A
   change is computed from the file as read, staged, and the file is read again just before
   the staged text replaces it: if it changed meanwhile, the change is computed again from
   the new text (up to `ATTEMPTS` times), so the edit is kept. The staged file is synced before
   that look, so only a rename separates the look from the replace.
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

from slopd.handoff import compose, standup
from slopd.handoff.lint import Finding
from slopd.shell import fs
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
        if isinstance(found, fs.Unreadable):
            if found.stat is None and not self.hub.exists(FOLDER, f"{project}.md"):
                return None
            raise StandupError(errno.EIO, f"the file {found.reason}", f"{FOLDER}/{project}.md")
        return found.data.decode("utf-8", "surrogateescape")

    def file_handoff(self, project: str, seat: str, entry: str) -> Filed:
        refused: list[Finding] = []

        def change(text: str | None) -> str | None:
            current = text if text is not None else standup.create(project)
            _, log = standup.split(current)
            if log and compose.present(log, entry):
                refused.clear()
                return standup.tag_out(current, seat)
            _, problems = compose.accepts(log or None, entry)
            refused[:] = problems
            if problems:
                return text
            return standup.tag_out(standup.add(current, entry), seat)

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
            staged = fs.stage(fd, name, after.encode("utf-8", "surrogateescape"))
            os.fsync(staged.fd)  # the slow part, before the look: the rename follows it at once
            self._before_replace()
            if self.read(project) != before:
                staged.discard()
                time.sleep(0.001 * attempt)  # out of step with an editor saving in a loop
                continue
            fs.commit([staged])
            return after
        raise StandupError(
            errno.EAGAIN, f"kept changing while slopd wrote it ({ATTEMPTS} tries)", f"{FOLDER}/{name}"
        )
