"""Crash safety, black-box (SPEC §7): real SIGKILL and SIGTERM on a real daemon, real broken lanes.

Execution is at most once: an execution cut short is answered "interrupted, not retried" and
never run again; every input ends with exactly one terminal reply and is archived exactly once.
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
import shutil
import signal
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HubDir, RunningDaemon, body_of, envelope_text, front_matter, toml_argv
from tests.polling import until

AGENT = r"""
import os, subprocess, sys, time
from pathlib import Path

def append(path, text):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)

def main():
    mode, args = sys.argv[1], sys.argv[2:]
    ident = os.environ["SLOP_ID"]
    data = sys.stdin.read()
    if mode == "run":  # run JOURNAL PIDDIR SECONDS: journal, pid file, then work (forever on HANG)
        journal, piddir, seconds = args
        append(journal, ident + "\n")
        name = "%s-%d" % (ident, os.getpid())  # one file per run: a re-run never hides a pid
        Path(piddir, name + ".part").write_text(str(os.getpid()))
        os.replace(os.path.join(piddir, name + ".part"), os.path.join(piddir, name + ".pid"))
        time.sleep(600 if "HANG" in data else float(seconds))  # the command's work, killed by the test
        sys.stdout.write("done " + ident + "\n")
    elif mode == "group":  # group JOURNAL PIDDIR: journal, a grandchild ignoring SIGTERM, hang
        journal, piddir = args
        append(journal, ident + "\n")
        code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
        child = subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        name = "%s-%d" % (ident, os.getpid())
        Path(piddir, name + ".part").write_text("%d %d" % (os.getpid(), child.pid))
        os.replace(os.path.join(piddir, name + ".part"), os.path.join(piddir, name + ".pid"))
        time.sleep(600)  # a command that hangs until it is killed
    else:
        sys.exit("unknown mode " + mode)

main()
"""

TERMINAL = ("result", "error")
INTERRUPTED = "interrupted, not retried"


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for a reaper counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


class Commands:
    """The executor set-up: a journal of every id run, and the pid files of every command."""

    def __init__(self, tmp_path: Path) -> None:
        self.script = tmp_path / "tools" / "agent.py"
        self.script.parent.mkdir()
        self.script.write_text(AGENT, encoding="utf-8")
        self.journal = tmp_path / "journal"
        self.piddir = tmp_path / "pids"
        self.piddir.mkdir()

    def argv(self, mode: str, *extra: str) -> list[str]:
        return [sys.executable, str(self.script), mode, str(self.journal), str(self.piddir), *extra]

    def runs(self) -> list[str]:
        return self.journal.read_text().split() if self.journal.exists() else []

    def pids(self, envelope_id: str) -> list[int]:
        """The pids recorded by runs for `envelope_id` (the command's, then its grandchild's)."""
        return [
            int(word)
            for path in sorted(self.piddir.glob(f"{envelope_id}-*.pid"))
            for word in path.read_text().split()
        ]

    def kill_leftovers(self) -> None:
        """Commands orphaned by a SIGKILLed daemon keep sleeping: end them, by their pid."""
        for path in self.piddir.glob("*.pid"):
            for pid in (int(word) for word in path.read_text().split()):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    if alive(pid):
                        os.kill(pid, signal.SIGKILL)


@pytest.fixture(name="commands")
def fixture_commands(tmp_path: Path) -> Iterator[Commands]:
    made = Commands(tmp_path)
    yield made
    made.kill_leftovers()


def ledger_rows(hub: HubDir) -> dict[str, dict[str, Any]]:
    with contextlib.closing(sqlite3.connect(hub.state / "ledger.sqlite3")) as db:
        db.row_factory = sqlite3.Row
        return {row["key"]: dict(row) for row in db.execute("SELECT * FROM inputs")}


def reply_types(hub: HubDir, envelope_id: str) -> list[str]:
    return sorted(headers["type"] for headers in hub.replies_to(envelope_id))


def snapshot(hub: HubDir) -> tuple[dict[str, bytes], list[str], list[str]]:
    """Every file under outbox/ (bytes), the archive and the inbox."""
    outbox = hub.root / "outbox"
    files = {str(p.relative_to(outbox)): p.read_bytes() for p in sorted(outbox.rglob("*")) if p.is_file()}
    return files, hub.archived(), hub.lane("inbox")


def instigate(hub: HubDir, envelope_id: str, body: str = "Do the work.\n") -> Path:
    return hub.drop(f"{envelope_id}.md", envelope_text(body, id=envelope_id, type="instigate"))


def handshake(hub: HubDir, envelope_id: str) -> Path:
    return hub.drop(f"{envelope_id}.md", envelope_text(id=envelope_id, type="handshake"))


def slopd_temps(hub: HubDir) -> list[str]:
    return [str(p.relative_to(hub.root)) for p in hub.root.rglob("*") if p.name.startswith(".slopd-tmp-")]


# -- kill -9 -----------------------------------------------------------------------------------


def test_kill_9_during_an_execution_is_answered_interrupted_and_never_rerun(
    hub: HubDir, commands: Commands
) -> None:
    """SIGKILL mid-execution: the restart answers "interrupted, not retried" and never runs it again."""
    hub.write_config(f"[executor]\ncommand = {toml_argv(commands.argv('run', '0'))}\ntimeout = 600\n")
    ident = "20260704t100000z-long-job"
    instigate(hub, ident, "HANG until killed.\n")
    with RunningDaemon(hub) as daemon:
        daemon.until(lambda: commands.runs() == [ident])
        daemon.kill9()

    hub.run_once()

    assert reply_types(hub, ident) == ["ack", "error"]
    error = hub.reply(ident, "error")
    assert INTERRUPTED in body_of(error)
    assert front_matter(error)["in_reply_to"] == ident
    assert commands.runs() == [ident]
    assert hub.archived() == [f"{ident}.md"]
    assert hub.lane("inbox") == []
    row = ledger_rows(hub)[ident]
    assert row["status"] == "done"
    assert row["archive"] is not None

    before = snapshot(hub)
    hub.run_once()
    assert snapshot(hub) == before
    assert commands.runs() == [ident]
    assert ledger_rows(hub)[ident] == row


def test_an_execution_cut_short_is_answered_at_start_even_when_outbox_is_gone(
    hub: HubDir, commands: Commands
) -> None:
    """SIGKILL mid-execution, then `outbox/` removed (a git checkout or a sync client dropped it):
    the restart makes the lane again and answers "interrupted, not retried" — what start-up
    recovers never keeps the daemon from starting (SPEC §7: missing lanes are made again)."""
    hub.write_config(f"[executor]\ncommand = {toml_argv(commands.argv('run', '0'))}\ntimeout = 600\n")
    ident = "20260704t100000z-cut-short"
    instigate(hub, ident, "HANG until killed.\n")
    with RunningDaemon(hub) as daemon:
        daemon.until(lambda: commands.runs() == [ident])
        daemon.kill9()
    shutil.rmtree(hub.root / "outbox")

    hub.run_once()

    assert reply_types(hub, ident) == ["error"]
    assert INTERRUPTED in body_of(hub.reply(ident, "error"))
    assert hub.archived() == [f"{ident}.md"]
    assert commands.runs() == [ident]
    assert ledger_rows(hub)[ident]["status"] == "done"


def test_kill_9_leaves_a_queued_execution_to_run_once_after_restart(hub: HubDir, commands: Commands) -> None:
    """max_parallel = 1 and SIGKILL: the running job is interrupted, the queued one runs once on restart."""
    hub.write_config(
        f"[executor]\ncommand = {toml_argv(commands.argv('run', '0'))}\ntimeout = 600\nmax_parallel = 1\n"
    )
    first, second = "20260704t100000z-first", "20260704t100100z-second"
    instigate(hub, first, "HANG until killed.\n")
    instigate(hub, second, "Quick job.\n")
    with RunningDaemon(hub) as daemon:
        daemon.until(lambda: commands.runs() == [first])
        daemon.until((hub.root / "outbox" / f"{second}.ack.md").exists)
        daemon.kill9()
    assert commands.runs() == [first]

    hub.run_once()

    assert INTERRUPTED in body_of(hub.reply(first, "error"))
    assert reply_types(hub, first) == ["ack", "error"]
    assert body_of(hub.reply(second, "result")) == f"done {second}\n"
    assert reply_types(hub, second) == ["ack", "result"]
    assert sorted(commands.runs()) == sorted([first, second])
    assert hub.archived() == sorted([f"{first}.md", f"{second}.md"])
    assert {row["status"] for row in ledger_rows(hub).values()} == {"done"}


# -- a lane that cannot be written -------------------------------------------------------------


def test_replies_written_but_archive_impossible_are_not_answered_twice(
    hub: HubDir, commands: Commands
) -> None:
    """archive/ unusable: inputs stay answered once; restored, they are archived, not answered again."""
    hub.write_config(f"[executor]\ncommand = {toml_argv(commands.argv('run', '0'))}\ntimeout = 60\n")
    hello, job = "20260704t100000z-hello", "20260704t100100z-job"
    handshake(hub, hello)
    instigate(hub, job)
    archive = hub.root / "archive"
    archive.rmdir()
    archive.write_text("not a directory\n")

    hub.run_once()

    assert hub.lane("inbox") == sorted([f"{hello}.md", f"{job}.md"])
    assert reply_types(hub, hello) == ["ack"]
    assert reply_types(hub, job) == ["ack", "result"]
    first = snapshot(hub)[0]
    hub.run_once()  # still broken: nothing new
    assert snapshot(hub)[0] == first
    assert hub.lane("inbox") == sorted([f"{hello}.md", f"{job}.md"])

    archive.unlink()
    archive.mkdir()
    hub.run_once()

    files, archived, inbox = snapshot(hub)
    assert files == first  # the same replies, byte for byte: same ids, not rewritten
    assert archived == sorted([f"{hello}.md", f"{job}.md"])
    assert inbox == []
    assert commands.runs() == [job]
    assert {row["status"] for row in ledger_rows(hub).values()} == {"done"}


def test_a_reply_that_cannot_be_written_leaves_the_input_for_the_next_run(
    hub: HubDir, commands: Commands
) -> None:
    """With outbox/ replaced by a file nothing is answered or archived and an error is logged; later, once."""
    hub.write_config(f"[executor]\ncommand = {toml_argv(commands.argv('run', '0'))}\ntimeout = 60\n")
    hello, job = "20260704t100000z-hello", "20260704t100100z-job"
    handshake(hub, hello)
    instigate(hub, job)
    outbox = hub.root / "outbox"
    outbox.rmdir()
    outbox.write_text("not a directory\n")

    hub.run_once()

    assert hub.lane("inbox") == sorted([f"{hello}.md", f"{job}.md"])
    assert hub.archived() == []
    assert outbox.read_text() == "not a directory\n"
    errors = [r for r in hub.log_records() if r.get("level") in ("error", "critical")]
    assert {r.get("file") for r in errors} >= {f"{hello}.md", f"{job}.md"}
    assert commands.runs() == []  # the ack could not be written, so nothing ran

    outbox.unlink()
    outbox.mkdir()
    hub.run_once()

    assert reply_types(hub, hello) == ["ack"]
    assert reply_types(hub, job) == ["ack", "result"]
    assert hub.archived() == sorted([f"{hello}.md", f"{job}.md"])
    assert hub.lane("inbox") == []
    assert commands.runs() == [job]
    before = snapshot(hub)
    hub.run_once()
    assert snapshot(hub) == before


# -- a burst with repeated SIGKILL -------------------------------------------------------------


def test_a_burst_survives_three_sigkills_with_exactly_one_answer_each(
    hub: HubDir, commands: Commands
) -> None:
    """200 handshakes + 20 instigates, SIGKILL three times: one terminal reply each, all archived once."""
    seed = random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    hub.write_config(
        f"[executor]\ncommand = {toml_argv(commands.argv('run', '0.3'))}\ntimeout = 60\nmax_parallel = 32\n"
    )
    handshakes = [f"burst-hello-{n:03d}" for n in range(200)]
    instigates = [f"burst-job-{n:02d}" for n in range(20)]
    order = list(handshakes)
    for n, ident in enumerate(instigates):
        order.insert(n * 11 + 5, ident)
    for ident in order:
        if ident in instigates:
            instigate(hub, ident)
        else:
            handshake(hub, ident)
    outbox = hub.root / "outbox"
    expected_replies = len(handshakes) + 2 * len(instigates)

    def produced() -> int:
        return len(os.listdir(outbox))

    def produced_at_least(target: int) -> bool:
        return produced() >= target

    kills = []
    for _ in range(3):
        with RunningDaemon(hub) as daemon:
            target = min(produced() + rng.randint(5, 60), expected_replies - 1)
            daemon.until(functools.partial(produced_at_least, target), timeout=40)
            kills.append(produced())
            daemon.kill9()
    hub.run_once(timeout=50)

    context = f"seed {seed}, outbox sizes at the kills {kills}"
    replies = hub.outbox()
    assert len(replies) == expected_replies, context
    by_input: dict[str, list[str]] = {}
    for text in replies.values():
        headers = front_matter(text)
        by_input.setdefault(headers["in_reply_to"], []).append(headers["type"])
    assert set(by_input) == set(order), context
    for ident in handshakes:
        assert by_input[ident] == ["ack"], (ident, context)
    journal = commands.runs()
    for ident in instigates:
        kinds = sorted(by_input[ident])
        assert kinds in (["ack", "result"], ["ack", "error"]), (ident, kinds, context)
        assert journal.count(ident) <= 1, (ident, context)
        if ident not in journal:
            assert kinds == ["ack", "error"], (ident, context)
        if kinds == ["ack", "error"]:
            assert INTERRUPTED in body_of(hub.reply(ident, "error")), (ident, context)
    assert set(journal) <= set(instigates)
    assert hub.archived() == sorted(f"{ident}.md" for ident in order), context
    assert hub.lane("inbox") == [], context
    assert slopd_temps(hub) == [], context
    rows = ledger_rows(hub)
    assert len(rows) == len(order), context
    assert {row["status"] for row in rows.values()} == {"done"}, context


# -- SIGTERM and the grace period --------------------------------------------------------------


def test_sigterm_past_the_grace_interrupts_the_execution_and_kills_its_group(
    hub: HubDir, commands: Commands
) -> None:
    """`--grace 1` then SIGTERM: exit 0, the execution gets "interrupted, not retried", its group is dead."""
    hub.write_config(f"[executor]\ncommand = {toml_argv(commands.argv('group'))}\ntimeout = 600\n")
    ident = "20260704t100000z-long-job"
    instigate(hub, ident)
    with RunningDaemon(hub, "--grace", "1") as daemon:
        daemon.until(lambda: len(commands.pids(ident)) == 2)
        command_pid, grandchild_pid = commands.pids(ident)

        assert daemon.stop(timeout=20) == 0

    assert reply_types(hub, ident) == ["ack", "error"]
    assert INTERRUPTED in body_of(hub.reply(ident, "error"))
    until(lambda: not alive(command_pid), timeout=10)
    until(lambda: not alive(grandchild_pid), timeout=10)
    assert hub.archived() == [f"{ident}.md"]
    assert ledger_rows(hub)[ident]["status"] == "done"
    before = snapshot(hub)
    hub.run_once()
    assert snapshot(hub) == before
    assert commands.runs() == [ident]


def test_sigterm_within_the_grace_lets_the_execution_finish(hub: HubDir, commands: Commands) -> None:
    """SIGTERM with `--grace 30` waits for a 1 s execution: it gets its `result`, not an interruption."""
    hub.write_config(f"[executor]\ncommand = {toml_argv(commands.argv('run', '1'))}\ntimeout = 600\n")
    ident = "20260704t100000z-short-job"
    instigate(hub, ident)
    with RunningDaemon(hub, "--grace", "30") as daemon:
        daemon.until(lambda: commands.pids(ident))

        assert daemon.stop(timeout=40) == 0

    assert reply_types(hub, ident) == ["ack", "result"]
    assert body_of(hub.reply(ident, "result")) == f"done {ident}\n"
    assert hub.archived() == [f"{ident}.md"]
