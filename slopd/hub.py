"""The hub folder: every byte here is hostile, so every access is no-follow and race-free.

Rules:
1. All access goes through directory fds opened with O_NOFOLLOW: a lane replaced by a symlink
   is refused, and a symlink, FIFO, device or directory in a lane is reported, never opened
   for reading or followed.
2. Inputs are read once, at most `limit + 1` bytes, from an fd whose fstat says regular file
   with one link.
3. Writes are atomic and durable: a dot temp file in the same directory, fsync, rename, fsync
   of the directory (ignoring only EINVAL, for filesystems that cannot sync a directory).
4. Nothing is deleted: archiving links the entry into `archive/YYYY-MM-DD/` (never clobbering),
   syncs that directory, then unlinks the lane's name.
5. slopd never writes into `authorized/`.
6. Between `defer()` and `flush()` (group commit) a write is only staged as its temp file and
   an archive only reserves its target; `flush()` makes the staged files durable together
   (one syncfs on Linux, then a now cheap fsync each), names them and syncs the written
   directories once; `complete_archives()` links every input, syncs each archive folder once,
   and only then unlinks the inputs — the same order of effects as one at a time, with fewer
   flushes.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import cast

LANES = ("inbox", "authorized", "outbox", "archive", "assets", "notes")
INPUT_LANES = ("inbox", "authorized")
TEMP_PREFIX = ".slopd-tmp-"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class LaneError(OSError):
    """A lane is missing, not a directory, or replaced by a symlink."""


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    stat: os.stat_result

    @property
    def signature(self) -> tuple[int, int, int, int]:
        """What must stay equal while a file settles: inode, size, mtime, ctime."""
        return (self.stat.st_ino, self.stat.st_size, self.stat.st_mtime_ns, self.stat.st_ctime_ns)


def signature(status: os.stat_result | None) -> tuple[int, int, int, int] | None:
    """`Entry.signature` of an lstat, or None for a file that is gone."""
    return None if status is None else Entry("", status).signature


@dataclass(frozen=True, slots=True)
class Archived:
    """One move of a deferred batch: done when `error` is None; `moved` is False when the file
    was gone by then (renamed away or deleted), so there was nothing to move."""

    lane: str
    name: str
    target: str
    error: OSError | None = None
    moved: bool = True


@dataclass(frozen=True, slots=True)
class Contents:
    data: bytes
    stat: os.stat_result


@dataclass(frozen=True, slots=True)
class Unreadable:
    reason: str
    stat: os.stat_result | None


def _load_syncfs() -> Callable[[int], int] | None:
    """Linux's syncfs(2) through libc, or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    function.argtypes, function.restype = [ctypes.c_int], ctypes.c_int
    return cast("Callable[[int], int]", function)


_syncfs = _load_syncfs()


@dataclass(frozen=True, slots=True)
class _Staged:
    """A written temp file, still open, waiting to be made durable and named."""

    fd: int
    fd_dir: int
    temp: str
    name: str

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)
        with contextlib.suppress(OSError):
            os.unlink(self.temp, dir_fd=self.fd_dir)


def _commit_all(staged: list[_Staged], *, replace: bool = True) -> None:
    """Make written temp files durable, then give each its name, in order.

    Several at once are flushed by one syncfs(2), one pass of the disk's cache instead of
    one per file; each is still fsynced after it, which is then cheap (its data is already
    on disk) and reports a write error of that very file, whatever the kernel's syncfs says.
    """
    try:
        if len(staged) > 1 and _syncfs is not None and _syncfs(staged[0].fd) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"syncfs: {os.strerror(error)}")
        for index, file in enumerate(staged):
            os.fsync(file.fd)
            os.close(file.fd)
            staged[index] = _Staged(-1, file.fd_dir, file.temp, file.name)  # closed
            if replace:
                os.replace(file.temp, file.name, src_dir_fd=file.fd_dir, dst_dir_fd=file.fd_dir)
            else:
                os.link(
                    file.temp,
                    file.name,
                    src_dir_fd=file.fd_dir,
                    dst_dir_fd=file.fd_dir,
                    follow_symlinks=False,
                )
                os.unlink(file.temp, dir_fd=file.fd_dir)
    except BaseException:
        for file in staged:
            file.discard()  # what was named is gone from under its temp name: nothing happens
        raise


def describe(mode: int) -> str:
    kinds = {
        stat.S_ISLNK: "a symbolic link",
        stat.S_ISDIR: "a directory",
        stat.S_ISFIFO: "a FIFO",
        stat.S_ISSOCK: "a socket",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
        stat.S_ISREG: "a regular file",
    }
    return next((text for test, text in kinds.items() if test(mode)), "not a regular file")


def fsync_dir(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError as error:
        if error.errno != errno.EINVAL:
            raise


class Hub:
    """One hub folder, held open by directory fds."""

    def __init__(self, root: Path) -> None:
        self.root = root
        try:
            self._root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as error:
            raise LaneError(error.errno, f"cannot open the hub {root}: {error.strerror}") from None
        self._fds: dict[str, int] = {}
        self._deferred = self._stage = False
        self._unsynced: set[str] = set()  # lanes written since `defer()`, their fsync owed
        self._moves: list[Archived] = []  # archives reserved since `defer()`
        self._reserved: set[str] = set()
        self._checked: set[str] = set()  # lanes whose fd was checked in this batch
        self._staged: list[_Staged] = []  # the batch's written temp files, named at `flush`

    def defer(self, *, stage: bool = True) -> None:
        """Start a batch: directory fsyncs and archive moves wait for `flush`; each lane is
        checked once in the batch (it may be replaced meanwhile, but its fd never follows).

        With `stage`, written files wait for `flush` too, to be made durable together; without
        it (a batch of one, where nothing is gained) each is durable and named at once.
        """
        self._deferred, self._stage = True, stage
        self._checked.clear()

    def flush(self) -> None:
        """Make the batch's writes durable, name them, and sync every directory written in it.

        An OSError leaves the moves pending (the caller then drops the batch); the files named
        before the failure stay, which is harmless: replies are rewritten, identically, on retry.
        """
        staged, self._staged = self._staged, []
        _commit_all(staged)
        for lane in sorted(self._unsynced):
            fsync_dir(self.lane_fd(lane))
            self._unsynced.discard(lane)

    def complete_archives(self) -> list[Archived]:
        """After `flush` and the ledger commit: perform the reserved moves, end the batch."""
        moves, self._moves = self._moves, []
        try:
            return self._move_all(moves)
        finally:
            self._reserved.clear()
            self._deferred = False
            self._checked.clear()

    def _move_all(self, moves: list[Archived]) -> list[Archived]:
        done: dict[tuple[str, str], Archived] = {}
        linked: list[Archived] = []
        days: dict[str, int] = {}
        try:
            for move in moves:
                day = move.target.removeprefix("archive/").partition("/")[0]
                try:
                    if day not in days:
                        days[day] = os.open(day, _DIR_FLAGS, dir_fd=self.lane_fd("archive"))
                    if self._link(move.lane, move.name, move.target, days[day]):
                        linked.append(move)
                    else:
                        done[(move.lane, move.name)] = Archived(
                            move.lane, move.name, move.target, moved=False
                        )
                except OSError as error:
                    done[(move.lane, move.name)] = Archived(move.lane, move.name, move.target, error)
            for day, fd in days.items():
                try:
                    fsync_dir(fd)
                except OSError as error:  # not durable: keep every input of that day in its lane
                    for move in [m for m in linked if m.target.startswith(f"archive/{day}/")]:
                        linked.remove(move)
                        done[(move.lane, move.name)] = Archived(move.lane, move.name, move.target, error)
        finally:
            for fd in days.values():
                os.close(fd)
        for move in linked:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(move.name, dir_fd=self.lane_fd(move.lane))
            done[(move.lane, move.name)] = move
        return [done[(move.lane, move.name)] for move in moves]

    def drop_deferred(self) -> list[Archived]:
        """End a failed batch: nothing reserved is moved; returns what was not."""
        staged, self._staged = self._staged, []
        for temp in staged:
            temp.discard()
        moves, self._moves = self._moves, []
        self._reserved.clear()
        self._unsynced.clear()
        self._deferred = False
        self._checked.clear()
        return moves

    def close(self) -> None:
        for fd in [*self._fds.values(), self._root_fd]:
            os.close(fd)
        self._fds.clear()
        self._checked.clear()

    def lane_fd(self, lane: str) -> int:
        """The fd of `lane`, reopened if the directory was replaced; a symlinked lane is refused."""
        if lane in self._checked:
            return self._fds[lane]
        try:
            current = os.stat(lane, dir_fd=self._root_fd, follow_symlinks=False)
        except OSError as error:
            raise LaneError(error.errno, f"{lane}/ is missing: {error.strerror}") from None
        if not stat.S_ISDIR(current.st_mode):
            raise LaneError(errno.ENOTDIR, f"{lane}/ is {describe(current.st_mode)}, not a directory")
        fd = self._fds.get(lane)
        if fd is not None:
            held = os.fstat(fd)
            if (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino):
                if self._deferred:
                    self._checked.add(lane)
                return fd
            os.close(fd)
        fd = os.open(lane, _DIR_FLAGS, dir_fd=self._root_fd)
        self._fds[lane] = fd
        if self._deferred:
            self._checked.add(lane)
        return fd

    def scan(self, lane: str) -> list[Entry]:
        """Every entry of `lane` with its lstat, oldest first, then by name."""
        entries = []
        with os.scandir(self.lane_fd(lane)) as listing:
            for item in listing:
                try:
                    entries.append(Entry(item.name, item.stat(follow_symlinks=False)))
                except FileNotFoundError:
                    continue
        entries.sort(key=lambda entry: (entry.stat.st_mtime_ns, entry.name))
        return entries

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

    def read(self, lane: str, name: str, limit: int) -> Contents | Unreadable:
        """Read an input once; a symlink, special file, hard link or oversize file is refused."""
        return read_file(name, limit, dir_fd=self.lane_fd(lane))

    def write(self, lane: str, name: str, data: bytes, *, replace: bool = True) -> None:
        """Write `lane/name` atomically and durably; with `replace=False` never clobber.

        In a batch the written temp file is only staged: `flush` makes every staged file
        durable at once, then names them (a reply appears when its batch is flushed).
        """
        if lane == "authorized":
            raise PermissionError(errno.EPERM, "slopd never writes into authorized/")
        fd_dir = self.lane_fd(lane)
        temp = f"{TEMP_PREFIX}{secrets.token_hex(6)}-{name}"[:255]
        staged = _Staged(os.open(temp, _CREATE_FLAGS, 0o644, dir_fd=fd_dir), fd_dir, temp, name)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(staged.fd, view) :]
        except BaseException:
            staged.discard()
            raise
        if self._deferred and self._stage and replace:
            self._staged.append(staged)
            self._unsynced.add(lane)
            return
        _commit_all([staged], replace=replace)
        if self._deferred:
            self._unsynced.add(lane)
        else:
            fsync_dir(fd_dir)

    def archive_target(self, name: str, now: datetime) -> str:
        """A free path `archive/DAY/NAME` (or `NAME-2`, …) for `name`, relative to the hub."""
        day = now.strftime("%Y-%m-%d")
        archive_fd = self.lane_fd("archive")
        with contextlib.suppress(FileExistsError):
            os.mkdir(day, 0o755, dir_fd=archive_fd)
        stem, dot, suffix = name[1:].partition(".")
        stem, suffix = name[0] + stem, dot + suffix
        for attempt in range(1, 100_000):
            target = name if attempt == 1 else f"{stem}-{attempt}{suffix}"
            path = f"archive/{day}/{target}"
            if path not in self._reserved and not self._exists(archive_fd, f"{day}/{target}"):
                return path
        raise FileExistsError(errno.EEXIST, f"no free archive name for {name}")

    def archive(self, lane: str, name: str, target: str) -> bool:
        """Move `lane/name` to `target` (from `archive_target`): link, sync, then unlink.

        In a batch the move is only reserved (True); otherwise False when the file was gone.
        """
        if self._deferred:
            self._moves.append(Archived(lane, name, target))
            self._reserved.add(target)
            return True
        day = target.removeprefix("archive/").partition("/")[0]
        day_fd = os.open(day, _DIR_FLAGS, dir_fd=self.lane_fd("archive"))
        try:
            if not self._link(lane, name, target, day_fd):
                return False
            fsync_dir(day_fd)
        finally:
            os.close(day_fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=self.lane_fd(lane))
        return True

    def _link(self, lane: str, name: str, target: str, day_fd: int) -> bool:
        """Give `lane/name` its archive name too (False: it is gone); a move if links fail."""
        final = target.rpartition("/")[2]
        lane_fd = self.lane_fd(lane)
        try:
            os.link(name, final, src_dir_fd=lane_fd, dst_dir_fd=day_fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        except FileExistsError:
            if not self.is_archived_copy(lane, name, target):
                raise
        except OSError as error:
            if error.errno not in (errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOTSUP):
                raise
            os.rename(name, final, src_dir_fd=lane_fd, dst_dir_fd=day_fd)
        return True

    @staticmethod
    def _exists(dir_fd: int, name: str) -> bool:
        try:
            os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return True

    def is_archived_copy(self, lane: str, name: str, archived: str) -> bool:
        """Whether `lane/name` is the same inode as `archived` (a link left by an interrupted move)."""
        here = self.lstat(lane, name)
        try:
            there = os.stat(archived, dir_fd=self._root_fd, follow_symlinks=False)
        except OSError:
            return False
        return here is not None and (here.st_ino, here.st_dev) == (there.st_ino, there.st_dev)

    def path_exists(self, relative: str) -> bool:
        """Whether a hub-relative path (as the ledger records it) names an entry."""
        try:
            os.stat(relative, dir_fd=self._root_fd, follow_symlinks=False)
        except OSError:
            return False
        return True

    def exists(self, lane: str, name: str) -> bool:
        return self.lstat(lane, name) is not None

    def remove_temps(self, *, now: float, inbox_age: float = 60.0) -> list[str]:
        """Remove slopd's own temp files and dirs left by a crash; returns what was removed.

        In `inbox/` only temps older than `inbox_age` go: a `slopd send` may be writing one now.
        """
        removed = []
        for lane in ("inbox", "outbox", "notes"):
            try:
                fd = self.lane_fd(lane)
            except LaneError:
                continue
            for entry in os.scandir(fd):
                if not entry.name.startswith(TEMP_PREFIX):
                    continue
                status = entry.stat(follow_symlinks=False)
                if lane == "inbox" and now - status.st_mtime < inbox_age:
                    continue
                if stat.S_ISDIR(status.st_mode):
                    _remove_tree(fd, entry.name)
                else:
                    os.unlink(entry.name, dir_fd=fd)
                removed.append(f"{lane}/{entry.name}")
        return removed

    def copy_tree(self, source: Path, lane: str, name: str) -> int:
        """Copy regular files and directories of `source` to `lane/name/` atomically; returns files."""
        fd_dir = self.lane_fd(lane)
        temp = f"{TEMP_PREFIX}{secrets.token_hex(6)}-{name}"[:255]
        os.mkdir(temp, 0o755, dir_fd=fd_dir)
        count = _copy_into(source, os.open(temp, _DIR_FLAGS, dir_fd=fd_dir))
        if self._exists(fd_dir, name):
            retired = f"{TEMP_PREFIX}old-{secrets.token_hex(6)}"
            os.rename(name, retired, src_dir_fd=fd_dir, dst_dir_fd=fd_dir)
            _remove_tree(fd_dir, retired)
        os.rename(temp, name, src_dir_fd=fd_dir, dst_dir_fd=fd_dir)
        fsync_dir(fd_dir)
        return count


def read_file(path: str | Path, limit: int, *, dir_fd: int | None = None) -> Contents | Unreadable:
    """Read a regular single-link file of at most `limit` bytes, never following a symlink."""
    try:
        fd = os.open(path, _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return Unreadable("does not exist", None)  # even if it appears a moment later
    except OSError as error:
        try:
            status: os.stat_result | None = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            status = None
        if status is not None and not stat.S_ISREG(status.st_mode):
            return Unreadable(f"is {describe(status.st_mode)}; only regular files are read", status)
        return Unreadable(f"cannot be opened: {error.strerror}", status)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            return Unreadable(f"is {describe(status.st_mode)}; only regular files are read", status)
        if status.st_nlink != 1:
            return Unreadable(f"has {status.st_nlink} hard links; only single-link files are read", status)
        if status.st_size > limit:
            return Unreadable(f"is {status.st_size} bytes, over the {limit}-byte limit", status)
        chunks, remaining = [], limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            return Unreadable(f"grew past the {limit}-byte limit while being read", status)
        return Contents(data, status)
    except OSError as error:
        return Unreadable(f"cannot be read: {error.strerror}", None)
    finally:
        os.close(fd)


def write_file(path: Path, data: bytes, *, mode: int = 0o644, replace: bool = False) -> None:
    """Write any file atomically and durably (temp, fsync, link or rename, fsync the directory).

    Without `replace`, an existing file is never clobbered: FileExistsError.
    """
    parent = path.parent
    dir_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    temp = f"{TEMP_PREFIX}{secrets.token_hex(6)}-{path.name}"[:255]
    try:
        fd = os.open(temp, _CREATE_FLAGS, mode, dir_fd=dir_fd)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            if replace:
                os.replace(temp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            else:
                os.link(temp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=dir_fd)
        fsync_dir(dir_fd)
    finally:
        os.close(dir_fd)


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
        temp = root / f"{TEMP_PREFIX}{secrets.token_hex(6)}-HUB.md"
        temp.write_text(guide, encoding="utf-8")
        try:
            os.link(temp, guide_path)
            made.append(str(guide_path))
        except FileExistsError:
            pass
        finally:
            temp.unlink()
    return made


def _copy_into(source: Path, target_fd: int) -> int:
    count = 0
    try:
        for item in os.scandir(source):
            if item.is_symlink():
                continue
            if item.is_dir(follow_symlinks=False):
                os.mkdir(item.name, 0o755, dir_fd=target_fd)
                count += _copy_into(Path(item.path), os.open(item.name, _DIR_FLAGS, dir_fd=target_fd))
            elif item.is_file(follow_symlinks=False):
                with open(item.path, "rb") as reader:
                    fd = os.open(item.name, _CREATE_FLAGS, 0o644, dir_fd=target_fd)
                    try:
                        while chunk := reader.read(1 << 20):
                            os.write(fd, chunk)
                        os.fsync(fd)
                    finally:
                        os.close(fd)
                count += 1
        fsync_dir(target_fd)
    finally:
        os.close(target_fd)
    return count


def _remove_tree(parent_fd: int, name: str) -> None:
    """Remove a tree slopd itself made (a replaced deliverable), never following links."""
    fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    try:
        for item in os.scandir(fd):
            if item.is_dir(follow_symlinks=False):
                _remove_tree(fd, item.name)
            else:
                os.unlink(item.name, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent_fd)


def has_files(directory: Path) -> bool:
    """Whether an executor left any regular file (not a link) under `directory`."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return False
    return any(
        entry.is_file(follow_symlinks=False)
        or (entry.is_dir(follow_symlinks=False) and has_files(Path(entry.path)))
        for entry in entries
    )
