"""Writing files atomically and durably: a temporary name, fsync, the final name, the directory synced.

Reading is `shell.reads`; whole folders, copied in or removed, are `shell.trees`.

Rules:
1. A write goes to a temporary name in the same directory (`core.layout.temp_name`), every
   byte of it (short writes are looped), then fsync, then the final name (`os.replace`; or,
   never clobbering, a rename that refuses an existing name — a watcher sees a complete file
   arrive — else a link and an unlink), then an fsync of the directory — ignoring only EINVAL,
   for filesystems that cannot sync a directory.
2. Staged files (written, not yet durable nor named) are made durable together by `commit`:
   one syncfs(2) on Linux, then an fsync each — cheap by then, and it reports that very file's
   write error whatever the kernel's syncfs says — then named, then each directory synced
   once. A failed commit leaves no temporary file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from slopd.core.layout import temp_name
from slopd.shell import exchange
from slopd.shell.reads import CHUNK, hashed

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


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
            return staged, hashed(lambda: reader.read(CHUNK), lambda chunk: write_all(staged.fd, chunk))
    except BaseException:
        staged.discard()
        raise


def stage(dir_fd: int, name: str, data: bytes, *, mode: int = 0o644) -> Staged:
    """Write `data` to a new temporary file beside `name` (rule 1, up to the fsync)."""
    temp = temp_name(name, os.urandom(6).hex())
    held = os.dup(dir_fd)
    try:
        staged = Staged(os.open(temp, CREATE_FLAGS, mode, dir_fd=held), held, temp, name)
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
    were named in, once (rule 2).

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
    """Write `name` in the directory `dir_fd` atomically and durably (rule 1)."""
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
