"""sd_notify against real receiving sockets: the unit on its own, then the daemon under a fake manager."""

from __future__ import annotations

import os
import secrets
import signal
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from slopd.shell.sdnotify import SystemdNotifier
from tests.conftest import HubDir, envelope_text, toml_argv


@contextmanager
def receiver(address: str) -> Iterator[socket.socket]:
    """A datagram socket bound where NOTIFY_SOCKET will point (`@name` = abstract)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + address[1:] if address.startswith("@") else address)
    sock.settimeout(0.05)
    try:
        yield sock
    finally:
        sock.close()


def drain(sock: socket.socket) -> list[str]:
    messages = []
    while True:
        try:
            messages.append(sock.recv(65536).decode())
        except TimeoutError:
            return messages


def test_a_message_reaches_a_socket_file(tmp_path: Path) -> None:
    """With NOTIFY_SOCKET=/path, READY=1 and the status arrive as one datagram."""
    address = str(tmp_path / "notify.sock")
    with receiver(address) as sock:
        assert SystemdNotifier({"NOTIFY_SOCKET": address}).send("READY=1\nSTATUS=ok")
        assert drain(sock) == ["READY=1\nSTATUS=ok"]


def test_a_message_reaches_an_abstract_socket() -> None:
    """With NOTIFY_SOCKET=@name, the datagram goes to the abstract socket of that name."""
    address = f"@slopd-test-{secrets.token_hex(4)}"
    with receiver(address) as sock:
        SystemdNotifier({"NOTIFY_SOCKET": address}).status("ünïcode status")
        assert drain(sock) == ["STATUS=ünïcode status"]


@pytest.mark.parametrize("address", ["", "vsock:2:1234", "relative/path", "/nonexistent/dir/sock", "@"])
def test_no_manager_or_an_unusable_address_is_a_quiet_no_op(address: str) -> None:
    """Without a usable socket, send returns False and never raises."""
    assert SystemdNotifier({"NOTIFY_SOCKET": address}).send("READY=1") is False


def test_the_watchdog_is_on_only_for_our_pid_and_pings_every_half_interval(tmp_path: Path) -> None:
    """WATCHDOG_USEC sets a half-interval ping; a WATCHDOG_PID that is not ours turns it off."""
    address = str(tmp_path / "notify.sock")
    with receiver(address) as sock:
        notifier = SystemdNotifier({"NOTIFY_SOCKET": address, "WATCHDOG_USEC": "2000000"})
        assert notifier.watchdog_interval == 1.0
        notifier.ping(100.0)
        notifier.ping(100.5)  # not yet due
        notifier.ping(101.0)
        assert drain(sock) == ["WATCHDOG=1", "WATCHDOG=1"]
        assert notifier.ping_due(101.0) == 102.0
    other = SystemdNotifier({"WATCHDOG_USEC": "2000000", "WATCHDOG_PID": str(os.getpid() + 1)})
    assert other.watchdog_interval is None
    assert other.ping_due(0.0) == float("inf")


def test_the_daemon_reports_ready_status_watchdog_reloading_and_stopping(hub: HubDir) -> None:
    """Under a notify socket: READY after the first scan, STATUS, WATCHDOG pings, RELOADING, STOPPING."""
    address = f"@slopd-test-{secrets.token_hex(4)}"
    hub.env.update(NOTIFY_SOCKET=address, WATCHDOG_USEC="200000")
    with receiver(address) as sock:
        received: list[str] = []

        def seen(prefix: str) -> bool:
            received.extend(drain(sock))
            return any(message.startswith(prefix) for message in received)

        with hub.running() as daemon:
            daemon.until(lambda: seen("READY=1"))
            ready = next(message for message in received if message.startswith("READY=1"))
            assert "STATUS=0 pending, 0 running, 0 queued; last error: none" in ready
            daemon.until(lambda: seen("WATCHDOG=1") and received.count("WATCHDOG=1") >= 3)
            daemon.send_signal(signal.SIGHUP)
            daemon.until(lambda: seen("RELOADING=1"))
            reloading = next(message for message in received if message.startswith("RELOADING=1"))
            assert "MONOTONIC_USEC=" in reloading
            daemon.until(lambda: seen("READY=1") and sum(m.startswith("READY=1") for m in received) >= 2)
        received.extend(drain(sock))
    assert "STOPPING=1" in received


def test_a_manager_that_stops_reading_never_blocks_the_daemon(hub: HubDir) -> None:
    """With the manager's socket queue full (nobody reads it), the daemon still answers and exits 0."""
    address = f"@slopd-test-{secrets.token_hex(4)}"
    hub.env.update(NOTIFY_SOCKET=address, WATCHDOG_USEC="2000")
    with receiver(address), hub.running() as daemon:
        hub.drop("shake.md", envelope_text(id="shake-q", type="handshake"))
        daemon.until((hub.root / "outbox" / "shake-q.ack.md").exists)


def test_a_dead_manager_socket_never_stops_the_daemon(hub: HubDir) -> None:
    """A NOTIFY_SOCKET nobody listens on costs nothing: the daemon still answers and exits 0."""
    hub.env.update(NOTIFY_SOCKET="@slopd-nobody-listens", WATCHDOG_USEC="100000")
    with hub.running() as daemon:
        hub.drop("shake.md", envelope_text(id="shake-n", type="handshake"))
        daemon.until((hub.root / "outbox" / "shake-n.ack.md").exists)


def test_children_never_see_the_notify_socket(hub: HubDir, tmp_path: Path) -> None:
    """The executor's environment has no NOTIFY_SOCKET or WATCHDOG_* even under systemd."""
    dump = tmp_path / "env.txt"
    argv = ["/bin/sh", "-c", f"env > {dump}"]
    hub.write_config(f"[executor]\ncommand = {toml_argv(argv)}\n")
    hub.env.update(NOTIFY_SOCKET="@slopd-nobody-listens", WATCHDOG_USEC="100000", WATCHDOG_PID="1")
    hub.drop("job.md", "---\nprotocol: slop.v1\nid: job-n\ntype: instigate\nfrom: a\nto: watcher\n"
             "created_at: 2026-07-04T07:15:53Z\n---\nrun\n")  # fmt: skip
    result = hub.slopd("run", "--hub", str(hub.root), "--state", str(hub.state), "--config",
                       str(hub.config), "--once")  # fmt: skip
    assert result.returncode == 0, result.stderr
    variables = dict(line.split("=", 1) for line in dump.read_text().splitlines() if "=" in line)
    assert variables["SLOP_ID"] == "job-n"
    assert not {"NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"} & set(variables)
