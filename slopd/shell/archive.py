"""The archive: where consumed inputs go, never deleted (SPEC §2, §7).

Rules:
1. A consumed input is moved to `archive/YYYY-MM-DD/NAME`; a taken name gets `-2`, `-3`…
   before its extension (`x-2.md`), and a name a caller has reserved is never handed out.
2. A move links the input under its archive name (never clobbering), syncs that day's folder,
   and only then unlinks the lane's name: there is never a moment with no name for it.
   Where links are impossible (EPERM, EXDEV, EMLINK, ENOTSUP) it is renamed instead.
3. `move_all` does the same for many: every link, each day folder synced once, then every
   unlink. A move that cannot be made keeps its input in its lane, reported in `Moved.error`.
4. A lane name that is the same inode as an archived copy is a move cut short by a crash.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from slopd.shell import fs, reads
from slopd.shell.lanes import Hub

_LINKLESS = (errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOTSUP)


@dataclass(frozen=True, slots=True)
class Move:
    lane: str
    name: str
    target: str  # hub-relative: archive/DAY/NAME


@dataclass(frozen=True, slots=True)
class Moved:
    """What became of one `Move`: done when `error` is None; `moved` is False when the file was
    gone by then (renamed away or deleted), so there was nothing to move."""

    move: Move
    error: OSError | None = None
    moved: bool = True


def numbered(name: str, attempt: int) -> str:
    """`name`, or for attempt 2 on `stem-2.ext` (the extension is everything after the first
    dot past the first character, so `.md.sig` stays whole)."""
    if attempt == 1:
        return name
    stem, dot, suffix = name[1:].partition(".")
    return f"{name[0]}{stem}-{attempt}{dot}{suffix}"


class Archive:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    def target(self, name: str, now: datetime, reserved: Collection[str] = ()) -> str:
        """A free path `archive/DAY/NAME` (or `NAME-2`, …) for `name`, relative to the hub."""
        day = now.strftime("%Y-%m-%d")
        archive_fd = self.hub.lane_fd("archive")
        with contextlib.suppress(FileExistsError):
            os.mkdir(day, 0o755, dir_fd=archive_fd)
        for attempt in range(1, 100_000):
            candidate = numbered(name, attempt)
            path = f"archive/{day}/{candidate}"
            if path not in reserved and not reads.exists_at(archive_fd, f"{day}/{candidate}"):
                return path
        raise FileExistsError(errno.EEXIST, f"no free archive name for {name}")

    def move(self, move: Move) -> bool:
        """One move (rule 2); False when the file was already gone."""
        (moved,) = self.move_all([move])
        if moved.error is not None:
            raise moved.error
        return moved.moved

    def move_all(self, moves: list[Move]) -> list[Moved]:
        """Many moves (rule 3), in order; one result per move."""
        days: dict[str, int] = {}
        lanes: dict[str, int] = {}  # each lane checked once for the whole call, its fd our own copy
        try:
            return self._move_all(moves, days, lanes)
        finally:
            for fd in [*days.values(), *lanes.values()]:
                os.close(fd)

    def _move_all(self, moves: list[Move], days: dict[str, int], lanes: dict[str, int]) -> list[Moved]:
        done: dict[Move, Moved] = {}
        linked: list[Move] = []
        for move in moves:
            day = move.target.removeprefix("archive/").partition("/")[0]
            try:
                if day not in days:
                    days[day] = os.open(day, fs.DIR_FLAGS, dir_fd=self.hub.lane_fd("archive"))
                if move.lane not in lanes:
                    lanes[move.lane] = os.dup(self.hub.lane_fd(move.lane))
                if self._link(move, lanes[move.lane], days[day]):
                    linked.append(move)
                else:
                    done[move] = Moved(move, moved=False)
            except OSError as error:
                done[move] = Moved(move, error)
        for day, fd in days.items():
            try:
                fs.fsync_dir(fd)
            except OSError as error:  # not durable: keep every input of that day in its lane
                for move in [m for m in linked if m.target.startswith(f"archive/{day}/")]:
                    linked.remove(move)
                    done[move] = Moved(move, error)
        for move in linked:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(move.name, dir_fd=lanes[move.lane])
            done[move] = Moved(move)
        return [done[move] for move in moves]

    def _link(self, move: Move, lane_fd: int, day_fd: int) -> bool:
        """Give the input its archive name too (False: it is gone); a rename if links fail."""
        final = move.target.rpartition("/")[2]
        try:
            os.link(move.name, final, src_dir_fd=lane_fd, dst_dir_fd=day_fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        except FileExistsError:
            if not self.is_archived_copy(move.lane, move.name, move.target):
                raise
        except OSError as error:
            if error.errno not in _LINKLESS:
                raise
            os.rename(move.name, final, src_dir_fd=lane_fd, dst_dir_fd=day_fd)
        return True

    def is_archived_copy(self, lane: str, name: str, archived: str) -> bool:
        """Whether `lane/name` is the same inode as `archived` (rule 4)."""
        here = self.hub.lstat(lane, name)
        there = self.hub.stat_path(archived)
        return (
            here is not None
            and there is not None
            and (here.st_ino, here.st_dev) == (there.st_ino, there.st_dev)
        )
