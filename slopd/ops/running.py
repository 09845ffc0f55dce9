"""The running daemon of a hub on this machine, found through the hub (SPEC §14).

A command that opens a hub without `--state` (`slopd mcp --hub`, `status`, `tail`, `notes`,
`doctor`, `baton …`) uses the state dir — the ledger, the log — of the daemon that serves the
hub, whatever its own environment (`XDG_STATE_HOME`) says.

Rules:
1. `--state` given: that dir, whether or not a daemon holds it.
2. Else each presence file of the hub (`HUB/.slopd/watchers/`) that names a state dir is a
   claim, and the hub is untrusted: a claim is taken only when it is verifiably the running
   daemon's — the presence is from this host and not stopped; the dir is an absolute path,
   outside the hub, a directory owned by this user; its lock file is owned by this user and
   held by the presence's pid, a live process, for this very hub (its real path, rule 1 of
   `shell.lock`); the ledger is there, owned by this user. Nothing is ever created in a dir
   the hub names. The home watcher's claim is looked at first.
3. Else the default state dir (`$XDG_STATE_HOME/slopd/<hub-id>/`), found when a daemon holds it.
4. Else no daemon is found: the default state dir is used, and `NOT_FOUND` is what every
   answer that depends on the daemon must say.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from slopd.core.home import Presence
from slopd.core.layout import LEDGER_FILE
from slopd.shell import defaults, hubfile, lock

NOT_FOUND = "daemon: not found — replies will not be tracked"


@dataclass(frozen=True, slots=True)
class Located:
    state: Path
    pid: int | None  # the daemon holding `state`, None when none does
    how: str  # "given" (--state), "presence" (found through the hub), "default"
    passed_over: tuple[str, ...] = ()  # the presences' claims not taken, and why (rule 2)

    @property
    def found(self) -> bool:
        return self.pid is not None

    @property
    def note(self) -> str | None:
        return None if self.found else NOT_FOUND

    def record(self) -> dict[str, object]:
        return {"state": str(self.state), "pid": self.pid, "found_by": self.how if self.found else None}


def locate(root: Path, given: str | Path | None) -> Located:
    """Rules 1-4 for the hub at `root`."""
    if given:
        state = Path(given)
        return Located(state, lock.holder(state), "given")
    passed_over = []
    host, uid = os.uname().nodename, os.getuid()  # socket.gethostname(), without importing socket
    hub = os.path.realpath(root)
    for presence in sorted(hubfile.presences(root), key=lambda p: (not p.home, p.name, p.host)):
        if presence.host != host or presence.state is None or presence.stopped:
            continue  # another machine's, an older slopd's, or stopped: nothing to check here
        reason = vouch(presence, hub, uid)
        if reason is None:
            return Located(Path(presence.state), presence.pid, "presence")
        passed_over.append(f"{presence.name} names {presence.state!r}, not taken: {reason}")
    state = defaults.default_state_dir(root)
    held = lock.held(state)
    return Located(state, held.pid if held is not None else None, "default", tuple(passed_over))


def vouch(presence: Presence, hub: str, uid: int) -> str | None:
    """Rule 2: why the presence's state dir is not the running daemon's of `hub`, or None."""
    return _place(presence, hub, uid) or _holder(presence, hub, uid) or _ledger(presence, uid)


def _place(presence: Presence, hub: str, uid: int) -> str | None:
    if presence.stopped:
        return "the watcher said it stopped"
    state = Path(presence.state or "")
    if not state.is_absolute():
        return "not an absolute path"
    real = os.path.realpath(state)
    if real == hub or real.startswith(hub.rstrip("/") + "/"):
        return "it is inside the hub"
    try:
        status = os.stat(state)
    except OSError as error:
        return f"it cannot be looked at ({error.strerror})"
    return None if stat.S_ISDIR(status.st_mode) and status.st_uid == uid else "not a directory of this user"


def _holder(presence: Presence, hub: str, uid: int) -> str | None:
    held = lock.held(Path(presence.state or ""))
    if held is None:
        return "no daemon holds its lock"
    if held.owner != uid:
        return "its lock file is another user's"
    if held.pid != presence.pid:
        return f"its lock is held by pid {held.pid}, not the presence's pid {presence.pid}"
    if held.hub != hub:
        return "its daemon serves another hub"
    return None if _alive(held.pid) else f"pid {held.pid} is not a live process of this user"


def _ledger(presence: Presence, uid: int) -> str | None:
    try:
        ledger = os.lstat(Path(presence.state or "") / LEDGER_FILE)
    except OSError:
        return "no ledger there"
    return (
        None
        if stat.S_ISREG(ledger.st_mode) and ledger.st_uid == uid
        else "its ledger is not a file of this user"
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:  # gone, or another user's
        return False
    return True
