"""The hub's lanes: every byte here is hostile, so every access is no-follow and race-free.

Rules:
1. All access goes through directory fds opened with O_NOFOLLOW, checked at every use: a lane
   replaced by a symlink is refused (`LaneError`), a replaced directory is reopened, and a
   symlink, FIFO, device or directory in a lane is reported, never opened or followed.
2. Inputs are read once (`reads.read_once`); the bytes read are the bytes parsed and hashed.
3. `write` is atomic and durable at once; `stage` only writes the temporary file, for a batch
   that makes several durable together (`fs.commit`). Either way slopd never writes into
   `authorized/`.
4. A `Hub` has no modes: what a batch defers is held by the batch (`daemon.batch`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from slopd.core.errors import SetupError, UsageError
from slopd.core.layout import LANES, Signature, is_temp, temp_name
from slopd.shell import fs, reads, trees


class LaneError(OSError, SetupError):
    """A lane is missing, not a directory, or replaced by a symlink."""


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    stat: os.stat_result

    @property
    def signature(self) -> Signature:
        """What must stay equal while a file settles: inode, size, mtime, ctime."""
        return signature(self.stat)


def signature(status: os.stat_result) -> Signature:
    return (status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


def signature_of(status: os.stat_result | None) -> Signature | None:
    """The signature of an lstat, or None for a file that is gone."""
    return None if status is None else signature(status)


class Hub:
    """One hub folder, held open by directory fds."""

    def __init__(self, root: Path) -> None:
        self.root = root
        try:
            self._root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as error:
            raise LaneError(error.errno, f"cannot open the hub {root}: {error.strerror}") from None
        self._fds: dict[str, tuple[int, int, int]] = {}  # lane -> (fd, st_dev, st_ino)

    def close(self) -> None:
        for fd, _dev, _ino in self._fds.values():
            os.close(fd)
        os.close(self._root_fd)
        self._fds.clear()

    def lane_fd(self, lane: str) -> int:
        """The fd of `lane`, reopened if the directory was replaced; a symlinked lane is refused."""
        try:
            current = os.stat(lane, dir_fd=self._root_fd, follow_symlinks=False)
        except OSError as error:
            raise LaneError(error.errno, f"{lane}/ is missing: {error.strerror}") from None
        if not stat.S_ISDIR(current.st_mode):
            raise LaneError(errno.ENOTDIR, f"{lane}/ is {reads.describe(current.st_mode)}, not a directory")
        held = self._fds.get(lane)
        if held is not None:
            if held[1:] == (current.st_dev, current.st_ino):
                return held[0]
            os.close(held[0])
        fd = os.open(lane, fs.DIR_FLAGS, dir_fd=self._root_fd)
        opened = os.fstat(fd)
        self._fds[lane] = (fd, opened.st_dev, opened.st_ino)
        return fd

    def folder_fd(self, name: str) -> int:
        """The fd of a hub folder made on first use (`standups/`, `batons/`), like a lane's."""
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o755, dir_fd=self._root_fd)
        return self.lane_fd(name)

    def ensure_lanes(self) -> list[str]:
        """Create the lanes that are missing (git and sync clients do not carry empty folders);
        returns those made. A name taken by anything else is left alone (`lane_fd` refuses it)."""
        made = []
        for lane in LANES:
            try:
                os.mkdir(lane, 0o755, dir_fd=self._root_fd)
            except FileExistsError:
                continue
            made.append(lane)
        return made

    def scan(self, lane: str) -> list[Entry]:
        """Every entry of `lane` with its lstat, oldest first, then by name."""
        return sorted(self.entries(lane), key=lambda entry: (entry.stat.st_mtime_ns, entry.name))

    def entries(self, lane: str) -> Iterator[Entry]:
        """Every entry of `lane` with its lstat, streamed in directory order (memory stays flat)."""
        with os.scandir(self.lane_fd(lane)) as listing:
            for item in listing:
                try:
                    yield Entry(item.name, item.stat(follow_symlinks=False))
                except FileNotFoundError:
                    continue

    def lstat(self, lane: str, name: str) -> os.stat_result | None:
        """The entry's lstat, or None when it is gone — or its lane is (the scan reports that)."""
        try:
            return os.stat(name, dir_fd=self.lane_fd(lane), follow_symlinks=False)
        except (FileNotFoundError, LaneError):
            return None

    def exists(self, lane: str, name: str) -> bool:
        return self.lstat(lane, name) is not None

    def path_exists(self, relative: str) -> bool:
        """Whether a hub-relative path (as the ledger records it) names an entry."""
        return self.stat_path(relative) is not None

    def stat_path(self, relative: str) -> os.stat_result | None:
        """The lstat of a hub-relative path, or None when there is nothing there."""
        try:
            return os.stat(relative, dir_fd=self._root_fd, follow_symlinks=False)
        except OSError:
            return None

    def read(self, lane: str, name: str, limit: int) -> reads.Contents | reads.Unreadable:
        """Read an input once; a symlink, special file, hard link or oversize file is refused."""
        return reads.read_once(name, limit, dir_fd=self.lane_fd(lane))

    def digest(self, lane: str, name: str, *, copy_to: Path | None = None) -> str | reads.Unreadable:
        """The SHA-256 of a shared file (an asset), any size, never through a link (`reads.digest`)."""
        return reads.digest(self.lane_fd(lane), name, copy_to=copy_to)

    def add_asset(self, source: Path, name: str) -> str:
        """Copy `source` into `assets/NAME` atomically, returning its SHA-256. The same bytes
        already there are kept; other bytes under that name are FileExistsError."""
        staged, digest = fs.stage_copy(self._writable_fd("assets"), name, source)
        try:
            fs.commit([staged], replace=False)
        except FileExistsError:
            if self.digest("assets", name) != digest:
                raise
        return digest

    def read_path(self, relative: str, limit: int) -> reads.Contents | reads.Unreadable:
        """Read a hub-relative path (an archived copy) the same way, from the hub's own fd."""
        return reads.read_once(relative, limit, dir_fd=self._root_fd)

    def _writable_fd(self, lane: str) -> int:
        if lane == "authorized":
            raise PermissionError(errno.EPERM, "slopd never writes into authorized/")
        return self.lane_fd(lane)

    def write(self, lane: str, name: str, data: bytes, *, replace: bool = True) -> None:
        """Write `lane/name` atomically and durably, now; with `replace=False` never clobber."""
        fs.atomic_write(self._writable_fd(lane), name, data, replace=replace)

    def stage(self, lane: str, name: str, data: bytes) -> fs.Staged:
        """Write `lane/name`'s temporary file only; `fs.commit` makes it durable and names it."""
        return fs.stage(self._writable_fd(lane), name, data)

    def copy_tree(self, source: Path, lane: str, name: str) -> int:
        """Copy regular files and folders of `source` to `lane/name/` atomically; returns files."""
        fd_dir = self._writable_fd(lane)
        temp = temp_name(name, os.urandom(6).hex())
        os.mkdir(temp, 0o755, dir_fd=fd_dir)
        count = trees.copy_into(source, os.open(temp, fs.DIR_FLAGS, dir_fd=fd_dir))
        if reads.exists_at(fd_dir, name):
            retired = temp_name(f"old-{name}", os.urandom(6).hex())
            os.rename(name, retired, src_dir_fd=fd_dir, dst_dir_fd=fd_dir)
            trees.remove_tree(fd_dir, retired)
        os.rename(temp, name, src_dir_fd=fd_dir, dst_dir_fd=fd_dir)
        fs.fsync_dir(fd_dir)
        return count

    def remove_temps(self, *, now: float, inbox_age: float = 60.0) -> list[str]:
        """Remove slopd's own temp files and dirs left by a crash; returns what was removed.

        In `inbox/` only temps older than `inbox_age` go: a `slopd send` (or the HTTP transport,
        starting beside the daemon) may be writing one now, and may rename or remove it while it
        is looked at — a temp gone meanwhile is simply not there to remove.
        """
        removed = []
        for lane in ("inbox", "outbox", "notes"):
            try:
                fd = self.lane_fd(lane)
            except LaneError:
                continue
            with os.scandir(fd) as entries:
                names = [entry.name for entry in entries if is_temp(entry.name)]
            for name in names:
                try:
                    status = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    if lane == "inbox" and now - status.st_mtime < inbox_age:
                        continue
                    if stat.S_ISDIR(status.st_mode):
                        trees.remove_tree(fd, name)
                    else:
                        os.unlink(name, dir_fd=fd)
                except FileNotFoundError:
                    continue
                removed.append(f"{lane}/{name}")
        return removed


def require_hub(value: str | Path) -> Path:
    """`value` as a hub's root: a folder with `inbox/`, else a `UsageError` saying how to make one."""
    root = Path(value)
    if not (root / "inbox").is_dir():
        raise UsageError(f"{root}: not a hub (no inbox/); create one with: slopd init {root}")
    return root


def init(root: Path, guide: str) -> list[str]:
    """Create the lanes and HUB.md where missing; never change what exists. Returns what was made."""
    made = []
    if not root.exists():
        root.mkdir(parents=True)
        made.append(f"{root}/")
    for lane in LANES:
        if not (root / lane).exists():
            (root / lane).mkdir()
            made.append(f"{root / lane}/")
    guide_path = root / "HUB.md"
    if not guide_path.exists() and not guide_path.is_symlink():
        with contextlib.suppress(FileExistsError):
            fs.write_file(guide_path, guide.encode("utf-8"))
            made.append(str(guide_path))
    return made
