"""Standing Standups on the hub (SPEC §10), black-box: the real daemon files `handoff` envelopes
that carry `project:` into `standups/PROJECT.md`, tags seats in and out, answers with the open
tasks or the findings, keeps a human's edits, and never files an entry twice — not after a
failed reply, a failed archive, or SIGKILL.
"""

from __future__ import annotations

import functools
import json
import os
import random
import threading
import time

import pytest

from slopd.handoff import standup
from slopd.handoff.board import Board
from slopd.shell import exchange
from slopd.shell.lanes import Hub
from tests.conftest import HubDir, RunningDaemon, body_of, envelope_text, front_matter


def entry(
    day: str, agent: str, tag_out: str, *, happened: str = "Did a thing", tasks: tuple[str, ...] = ()
) -> str:
    pending = "\n".join(f"- [ ] {task}" for task in tasks) or "- none"
    return (
        f"## {day} — {agent} | {agent} (Code) | code\n"
        f"**Tag-in:** 09:00 UTC | **Tag-out:** {tag_out}\n\n"
        f"### What happened\n- {happened}\n\n### What's pending\n{pending}\n"
    )


def handoff(hub: HubDir, ident: str, body: str, *, sender: str = "claude", project: str = "slopd") -> None:
    hub.drop(f"{ident}.md", envelope_text(body, id=ident, type="handoff", from_=sender, project=project))


def handshake(hub: HubDir, ident: str, *, sender: str = "claude", project: str = "slopd") -> None:
    hub.drop(
        f"{ident}.md", envelope_text("Hello.\n", id=ident, type="handshake", from_=sender, project=project)
    )


def standup_text(hub: HubDir, project: str = "slopd") -> str:
    return (hub.root / "standups" / f"{project}.md").read_text(encoding="utf-8")


def headings(hub: HubDir, project: str = "slopd") -> list[str]:
    return [entry.heading for entry in standup.entries(standup_text(hub, project))]


def test_a_handoff_with_a_project_is_filed_and_answered_with_open_tasks_by_owner(hub: HubDir) -> None:
    """The first handoff creates the standup with its preamble; the result lists tasks by owner."""
    body = entry(
        "2026-12-01", "Claude", "15:00 UTC", tasks=("**[Pierre]** Review the driver", "Write the bench")
    )
    handoff(hub, "20261201t150000z-first", body)

    hub.run_once()

    text = standup_text(hub)
    assert text.startswith("# Standing Standup — slopd\n")
    for heading in ("## Scope", "## Artifacts", "## Pointers", "## Party line", "# Handoff Log"):
        assert f"\n{heading}\n" in text
    assert body in text
    reply = hub.reply("20261201t150000z-first", "result")
    assert front_matter(reply)["type"] == "result"
    said = body_of(reply)
    assert "the entry is in its log" in said
    assert "- Pierre: Review the driver (2026-12-01)" in said
    assert "- (unassigned): Write the bench (2026-12-01)" in said
    assert "Summary of handoff" in said  # the ordinary summary is given too
    linted = hub.slopd("handoff", "lint", "--strict", str(hub.root / "standups" / "slopd.md"))
    assert (linted.returncode, linted.stdout) == (0, "")  # the daemon's standup lints clean


def test_newer_handoffs_go_on_top_and_same_day_ones_by_tag_out(hub: HubDir) -> None:
    """Entries land newest first, whatever order the envelopes arrive in."""
    handoff(hub, "20261201t100000z-a", entry("2026-11-30", "Grok", "12:00 UTC"), sender="grok")
    hub.run_once()
    handoff(hub, "20261201t110000z-b", entry("2026-12-01", "Claude", "21:10 UTC"))
    hub.run_once()
    handoff(hub, "20261201t120000z-c", entry("2026-12-01", "Gemini", "17:00 UTC"), sender="gemini")
    hub.run_once()

    assert [heading.split(" — ")[1].split(" |")[0] for heading in headings(hub)] == [
        "Claude",
        "Gemini",
        "Grok",
    ]
    log = standup.split(standup_text(hub))[1]
    (hub.root / "log.md").write_text(log, encoding="utf-8")
    linted = hub.slopd("handoff", "lint", "--strict", str(hub.root / "log.md"))
    assert linted.returncode == 0, linted.stdout


def test_an_entry_that_does_not_lint_is_not_filed_and_the_reply_lists_why(hub: HubDir) -> None:
    """A handoff missing What's pending is still answered with a result, which names the finding."""
    body = entry("2026-12-01", "Claude", "10:00 UTC").split("\n### What's pending")[0]
    handoff(hub, "20261201t150000z-bad", body)

    hub.run_once()

    reply = hub.reply("20261201t150000z-bad", "result")
    said = body_of(reply)
    assert "the entry was not added" in said
    assert "MEP3" in said
    assert "What's pending" in said
    assert not (hub.root / "standups" / "slopd.md").exists() or body not in standup_text(hub)
    assert hub.archived() == ["20261201t150000z-bad.md"]


def test_a_bad_project_name_is_answered_and_nothing_is_written(hub: HubDir) -> None:
    """`project: ../etc` cannot name a file outside standups/: the reply says so."""
    handoff(hub, "20261201t150000z-evil", entry("2026-12-01", "Claude", "10:00 UTC"), project='"../evil"')

    hub.run_once()

    assert "is not a project name" in body_of(hub.reply("20261201t150000z-evil", "result"))
    assert not (hub.root / "standups").exists() or list((hub.root / "standups").iterdir()) == []
    assert not (hub.root / "evil.md").exists()


def test_handoffs_without_a_project_leave_standups_alone(hub: HubDir) -> None:
    """An ordinary handoff is summarized as before; no standup appears."""
    hub.drop(
        "plain.md", envelope_text(entry("2026-12-01", "Claude", "10:00 UTC"), id="20261201t150000z-plain")
    )

    hub.run_once()

    assert "Standing Standup" not in body_of(hub.reply("20261201t150000z-plain", "result"))
    assert not (hub.root / "standups").exists()


def test_a_handshake_tags_in_and_the_next_handoff_from_that_seat_tags_out(hub: HubDir) -> None:
    """The Party line lists who is in since when; a handoff by that seat takes it off."""
    handshake(hub, "20261201t080000z-hi-claude")
    handshake(hub, "20261201t080100z-hi-grok", sender="grok")
    hub.run_once()

    seats = [seat for seat, _since in standup.party(standup_text(hub))]
    assert seats == ["claude", "grok"]
    linted = hub.slopd("handoff", "lint", "--json", str(hub.root / "standups" / "slopd.md"))
    assert (linted.returncode, json.loads(linted.stdout)["findings"]) == (0, [])  # no entry yet: clean
    ack = body_of(hub.reply("20261201t080000z-hi-claude", "ack"))
    assert "claude is tagged in on `standups/slopd.md` since" in ack

    handoff(hub, "20261201t150000z-done", entry("2026-12-01", "Claude", "15:00 UTC"))
    hub.run_once()

    assert [seat for seat, _since in standup.party(standup_text(hub))] == ["grok"]
    assert "Party line: grok (since" in body_of(hub.reply("20261201t150000z-done", "result"))
    shown = hub.slopd("standup", "--hub", str(hub.root), "slopd", "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert [seat["seat"] for seat in data["party_line"]] == ["grok"]
    assert data["latest"]["heading"].startswith("## 2026-12-01 — Claude")
    assert data["entries"] == 1


def test_slopd_standup_prints_party_line_latest_entry_and_tasks(hub: HubDir) -> None:
    """`slopd standup` shows what an agent walking in needs; a missing project exits 1."""
    handoff(
        hub,
        "20261201t100000z-old",
        entry("2026-11-30", "Grok", "12:00 UTC", tasks=("**[Pierre]** Old task",)),
    )
    handoff(
        hub,
        "20261201t110000z-new",
        entry("2026-12-01", "Claude", "13:00 UTC", tasks=("**[Grok]** New task",)),
    )
    hub.run_once()

    shown = hub.slopd("standup", "--hub", str(hub.root), "slopd")
    assert shown.returncode == 0, shown.stderr
    assert "- Grok: New task (2026-12-01)" in shown.stdout
    assert "- Pierre: Old task (2026-11-30)" in shown.stdout
    assert "## 2026-12-01 — Claude" in shown.stdout.split("Latest entry")[1]
    assert "## 2026-11-30" not in shown.stdout.split("Latest entry")[1]
    missing = hub.slopd("standup", "--hub", str(hub.root), "nothing-here")
    assert missing.returncode == 1
    assert "no such standup" in missing.stdout
    assert hub.slopd("standup", "--hub", str(hub.root), "Bad/Name").returncode == 2


def test_a_human_edit_of_scope_is_kept(hub: HubDir) -> None:
    """Scope, Artifacts and Pointers edited by hand survive the next filing byte for byte."""
    handoff(hub, "20261201t100000z-one", entry("2026-11-30", "Grok", "12:00 UTC"))
    hub.run_once()
    path = hub.root / "standups" / "slopd.md"
    edited = standup_text(hub).replace(
        "(What this project is and is not. Edit by hand; slopd keeps it.)", "slopd: a safe hub.\r\nNo GUI."
    )
    path.write_text(edited, encoding="utf-8", newline="")
    handoff(hub, "20261201t110000z-two", entry("2026-12-01", "Claude", "13:00 UTC"))
    hub.run_once()

    text = path.read_bytes().decode()
    assert "## Scope\n\nslopd: a safe hub.\r\nNo GUI.\n" in text
    assert len(headings(hub)) == 2


def test_an_edit_made_while_slopd_writes_is_read_again_and_kept(hub: HubDir) -> None:
    """Re-read before replace: an edit landing between slopd's read and its rename is not lost."""
    board_hub = Hub(hub.root)
    edits: list[int] = []

    def human_edits() -> None:
        if not edits:
            path = hub.root / "standups" / "slopd.md"
            path.write_text(
                path.read_text().replace("## Pointers\n\n", "## Pointers\n\n- https://example.org\n")
            )
            edits.append(1)

    try:
        board = Board(board_hub)
        board.file_handoff("slopd", "claude", entry("2026-11-30", "Grok", "12:00 UTC"))
        board = Board(board_hub, before_replace=human_edits)
        filed = board.file_handoff("slopd", "claude", entry("2026-12-01", "Claude", "13:00 UTC"))
    finally:
        board_hub.close()
    text = standup_text(hub)
    assert edits == [1]
    assert filed.added
    assert "- https://example.org\n" in text
    assert len(headings(hub)) == 2
    assert text == filed.text


def test_a_human_editing_while_the_daemon_files_a_stream_loses_nothing(hub: HubDir) -> None:
    """A person saving Scope over and over while 30 handoffs are filed: every edit and entry stays."""
    handoff(hub, "20261201t000000z-seed", entry("2026-11-01", "Seed", "01:00 UTC"))
    hub.run_once()
    path = hub.root / "standups" / "slopd.md"
    stop = threading.Event()
    saved: list[str] = []

    def edit_like_an_editor() -> None:
        """Save Artifacts every 30 ms the way slopd saves: swap in, check what came out, and
        swap back when the daemon wrote meanwhile — so the editor never drops the daemon's entry
        and what is tested is that the daemon never drops the editor's edit."""
        number, folder = 0, os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            while not stop.is_set():
                before = path.read_bytes()
                mark = f"- edit {number}\n"
                temp = path.with_name(".slopd.md.swp")
                temp.write_bytes(before.replace(b"## Artifacts\n\n", f"## Artifacts\n\n{mark}".encode(), 1))
                assert exchange.swap(folder, temp.name, path.name)
                if temp.read_bytes() == before:
                    saved.append(mark)
                    number += 1
                else:
                    assert exchange.swap(folder, temp.name, path.name)
                temp.unlink()
                time.sleep(0.03)  # the editor's pace between saves, not a check
        finally:
            os.close(folder)

    editor = threading.Thread(target=edit_like_an_editor)
    with hub.running() as daemon:
        editor.start()
        try:
            for n in range(30):
                handoff(
                    hub,
                    f"20261201t{n:06d}z-stream",
                    entry("2026-12-01", f"Agent{n:02d}", f"{10 + n // 60}:{n % 60:02d} UTC"),
                    sender=f"agent{n}",
                )
            daemon.until(lambda: len(headings(hub)) == 31, timeout=60)
        finally:
            stop.set()
            editor.join()
    text = standup_text(hub)
    assert saved, "the editor never saved"
    assert all(mark in text for mark in saved), [mark for mark in saved if mark not in text]
    assert len(headings(hub)) == 31
    assert len(set(headings(hub))) == 31


def test_a_reply_that_fails_after_the_standup_write_never_files_the_entry_twice(hub: HubDir) -> None:
    """outbox/ unusable: the standup is written, the reply is not; fixed, the entry is there once."""
    body = entry("2026-12-01", "Claude", "15:00 UTC", tasks=("**[Pierre]** Review",))
    handoff(hub, "20261201t150000z-once", body)
    outbox = hub.root / "outbox"
    outbox.rmdir()
    outbox.write_text("not a folder\n")

    hub.run_once()
    assert standup_text(hub).count(body) == 1
    assert hub.lane("inbox") == ["20261201t150000z-once.md"]

    outbox.unlink()
    outbox.mkdir()
    hub.run_once()
    assert standup_text(hub).count(body) == 1
    assert hub.replies_to("20261201t150000z-once")[0]["type"] == "result"
    assert "the entry is in its log" in body_of(hub.reply("20261201t150000z-once", "result"))
    assert hub.archived() == ["20261201t150000z-once.md"]


def test_an_archive_that_fails_after_the_standup_write_never_files_the_entry_twice(hub: HubDir) -> None:
    """archive/ unusable: filed and answered once; restored, archived without a second entry."""
    body = entry("2026-12-01", "Claude", "15:00 UTC")
    handoff(hub, "20261201t150000z-arch", body)
    archive = hub.root / "archive"
    archive.rmdir()
    archive.write_text("not a folder\n")
    hub.run_once()
    first = hub.reply("20261201t150000z-arch", "result")
    archive.unlink()
    archive.mkdir()
    hub.run_once()

    assert standup_text(hub).count(body) == 1
    assert hub.reply("20261201t150000z-arch", "result") == first
    assert hub.archived() == ["20261201t150000z-arch.md"]


@pytest.mark.slow
def test_sigkill_during_a_stream_of_handoffs_files_each_entry_exactly_once(hub: HubDir) -> None:
    """60 handoffs and handshakes, SIGKILL three times at random: each entry once, one reply each."""
    seed = random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    idents = []
    for n in range(60):
        ident = f"20261201t{n:06d}z-kill"
        idents.append(ident)
        if n % 5 == 4:
            handshake(hub, ident, sender=f"seat{n}")
        else:
            handoff(
                hub,
                ident,
                entry("2026-12-01", f"Agent{n:02d}", f"{10 + n // 60}:{n % 60:02d} UTC"),
                sender=f"seat{n}",
            )
    outbox = hub.root / "outbox"

    def produced_at_least(target: int) -> bool:
        return len(os.listdir(outbox)) >= target

    kills = []
    for _ in range(3):
        with RunningDaemon(hub) as daemon:
            target = min(len(os.listdir(outbox)) + rng.randint(3, 15), len(idents) - 1)
            daemon.until(functools.partial(produced_at_least, target), timeout=40)
            kills.append(len(os.listdir(outbox)))
            daemon.kill9()
    hub.run_once(timeout=50)

    context = f"seed {seed}, outbox sizes at the kills {kills}"
    found = headings(hub)
    assert len(found) == 48, context
    assert len(set(found)) == 48, context
    assert len(hub.outbox()) == 60, context
    assert hub.archived() == sorted(f"{ident}.md" for ident in idents), context
    seats = [seat for seat, _ in standup.party(standup_text(hub))]
    assert sorted(seats) == sorted(f"seat{n}" for n in range(60) if n % 5 == 4), context


def test_a_standup_that_cannot_be_written_leaves_the_input_unanswered_for_the_next_run(hub: HubDir) -> None:
    """standups/ taken by a file: no reply, the input stays, an error is logged; fixed, filed once."""
    body = entry("2026-12-01", "Claude", "15:00 UTC")
    handoff(hub, "20261201t150000z-later", body)
    blocker = hub.root / "standups"
    blocker.write_text("not a folder\n")

    hub.run_once()

    assert hub.lane("inbox") == ["20261201t150000z-later.md"]
    assert hub.replies_to("20261201t150000z-later") == []
    assert hub.events("standup.failed", project="slopd")
    blocker.unlink()
    hub.run_once()
    assert standup_text(hub).count(body) == 1
    assert [reply["type"] for reply in hub.replies_to("20261201t150000z-later")] == ["result"]


def test_a_standup_that_never_stops_changing_is_not_replaced(hub: HubDir) -> None:
    """An edit before every replace: slopd gives up with an error, leaving the latest edit in place."""
    board_hub = Hub(hub.root)
    try:
        Board(board_hub).file_handoff("slopd", "claude", entry("2026-11-30", "Grok", "12:00 UTC"))
        path = hub.root / "standups" / "slopd.md"
        count = []

        def always_edit() -> None:
            count.append(1)
            path.write_text(path.read_text() + f"<!-- edit {len(count)} -->\n")

        board = Board(board_hub, before_replace=always_edit)
        with pytest.raises(OSError, match="kept changing"):
            board.file_handoff("slopd", "claude", entry("2026-12-01", "Claude", "13:00 UTC"))
    finally:
        board_hub.close()
    assert len(count) > 1
    assert path.read_text().endswith(f"<!-- edit {len(count)} -->\n")


def test_send_wait_exits_1_when_the_answer_is_a_refusal(hub: HubDir) -> None:
    """`send --wait`: a standup entry refused by lint gets a `result` marked `refused: standup`
    and exit 1 (and a word on stderr); a filed entry exit 0, unmarked; an `error` reply exit 1."""
    hub.write_config("settle = 0.05\n")

    def send(kind: str, body: str, *extra: str) -> tuple[int, dict[str, object], str]:
        done = hub.slopd(
            "send", "--hub", str(hub.root), "--type", kind, "--from", "claude", "--to", "watcher",
            *extra, "--wait", "20", "-", stdin=body,
        )  # fmt: skip
        _ident, _, reply = done.stdout.partition("\n")
        return done.returncode, front_matter(reply), done.stderr

    broken = entry("2026-12-01", "Claude", "10:00 UTC").split("\n### What's pending")[0]
    with hub.running():
        refused = send("handoff", broken, "--project", "slopd")
        filed = send("handoff", entry("2026-12-01", "Claude", "11:00 UTC"), "--project", "slopd")
        bad_project = send("handshake", "Hello.\n", "--project", "Not-A-Project")
        error = send("instigate", "Run this.\n")  # no executor configured: an error reply
    code, headers, said = refused
    assert (code, headers["type"], headers["refused"]) == (1, "result", "standup")
    assert "slopd send: refused (standup)" in said
    code, headers, said = filed
    assert (code, headers["type"], "refused" in headers, said) == (0, "result", False, "")
    code, headers, _said = bad_project
    assert (code, headers["type"], headers["refused"]) == (1, "ack", "standup")
    code, headers, _said = error
    assert (code, headers["type"]) == (1, "error")
