"""Standing Standups, from the daemon's side: applying a change the handler planned, and what the
reply says of it.

Rules (SPEC §10):
1. Only a `handoff` or `handshake` whose front matter carries `project:` touches a standup
   (`core.answers.standup` makes the `core.plans.Standup` change); this applies it.
2. A handoff's body is filed as one MEP entry (`handoff.board`, which reads the file again first
   and never loses a human's edit), which tags its `from` out; a handshake tags its `from` in
   (at the change's `since`). Both run on the main loop, before the reply is written, so
   the order of effects is the standup, the reply, the ledger, the archive; each change is
   idempotent, so an input redone after a crash never files its entry twice.
3. A standup that cannot be written is handled like a reply that cannot be written: the
   error propagates, nothing is answered, and the input stays in its lane for the next scan.
4. A change the standup refused (an entry that does not lint, a bad project name) is still
   answered by the envelope's usual reply (a `result`, by the discuss rule; a handshake's
   `ack`), and that reply says so to machines too: `refused: standup` in its front matter
   (`Note.refused`), so `slopd send --wait` exits 1 as for an `error`.
"""

from __future__ import annotations

from dataclasses import dataclass

from slopd.core.plans import Standup
from slopd.daemon.parts import Parts
from slopd.handoff import digest, standup
from slopd.handoff.board import Board
from slopd.shell.log import Logger


@dataclass(frozen=True, slots=True)
class Note:
    """What the reply says about the standup (rule 2), and whether the change was refused (rule 4)."""

    text: str
    refused: bool = False


REFUSED = "standup"  # the reply's `refused:` value when the standup refused the change (rule 4)


class Standups:
    def __init__(self, parts: Parts) -> None:
        self.board = Board(parts.hub)

    def apply(self, change: Standup, log: Logger) -> Note:
        """Rule 2: carry `change` out; the reply's paragraph about it."""
        project, envelope = change.project, change.envelope
        if not isinstance(project, str) or standup.PROJECT.fullmatch(project) is None:
            log.warning("standup.refused", project=str(project), reason="not a project name")
            return Note(digest.refused_project(project), refused=True)
        try:
            if envelope.type == "handshake":
                text = self.board.tag_in(project, envelope.sender, change.since)
                log.info("standup.tagged_in", project=project, seat=envelope.sender)
                return Note(digest.tagged_in(project, envelope.sender, text))
            filed = self.board.file_handoff(project, envelope.sender, envelope.body.lstrip("\r\n"))
        except OSError as error:
            log.error("standup.failed", project=project, reason=str(error), action="retried")
            raise
        if filed.added:
            log.info("standup.filed", project=project, seat=envelope.sender)
        else:
            log.warning("standup.entry_refused", project=project, findings=[f.rule for f in filed.findings])
        return Note(digest.filed(project, filed.text, filed.findings), refused=not filed.added)
