"""`shell.ledger.writelock`: one write lock per SQLite file, whatever path names it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from slopd.shell.ledger.writelock import write_lock


def test_one_file_has_one_write_lock_however_it_is_named(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    os.symlink(tmp_path / "state", tmp_path / "link")
    path = tmp_path / "state" / "ledger.sqlite3"
    assert write_lock(path) is write_lock(tmp_path / "link" / "ledger.sqlite3")
    assert write_lock(path) is write_lock(tmp_path / "state" / ".." / "state" / "ledger.sqlite3")
    assert write_lock(path) is not write_lock(tmp_path / "state" / "other.sqlite3")


def test_a_write_lock_is_reentrant_and_excludes_other_threads(tmp_path: Path) -> None:
    held = write_lock(tmp_path / "ledger.sqlite3")
    taken: list[bool] = []
    with held, held:  # the holder may take it again
        thread = threading.Thread(target=lambda: taken.append(held.acquire(blocking=False)))
        thread.start()
        thread.join()
    assert taken == [False]
