"""The MEP and Baton tools' work (SPEC §10, §11) for one seat: the same packages as the CLI.

Rules:
1. `handoff_lint` is `slopd handoff lint` on a text; `standup_read` is `slopd standup --json`.
2. `standup_append` checks the entry as the daemon's gate will (`handoff.compose.accepts`
   against the standup as it is) and refuses it with every finding, sending nothing; a clean
   entry is sent as a `handoff` with `project:`, and the daemon files it.
3. The keeper's tools act as the seat: only the seat named like the vessel leases and packs
   it (the lease's holder is the seat), and a boot is recorded (the seed's BATON_RECEIVED)
   only when the vessel itself boots, and only a boot that is not refused (`bootable`).
"""

from __future__ import annotations

from typing import Any

from slopd.baton import keeper, leases, summarizer
from slopd.baton.score import report
from slopd.baton.store import Store
from slopd.baton.tree import BatonError, Tree
from slopd.handoff import compose, digest, lint, standup
from slopd.handoff.board import Board
from slopd.transport import keeping
from slopd.transport.mcp.seat import Seat
from slopd.transport.problems import Problem


def handoff_lint(text: str) -> dict[str, Any]:
    found = lint.lint(text.encode("utf-8", "surrogateescape"))
    return {"conformant": found.conformant, "findings": [finding.as_dict() for finding in found.findings]}


def _project(project: str) -> str:
    if standup.PROJECT.fullmatch(project) is None:
        raise Problem(
            "bad-request", f"{project!r} is not a project name (lower-case letters, digits, '.', '_', '-')"
        )
    return project


def standup_read(seat: Seat, project: str) -> dict[str, Any]:
    text = Board(seat.hub).read(_project(project))
    shown = digest.as_json(project, text) if text is not None else None
    return {"project": project, "found": text is not None, "standup": shown}


def standup_text(seat: Seat, project: str) -> str | None:
    return Board(seat.hub).read(_project(project))


def standup_append(seat: Seat, project: str, entry: str) -> dict[str, Any]:
    """Rule 2."""
    current = Board(seat.hub).read(_project(project))
    _text, findings = compose.accepts(current, entry)
    errors = [finding for finding in findings if finding.severity == lint.ERROR]
    if errors:
        reasons = tuple(
            f"line {finding.line}: {finding.rule} {finding.message} — {finding.fix}" for finding in errors
        )
        raise Problem("invalid-envelope", "the entry does not lint; nothing was sent", reasons)
    return seat.send(type="handoff", to=seat.config.watcher, body=entry, project=project)


def _tree(seat: Seat, vessel: str, *, own: bool) -> Tree:
    tree = keeping.vessel(seat.hub, vessel)
    if own:
        keeping.own(tree, seat.seat)
    return tree


def baton_boot(seat: Seat, vessel: str, budget: int | None = None) -> dict[str, Any]:
    tree = _tree(seat, vessel, own=False)
    try:
        booted = keeper.boot(tree, budget)
    except BatonError as error:
        raise Problem("not-found", f"{error.filename}: {error.strerror}") from None
    if seat.seat == vessel and booted.bootable:
        Store(seat.state).record_boot(vessel, booted.generation, bootable=True)
    return booted.as_json()


def baton_lease(seat: Seat, vessel: str, ttl: float = leases.DEFAULT_TTL) -> dict[str, Any]:
    return keeping.lease(_tree(seat, vessel, own=True), Store(seat.state), seat.seat, leases.check_ttl(ttl))


def baton_pack(
    seat: Seat,
    vessel: str,
    lease_id: str,
    letter: str,
    state: dict[str, Any],
    accept_low_quality: bool = False,
) -> dict[str, Any]:
    tree = _tree(seat, vessel, own=True)
    asked = keeper.Request(
        lease_id=lease_id, letter=letter, state=state, accept_low_quality=accept_low_quality
    )
    summarize = summarizer.configured(seat.config)
    return keeping.commit(tree, Store(seat.state), asked, summarize=summarize, watcher=seat.config.watcher)


def baton_score(letter: str) -> dict[str, Any]:
    return report(letter)
