"""slopd's own temporary files never look like inputs or replies (`core.layout`, HUB.md).

A reader that collects `outbox/*.md` with Python's `pathlib.glob` — which, unlike a shell glob,
matches dotfiles — must only ever read finished replies, even while a burst is being answered.
"""

from __future__ import annotations

import fnmatch
import os
import threading
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers.inotify import InotifyObserver

from slopd.core.layout import is_temp, temp_name
from slopd.core.names import Kind, classify
from tests.conftest import HubDir, envelope_text
from tests.polling import until

GLOBS = ("*.md", "*.json", "*.sig", "*.md.sig")
BURST = 200


@given(
    name=st.text(min_size=1, max_size=300),
    token=st.text(alphabet="0123456789abcdef", min_size=1, max_size=12),
)
def test_a_temp_name_matches_no_input_or_reply_glob(name: str, token: str) -> None:
    """Whatever it stands for, a temp name is a dotfile ending `.tmp`, ignored in every lane,
    at most 255 bytes, and matched by none of `*.md`, `*.json`, `*.sig`."""
    temp = temp_name(name, token)
    assert is_temp(temp)
    assert temp.startswith(".")
    assert temp.endswith(".tmp")
    assert len(temp.encode("utf-8", "surrogateescape")) <= 255
    assert not any(fnmatch.fnmatchcase(temp, glob) for glob in GLOBS)
    assert classify(temp, lane="inbox") is Kind.IGNORED
    assert classify(temp, lane="authorized") is Kind.IGNORED


class _Created(FileSystemEventHandler):
    """Every name created in the watched lanes, as inotify reports it (none is missed)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def on_created(self, event: FileSystemEvent) -> None:
        self.names.append(os.path.basename(os.fsdecode(event.src_path)))


def test_a_reader_globbing_the_lanes_during_a_burst_reads_only_finished_files(hub: HubDir) -> None:
    """While 200 handoffs are answered in batches (replies staged, then named together), every
    temp file slopd creates — inotify sees each one — matches none of `*.md`, `*.json`, `*.sig`,
    and a reader globbing the lanes with pathlib all the while reads only complete replies."""
    problems: list[str] = []
    done = threading.Event()

    def reader() -> None:
        while not done.is_set():
            for lane in ("inbox", "outbox", "notes"):
                for glob in GLOBS:
                    for path in (hub.root / lane).glob(glob):
                        if is_temp(path.name):
                            problems.append(f"{lane}/{path.name} matched {glob}")
                        elif lane == "outbox" and path.is_file():
                            _check_reply(path, problems)

    for index in range(BURST):
        hub.drop(f"burst-{index:03d}.md", envelope_text(id=f"burst-{index:03d}"))
    created = _Created()
    observer = InotifyObserver()
    for lane in ("inbox", "outbox", "notes"):
        observer.schedule(created, str(hub.root / lane), recursive=False)
    observer.start()
    watching = threading.Thread(target=reader, daemon=True)
    watching.start()

    def temps() -> list[str]:
        return [name for name in created.names if name.startswith(".slopd-tmp-")]

    try:
        with hub.running() as daemon:
            daemon.until(lambda: len(list((hub.root / "outbox").glob("burst-*.result.md"))) == BURST, 60)
        until(lambda: len(temps()) >= BURST, timeout=10)  # every reply was staged under a temp name
    finally:
        done.set()
        watching.join(timeout=10)
        observer.stop()
        observer.join(timeout=10)
    assert [name for name in temps() if any(fnmatch.fnmatchcase(name, glob) for glob in GLOBS)] == []
    assert problems == []


def _check_reply(path: Path, problems: list[str]) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    if not text.startswith("---\n") or "\nin_reply_to: " not in text:
        problems.append(f"outbox/{path.name} read without its front matter: {text[:60]!r}")
