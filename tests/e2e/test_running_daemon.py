"""The daemon running as a long-lived service, black-box: the watcher, settling, held orders,
lifecycle and signals, status/tail and notification coalescing (SPEC §6, §7, §8).

Daemons run in the background on a real hub (`HubDir.running`) and are always stopped on the
way out (SIGTERM, or the signal a test is about). Behaviour is made visible by configuration,
never by timing: a huge `settle` or `rescan_interval` turns "took the fast path" into "was
answered at all", and "nothing happened yet" is checked once a handshake dropped after it has
been answered.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from slopd import app
from slopd.daemon.loop import Daemon
from tests.conftest import HubDir, RunningDaemon, body_of, envelope_text, front_matter, toml_argv
from tests.polling import DeadlineError, until

EVENT_DEADLINE = 10.0  # well under the 30 s default rescan: an answer by then came from an event
FAST = "rescan_interval = 0.2\nsettle = 0.1\n"


# -- helpers ---------------------------------------------------------------------------------


def handshake(hub: HubDir, envelope_id: str, lane: str = "inbox", **fields: Any) -> Path:
    fields.setdefault("to", "watcher")
    text = envelope_text("Hello.\n", id=envelope_id, type="handshake", **fields)
    return hub.drop(f"{envelope_id}.md", text, lane=lane)


def rename_in(hub: HubDir, envelope_id: str, age: float = 0.0) -> Path:
    """Drop a handshake as an agent does, write then rename, its mtime `age` seconds old."""
    temp = hub.root / "inbox" / f".{envelope_id}.md.tmp"
    temp.write_text(envelope_text("Hello.\n", id=envelope_id, type="handshake"), encoding="utf-8")
    if age:
        old = time.time() - age
        os.utime(temp, (old, old))
    final = hub.root / "inbox" / f"{envelope_id}.md"
    temp.rename(final)
    return final


def deliver(hub: HubDir, envelope_id: str) -> Path:
    """Deliver a handshake as Syncthing does: written under its temp name, renamed at once."""
    temp = hub.root / "inbox" / f".syncthing.{envelope_id}.md.tmp"
    temp.write_text(envelope_text("Hello.\n", id=envelope_id, type="handshake"), encoding="utf-8")
    final = hub.root / "inbox" / f"{envelope_id}.md"
    temp.rename(final)
    return final


def acked(hub: HubDir, envelope_id: str) -> bool:
    return (hub.root / "outbox" / f"{envelope_id}.ack.md").is_file()


def answered_and_archived(hub: HubDir, envelope_id: str) -> bool:
    """Its ack is written and the handshake itself archived: the daemon is done with it."""
    return acked(hub, envelope_id) and f"{envelope_id}.md" in hub.archived()


def status_json(hub: HubDir) -> dict[str, Any]:
    result = hub.slopd("status", "--hub", str(hub.root), "--state", str(hub.state), "--json")
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def status_text(hub: HubDir) -> str:
    result = hub.slopd("status", "--hub", str(hub.root), "--state", str(hub.state))
    assert result.returncode == 0, result.stderr
    return result.stdout


def write_script(tmp_path: Path, name: str, code: str) -> Path:
    path = tmp_path / "tools" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(code, encoding="utf-8")
    return path


@contextlib.contextmanager
def in_process(hub: HubDir, config_text: str) -> Iterator[Daemon]:
    """A real `Daemon` built by the composition root, as `slopd run` builds it, running `run()`
    in a thread of this process."""
    config = hub.write_config(config_text)
    stopping = threading.Event()
    with app.start(hub.root, config_path=config, state=hub.state, log_stream=None) as opened:
        daemon = opened.daemon()
        thread = threading.Thread(target=daemon.run, kwargs={"stop": stopping, "grace": 5.0}, daemon=True)
        thread.start()
        try:
            until(lambda: hub.events("watcher.started"))
            yield daemon
        finally:
            stopping.set()
            daemon.wakeup.set()
            thread.join(timeout=30)
    assert not thread.is_alive(), "Daemon.run did not return after stop"


def kill_observer(daemon: Daemon) -> None:
    """Stop the watcher's observer under the daemon, as if its thread had died (events stop)."""
    watcher = daemon.arrivals.watcher
    assert watcher is not None
    watcher.stop()


# -- watching --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["native", "polling"])
def test_a_renamed_handshake_is_answered_by_the_event_path(hub: HubDir, mode: str) -> None:
    """With the 30 s default rescan, a handshake renamed into inbox/ is acked within 10 s."""
    extra = ("--polling",) if mode == "polling" else ()
    with hub.running(*extra):
        # An answer proves the start-up scan is over: the next file can only come by an event.
        handshake(hub, "20260704t080000z-first")
        until(lambda: acked(hub, "20260704t080000z-first"), timeout=EVENT_DEADLINE)
        handshake(hub, "20260704t080001z-second")
        until(lambda: acked(hub, "20260704t080001z-second"), timeout=EVENT_DEADLINE)
    assert hub.lane("inbox") == []
    assert hub.archived() == ["20260704t080000z-first.md", "20260704t080001z-second.md"]
    assert hub.events("watcher.started")[0]["polling"] is (mode == "polling")


def test_a_renamed_in_file_does_not_pay_the_settle_wait(hub: HubDir) -> None:
    """`settle = 60`: a handshake written then renamed into inbox/ is complete, so it is acked within 10 s."""
    hub.write_config("settle = 60\nrescan_interval = 300\n")
    ident = "20260704t080100z-renamed"
    with hub.running():
        rename_in(hub, ident)  # how an agent drops: write, then rename
        until(lambda: acked(hub, ident), timeout=EVENT_DEADLINE)
    assert hub.lane("inbox") == []


def held_until_settle(hub: HubDir, ident: str, drop: Callable[[], object]) -> None:
    """With `settle = 60`, what `drop` puts in is still unanswered once a handshake renamed in
    after it, just written, is answered at once (by then the daemon has seen both); a run with
    `settle = 1` answers it."""
    later = f"{ident}-later"
    hub.write_config("settle = 60\nrescan_interval = 300\n")
    with hub.running():
        drop()
        rename_in(hub, later)
        # Archived is linked, then unlinked from the lane: wait for both halves of the move.
        until(
            lambda: answered_and_archived(hub, later) and f"{later}.md" not in hub.lane("inbox"),
            timeout=EVENT_DEADLINE,
        )
        assert not acked(hub, ident)
        assert hub.lane("inbox") == [f"{ident}.md"]
    hub.write_config("settle = 1\nrescan_interval = 300\n")
    with hub.running():
        until(lambda: acked(hub, ident), timeout=EVENT_DEADLINE)


def test_a_file_delivered_long_after_its_last_write_waits_until_its_mtime_is_settle_old(hub: HubDir) -> None:
    """A file renamed in with a 1 s old mtime (a sync delivery: Syncthing keeps the source's
    mtime) waits until that mtime is `settle` old: a remote writer may still be writing it."""
    ident = "20260704t080150z-synced"
    held_until_settle(hub, ident, lambda: rename_in(hub, ident, age=1))


def test_a_file_a_sync_client_renames_in_just_after_writing_it_still_waits_for_settle(hub: HubDir) -> None:
    """Renamed in from `.syncthing.NAME.tmp` within a moment of its last write, it is a remote
    file that may be half-written (a fast delivery of an early version): it waits until its
    mtime is `settle` old, while an agent's drop renamed in after it is answered at once."""
    ident = "20260704t080155z-delivered"
    held_until_settle(hub, ident, lambda: deliver(hub, ident))


def test_a_file_written_in_place_waits_for_settle(hub: HubDir) -> None:
    """`settle = 60`: a file written in place is still unread once a handshake renamed in after it
    is answered; a run with `settle = 1` reads it."""
    hub.write_config("settle = 60\nrescan_interval = 300\n")
    ident, later = "20260704t080200z-in-place", "20260704t080201z-later"
    path = hub.root / "inbox" / f"{ident}.md"
    with hub.running():
        with path.open("w", encoding="utf-8") as writer:  # open, write, close in the lane itself
            writer.write(envelope_text("Hello.\n", id=ident, type="handshake"))
        rename_in(hub, later)  # answered at once: by then the daemon has seen the file written in place
        # Archived is linked, then unlinked from the lane: wait for both halves of the move.
        until(
            lambda: answered_and_archived(hub, later) and len(hub.lane("inbox")) == 1, timeout=EVENT_DEADLINE
        )
        assert hub.lane("inbox") == [f"{ident}.md"]
        assert list(hub.outbox()) == [f"{later}.ack.md"]
        assert hub.archived() == [f"{later}.md"]

    hub.write_config("settle = 1\nrescan_interval = 300\n")
    with hub.running():
        until(lambda: acked(hub, ident), timeout=EVENT_DEADLINE)
    assert hub.lane("inbox") == []
    assert hub.archived() == sorted([f"{ident}.md", f"{later}.md"])


SLOW_WRITER = r"""
import sys, time
path, source = sys.argv[1], sys.argv[2]
data = open(source, encoding="utf-8").read()
size = -(-len(data) // 4)
with open(path, "w", encoding="utf-8") as out:  # kept open across the pauses
    for number in range(4):
        out.write(data[number * size:(number + 1) * size])
        out.flush()
        if number < 3:
            time.sleep(1.5)  # the writer's pause between pieces: the scenario, not a check
"""


def test_a_slow_writer_is_never_parsed_half_written(hub: HubDir, tmp_path: Path) -> None:
    """A writer pausing 1.5 s (> settle 0.5) between 4 pieces, file open throughout, gets one ack."""
    hub.write_config("settle = 0.5\nrescan_interval = 300\n")
    ident = "20260704t080300z-slow"
    text = envelope_text("A slow writer.\n" + "Line of body text.\n" * 40, id=ident, type="handshake")
    source = tmp_path / "envelope.md"
    source.write_text(text, encoding="utf-8")
    writer_script = write_script(tmp_path, "slow_writer.py", SLOW_WRITER)
    with hub.running():
        writer = subprocess.run(
            [sys.executable, str(writer_script), str(hub.root / "inbox" / "slow.md"), str(source)],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert writer.returncode == 0, writer.stderr
        until(hub.outbox, timeout=EVENT_DEADLINE)
        until(hub.archived, timeout=EVENT_DEADLINE)
    replies = hub.outbox()
    assert list(replies) == [f"{ident}.ack.md"], replies
    assert front_matter(replies[f"{ident}.ack.md"])["in_reply_to"] == ident
    assert hub.events("envelope.invalid") == []
    (archived,) = (hub.root / "archive").glob("*/slow.md")
    assert archived.read_text(encoding="utf-8") == text


# -- lost events ------------------------------------------------------------------------------


def test_a_dead_observer_loses_nothing_and_an_overflow_is_noticed(hub: HubDir) -> None:
    """Files dropped while the observer is dead are all answered (`watcher.died`); an overflow rescans."""
    with in_process(hub, "rescan_interval = 1\n") as daemon:
        kill_observer(daemon)
        ids = [f"20260704t081000z-lost-{number}" for number in range(10)]
        for ident in ids:
            handshake(hub, ident)
        until(lambda: all(acked(hub, ident) for ident in ids), timeout=EVENT_DEADLINE)
        until(lambda: hub.events("watcher.died"))
        assert daemon.arrivals.watcher is not None
        until(daemon.arrivals.healthy)  # restarted

        logging.getLogger("watchdog.observers.inotify_c").warning(
            "Inotify queue overflowed; filesystem events were lost"
        )
        until(lambda: hub.events("watcher.overflowed"))
        handshake(hub, "20260704t081100z-after")
        until(lambda: acked(hub, "20260704t081100z-after"), timeout=EVENT_DEADLINE)
    assert hub.lane("inbox") == []
    assert len(hub.archived()) == 11
    assert all(len(hub.replies_to(ident)) == 1 for ident in ids)


MAX_QUEUED = Path("/proc/sys/fs/inotify/max_queued_events")


def _can_lower_inotify_queue() -> bool:
    try:
        value = MAX_QUEUED.read_text()
        MAX_QUEUED.write_text(value)
    except OSError:
        return False
    return True


def _drop_burst(hub: HubDir, ids: list[str]) -> None:
    for ident in ids:
        handshake(hub, ident)


def _assert_each_acked_once(hub: HubDir, ids: list[str]) -> None:
    until(lambda: all(acked(hub, ident) for ident in ids), timeout=50)
    assert sorted(hub.outbox()) == sorted(f"{ident}.ack.md" for ident in ids)
    assert hub.lane("inbox") == []
    assert len(hub.archived()) == len(ids)


@pytest.mark.slow
def test_a_real_inotify_overflow_loses_nothing(hub: HubDir) -> None:
    """300 handshakes renamed in at once with an inotify queue of 16 events: each acked exactly once."""
    ids = [f"20260704t082000z-burst-{number:03d}" for number in range(300)]
    if not _can_lower_inotify_queue():
        # Cannot shrink the kernel queue here: suppress the events by killing the observer instead.
        with in_process(hub, "rescan_interval = 2\n") as daemon:
            kill_observer(daemon)
            _drop_burst(hub, ids)
            _assert_each_acked_once(hub, ids)
        assert hub.events("watcher.died")
        return
    hub.write_config("rescan_interval = 2\n")
    original = MAX_QUEUED.read_text()
    restored = False
    try:
        MAX_QUEUED.write_text("16\n")
        with hub.running():
            MAX_QUEUED.write_text(original)  # read at inotify_init: the daemon's queue stays at 16
            restored = True
            _drop_burst(hub, ids)
            _assert_each_acked_once(hub, ids)
    finally:
        if not restored:
            MAX_QUEUED.write_text(original)
    assert hub.events("watcher.overflowed")


# -- held authorized orders -------------------------------------------------------------------

ORDER_ID = "20260704t083000z-order-1"


def order_text() -> str:
    return envelope_text(
        "Run the release checklist.\n", id=ORDER_ID, type="instigate", auth="signed:o1.md.sig"
    )


def test_an_order_waits_for_its_signature_then_is_answered(hub: HubDir) -> None:
    """An authorized order without its .sig is held (once, listed by status); the .sig releases it."""
    hub.write_config(FAST)
    with hub.running():
        hub.drop("o1.md", order_text(), lane="authorized")
        until(lambda: hub.events("envelope.held"))
        # Two full scans later (each logs a new unrecognized name once) it is still only held once.
        for marker in ("marker-1.txt", "marker-2.txt"):
            (hub.root / "inbox" / marker).write_text("not an envelope\n")
            until(functools.partial(hub.events, "file.unrecognized", file=marker))
        assert len(hub.events("envelope.held")) == 1
        assert hub.lane("authorized") == ["o1.md"]
        assert hub.replies_to(ORDER_ID) == []
        report = status_json(hub)
        assert report["lanes"]["authorized"]["held"] == ["o1.md"]
        assert report["lanes"]["authorized"]["waiting"] == []
        assert "o1.md  (held: waiting for o1.md.sig)" in status_text(hub)

        hub.drop("o1.md.sig", "-----BEGIN SSH SIGNATURE-----\nnot real\n", lane="authorized")
        until((hub.root / "outbox" / f"{ORDER_ID}.error.md").is_file, timeout=EVENT_DEADLINE)
        until(lambda: len(hub.archived()) == 2)
    error = hub.reply(ORDER_ID, "error")
    assert front_matter(error)["in_reply_to"] == ORDER_ID
    assert "no allowed_signers file is configured" in body_of(error)
    assert hub.archived() == ["o1.md", "o1.md.sig"]
    assert hub.lane("authorized") == []
    assert len(hub.replies_to(ORDER_ID)) == 1


def test_once_waits_out_the_grace_of_a_held_order_then_answers_it_unsigned(hub: HubDir) -> None:
    """`--once` on a hub whose order waits for its .sig waits `sig_grace`, then answers it unsigned."""
    hub.write_config("[auth]\nsig_grace = 1\n")
    hub.drop("o1.md", order_text(), lane="authorized")
    hub.run_once(timeout=30)
    assert len(hub.events("envelope.held")) == 1
    error = hub.reply(ORDER_ID, "error")
    assert "unsigned: its signature o1.md.sig never arrived" in body_of(error)
    assert hub.lane("authorized") == []
    assert hub.archived() == ["o1.md"]


# -- lifecycle --------------------------------------------------------------------------------


def test_sigint_stops_like_sigterm(hub: HubDir) -> None:
    """SIGINT: the daemon stops cleanly, exit 0, and logs `daemon.stopped`."""
    with hub.running() as daemon:
        handshake(hub, "20260704t084000z-hello")
        until(lambda: acked(hub, "20260704t084000z-hello"), timeout=EVENT_DEADLINE)
        assert daemon.stop(signal.SIGINT) == 0
    assert hub.events("daemon.stopped")


NAMES = 'names = ["watcher", "watcher:main"]\n'
NEW_NAMES = 'names = ["watcher", "watcher:main", "watcher:newname"]\n'


def _reload(daemon: RunningDaemon, hub: HubDir, event: str) -> dict[str, Any]:
    before = len(hub.events(event))
    daemon.send_signal(signal.SIGHUP)
    daemon.until(lambda: len(hub.events(event)) > before)
    return hub.events(event)[-1]


def test_sighup_with_a_valid_config_takes_effect(hub: HubDir) -> None:
    """A name added by SIGHUP is served: an envelope to it, left in place before, is answered after."""
    hub.write_config(NAMES + FAST)
    before, after = "20260704t085000z-before", "20260704t085100z-after"
    with hub.running() as daemon:
        handshake(hub, before, to="watcher:newname")
        until(lambda: hub.events("envelope.left", file=f"{before}.md"))
        assert hub.lane("inbox") == [f"{before}.md"]
        assert hub.outbox() == {}

        hub.write_config(NEW_NAMES + FAST)
        _reload(daemon, hub, "config.reloaded")
        handshake(hub, after, to="watcher:newname")
        until(lambda: acked(hub, after), timeout=EVENT_DEADLINE)
    assert front_matter(hub.reply(after, "ack"))["to"] == "claude-code"
    assert hub.events("config.reload_failed") == []


def test_sighup_releases_envelopes_left_for_a_name_it_adds(hub: HubDir) -> None:
    """An envelope left in place for `watcher:newname` is answered once a reload makes that name ours."""
    hub.write_config(NAMES + FAST)
    ident = "20260704t085200z-waiting"
    with hub.running() as daemon:
        handshake(hub, ident, to="watcher:newname")
        until(lambda: hub.events("envelope.left", file=f"{ident}.md"))
        hub.write_config(NEW_NAMES + FAST)
        _reload(daemon, hub, "config.reloaded")
        until(lambda: acked(hub, ident), timeout=EVENT_DEADLINE)
    assert hub.lane("inbox") == []


def test_sighup_with_an_invalid_config_keeps_the_old_one(hub: HubDir) -> None:
    """An unknown key on reload: `config.reload_failed` names it, and the old config keeps serving."""
    hub.write_config(NAMES + FAST)
    ident = "20260704t085300z-still"
    with hub.running() as daemon:
        hub.write_config(NEW_NAMES + FAST + "bogus = 1\n")
        failed = _reload(daemon, hub, "config.reload_failed")
        assert "bogus" in failed["reason"]
        assert failed["level"] == "error"
        handshake(hub, ident, to="watcher:main")
        until(lambda: acked(hub, ident), timeout=EVENT_DEADLINE)
        assert daemon.alive()
    ack = front_matter(hub.reply(ident, "ack"))
    assert ack["from"] == "watcher:main"  # the old names: the defaults would say watcher:HOST
    assert hub.events("config.reloaded") == []


# -- status and tail --------------------------------------------------------------------------

WAIT_FOR_RELEASE = r"""
import os, sys, time
release = sys.argv[1]
while not os.path.exists(release):  # the executor under test, waiting for the test's release file
    time.sleep(0.05)
sys.stdout.write("released\n")
"""


def test_status_lists_a_running_execution(hub: HubDir, tmp_path: Path) -> None:
    """While the executor runs, `status --json` lists the id under `executing` with a `since`."""
    release = tmp_path / "release"
    script = write_script(tmp_path, "wait.py", WAIT_FOR_RELEASE)
    hub.write_config(
        FAST + f"[executor]\ncommand = {toml_argv([sys.executable, str(script), str(release)])}\n"
        "timeout = 60\n"
    )
    ident = "20260704t086000z-job"
    with hub.running() as daemon:
        hub.drop(f"{ident}.md", envelope_text("Do it.\n", id=ident, type="instigate"))
        until(lambda: hub.events("execution.started", id=ident), timeout=EVENT_DEADLINE)
        report = status_json(hub)
        assert report["daemon"]["running"] is True
        assert report["daemon"]["pid"] == daemon.pid
        assert report["daemon"]["since"]
        (executing,) = report["executing"]
        assert executing["id"] == ident
        assert executing["file"] == f"inbox/{ident}.md"
        assert executing["since"]
        assert f"executing: {ident} since {executing['since']}" in status_text(hub)

        release.write_text("go\n")
        until((hub.root / "outbox" / f"{ident}.result.md").is_file, timeout=EVENT_DEADLINE)
        assert status_json(hub)["executing"] == []
    assert status_json(hub)["daemon"]["running"] is False


def test_status_shows_the_last_error(hub: HubDir) -> None:
    """After a reply fails (outbox/ is a file), status has `last_error` and a `last error:` line."""
    hub.write_config(FAST)
    assert status_json(hub)["last_error"] is None
    ident = "20260704t086100z-hello"
    outbox = hub.root / "outbox"
    outbox.rmdir()
    outbox.write_text("not a directory\n")
    with hub.running():
        assert "last error: none" in status_text(hub)
        handshake(hub, ident)
        until(lambda: status_json(hub)["last_error"] is not None, timeout=EVENT_DEADLINE)
        last = status_json(hub)["last_error"]
        assert last["event"] == "envelope.failed"
        assert last["file"] == f"{ident}.md"
        lines = [line for line in status_text(hub).splitlines() if line.startswith("last error:")]
        assert len(lines) == 1
        assert "envelope.failed" in lines[0]
        assert "outbox/" in lines[0]  # the reason, from the exception's last line

        outbox.unlink()
        outbox.mkdir()
        until(lambda: acked(hub, ident), timeout=EVENT_DEADLINE)  # the next full scan retries it
    assert hub.lane("inbox") == []
    assert status_json(hub)["last_error"]["event"] == "envelope.failed"  # still the last one
    assert "['" not in lines[0], lines[0]  # the reason as text, not a Python list's repr


def test_tail_lane_shows_only_that_lanes_lines(hub: HubDir) -> None:
    """`slopd tail --lane authorized` prints lines about authorized/ only, and `--lane inbox` the others."""
    hub.drop("order.md", envelope_text(id="20260704t087000z-order", type="instigate"), lane="authorized")
    handshake(hub, "20260704t087100z-hello")
    hub.run_once()
    base = ("tail", "--hub", str(hub.root), "--state", str(hub.state), "-n", "1000")

    authorized = hub.slopd(*base, "--lane", "authorized")
    assert authorized.returncode == 0, authorized.stderr
    lines = authorized.stdout.splitlines()
    assert lines
    assert all(" lane=authorized" in line for line in lines), lines
    assert any("file=order.md" in line for line in lines)
    assert not any("20260704t087100z-hello" in line for line in lines)

    inbox = hub.slopd(*base, "--lane", "inbox")
    assert inbox.returncode == 0, inbox.stderr
    inbox_lines = inbox.stdout.splitlines()
    assert any("20260704t087100z-hello" in line for line in inbox_lines)
    assert all(" lane=inbox" in line for line in inbox_lines), inbox_lines

    everything = hub.slopd(*base)
    assert len(everything.stdout.splitlines()) > len(lines) + len(inbox_lines)  # start/stop lines too


# -- notification coalescing ------------------------------------------------------------------

NOTIFIER = r"""
import os, sys
data = sys.stdin.buffer.read()
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
os.write(fd, data + b"\n<<END>>\n")
os.close(fd)
"""


def test_a_burst_of_errors_is_coalesced_into_five_notifications_and_a_summary(
    hub: HubDir, tmp_path: Path
) -> None:
    """12 invalid files: the notifier runs 5 times plus one "7 more"; the log has all 12 `notify`."""
    received = tmp_path / "notifications"
    script = write_script(tmp_path, "notify.py", NOTIFIER)
    hub.write_config(
        FAST + f"[notify]\ncommand = {toml_argv([sys.executable, str(script), str(received)])}\n"
    )
    ids = [f"20260704t088000z-bad-{number:02d}" for number in range(12)]

    def notifications() -> list[str]:
        """Every run of the notifier command, in order (an empty string: it got empty stdin)."""
        if not received.exists():
            return []
        return [item.strip() for item in received.read_text().split("\n<<END>>\n")[:-1]]

    with hub.running():
        for ident in ids:
            hub.drop(f"{ident}.md", envelope_text(id=ident, type="bogus"))
        until(
            lambda: len([name for name in hub.outbox() if ".invalid-" in name]) == 12,
            timeout=EVENT_DEADLINE,
        )
        until(lambda: len(notifications()) == 5)
    notify = hub.events("notify")
    assert len(notify) == 12
    assert {record["id"] for record in notify} == set(ids)
    assert len(hub.events("notify.coalesced")) == 1
    # The summary is sent on shutdown; its command may finish just after the daemon has exited.
    with contextlib.suppress(DeadlineError):  # if not, the checks below say what is missing
        until(lambda: len(notifications()) >= 6, timeout=10)

    texts = notifications()
    individual = [text for text in texts if text.startswith("error for ")]
    assert len(individual) == 5, texts
    assert len(texts) == 6, f"expected 5 notifications and one summary, the notifier got {texts}"
    assert texts[5].startswith("7 more notifications (see slopd tail); the last: error for "), texts
