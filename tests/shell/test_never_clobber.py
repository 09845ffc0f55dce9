"""Never-clobbering writes (`fs.commit(replace=False)`, `exchange.rename_new`): a drop arrives
whole, under one link, as a rename the daemon's watcher reads at once (no settle wait)."""

from __future__ import annotations

import os
import queue
from pathlib import Path

import pytest

from slopd.core.intake import Hint
from slopd.shell import exchange, fs
from slopd.shell.watcher import Notice, Watcher


def test_rename_new_renames_and_never_replaces(tmp_path: Path) -> None:
    """Rule 2: the name is taken only if free; an existing one is FileExistsError, both intact."""
    (tmp_path / "a").write_bytes(b"new")
    (tmp_path / "b").write_bytes(b"old")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(FileExistsError):
            exchange.rename_new(fd, "a", "b")
        assert ((tmp_path / "a").read_bytes(), (tmp_path / "b").read_bytes()) == (b"new", b"old")
        assert exchange.rename_new(fd, "a", "c") is True
    finally:
        os.close(fd)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["b", "c"]
    assert (tmp_path / "c").read_bytes() == b"new"


def test_a_never_clobbering_write_keeps_what_is_there_and_leaves_no_temp(tmp_path: Path) -> None:
    fs.write_file(tmp_path / "x.md", b"first")
    with pytest.raises(FileExistsError):
        fs.write_file(tmp_path / "x.md", b"second")
    assert (tmp_path / "x.md").read_bytes() == b"first"
    assert [path.name for path in tmp_path.iterdir()] == ["x.md"]
    assert (tmp_path / "x.md").stat().st_nlink == 1


def test_a_drop_reaches_the_watcher_as_an_arrival(tmp_path: Path) -> None:
    """The real observer sees a never-clobbering write as a rename into the lane (`arrived`, due at
    once), not as a file created in place (`created`, read only after `settle`)."""
    (tmp_path / "inbox").mkdir()
    notices: queue.SimpleQueue[Notice] = queue.SimpleQueue()
    watcher = Watcher(tmp_path, ("inbox",), polling=False, put=notices.put)
    watcher.start()
    try:
        fs.write_file(tmp_path / "inbox" / "x.md", b"---\n")
        seen: list[Notice] = []
        while not any(name == "x.md" for _, name, _ in seen):
            seen.append(notices.get(timeout=10))
    finally:
        watcher.stop()
    assert [hint for _, name, hint in seen if name == "x.md"] == [Hint.ARRIVED]
