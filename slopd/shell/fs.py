"""File primitives every writer and reader of slopd uses: read once, never follow, write atomically.

Rules:
1. A read opens with O_NOFOLLOW|O_NONBLOCK and reads at most `limit + 1` bytes from an fd whose
   fstat says regular file with one link; anything else is `Unreadable`, with the reason.
2. A write goes to a temporary name in the same directory (`core.layout.temp_name`), every
   byte of it (short writes are looped), then fsync, then the final name (`os.replace`; or,
   never clobbering, a rename that refuses an existing name — a watcher sees a complete file
   arrive — else a link and an unlink), then an fsync of the directory — ignoring only EINVAL,
   for filesystems that cannot sync a directory.
3. Staged files (written, not yet durable nor named) are made durable together by `commit`:
   one syncfs(2) on Linux, then an fsync each — cheap by then, and it reports that very file's
   write error whatever the kernel's syncfs says — then named, then each directory synced
   once. A failed commit leaves no temporary file.
4. Nothing here follows a symlink or removes anything slopd did not make.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from slopd.core.layout import temp_name
from slopd.shell import exchange

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1 << 20
MISSING = "does not exist"  # the reason of a file that is not there


@dataclass(frozen=True, slots=True)
class Contents:
    data: bytes
    stat: os.stat_result


@dataclass(frozen=True, slots=True)
class Unreadable:
    reason: str
    stat: os.stat_result | None


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


def read_once(path: str | Path, limit: int, *, dir_fd: int | None = None) -> Contents | Unreadable:
    """Read a regular single-link file of at most `limit` bytes, never following a symlink."""
    try:
        fd = os.open(path, _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return Unreadable(MISSING, None)  # even if it appears a moment later
    except OSError as error:
        try:
            status: os.stat_result | None = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            status = None
        if status is not None and not stat.S_ISREG(status.st_mode):
            return Unreadable(f"is {describe(status.st_mode)}; only regular files are read", status)
        return Unreadable(f"cannot be opened: {error.strerror}", status)
    try:
        return _read_open(fd, limit)
    except OSError as error:
        return Unreadable(f"cannot be read: {error.strerror}", None)
    finally:
        os.close(fd)


def _read_open(fd: int, limit: int) -> Contents | Unreadable:
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode):
        return Unreadable(f"is {describe(status.st_mode)}; only regular files are read", status)
    if status.st_nlink != 1:
        return Unreadable(f"has {status.st_nlink} hard links; only single-link files are read", status)
    if status.st_size > limit:
        return Unreadable(f"is {status.st_size} bytes, over the {limit}-byte limit", status)
    chunks, remaining = [], limit + 1
    while remaining > 0:
        chunk = os.read(fd, min(remaining, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    data = b"".join(chunks)
    if len(data) > limit:
        return Unreadable(f"grew past the {limit}-byte limit while being read", status)
    return Contents(data, status)


def digest(dir_fd: int, name: str, *, copy_to: Path | None = None) -> str | Unreadable:
    """The SHA-256 of the regular file `name` (never through a link), read in chunks, any size;
    with `copy_to`, the very bytes hashed are also written there (a new file)."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return Unreadable(MISSING, None)
    except OSError as error:
        return Unreadable(f"cannot be opened ({error.strerror}); only regular files are read", None)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            return Unreadable(f"is {describe(status.st_mode)}; only regular files are read", status)
        if copy_to is None:
            return _hashed(lambda: os.read(fd, _CHUNK), lambda _chunk: None)
        with open(copy_to, "xb") as writer:
            return _hashed(lambda: os.read(fd, _CHUNK), writer.write)
    except OSError as error:
        return Unreadable(f"cannot be read: {error.strerror}", None)
    finally:
        os.close(fd)


def exists_at(dir_fd: int, name: str) -> bool:
    """Whether `name` is an entry of the directory `dir_fd` (a link is not followed)."""
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data`: `os.write` may write fewer than it was given."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def fsync_dir(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError as error:
        if error.errno != errno.EINVAL:
            raise


@cache
def _syncfs() -> Callable[[int], int] | None:
    """Linux's syncfs(2) through libc, or None where there is none (loaded on first use)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # noqa: PLC0415  # only a batch of several writes needs it; commands never do

    try:
        function = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    function.argtypes, function.restype = [ctypes.c_int], ctypes.c_int

    def syncfs(fd: int) -> int:
        result = int(function(fd))
        if result != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"syncfs: {os.strerror(error)}")
        return result

    return syncfs


@dataclass(slots=True)
class Staged:
    """A written temporary file, still open: not yet durable, not yet named.

    It holds its own duplicate of its directory's fd, so a lane reopened meanwhile (replaced
    under the hub) never leaves it naming a file through an fd that was closed or reused.
    """

    fd: int
    dir_fd: int
    temp: str
    name: str

    def close(self) -> None:
        for fd in (self.fd, self.dir_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.fd = self.dir_fd = -1

    def discard(self) -> None:
        if self.dir_fd >= 0:
            with contextlib.suppress(OSError):
                os.unlink(self.temp, dir_fd=self.dir_fd)
        self.close()


def stage_copy(dir_fd: int, name: str, source: Path) -> tuple[Staged, str]:
    """Copy the file `source` (any size) to a new temporary file beside `name`, as `stage` does;
    with the SHA-256 of the bytes copied."""
    staged = stage(dir_fd, name, b"")
    try:
        with open(source, "rb") as reader:
            return staged, _hashed(lambda: reader.read(_CHUNK), lambda chunk: write_all(staged.fd, chunk))
    except BaseException:
        staged.discard()
        raise


def _hashed(read: Callable[[], bytes], write: Callable[[bytes], object]) -> str:
    """Copy chunk by chunk from `read` to `write` until `read` gives nothing; the SHA-256 of it all."""
    import hashlib  # noqa: PLC0415  # only asset copies hash; a per-message command need not load OpenSSL

    hasher = hashlib.sha256()
    while chunk := read():
        hasher.update(chunk)
        write(chunk)
    return hasher.hexdigest()


def stage(dir_fd: int, name: str, data: bytes, *, mode: int = 0o644) -> Staged:
    """Write `data` to a new temporary file beside `name` (rule 2, up to the fsync)."""
    temp = temp_name(name, os.urandom(6).hex())
    held = os.dup(dir_fd)
    try:
        staged = Staged(os.open(temp, _CREATE_FLAGS, mode, dir_fd=held), held, temp, name)
    except BaseException:
        os.close(held)
        raise
    try:
        write_all(staged.fd, data)
    except BaseException:
        staged.discard()
        raise
    return staged


def commit(staged: list[Staged], *, replace: bool = True) -> None:
    """Make staged files durable, give each its name, in order, then sync each directory they
    were named in, once (rule 3).

    Without `replace` an existing name is never clobbered: FileExistsError. On any failure
    every temporary name is removed; files already named stay, which is harmless to callers
    that write the same bytes again on retry.
    """
    directories: dict[tuple[int, int], int] = {}  # (st_dev, st_ino) -> one of its fds
    try:
        syncfs = _syncfs() if len(staged) > 1 else None
        if syncfs is not None:
            syncfs(staged[0].fd)
        for file in staged:
            os.fsync(file.fd)
            if replace:
                os.replace(file.temp, file.name, src_dir_fd=file.dir_fd, dst_dir_fd=file.dir_fd)
            elif not exchange.rename_new(file.dir_fd, file.temp, file.name):
                os.link(
                    file.temp,
                    file.name,
                    src_dir_fd=file.dir_fd,
                    dst_dir_fd=file.dir_fd,
                    follow_symlinks=False,
                )
                os.unlink(file.temp, dir_fd=file.dir_fd)
            held = os.fstat(file.dir_fd)
            directories.setdefault((held.st_dev, held.st_ino), file.dir_fd)
        for fd in directories.values():
            fsync_dir(fd)
    except BaseException:
        for file in staged:
            file.discard()  # what was named is gone from under its temp name: nothing happens
        raise
    for file in staged:
        file.close()


def atomic_write(dir_fd: int, name: str, data: bytes, *, replace: bool = True, mode: int = 0o644) -> None:
    """Write `name` in the directory `dir_fd` atomically and durably (rule 2)."""
    commit([stage(dir_fd, name, data, mode=mode)], replace=replace)


def write_file(path: Path, data: bytes, *, mode: int = 0o644, replace: bool = False) -> None:
    """`atomic_write` by path, for files outside any hub (keys, signatures, service units).

    Without `replace`, an existing file is never clobbered: FileExistsError.
    """
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        atomic_write(dir_fd, path.name, data, replace=replace, mode=mode)
    finally:
        os.close(dir_fd)


def copy_into(source: Path, target_fd: int) -> int:
    """Copy the regular files and folders of `source` into `target_fd` (closed after); symlinks
    are skipped. Returns how many files were copied."""
    count = 0
    try:
        for item in os.scandir(source):
            if item.is_symlink():
                continue
            if item.is_dir(follow_symlinks=False):
                os.mkdir(item.name, 0o755, dir_fd=target_fd)
                count += copy_into(Path(item.path), os.open(item.name, DIR_FLAGS, dir_fd=target_fd))
            elif item.is_file(follow_symlinks=False):
                with open(item.path, "rb") as reader:
                    fd = os.open(item.name, _CREATE_FLAGS, 0o644, dir_fd=target_fd)
                    try:
                        while chunk := reader.read(_CHUNK):
                            write_all(fd, chunk)
                        os.fsync(fd)
                    finally:
                        os.close(fd)
                count += 1
        fsync_dir(target_fd)
    finally:
        os.close(target_fd)
    return count


def remove_tree(parent_fd: int, name: str) -> None:
    """Remove a tree slopd itself made (a replaced deliverable, a crash's leftovers), never
    following links."""
    fd = os.open(name, DIR_FLAGS, dir_fd=parent_fd)
    try:
        for item in os.scandir(fd):
            if item.is_dir(follow_symlinks=False):
                remove_tree(fd, item.name)
            else:
                os.unlink(item.name, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent_fd)


def has_files(directory: Path) -> bool:
    """Whether `directory` holds any regular file (not a link), at any depth."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return False
    return any(
        entry.is_file(follow_symlinks=False)
        or (entry.is_dir(follow_symlinks=False) and has_files(Path(entry.path)))
        for entry in entries
    )
