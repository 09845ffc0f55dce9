"""One daemon per hub per machine: an exclusive `flock` on `slopd.lock` in the state dir.

Rules:
1. The holder writes its pid on the first line of the lock file and the real path of the hub it
   serves on the second, so a command that found a state dir through the hub (`ops.running`)
   can check that the dir is held, by whom, and for which hub.
2. Looking (`holder`, `held`) takes a shared lock for an instant and never writes.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

from slopd.core.layout import LOCK_FILE

_MAX_BYTES = 8192


class LockHeld(Exception):  # noqa: N818  # reads as a state: "lock held"
    def __init__(self, path: Path, pid: int | None) -> None:
        self.path, self.pid = path, pid
        super().__init__(f"{path} is held by pid {pid if pid is not None else 'unknown'}")


@dataclass(frozen=True, slots=True)
class Held:
    """Who holds a state dir's lock (rule 1): a pid (-1 when unreadable) and its hub, if written."""

    pid: int
    hub: str | None
    owner: int  # the lock file's uid


def _read(fd: int) -> tuple[int | None, str | None]:
    os.lseek(fd, 0, os.SEEK_SET)
    lines = os.read(fd, _MAX_BYTES).decode("utf-8", "replace").split("\n")
    pid = lines[0].strip()
    hub = lines[1] if len(lines) > 2 and lines[1] else None  # a complete second line only
    return (int(pid) if pid.isdigit() else None), hub


def acquire(state_dir: Path, hub: Path | None = None) -> int:
    """Take the lock and write our pid (and the hub's real path) into it; the fd must stay open
    while we run."""
    path = state_dir / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid, _hub = _read(fd)
        os.close(fd)
        raise LockHeld(path, pid) from None
    os.ftruncate(fd, 0)
    served = f"{os.path.realpath(hub)}\n" if hub is not None else ""
    os.write(fd, f"{os.getpid()}\n{served}".encode())
    return fd


def held(state_dir: Path) -> Held | None:
    """Rule 2: who holds the lock of `state_dir`, or None when nobody does (or there is none)."""
    path = state_dir / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        pid, hub = _read(fd)
        return Held(pid or -1, hub, os.fstat(fd).st_uid)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def holder(state_dir: Path) -> int | None:
    """The pid of the daemon holding the hub (-1: held, pid unknown), or None when nobody does."""
    found = held(state_dir)
    return found.pid if found is not None else None
