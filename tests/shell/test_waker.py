"""`shell.waker`: one filesystem watch per waker, however many threads ask for it at once, and none
after `close` (rule 3)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from slopd.shell.waker import Waker


def inotify_instances() -> int:
    """How many inotify instances this process holds (Linux)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
        except OSError:
            continue
    return count


def test_threads_asking_at_once_start_one_watch_and_close_ends_it_for_good(tmp_path: Path) -> None:
    (tmp_path / "outbox").mkdir()
    before = inotify_instances()
    waker = Waker(tmp_path)
    gate = threading.Barrier(8)

    def ask() -> None:
        gate.wait()
        waker.watch()

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert inotify_instances() == before + 1
    waker.close()
    waker.watch()  # a late first wait, after the server closed it: nothing is started again
    assert inotify_instances() == before
