"""The hub's own folder `HUB/.slopd/`: the home watcher's file and the watchers' presence files.

Rules:
1. Everything here is in the hub, so untrusted: read once, bounded, never through a link (the
   folder `.slopd` and `watchers/` included); what cannot be read is reported, never followed.
2. Writes are atomic (temp file, fsync, rename, fsync dir); `claim` writes the hub file only
   if none is there, so two watchers starting together on one machine cannot both claim.
3. Presence files are listed whatever their name ends `.json` (a sync client's conflict copy
   included), slopd's own temporary names aside; a file that is not a presence is skipped.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from slopd.core import home
from slopd.core.home import Presence
from slopd.core.layout import TEMP_SUFFIX, is_temp
from slopd.shell import fs, reads

MAX_BYTES = 16 * 1024


@contextlib.contextmanager
def _folder(root: Path, *parts: str, create: bool = False) -> Iterator[int]:
    """The fd of `root/parts…`, each step opened without following a link (made if `create`)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            inner = os.open(part, fs.DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def read_home(root: Path) -> tuple[str | None, str | None]:
    """The hub file's home watcher, and why it could not be read (None, None: there is none)."""
    try:
        with _folder(root, home.FOLDER) as fd:
            contents = reads.read_once(home.HUB_FILE, MAX_BYTES, dir_fd=fd)
    except FileNotFoundError:
        return None, None
    except OSError as error:
        return None, f"{home.FOLDER}/ cannot be opened: {error.strerror}"
    if isinstance(contents, reads.Unreadable):
        if contents.reason == reads.MISSING:
            return None, None
        return None, f"{home.FOLDER}/{home.HUB_FILE} {contents.reason}"
    try:
        return home.parse_hub_file(contents.data.decode("utf-8")), None
    except (UnicodeDecodeError, home.HubFileError) as error:
        return None, f"{home.FOLDER}/{home.HUB_FILE}: {error}"


def write_home(root: Path, name: str, *, replace: bool = True) -> None:
    """Write the hub file naming `name` (rule 2); without `replace`, FileExistsError if one is there."""
    with _folder(root, home.FOLDER, create=True) as fd:
        fs.atomic_write(fd, home.HUB_FILE, home.render_hub_file(name).encode(), replace=replace)


def claim(root: Path, name: str) -> bool:
    """Rule 2: name `name` home if the hub has no home yet; whether this call did."""
    try:
        write_home(root, name, replace=False)
    except FileExistsError:
        return False
    return True


def write_presence(root: Path, presence: Presence) -> None:
    """Rule 2; a temporary file of this very presence left by a crash (only this watcher writes
    it) is removed first."""
    name = home.file_name(presence.name)
    with _folder(root, home.FOLDER, home.WATCHERS, create=True) as fd:
        for entry in os.scandir(fd):
            if is_temp(entry.name) and entry.name.endswith(f"-{name}{TEMP_SUFFIX}"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.name, dir_fd=fd)
        fs.atomic_write(fd, name, home.render_presence(presence))


def presences(root: Path) -> list[Presence]:
    """Rule 3: every presence record in the hub, the newest of each watcher."""
    found = []
    try:
        with _folder(root, home.FOLDER, home.WATCHERS) as fd:
            for entry in os.scandir(fd):
                if not entry.name.endswith(".json") or is_temp(entry.name):
                    continue
                contents = reads.read_once(entry.name, MAX_BYTES, dir_fd=fd)
                if isinstance(contents, reads.Contents):
                    presence = home.parse_presence(contents.data)
                    if presence is not None:
                        found.append(presence)
    except OSError:
        return []
    return home.newest(found)
