"""Group commit: inputs handled in batches keep the order of effects of one at a time.

A batch writes each reply at once, then syncs the written directories, commits the ledger, links
every input into `archive/`, syncs each archive folder and only then unlinks the inputs.
"""

from __future__ import annotations

import os
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from slopd.daemon import BATCH
from slopd.hub import Hub
from slopd.ledger import Ledger

from .conftest import HubDir, envelope_text


def ledger_rows(hub: HubDir) -> dict[str, tuple[str, str | None]]:
    with sqlite3.connect(hub.state / "ledger.sqlite3") as db:
        return {
            key: (status, archive)
            for key, status, archive in db.execute("SELECT key, status, archive FROM inputs")
        }


def test_a_backlog_of_several_batches_is_answered_once_and_moved_after_its_reply(hub: HubDir) -> None:
    count = 2 * BATCH + 30
    ids = [f"batch-{index:04d}" for index in range(count)]
    for envelope_id in ids:
        hub.drop(f"{envelope_id}.md", envelope_text(id=envelope_id))

    hub.run_once()

    assert hub.lane("inbox") == []
    assert sorted(hub.outbox()) == sorted(f"{envelope_id}.result.md" for envelope_id in ids)
    assert hub.archived() == sorted(f"{envelope_id}.md" for envelope_id in ids)
    rows = ledger_rows(hub)
    assert set(rows) == set(ids)
    for status, archive in rows.values():
        assert status == "done"
        assert archive is not None
        assert (hub.root / archive).is_file()
    records = hub.log_records()
    written = {r["id"]: n for n, r in enumerate(records) if r["event"] == "reply.written"}
    archived = {r["id"]: n for n, r in enumerate(records) if r["event"] == "envelope.archived"}
    assert set(written) == set(archived) == set(ids)
    assert all(written[envelope_id] < archived[envelope_id] for envelope_id in ids)


def test_one_name_in_both_lanes_in_one_batch_gets_two_archive_names(hub: HubDir) -> None:
    hub.drop("same.md", envelope_text(id="same-inbox"))
    hub.drop("same.md", "not an envelope at all\n", lane="authorized")

    hub.run_once()

    assert hub.lane("inbox") == []
    assert hub.lane("authorized") == []
    assert hub.archived() == ["same-2.md", "same.md"]
    day = next((hub.root / "archive").iterdir())
    contents = {path.read_bytes() for path in day.iterdir()}
    assert b"not an envelope at all\n" in contents
    assert any(b"id: same-inbox" in data for data in contents)
    assert not [r for r in hub.log_records() if r["event"] in ("archive.failed", "envelope.failed")]


def test_an_archive_committed_but_never_linked_is_finished_not_called_a_duplicate(hub: HubDir) -> None:
    """A crash between the batch's ledger commit and its links: the input is still in its lane
    and the ledger already names its archive path. The next run moves it there, quietly."""
    hub.drop("cut.md", envelope_text(id="cut-short"))
    hub.run_once()
    ((status, archive),) = ledger_rows(hub).values()
    assert status == "done"
    assert archive is not None
    os.rename(hub.root / archive, hub.root / "inbox" / "cut.md")  # as if the link never happened
    reply = hub.root / "outbox" / "cut-short.result.md"
    before = reply.stat().st_mtime_ns

    hub.run_once()

    assert hub.lane("inbox") == []
    assert (hub.root / archive).is_file()
    assert reply.stat().st_mtime_ns == before, "the reply is not written again"
    events = [r for r in hub.log_records() if r.get("id") == "cut-short"]
    assert [r["event"] for r in events].count("envelope.archived") == 2
    assert events[-1]["event"] == "envelope.archived"
    assert events[-1].get("resumed") is True
    assert not [r for r in events if r["event"] == "envelope.duplicate"]
    with sqlite3.connect(hub.state / "ledger.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM duplicates").fetchone()[0] == 0


def test_one_input_that_cannot_be_answered_does_not_hold_back_its_batch(hub: HubDir) -> None:
    """A directory squats on one reply's name, so that reply's rename fails and with it the
    batch's commit; the batch is redone one input at a time and only that input is left."""
    ids = [f"neighbour-{index}" for index in range(5)]
    for envelope_id in [*ids, "squatted"]:
        hub.drop(f"{envelope_id}.md", envelope_text(id=envelope_id))
    (hub.root / "outbox" / "squatted.result.md").mkdir()

    hub.run_once()

    assert hub.lane("inbox") == ["squatted.md"]
    assert hub.archived() == sorted(f"{envelope_id}.md" for envelope_id in ids)
    assert sorted(hub.outbox()) == sorted(f"{envelope_id}.result.md" for envelope_id in ids)
    records = hub.log_records()
    assert [r["inputs"] for r in records if r["event"] == "batch.failed"] == [6]
    (alone,) = [r for r in records if r["event"] == "envelope.failed"]  # redone alone: fails alone
    assert alone["file"] == "squatted.md"
    rows = ledger_rows(hub)
    assert rows["squatted"] == ("received", None), "seen, never answered nor archived: resumed next time"
    assert all(rows[envelope_id][0] == "done" for envelope_id in ids)
    assert not [p for p in (hub.root / "outbox").iterdir() if p.name.startswith(".slopd-tmp-")]


def test_a_job_never_starts_when_its_batch_cannot_be_committed(hub: HubDir, tmp_path: Path) -> None:
    """The instigate's `received` row is in a batch whose commit fails (another input's reply
    cannot be named): the executor must not run from a row that was rolled back, or it could
    run twice. Once the obstacle is gone, it runs exactly once."""
    runs = tmp_path / "runs.log"
    hub.write_config(f'[executor]\ncommand = ["sh", "-c", "echo ran >> {runs}"]\ntimeout = 30\n')
    hub.drop("squatted.md", envelope_text(id="squatted"))
    later = time.time() - 2  # dropped after the handoff: handled after it in the same batch
    instigate = hub.drop("work.md", envelope_text(id="work-1", type="instigate"))
    os.utime(instigate, (later, later))
    (hub.root / "outbox" / "squatted.result.md").mkdir()

    hub.run_once()

    assert not runs.exists(), "the executor ran from an uncommitted batch"
    assert sorted(hub.lane("inbox")) == ["squatted.md", "work.md"]
    assert "work-1" not in ledger_rows(hub)
    assert [r for r in hub.log_records() if r["event"] == "envelope.failed" and r["file"] == "work.md"]

    (hub.root / "outbox" / "squatted.result.md").rmdir()
    hub.run_once()

    assert runs.read_text() == "ran\n"
    assert hub.lane("inbox") == []
    assert {"squatted.result.md", "work-1.ack.md", "work-1.result.md"} <= set(hub.outbox())


# -- the hub's deferred moves ---------------------------------------------------------------


@pytest.fixture(name="lanes")
def fixture_lanes(tmp_path: Path) -> Path:
    for lane in ("inbox", "authorized", "outbox", "archive"):
        (tmp_path / lane).mkdir()
    return tmp_path


NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_a_deferred_archive_leaves_the_input_in_its_lane_until_completed(lanes: Path) -> None:
    (lanes / "inbox" / "a.md").write_bytes(b"a")
    hub = Hub(lanes)
    hub.defer()
    hub.write("outbox", "a.result.md", b"reply")
    target = hub.archive_target("a.md", NOW)
    assert hub.archive("inbox", "a.md", target)

    assert (lanes / "inbox" / "a.md").exists()
    assert not (lanes / target).exists()
    hub.flush()
    assert (lanes / "outbox" / "a.result.md").read_bytes() == b"reply", "written once flushed"
    assert (lanes / "inbox" / "a.md").exists(), "still in its lane until the ledger is committed"
    moves = hub.complete_archives()

    assert [(m.lane, m.name, m.target, m.error, m.moved) for m in moves] == [
        ("inbox", "a.md", target, None, True)
    ]
    assert not (lanes / "inbox" / "a.md").exists()
    assert (lanes / target).read_bytes() == b"a"
    assert os.stat(lanes / target).st_nlink == 1


def test_a_batch_without_staging_names_each_write_at_once(lanes: Path) -> None:
    """A batch of one gains nothing from waiting: its reply is durable and named at once."""
    hub = Hub(lanes)
    hub.defer(stage=False)
    hub.write("outbox", "now.result.md", b"now")
    assert (lanes / "outbox" / "now.result.md").read_bytes() == b"now"
    hub.flush()
    assert hub.complete_archives() == []
    assert os.listdir(lanes / "outbox") == ["now.result.md"]


def test_reserved_targets_are_not_handed_out_twice_and_end_with_the_batch(lanes: Path) -> None:
    (lanes / "inbox" / "x.md").write_bytes(b"1")
    (lanes / "authorized" / "x.md").write_bytes(b"2")
    hub = Hub(lanes)
    hub.defer()
    first = hub.archive_target("x.md", NOW)
    hub.archive("inbox", "x.md", first)
    second = hub.archive_target("x.md", NOW)
    hub.archive("authorized", "x.md", second)
    assert (first, second) == ("archive/2026-11-30/x.md", "archive/2026-11-30/x-2.md")

    hub.flush()
    assert all(move.error is None for move in hub.complete_archives())
    assert (lanes / first).read_bytes() == b"1"
    assert (lanes / second).read_bytes() == b"2"
    assert hub.archive_target("x.md", NOW) == "archive/2026-11-30/x-3.md"


def test_a_move_that_cannot_complete_is_reported_and_keeps_its_input(lanes: Path) -> None:
    (lanes / "inbox" / "a.md").write_bytes(b"mine")
    (lanes / "inbox" / "gone.md").write_bytes(b"gone")
    hub = Hub(lanes)
    hub.defer()
    taken = hub.archive_target("a.md", NOW)
    hub.archive("inbox", "a.md", taken)
    hub.archive("inbox", "gone.md", hub.archive_target("gone.md", NOW))
    (lanes / taken).write_bytes(b"someone else's")  # the reserved name is taken meanwhile
    (lanes / "inbox" / "gone.md").unlink()

    hub.flush()
    failed, vanished = hub.complete_archives()

    assert isinstance(failed.error, FileExistsError)
    assert (lanes / "inbox" / "a.md").read_bytes() == b"mine", "never unlinked without its copy"
    assert (lanes / taken).read_bytes() == b"someone else's"
    assert vanished.error is None
    assert not vanished.moved


def test_the_same_name_written_twice_in_a_batch_keeps_the_later_content(lanes: Path) -> None:
    hub = Hub(lanes)
    hub.defer()
    for version in range(20):
        hub.write("outbox", "INDEX.md", f"version {version}".encode())
    hub.flush()
    hub.complete_archives()
    assert (lanes / "outbox" / "INDEX.md").read_bytes() == b"version 19"
    assert os.listdir(lanes / "outbox") == ["INDEX.md"], "no temp file is left"


def test_a_write_that_fails_on_its_sync_thread_fails_the_flush_and_leaves_no_temp(lanes: Path) -> None:
    (lanes / "outbox" / "taken.result.md").mkdir()  # renaming a file over a directory fails
    hub = Hub(lanes)
    hub.defer()
    hub.write("outbox", "fine.result.md", b"fine")
    hub.write("outbox", "taken.result.md", b"lost")
    with pytest.raises(IsADirectoryError):
        hub.flush()
    assert sorted(os.listdir(lanes / "outbox")) == ["fine.result.md", "taken.result.md"]
    assert (lanes / "outbox" / "taken.result.md").is_dir()
    assert hub.drop_deferred() == []


def test_a_dropped_batch_moves_nothing(lanes: Path) -> None:
    (lanes / "inbox" / "a.md").write_bytes(b"a")
    hub = Hub(lanes)
    hub.defer()
    hub.archive("inbox", "a.md", hub.archive_target("a.md", NOW))
    assert [move.name for move in hub.drop_deferred()] == ["a.md"]
    assert (lanes / "inbox" / "a.md").exists()
    assert not list((lanes / "archive").glob("*/*"))
    assert hub.archive_target("a.md", NOW) == "archive/2026-11-30/a.md"


# -- the ledger's batch transaction ---------------------------------------------------------


def insert(ledger: Ledger, key: str) -> None:
    ledger.insert(
        key=key,
        id=key,
        lane="inbox",
        file=f"{key}.md",
        sha256="0" * 64,
        type="handoff",
        sender="claude",
        mode="discuss",
        decision="discuss",
        now="2026-11-30T12:00:00Z",
    )


def test_a_batch_is_one_transaction_seen_by_others_only_when_committed(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    reader = Ledger(tmp_path / "ledger.sqlite3")
    ledger.begin_batch()
    insert(ledger, "a")
    ledger.add_reply(
        "a", reply_id="a.result", in_reply_to="a", type="result", reply_class="info", path="outbox/a", now="t"
    )
    ledger.advance("a", "done", now="t", archive="archive/d/a.md")
    assert reader.get("a") is None, "nothing is visible before the commit"
    ledger.commit_batch()

    row = reader.get("a")
    assert row is not None
    assert row.status == "done"
    assert row.replies == ("a.result",)
    assert row.archive == "archive/d/a.md"


def test_a_rolled_back_batch_leaves_no_trace(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    ledger.begin_batch()
    insert(ledger, "a")
    ledger.rollback_batch()
    assert ledger.get("a") is None
    insert(ledger, "b")  # outside a batch: committed at once
    assert Ledger(tmp_path / "ledger.sqlite3").get("b") is not None


def test_executing_is_never_committed_inside_a_batch(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    insert(ledger, "a")
    ledger.begin_batch()
    with pytest.raises(RuntimeError, match="outside a batch"):
        ledger.advance("a", "executing", now="t")
    ledger.commit_batch()
    ledger.advance("a", "executing", now="t")
    row = Ledger(tmp_path / "ledger.sqlite3").get("a")
    assert row is not None
    assert row.status == "executing"
