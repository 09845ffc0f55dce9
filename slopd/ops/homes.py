"""Who watches a shared hub, and who is home (SPEC §7): for `slopd status` and `slopd doctor`.

Rules:
1. Read only the hub's own folder (`core.home`, `shell.hubfile`): works on any machine, with or
   without a daemon, and never changes anything.
2. A watcher whose presence is older than `core.home.PRESENCE_STALE` is listed as stale and
   not counted; two fresh watchers acting as home are reported as an error.
3. A hub file naming a home that never ran on the hub, for a watcher that is not it (the
   single-machine trap), is a problem for doctor, fixed by one `slopd hub home` command.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slopd.core import home
from slopd.shell import hubfile

if TYPE_CHECKING:  # `slopd status` never loads the config machinery
    from slopd.shell.config import Config


def report(root: Path, now: datetime) -> dict[str, Any]:
    """Rule 1: the hub file's home and every watcher's presence, for `slopd status`."""
    name, problem = hubfile.read_home(root)
    watchers = hubfile.presences(root)
    return {
        "home": name,
        "hub_file_problem": problem,
        "watchers": [presence.record() | {"stale": not home.fresh(presence, now)} for presence in watchers],
        "two_homes": home.rivals(watchers, now),
    }


def render(info: dict[str, Any]) -> list[str]:
    if info["hub_file_problem"]:
        lines = [f"home:    unreadable: {info['hub_file_problem']} (no watcher acts as home)"]
    else:
        lines = [f"home:    {info['home'] or 'none recorded yet (the first slopd run claims it)'}"]
    for watcher in info["watchers"]:
        own = ", ".join(name for name in watcher["names"] if name not in home.GENERIC)
        role = "home" if watcher["home"] else f"not home: answers only {own}"
        if watcher["stopped"]:
            role = "stopped"
        stale = ", stale" if watcher["stale"] and not watcher["stopped"] else ""
        lines.append(
            f"  watcher {watcher['name']} on {watcher['host']} (pid {watcher['pid']}): {role};"
            f" last seen {watcher['last_seen']}{stale}"
        )
    if info["two_homes"]:
        lines.append(f"  error: two watchers act as home: {', '.join(info['two_homes'])}")
    return lines


def unseen(root: Path, config: Config) -> tuple[str, str] | None:
    """The single-machine trap (SPEC §14, `core.home.unseen_home`): what is wrong and the one
    command that fixes it, or None."""
    name, _problem = hubfile.read_home(root)
    found = home.unseen_home(config.home, name, config.names, hubfile.presences(root))
    return None if found is None else home.unseen_text(found, home.specific_name(config.names), str(root))


def check(root: Path, config: Config, now: datetime) -> Iterator[tuple[str, str, str | None]]:
    """`slopd doctor`'s findings (level, text, fix) about the home watcher, for this config."""
    name, problem = hubfile.read_home(root)
    decided = home.decide(config.home, name, config.names, problem)
    own = home.specific_name(config.names)
    move = f"slopd hub home --hub {root} {own}, then reload every slopd on the hub"
    trap = unseen(root, config)
    if trap is not None:
        text, fix = trap
        yield "problem", f"{text}; after the fix, reload slopd if it runs", fix
    elif problem is not None:
        yield "problem", f"the hub file is unreadable: {problem}; no watcher acts as home", move
    elif config.home is not None:
        verb = "is" if decided.home else "is not"
        yield "info", f"{own} {verb} home: the config says home = {str(config.home).lower()}", None
    elif name is None:
        yield (
            "info",
            f"no home watcher recorded yet: the first slopd run on the hub claims it ({own} here)",
            None,
        )
    elif decided.home:
        text = (
            f"{own} is the hub's home watcher ({home.FOLDER}/{home.HUB_FILE}): it answers `watcher`, `human` "
            f"and the rest; to move it: slopd hub home --hub {root} watcher:OTHER, then reload every slopd"
        )
        yield "ok", text, None
    else:
        text = (
            f"{own} is not home ({name} is, per {home.FOLDER}/{home.HUB_FILE}): it leaves `watcher` and "
            f"`human` to {name} and answers only {', '.join(sorted(set(config.names) - home.GENERIC))}"
        )
        yield "warn", text, f"if this machine should execute for the hub: {move}"
    rivals = home.rivals(hubfile.presences(root), now)
    if rivals:
        text = f"two watchers act as home: {', '.join(rivals)}: each generic instigate would run on both"
        yield (
            "problem",
            text,
            "set home = false in the config of all but one, or fix the hub file, then reload",
        )
