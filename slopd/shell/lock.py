"""One daemon per hub per machine: an exclusive `flock` on `slopd.lock` in the state dir."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from slopd.core.layout import LOCK_FILE


class LockHeld(Exception):  # noqa: N818  # reads as a state: "lock held"
    def __init__(self, path: Path, pid: int | None) -> None:
        self.path, self.pid = path, pid
        super().__init__(f"{path} is held by pid {pid if pid is not None else 'unknown'}")


def _pid_in(fd: int) -> int | None:
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 32).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None


def acquire(state_dir: Path) -> int:
    """Take the lock and write our pid into it; the fd must stay open while we run."""
    path = state_dir / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = _pid_in(fd)
        os.close(fd)
        raise LockHeld(path, pid) from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def holder(state_dir: Path) -> int | None:
    """The pid of the daemon holding the hub, or None when nobody does."""
    path = state_dir / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _pid_in(fd) or -1
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
