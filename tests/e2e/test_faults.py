"""Disk and permission faults under a running daemon (issue 6, point 5): real filesystems, real lanes.

(a) A full filesystem while replies are written: the hub on a tiny tmpfs, filled to the last
    page (when `mount -t tmpfs` is permitted; otherwise the fault is made at slopd's own write
    seam, an outbox/ that root cannot write: `chattr +i`, or outbox/ replaced by a file).
(b) A lane that becomes unreadable: inbox/ replaced by a regular file or by a symlink to a
    directory outside the hub, then restored.
(c) The archive unavailable mid-run: archive/ replaced by a regular file, then restored.
In each: the inputs stay, an error is logged, the daemon keeps running, nothing is half-written,
and once the fault clears every input is answered exactly once and archived.

(d) ENOSPC in the state dir (the SQLite ledger and the log, outside the hub) is out of scope here.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HubDir, RunningDaemon, envelope_text, front_matter, toml_argv

pytestmark = pytest.mark.slow

JOURNAL = r"""
import os, sys
ident = os.environ["SLOP_ID"]
sys.stdin.buffer.read()
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
os.write(fd, (ident + "\n").encode())
os.close(fd)
sys.stdout.write("done " + ident + "\n")
"""


# -- set-up and observation ---------------------------------------------------------------------


class Journal:
    """The executor: a script outside the hub that appends each id it runs to a journal file."""

    def __init__(self, tmp_path: Path) -> None:
        self.script = tmp_path / "tools" / "journal.py"
        self.script.parent.mkdir()
        self.script.write_text(JOURNAL)
        self.path = tmp_path / "journal"

    def configure(self, hub: HubDir) -> None:
        argv = [sys.executable, str(self.script), str(self.path)]
        hub.write_config(
            f"settle = 0.1\nrescan_interval = 0.5\n[executor]\ncommand = {toml_argv(argv)}\ntimeout = 30\n"
        )

    def runs(self) -> list[str]:
        return self.path.read_text().split() if self.path.exists() else []


@pytest.fixture(name="journal")
def fixture_journal(hub: HubDir, tmp_path: Path) -> Journal:
    made = Journal(tmp_path)
    made.configure(hub)
    return made


def errors_for(hub: HubDir, name: str) -> list[dict[str, Any]]:
    return [r for r in hub.log_records() if r.get("level") in ("error", "critical") and r.get("file") == name]


def failed_at_least(hub: HubDir, names: list[str], times: int) -> Callable[[], bool]:
    return lambda: all(len(errors_for(hub, name)) >= times for name in names)


def written(hub: HubDir) -> Counter[str]:
    """How many times each reply id was written (a reply written twice is answered twice)."""
    return Counter(record["reply"] for record in hub.events("reply.written"))


def outbox_bytes(hub: HubDir) -> dict[str, bytes]:
    """Every entry under outbox/, dot files included, by relative path."""
    outbox = hub.root / "outbox"
    return {str(p.relative_to(outbox)): p.read_bytes() for p in sorted(outbox.rglob("*")) if p.is_file()}


def temps(hub: HubDir) -> list[str]:
    """Dot files anywhere in the hub: slopd's `.slopd-tmp-*` or a writer's leftovers (the hub's
    own folder `.slopd/` aside, not what is left in it)."""
    own = hub.root / ".slopd"
    return sorted(str(path.relative_to(hub.root)) for path in hub.root.rglob(".*") if path != own)


def ledger_rows(hub: HubDir) -> dict[str, dict[str, Any]]:
    with contextlib.closing(sqlite3.connect(hub.state / "ledger.sqlite3")) as db:
        db.row_factory = sqlite3.Row
        return {row["key"]: dict(row) for row in db.execute("SELECT * FROM inputs")}


def expected_replies(inputs: dict[str, str]) -> set[str]:
    """Reply file names for {id: type}: ack, result, or (instigate) ack + result."""
    kinds = {"handshake": ["ack"], "note": ["ack"], "handoff": ["result"], "instigate": ["ack", "result"]}
    return {f"{ident}.{kind}.md" for ident, type_ in inputs.items() for kind in kinds[type_]}


def assert_answered_once(hub: HubDir, journal: Journal, inputs: dict[str, str]) -> None:
    """Each input: exactly its replies (written once each), archived, its ledger row done."""
    replies = hub.outbox()
    assert set(replies) == expected_replies(inputs)
    for name, text in replies.items():
        assert front_matter(text)["in_reply_to"] == name.split(".")[0]
    counts = written(hub)
    assert {reply: counts[reply] for reply in (name.removesuffix(".md") for name in replies)} == {
        name.removesuffix(".md"): 1 for name in replies
    }
    assert set(hub.archived()) >= {f"{ident}.md" for ident in inputs}
    assert hub.lane("inbox") == []
    assert journal.runs() == [ident for ident, type_ in inputs.items() if type_ == "instigate"]
    assert temps(hub) == []
    rows = ledger_rows(hub)
    for ident in inputs:
        assert rows[ident]["status"] == "done", rows[ident]
        assert (hub.root / rows[ident]["archive"]).is_file()


# -- (a) a full filesystem while writing replies ------------------------------------------------


@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[bool]:
    """Mount a tmpfs of `size` on `path` for the block; False when mounting is not permitted."""
    try:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path)],
            capture_output=True,
            check=False,
        )
    except FileNotFoundError:
        yield False
        return
    if mounted.returncode != 0:
        yield False
        return
    try:
        yield True
    finally:
        if subprocess.run(["umount", str(path)], capture_output=True, check=False).returncode != 0:
            subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


def fill(path: Path) -> None:
    """Write `path` until the filesystem has not one byte left (ENOSPC at every size)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        for chunk in (1 << 20, 1 << 16, 4096, 512, 1):
            data = b"\0" * chunk
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, data)
    finally:
        os.close(fd)
    probe = os.open(path.with_name("probe"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with pytest.raises(OSError, match="No space left on device"):
            os.write(probe, b"x")
    finally:
        os.close(probe)
        path.with_name("probe").unlink()


class Fault:
    """One way to make replies unwritable: `arm` before the inputs arrive, `clear` after."""

    describe = ""
    reason = ""

    def arm(self) -> None:
        raise NotImplementedError

    def clear(self) -> None:
        raise NotImplementedError


class FullDisk(Fault):
    describe = "a 1 MiB tmpfs mounted under the hub, filled to the last byte"
    reason = "No space left on device"

    def __init__(self, hub: HubDir) -> None:
        self.filler = hub.root / "filler"

    def arm(self) -> None:
        fill(self.filler)

    def clear(self) -> None:
        self.filler.unlink()


class ImmutableOutbox(Fault):
    describe = "outbox/ made immutable with chattr +i (root cannot write it either)"
    reason = "Operation not permitted"

    def __init__(self, hub: HubDir) -> None:
        self.outbox = hub.root / "outbox"

    def arm(self) -> None:
        subprocess.run(["chattr", "+i", str(self.outbox)], check=True, capture_output=True)

    def clear(self) -> None:
        subprocess.run(["chattr", "-i", str(self.outbox)], check=True, capture_output=True)


class OutboxIsAFile(Fault):
    describe = "outbox/ replaced by a regular file"
    reason = "not a directory"

    def __init__(self, hub: HubDir) -> None:
        self.outbox = hub.root / "outbox"

    def arm(self) -> None:
        self.outbox.rmdir()
        self.outbox.write_text("not a directory\n")

    def clear(self) -> None:
        self.outbox.unlink()
        self.outbox.mkdir()


def immutable_works(directory: Path) -> bool:
    """Whether `chattr +i` really stops root from creating a file in `directory` here."""
    probe = directory / "chattr-probe"
    probe.mkdir()
    try:
        if subprocess.run(["chattr", "+i", str(probe)], capture_output=True, check=False).returncode:
            return False
        try:
            (probe / "x").write_text("x")
        except PermissionError:
            return True
        (probe / "x").unlink()
        return False
    except FileNotFoundError:  # no chattr
        return False
    finally:
        subprocess.run(["chattr", "-i", str(probe)], capture_output=True, check=False)
        probe.rmdir()


def test_a_full_filesystem_keeps_inputs_until_space_returns_then_answers_once(
    hub: HubDir, journal: Journal, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Replies hit ENOSPC: inputs stay, errors logged, no partial file; space freed: answered once."""
    inputs = {
        "20260704t090000z-hello": "handshake",
        "20260704t090100z-note": "note",
        "20260704t090200z-question": "handoff",
        "20260704t090300z-job": "instigate",
    }
    data = {ident: envelope_text(f"Item {ident}.\n", id=ident, type=type_) for ident, type_ in inputs.items()}
    names = [f"{ident}.md" for ident in inputs]
    with contextlib.ExitStack() as stack:
        mounted = stack.enter_context(tmpfs(hub.root, "1m"))
        fault: Fault
        if mounted:
            assert hub.slopd("init", "--no-home", str(hub.root)).returncode == 0  # the lanes, on the tmpfs
            fault = FullDisk(hub)
            staging = hub.root / "staging"  # on the same tmpfs: moving an input in takes no space
            staging.mkdir()
            for ident, text in data.items():
                (staging / f"{ident}.md").write_text(text)
        elif immutable_works(tmp_path):
            fault = ImmutableOutbox(hub)
        else:
            fault = OutboxIsAFile(hub)
        with capsys.disabled():
            print(f"\nfault: {fault.describe}", flush=True)
        daemon = stack.enter_context(RunningDaemon(hub))  # stopped before the tmpfs is unmounted
        daemon.up()
        stack.callback(lambda: fault.clear() if isinstance(fault, ImmutableOutbox) else None)
        before = outbox_bytes(hub)
        fault.arm()
        for ident, text in data.items():
            if mounted:
                os.rename(hub.root / "staging" / f"{ident}.md", hub.root / "inbox" / f"{ident}.md")
            else:
                hub.drop(f"{ident}.md", text)

        daemon.until(failed_at_least(hub, names, 2))  # and again at the next scan

        daemon.check_alive()
        assert hub.lane("inbox") == sorted(names)
        assert hub.archived() == []
        if isinstance(fault, OutboxIsAFile):
            assert (hub.root / "outbox").read_text() == "not a directory\n"
        else:
            assert outbox_bytes(hub) == before == {}  # no reply, no partial reply, no temp file
        assert temps(hub) == []
        assert journal.runs() == []  # the instigate's ack could not be written, so nothing ran
        assert hub.events("reply.written") == []
        for name in names:
            assert any(fault.reason in str(r.get("exception", "")) for r in errors_for(hub, name)), name

        fault.clear()
        daemon.until(lambda: set(hub.outbox()) == expected_replies(inputs) and hub.lane("inbox") == [])

        assert_answered_once(hub, journal, inputs)
        assert "20260704t090100z-note" in (hub.root / "notes" / "INDEX.md").read_text()
        assert daemon.stop() == 0


# -- (b) a lane that becomes unreadable ---------------------------------------------------------


@pytest.mark.parametrize("replacement", ["regular-file", "symlink"])
def test_an_unreadable_inbox_is_logged_left_alone_and_caught_up_when_restored(
    hub: HubDir, journal: Journal, tmp_path: Path, replacement: str
) -> None:
    """inbox/ replaced by a file or a symlink: error logged, daemon up, nothing read; restored: caught up."""
    with RunningDaemon(hub) as daemon:
        daemon.up()
        first = "20260704t090000z-before"
        hub.drop(f"{first}.md", envelope_text(id=first, type="handshake"))
        daemon.until((hub.root / "outbox" / f"{first}.ack.md").exists)

        inbox, away = hub.root / "inbox", tmp_path / "inbox-away"
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        os.rename(inbox, away)  # the real lane, moved out of the hub (a sync client, a mistake)
        if replacement == "symlink":
            os.symlink(elsewhere, inbox)
        else:
            inbox.write_text("not a directory\n")
        outside = "20260704t090100z-outside"
        if replacement == "symlink":  # an agent writing to inbox/ now writes outside the hub
            hub.drop(f"{outside}.md", envelope_text(id=outside, type="instigate"))
        unreadable = len(hub.events("lane.unreadable"))

        daemon.until(lambda: len(hub.events("lane.unreadable")) >= unreadable + 2)

        found = hub.events("lane.unreadable")[-1]
        assert (found["level"], found["lane"]) == ("error", "inbox")
        # Inputs that land in the lane's real directory while it is away wait for its return.
        waiting = {"20260704t090200z-hello": "handshake", "20260704t090300z-job": "instigate"}
        for ident, type_ in waiting.items():
            (away / f".{ident}.tmp").write_text(envelope_text(id=ident, type=type_))
            os.rename(away / f".{ident}.tmp", away / f"{ident}.md")
        seen = len(hub.events("lane.unreadable"))
        daemon.until(lambda: len(hub.events("lane.unreadable")) >= seen + 2)

        assert sorted(os.listdir(away)) == sorted(f"{ident}.md" for ident in waiting)
        assert set(hub.outbox()) == {f"{first}.ack.md"}
        assert journal.runs() == []
        assert os.listdir(elsewhere) == ([f"{outside}.md"] if replacement == "symlink" else [])

        inbox.unlink()
        os.rename(away, inbox)
        daemon.until(lambda: set(hub.outbox()) == expected_replies({first: "handshake", **waiting}))
        daemon.until(lambda: hub.lane("inbox") == [])

        assert_answered_once(hub, journal, {first: "handshake", **waiting})
        assert hub.replies_to(outside) == []  # nothing outside the hub was read, moved or run
        assert os.listdir(elsewhere) == ([f"{outside}.md"] if replacement == "symlink" else [])
        assert outside not in ledger_rows(hub)
        assert daemon.stop() == 0


# -- (c) the archive unavailable mid-run --------------------------------------------------------


def test_an_archive_lost_mid_run_gets_replies_once_and_the_inputs_archived_when_back(
    hub: HubDir, journal: Journal, tmp_path: Path
) -> None:
    """archive/ replaced by a file mid-run: replies written once, inputs kept; restored: archived."""
    with RunningDaemon(hub) as daemon:
        daemon.up()
        first = "20260704t090000z-before"
        hub.drop(f"{first}.md", envelope_text(id=first, type="handshake"))
        daemon.until(lambda: hub.archived() == [f"{first}.md"])

        archive, away = hub.root / "archive", tmp_path / "archive-away"
        os.rename(archive, away)
        archive.write_text("not a directory\n")
        inputs = {
            "20260704t090100z-hello": "handshake",
            "20260704t090200z-question": "handoff",
            "20260704t090300z-job": "instigate",
        }
        names = [f"{ident}.md" for ident in inputs]
        for ident, type_ in inputs.items():
            hub.drop(f"{ident}.md", envelope_text(f"Item {ident}.\n", id=ident, type=type_))
        everything = {first: "handshake", **inputs}

        daemon.until(lambda: set(hub.outbox()) == expected_replies(everything))
        daemon.until(failed_at_least(hub, names, 2))
        replies = outbox_bytes(hub)
        retried = {name: len(errors_for(hub, name)) for name in names}
        daemon.until(lambda: all(len(errors_for(hub, name)) >= retried[name] + 2 for name in names))

        assert outbox_bytes(hub) == replies  # retried, but no reply written a second time
        assert set(written(hub).values()) == {1}
        assert hub.lane("inbox") == sorted(names)
        assert archive.read_text() == "not a directory\n"
        assert journal.runs() == ["20260704t090300z-job"]

        archive.unlink()
        os.rename(away, archive)
        daemon.until(lambda: hub.lane("inbox") == [])

        assert outbox_bytes(hub) == replies
        assert sorted(hub.archived()) == sorted(f"{ident}.md" for ident in everything)
        assert_answered_once(hub, journal, everything)
        assert daemon.stop() == 0
