"""Drafts and orders kept parsed while their files stay the same: the Approvals list looks at each
waiting file's lstat on every render, and reads and parses only the files that changed.

Rules:
1. What is kept is the bytes read and their parse, under the signature (inode, size, mtime,
   ctime: `shell.lanes.signature`) of the very file descriptor they were read from, and it is
   used only while an lstat of the same name in the same place gives that signature. A write, a
   rename over the name, a chmod or a new link changes the ctime, so the signature.
2. A file whose ctime is less than `RACY` seconds older than the moment its read began is not
   kept: the kernel stamps file times at its clock tick, so a rewrite of the same size within one
   tick keeps both times (git's "racily clean" entries); a file quiet for longer can only change
   under a newer stamp.
3. Only the Approvals list reads through a shelf. An approval's page and every act read the file
   at that moment (`approvals.read`): the bytes a human is shown to sign never come from here.
4. A listing forgets the names its place no longer holds, so a shelf holds at most what its
   folders hold; only readable files are kept.
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from os import stat_result

from slopd.core.envelope import Envelope
from slopd.core.layout import Signature
from slopd.shell.lanes import signature
from slopd.shell.reads import Contents, Unreadable

RACY = 2.0  # seconds: many clock ticks, and more than a coarse filesystem's time stamps (FAT: 2 s)

Parsed = tuple[Contents | Unreadable, Envelope | None, tuple[str, ...]]  # contents, envelope, reasons


class Shelf:
    def __init__(self, racy: float = RACY) -> None:
        self.racy = racy
        self._kept: dict[tuple[str, str], tuple[Signature, Parsed]] = {}
        self._lock = threading.Lock()  # pages render on several worker threads at once

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, place: str, name: str, status: stat_result) -> Parsed | None:
        """Rule 1: what was kept for `name`, if its lstat `status` still has the same signature."""
        with self._lock:
            kept = self._kept.get((place, name))
        return kept[1] if kept is not None and kept[0] == signature(status) else None

    def put(self, place: str, name: str, parsed: Parsed, began: float) -> None:
        """Rules 1, 2 and 4: keep `parsed`, read from a file whose read began at `began` (epoch s)."""
        contents = parsed[0]
        if not isinstance(contents, Contents) or began - contents.stat.st_ctime_ns / 1e9 < self.racy:
            return
        with self._lock:
            self._kept[(place, name)] = (signature(contents.stat), parsed)

    def forget_others(self, place: str, names: Collection[str]) -> None:
        """Rule 4: drop what is kept for `place` under a name not in `names` (its listing now)."""
        with self._lock:
            for key in [key for key in self._kept if key[0] == place and key[1] not in names]:
                del self._kept[key]
