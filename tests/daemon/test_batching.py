"""Group commit: inputs handled in batches keep the order of effects of one at a time.

A batch writes each reply at once, then syncs the written directories, commits the ledger, links
every input into `archive/`, syncs each archive folder and only then unlinks the inputs.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from slopd.core.lifecycle import Status
from slopd.core.names import Kind
from slopd.core.outcome import Produced
from slopd.daemon.answering import BATCH
from slopd.daemon.batch import GroupCommit
from slopd.shell import log
from slopd.shell.archive import Archive, Move
from slopd.shell.lanes import Hub
from slopd.shell.ledger import Ledger
from slopd.shell.ledger.writes import BatchLost, Writes
from tests.conftest import HubDir, envelope_text, toml_argv


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
    cannot be named): its job must not start from that batch, or it would run twice — once from
    the rolled-back batch and once when the instigate is redone alone. It runs exactly once,
    after its own batch of one is committed; the input that cannot be answered stays."""
    runs = tmp_path / "runs.log"
    argv = ["sh", "-c", f"echo ran >> {runs}"]
    hub.write_config(f"[executor]\ncommand = {toml_argv(argv)}\ntimeout = 30\n")
    hub.drop("squatted.md", envelope_text(id="squatted"))
    later = time.time() - 2  # dropped after the handoff: handled after it in the same batch
    instigate = hub.drop("work.md", envelope_text(id="work-1", type="instigate"))
    os.utime(instigate, (later, later))
    (hub.root / "outbox" / "squatted.result.md").mkdir()

    hub.run_once()

    assert runs.read_text() == "ran\n", "the executor ran once, from its committed batch of one"
    assert hub.lane("inbox") == ["squatted.md"]
    assert {"work-1.ack.md", "work-1.result.md"} <= set(hub.outbox())
    assert ledger_rows(hub)["work-1"][0] == "done"
    events = [r["event"] for r in hub.log_records()]
    assert events.index("batch.failed") < events.index("execution.started")
    assert [r["inputs"] for r in hub.log_records() if r["event"] == "batch.failed"] == [2]

    (hub.root / "outbox" / "squatted.result.md").rmdir()
    hub.run_once()

    assert runs.read_text() == "ran\n", "never run again"
    assert hub.lane("inbox") == []
    assert {"squatted.result.md", "work-1.ack.md", "work-1.result.md"} <= set(hub.outbox())


# -- the group commit's batch, on a real hub and ledger ---------------------------------------


@dataclass
class Lanes:
    root: Path
    hub: Hub
    ledger: Ledger
    commits: GroupCommit

    def reader(self) -> Ledger:
        """A second connection: it sees only what was committed."""
        return Ledger(self.root / "ledger.sqlite3")


@pytest.fixture(name="lanes")
def fixture_lanes(tmp_path: Path) -> Lanes:
    for lane in ("inbox", "authorized", "outbox", "archive"):
        (tmp_path / lane).mkdir()
    hub = Hub(tmp_path)
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    return Lanes(tmp_path, hub, ledger, GroupCommit(hub, Archive(hub), ledger, log.get()))


NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_a_batch_names_its_replies_and_moves_its_inputs_only_at_commit(lanes: Lanes) -> None:
    """Inside a batch nothing is visible: the reply is staged, the move reserved, the ledger row
    uncommitted; `commit` names the reply, commits the row and only then moves the input."""
    (lanes.root / "inbox" / "a.md").write_bytes(b"a")
    batch = lanes.commits.open(stage=True)
    lanes.commits.write(batch, "outbox", "a.result.md", b"reply")
    insert(batch.ledger, "a")
    target = lanes.commits.target(batch, "a.md", NOW)
    with log.capture() as logs:
        lanes.commits.move(batch, Move("inbox", "a.md", target), log.get().bind(id="a"), "envelope.archived")
        assert not (lanes.root / "outbox" / "a.result.md").exists()
        assert (lanes.root / "inbox" / "a.md").exists()
        assert not (lanes.root / target).exists()
        assert lanes.reader().get("a") is None

        committed = lanes.commits.commit(batch)

    assert (committed.undone, committed.failed) == ([], [])
    assert (lanes.root / "outbox" / "a.result.md").read_bytes() == b"reply"
    assert lanes.reader().get("a") is not None
    assert not (lanes.root / "inbox" / "a.md").exists()
    assert (lanes.root / target).read_bytes() == b"a"
    assert os.stat(lanes.root / target).st_nlink == 1
    assert [(entry["event"], entry["archive"]) for entry in logs] == [("envelope.archived", target)]


def test_a_batch_without_staging_names_each_write_at_once(lanes: Lanes) -> None:
    """A batch of one gains nothing from waiting: its reply is durable and named at once."""
    batch = lanes.commits.open(stage=False)
    lanes.commits.write(batch, "outbox", "now.result.md", b"now")
    assert (lanes.root / "outbox" / "now.result.md").read_bytes() == b"now"
    lanes.commits.commit(batch)
    assert os.listdir(lanes.root / "outbox") == ["now.result.md"]


def test_reserved_targets_are_not_handed_out_twice_and_end_with_the_batch(lanes: Lanes) -> None:
    """Two inputs named alike in one batch get two archive names; the next batch starts afresh."""
    (lanes.root / "inbox" / "x.md").write_bytes(b"1")
    (lanes.root / "authorized" / "x.md").write_bytes(b"2")
    batch = lanes.commits.open(stage=True)
    first = lanes.commits.target(batch, "x.md", NOW)
    lanes.commits.move(batch, Move("inbox", "x.md", first), log.get(), "envelope.archived")
    second = lanes.commits.target(batch, "x.md", NOW)
    lanes.commits.move(batch, Move("authorized", "x.md", second), log.get(), "envelope.archived")
    assert (first, second) == ("archive/2026-11-30/x.md", "archive/2026-11-30/x-2.md")

    assert lanes.commits.commit(batch).failed == []
    assert (lanes.root / first).read_bytes() == b"1"
    assert (lanes.root / second).read_bytes() == b"2"
    assert lanes.commits.target(lanes.commits.open(stage=True), "x.md", NOW) == "archive/2026-11-30/x-3.md"


def test_a_move_that_cannot_complete_is_reported_and_keeps_its_input(lanes: Lanes) -> None:
    """A reserved name taken meanwhile fails that move alone; an input gone meanwhile is no error."""
    (lanes.root / "inbox" / "a.md").write_bytes(b"mine")
    (lanes.root / "inbox" / "gone.md").write_bytes(b"gone")
    batch = lanes.commits.open(stage=True)
    taken = lanes.commits.target(batch, "a.md", NOW)
    lanes.commits.move(batch, Move("inbox", "a.md", taken), log.get(), "envelope.archived")
    gone = lanes.commits.target(batch, "gone.md", NOW)
    lanes.commits.move(batch, Move("inbox", "gone.md", gone), log.get(), "envelope.archived")
    (lanes.root / taken).write_bytes(b"someone else's")
    (lanes.root / "inbox" / "gone.md").unlink()

    with log.capture() as logs:
        committed = lanes.commits.commit(batch)

    assert committed.undone == []
    assert committed.failed == [(("inbox", "a.md"), "inbox/a.md: archiving failed")]
    assert (lanes.root / "inbox" / "a.md").read_bytes() == b"mine", "never unlinked without its copy"
    assert (lanes.root / taken).read_bytes() == b"someone else's"
    assert [entry["event"] for entry in logs] == ["archive.failed", "envelope.vanished"]


def test_the_same_name_written_twice_in_a_batch_keeps_the_later_content(lanes: Lanes) -> None:
    """A file written again in a batch (the notes index) ends with its last content, no temp left."""
    batch = lanes.commits.open(stage=True)
    for version in range(20):
        lanes.commits.write(batch, "outbox", "INDEX.md", f"version {version}".encode())
    lanes.commits.commit(batch)
    assert (lanes.root / "outbox" / "INDEX.md").read_bytes() == b"version 19"
    assert os.listdir(lanes.root / "outbox") == ["INDEX.md"], "no temp file is left"


def test_a_batch_that_cannot_be_flushed_is_undone_whole(lanes: Lanes) -> None:
    """One reply that cannot be named fails the whole batch: no ledger row is committed, no input
    moves, no job starts, no temp file stays, and every input is handed back as undone."""
    (lanes.root / "outbox" / "taken.result.md").mkdir()  # renaming a file over a directory fails
    (lanes.root / "inbox" / "a.md").write_bytes(b"a")
    started: list[str] = []
    batch = lanes.commits.open(stage=True)
    batch.inputs.extend([(("inbox", "a.md"), Kind.INPUT), (("inbox", "taken.md"), Kind.INPUT)])
    insert(batch.ledger, "a")
    lanes.commits.write(batch, "outbox", "fine.result.md", b"fine")
    lanes.commits.write(batch, "outbox", "taken.result.md", b"lost")
    target = lanes.commits.target(batch, "a.md", NOW)
    lanes.commits.move(batch, Move("inbox", "a.md", target), log.get(), "envelope.archived")
    batch.jobs.append(lambda: started.append("job"))

    with log.capture() as logs:
        committed = lanes.commits.commit(batch)

    assert committed.undone == [("inbox", "a.md"), ("inbox", "taken.md")]
    assert [where for where, _ in committed.failed] == committed.undone
    assert [entry["event"] for entry in logs] == ["batch.failed"]
    assert started == []
    assert lanes.reader().get("a") is None
    assert (lanes.root / "inbox" / "a.md").exists()
    assert not list((lanes.root / "archive").glob("*/*"))
    assert (lanes.root / "outbox" / "taken.result.md").is_dir()
    assert not [name for name in os.listdir(lanes.root / "outbox") if name.startswith(".")]
    insert(lanes.ledger.writes(), "b")  # the ledger is usable again: the failed unit is closed


def test_jobs_start_after_the_commit_in_order(lanes: Lanes) -> None:
    """A batch's jobs start once its rows are committed (a job sees its `queued` row)."""
    seen: list[str | None] = []
    batch = lanes.commits.open(stage=True)
    insert(batch.ledger, "a")
    batch.ledger.advance("a", Status.QUEUED, now="t")

    def start() -> None:
        row = lanes.reader().get("a")
        seen.append(row.status if row else None)

    batch.jobs.append(start)
    lanes.commits.commit(batch)
    assert seen == ["queued"]


# -- the ledger's unit of writes -----------------------------------------------------------


def insert(writes: Writes, key: str) -> None:
    writes.insert(
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


def test_a_unit_of_writes_is_one_transaction_seen_by_others_only_when_committed(tmp_path: Path) -> None:
    """Every write of a unit becomes visible to another connection at its commit, not before."""
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    reader = Ledger(tmp_path / "ledger.sqlite3")
    writes = ledger.writes()
    insert(writes, "a")
    writes.add_reply(
        "a", reply_id="a.result", in_reply_to="a", type="result", reply_class="info", path="outbox/a", now="t"
    )
    writes.advance("a", Status.DONE, now="t", archive="archive/d/a.md")
    assert reader.get("a") is None, "nothing is visible before the commit"
    writes.commit()

    row = reader.get("a")
    assert row is not None
    assert row.status is Status.DONE
    assert row.replies == ("a.result",)
    assert row.archive == "archive/d/a.md"


def test_a_rolled_back_unit_leaves_no_trace(tmp_path: Path) -> None:
    """A rolled-back unit writes nothing, and the next unit commits normally."""
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    writes = ledger.writes()
    insert(writes, "a")
    writes.rollback()
    assert ledger.get("a") is None
    with ledger.writing() as again:
        insert(again, "b")
    assert Ledger(tmp_path / "ledger.sqlite3").get("b") is not None


def test_executing_and_finished_are_never_committed_inside_a_unit(tmp_path: Path) -> None:
    """`executing` and `finished` are committed on their own: refused while a unit is open."""
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    with ledger.writing() as writes:
        insert(writes, "a")
    writes = ledger.writes()
    with pytest.raises(RuntimeError, match="outside a batch"):
        ledger.mark_executing("a", now="t")
    with pytest.raises(RuntimeError, match="outside a batch"):
        ledger.mark_finished("a", Produced("done"), now="t")
    with pytest.raises(RuntimeError, match="outside a batch"):
        writes.advance("a", Status.EXECUTING, now="t")
    writes.commit()
    ledger.mark_executing("a", now="t")
    ledger.mark_finished("a", Produced("done"), now="t2")
    row = Ledger(tmp_path / "ledger.sqlite3").get("a")
    assert row is not None
    assert (row.status, row.outcome) == (Status.FINISHED, Produced("done"))


def test_a_lane_replaced_under_a_batch_never_gets_a_write_through_a_stale_fd(lanes: Lanes) -> None:
    """A reply staged before its lane was replaced is named in the directory it was written in,
    even after the hub reopened the lane (closing its old fd): the staged file holds its own fd."""
    batch = lanes.commits.open(stage=True)
    lanes.commits.write(batch, "outbox", "a.result.md", b"reply")
    os.rename(lanes.root / "outbox", lanes.root / "outbox-old")
    (lanes.root / "outbox").mkdir()
    assert lanes.hub.lstat("outbox", "anything") is None  # the hub reopens the new outbox/
    for _ in range(20):  # new fds that would reuse a closed one's number
        os.close(os.open(lanes.root, os.O_RDONLY))
    assert lanes.commits.commit(batch).failed == []
    assert (lanes.root / "outbox-old" / "a.result.md").read_bytes() == b"reply"
    assert os.listdir(lanes.root / "outbox") == []


def other_writer_can_write(path: Path) -> bool:
    """Whether a second connection gets SQLite's write lock at once (no busy wait)."""
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO acks (seat, reply, acked_at) VALUES ('s', 'r', 't')")
        other.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError as error:
        if "locked" not in str(error):
            raise
        return False
    finally:
        other.close()


def test_a_unit_holds_its_statements_until_the_commit_so_other_writers_are_not_locked_out(
    tmp_path: Path,
) -> None:
    """SQLite's write lock is taken at the commit, not at the unit's first write: the receipts
    of the HTTP intake never wait out a batch's reply fsyncs."""
    path = tmp_path / "ledger.sqlite3"
    ledger = Ledger(path)
    writes = ledger.writes()
    insert(writes, "a")
    writes.add_reply(
        "a", reply_id="a.ack", in_reply_to="a", type="ack", reply_class="info", path="outbox/a", now="t"
    )
    assert other_writer_can_write(path), "the unit's writes took the lock before its commit"
    assert ledger.get("b") is None, "a read of a key the unit never wrote"
    assert other_writer_can_write(path), "a read the unit's writes cannot change began the transaction"
    writes.commit()
    row = Ledger(path).get("a")
    assert row is not None
    assert row.replies == ("a.ack",)


def test_a_units_reads_see_its_own_writes(tmp_path: Path) -> None:
    """A read that would see what the unit holds begins the transaction then: the second file of
    one id in a batch finds the first's row, exactly as inside one open transaction."""
    path = tmp_path / "ledger.sqlite3"
    ledger, reader = Ledger(path), Ledger(path)
    writes = ledger.writes()
    insert(writes, "a")
    writes.advance("a", Status.QUEUED, now="t")
    row = ledger.get("a")
    assert row is not None
    assert row.status is Status.QUEUED
    assert reader.get("a") is None, "begun, not committed"
    assert not other_writer_can_write(path), "the transaction is open from that read on"
    writes.add_duplicate(id="a", lane="inbox", file="a-2.md", sha256="1" * 64, archive="archive/x", now="t")
    assert ledger.archive_paths("inbox", "a-2.md") == ["archive/x"]
    writes.commit()
    assert other_writer_can_write(path)
    assert reader.archive_paths("inbox", "a-2.md") == ["archive/x"]


def test_any_other_read_runs_what_the_unit_holds_first(tmp_path: Path) -> None:
    """Reads not keyed by an input (archive paths, unfinished rows, notes) see the unit's writes."""
    path = tmp_path / "ledger.sqlite3"
    ledger = Ledger(path)
    writes = ledger.writes()
    insert(writes, "a")
    assert [row.key for row in ledger.unfinished()] == ["a"]
    writes.rollback()
    assert ledger.unfinished() == []
    assert other_writer_can_write(path)


def test_a_held_write_that_fails_when_it_runs_fails_the_whole_unit(tmp_path: Path) -> None:
    """Held statements run at the first read that would see them; one that fails there makes the
    commit raise (the batch is undone), never commits the statements around it."""
    path = tmp_path / "ledger.sqlite3"
    ledger = Ledger(path)
    writes = ledger.writes()
    insert(writes, "a")
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:  # the unit's update now fails
        db.execute("CREATE TRIGGER refuse BEFORE UPDATE ON inputs BEGIN SELECT RAISE(ABORT, 'refused'); END")
    writes.advance("a", Status.QUEUED, now="t")
    insert(writes, "b")
    with pytest.raises(sqlite3.IntegrityError, match="refused"):
        ledger.get("a")
    with pytest.raises(BatchLost, match="refused"):
        writes.commit()
    writes.rollback()
    assert Ledger(path).get("a") is None
    assert Ledger(path).get("b") is None
    assert other_writer_can_write(path), "the write lock is let go"
