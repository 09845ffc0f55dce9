"""A vessel's tree, `HUB/batons/VESSEL/` (SPEC §11): the only writer of its files.

Rules:
1. Every file is written atomically and durably (`shell.fs`), in a directory opened without
   following links — a symlinked `batons/`, vessel or sub-folder is refused, never written
   through.
2. `init` writes IDENTITY.json, the empty AUTOBIOGRAPHY.md and evolution records, and
   `GENERATION` = `0` last; a vessel that exists is refused, whatever generation it is at.
3. `generation` trusts only `GENERATION`: a missing or garbled marker is a `BatonError`
   naming the file, never a guess from the folders beside it.
"""

from __future__ import annotations

import errno
import json
import os
import re
from contextlib import suppress

from slopd.baton import generations
from slopd.shell import fs, reads
from slopd.shell.lanes import Hub, LaneError

FOLDER = "batons"
VESSEL = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
MARKER = "GENERATION"
MAX_BYTES = 16 << 20


class BatonError(OSError):
    pass


class Tree:
    def __init__(self, hub: Hub, vessel: str) -> None:
        if VESSEL.fullmatch(vessel) is None:
            raise ValueError(f"{vessel!r} is not a vessel name (lower-case letters, digits, '.', '_', '-')")
        self.hub, self.vessel = hub, vessel
        self.where = f"{FOLDER}/{vessel}"

    def exists(self) -> bool:
        return (
            self.hub.stat_path(f"{self.where}/{MARKER}") is not None
            or self.hub.stat_path(self.where) is not None
        )

    def read(self, relative: str) -> bytes | None:
        """A file of the tree, or None when it is not there."""
        found = self.hub.read_path(f"{self.where}/{relative}", MAX_BYTES)
        if isinstance(found, reads.Unreadable):
            if found.stat is None and self.hub.stat_path(f"{self.where}/{relative}") is None:
                return None
            raise BatonError(errno.EIO, f"the file {found.reason}", f"{self.where}/{relative}")
        return found.data

    def generation(self) -> int:
        """Rule 3."""
        data = self.read(MARKER)
        if data is None:
            raise BatonError(
                errno.ENOENT,
                "no GENERATION marker: not a vessel (slopd baton init)",
                f"{self.where}/{MARKER}",
            )
        text = data.decode("ascii", "replace").strip()
        if not text.isdigit():
            raise BatonError(
                errno.EINVAL, f"GENERATION holds {text[:20]!r}, not a number", f"{self.where}/{MARKER}"
            )
        return int(text)

    def generations(self) -> tuple[int, ...]:
        """The N of every `generations/vN/` folder present, sorted."""
        try:
            fd = self._descend([self.vessel, "generations"], create=False)
        except (FileNotFoundError, LaneError):
            return ()
        try:
            names = os.listdir(fd)
        finally:
            os.close(fd)
        return tuple(sorted(int(name[1:]) for name in names if re.fullmatch(r"v[1-9][0-9]{0,8}", name)))

    def read_json(self, relative: str) -> object:
        """A JSON file of the tree (None when missing); garbled JSON is a BatonError."""
        data = self.read(relative)
        if data is None:
            return None
        try:
            return json.loads(data)
        except ValueError as error:
            raise BatonError(errno.EINVAL, f"not JSON: {error}", f"{self.where}/{relative}") from None

    def write(self, relative: str, data: bytes) -> None:
        """Rule 1: `relative` (folders made as needed) written atomically."""
        *folders, name = relative.split("/")
        fd = self._descend([self.vessel, *folders], create=True)
        try:
            fs.atomic_write(fd, name, data)
        finally:
            os.close(fd)

    def _descend(self, parts: list[str], *, create: bool) -> int:
        """The fd of a folder of the tree (made on the way when `create`), opened without
        following links; reading never makes `batons/`."""
        top = self.hub.folder_fd(FOLDER) if create else self.hub.lane_fd(FOLDER)
        fd = os.dup(top)
        try:
            for part in parts:
                if create:
                    with suppress(FileExistsError):
                        os.mkdir(part, 0o755, dir_fd=fd)
                inner = os.open(part, fs.DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        return fd

    def init(self, identity: dict[str, object]) -> None:
        """Rule 2."""
        if self.exists():
            raise BatonError(errno.EEXIST, "the vessel exists already", self.where)
        self.write("IDENTITY.json", _json(identity))
        self.write("AUTOBIOGRAPHY.md", generations.autobiography(self.vessel, []).encode())
        self.write("evolution/fitness_history.json", b"[]\n")
        self.write("evolution/mutations.json", b"[]\n")
        self.write(MARKER, b"0")


def _json(value: object) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()
