"""Reading files that may be hostile: read once, never through a link, never past a limit.

Rules:
1. A read opens with O_NOFOLLOW|O_NONBLOCK and reads at most `limit + 1` bytes from an fd whose
   fstat says regular file with one link; anything else is `Unreadable`, with the reason.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
CHUNK = 1 << 20
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
        chunk = os.read(fd, min(remaining, CHUNK))
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
            return hashed(lambda: os.read(fd, CHUNK), lambda _chunk: None)
        with open(copy_to, "xb") as writer:
            return hashed(lambda: os.read(fd, CHUNK), writer.write)
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


def hashed(read: Callable[[], bytes], write: Callable[[bytes], object]) -> str:
    """Copy chunk by chunk from `read` to `write` until `read` gives nothing; the SHA-256 of it all."""
    import hashlib  # noqa: PLC0415  # only asset copies hash; a per-message command need not load OpenSSL

    hasher = hashlib.sha256()
    while chunk := read():
        hasher.update(chunk)
        write(chunk)
    return hasher.hexdigest()
