"""Start-up's sweep of slopd's own temporary files (`Hub.remove_temps`) beside writers that are
using theirs: a temp renamed or removed between the listing and the look is skipped, never an
error (the HTTP transport starts beside the daemon and may be writing already)."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

from slopd.core.layout import temp_name
from slopd.shell.lanes import Hub
from tests.conftest import HubDir


def test_temps_that_come_and_go_during_the_sweep_are_skipped(hub: HubDir) -> None:
    inbox, outbox = hub.root / "inbox", hub.root / "outbox"
    stop = threading.Event()

    def churn() -> None:
        number = 0
        while not stop.is_set():
            for lane in (inbox, outbox):
                path = lane / temp_name(f"x{number}.md", f"{number:06x}")
                path.write_bytes(b"x")
                with contextlib.suppress(FileNotFoundError):  # the sweep may have taken it already
                    os.utime(path, (1.0, 1.0))  # old enough to be swept from inbox/ too
                path.unlink(missing_ok=True)
            number += 1

    writer = threading.Thread(target=churn)
    writer.start()
    opened = Hub(hub.root)
    try:
        deadline = time.monotonic() + 2.0
        sweeps = 0
        while time.monotonic() < deadline:
            opened.remove_temps(now=time.time())
            sweeps += 1
    finally:
        stop.set()
        writer.join()
        opened.close()
    assert sweeps > 10
    stale = Path(inbox / temp_name("left.md", "abc"))
    stale.write_bytes(b"left by a crash")
    os.utime(stale, (1.0, 1.0))
    opened = Hub(hub.root)
    try:
        assert opened.remove_temps(now=time.time()) == [f"inbox/{stale.name}"]
    finally:
        opened.close()
    assert not stale.exists()
