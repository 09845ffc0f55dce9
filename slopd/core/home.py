"""Many machines, one hub (SPEC §7): which watcher is home, and who else watches. Pure.

Rules:
1. The hub file `HUB/.slopd/hub.toml` says `home = "watcher:NAME"`. It is in the hub, so it is
   untrusted: it decides only what the trusted config leaves open (`home = true | false`).
2. This watcher is home when the config says so, else when the hub file's home is one of its
   names. A hub file that is absent is claimed by the first watcher that starts (`shell.hubfile.claim`); one
   that cannot be read makes this watcher not home — nothing generic is answered twice.
3. Only the home watcher answers the generic recipients (`watcher`, `human`), replies, and
   anything not addressed to a name of its own; every other watcher answers only its own
   specific names and its seats (`core.routing.elsewhere`).
4. Each watcher's presence is a small JSON file in `HUB/.slopd/watchers/`, refreshed every
   `PRESENCE_EVERY` seconds; a presence older than `PRESENCE_STALE` is not counted. Two fresh
   presences that both say home are an error (`rivals`) — one name on two hosts too. Sync-client
   conflict copies of a presence are read like the original; the newest record of each name and
   host wins. A watcher that stops says so in its presence (`stopped`): it counts as stale.
   A presence names its state dir (`state`), a claim that only a command on the same host can
   check (`ops.running`): nothing here trusts it.
5. A seat is answered by one watcher: a seat the home watcher has is the home's; a seat only
   other watchers have is theirs, and the home leaves it (`taken`, from the presence files).
6. The single-machine trap (SPEC §14): the hub file names a home this watcher is not, the
   config does not decide, and no watcher of that name has ever left a presence on the hub —
   then nothing answers `watcher` and `human`, and `unseen_home` names the home so that `slopd
   run` says so on the terminal and `slopd doctor` fails with the one command that fixes it.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

GENERIC = frozenset({"watcher", "human"})
FOLDER = ".slopd"
HUB_FILE = "hub.toml"
WATCHERS = "watchers"
PRESENCE_EVERY = 60.0
PRESENCE_STALE = timedelta(minutes=3)
_NAME = re.compile(r"watcher:[A-Za-z0-9._@-]{1,119}")


class HubFileError(ValueError):
    """The hub file is not `home = "watcher:NAME"`; the message says why."""


@dataclass(frozen=True, slots=True)
class Home:
    """Who is home, and why this watcher is or is not."""

    home: bool
    name: str | None  # the hub's home watcher, when known
    reason: str  # for the log, status and doctor


def valid_name(name: str) -> bool:
    return _NAME.fullmatch(name) is not None


def parse_hub_file(text: str) -> str:
    """Rule 1: the home watcher's name from the hub file's text."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise HubFileError(f"not valid TOML: {error}") from None
    home = document.get("home")
    if not isinstance(home, str) or not valid_name(home):
        raise HubFileError(f"home must be a string 'watcher:NAME', got {ascii(home)[:60]}")
    return home


def render_hub_file(home: str) -> str:
    return (
        "# The hub's home watcher: the one machine that answers `watcher` and `human` (SPEC §7).\n"
        "# Move it with: slopd hub home --hub HUB watcher:NAME (then reload every slopd on the hub).\n"
        f'home = "{home}"\n'
    )


def decide(configured: bool | None, hub_home: str | None, names: Iterable[str], problem: str | None) -> Home:
    """Rule 2 (`hub_home`: the hub file's name, None when absent or unreadable with `problem`)."""
    own = specific_name(names)
    if configured is not None:
        where = "the config says home = " + ("true" if configured else "false")
        return Home(configured, own if configured else hub_home, where)
    if problem is not None:
        return Home(False, None, f"the hub file is unreadable ({problem}), so no watcher acts as home")
    if hub_home is None:
        return Home(True, own, f"the hub had no home watcher; {own} claimed it")
    if hub_home in set(names):
        return Home(True, hub_home, f"the hub file names {hub_home}, one of this watcher's names")
    return Home(False, hub_home, f"the hub file names {hub_home} as home")


def unseen_home(
    configured: bool | None, hub_home: str | None, names: Iterable[str], presences: Iterable[Presence]
) -> str | None:
    """Rule 6: the hub file's home when this watcher is not it and it was never seen, else None."""
    if configured is not None or hub_home is None or hub_home in set(names):
        return None
    return None if any(presence.name == hub_home for presence in presences) else hub_home


def unseen_text(home: str, own: str, root: str) -> tuple[str, str]:
    """Rule 6, in words: what is wrong, and the one command that fixes it."""
    text = (
        f"nothing addressed to `watcher` or `human` will be answered: the hub file names {home} as "
        f"the home watcher, no watcher of that name has ever run on this hub, and this watcher is "
        f"{own} (a config whose names differ from the ones `slopd init` used?)"
    )
    return text, f"slopd hub home --hub {root} {own}"


def specific_name(names: Iterable[str]) -> str:
    """This watcher's own `watcher:NAME` (the first), the name it presents and claims with."""
    for name in names:
        if name.startswith("watcher:"):
            return name
    return "watcher:unnamed"


@dataclass(frozen=True, slots=True)
class Presence:
    name: str
    host: str
    pid: int
    version: str
    names: tuple[str, ...]
    home: bool
    last_seen: str  # ISO 8601 UTC
    seats: tuple[str, ...] = ()
    stopped: bool = False  # written at shutdown: it acts as nothing until it starts again
    state: str | None = None  # its state dir, for commands on the same host (`ops.running`)

    def record(self) -> dict[str, object]:
        """The JSON object of the presence file (and of `slopd status --json`)."""
        return {
            "name": self.name,
            "host": self.host,
            "pid": self.pid,
            "version": self.version,
            "names": list(self.names),
            "home": self.home,
            "last_seen": self.last_seen,
            "seats": list(self.seats),
            "stopped": self.stopped,
            "state": self.state,
        }


def render_presence(presence: Presence) -> bytes:
    return (json.dumps(presence.record(), indent=2) + "\n").encode()


def parse_presence(data: bytes) -> Presence | None:
    """A presence file's record, or None for anything else (rule 4 tolerates junk)."""
    try:
        record = json.loads(data)
        presence = Presence(
            name=str(record["name"]),
            host=str(record["host"]),
            pid=int(record["pid"]),
            version=str(record["version"]),
            names=tuple(str(name) for name in record["names"]),
            home=record["home"] is True,
            last_seen=str(record["last_seen"]),
            seats=tuple(str(seat) for seat in record.get("seats", ())),
            stopped=record.get("stopped") is True,
            state=state if isinstance(state := record.get("state"), str) else None,
        )
        aware = datetime.fromisoformat(presence.last_seen).tzinfo is not None
    except (ValueError, KeyError, TypeError):
        return None
    return presence if aware and valid_name(presence.name) else None


def newest(presences: Iterable[Presence]) -> list[Presence]:
    """Rule 4: one record per watcher name and host, the newest, sorted by name and host (one
    config copied to two machines gives one name on two hosts: both are listed)."""
    best: dict[tuple[str, str], Presence] = {}
    for presence in presences:
        key = (presence.name, presence.host)
        held = best.get(key)
        if held is None or _seen(presence) > _seen(held):
            best[key] = presence
    return [best[key] for key in sorted(best)]


def fresh(presence: Presence, now: datetime) -> bool:
    return not presence.stopped and now - _seen(presence) <= PRESENCE_STALE


def rivals(presences: Iterable[Presence], now: datetime) -> list[str]:
    """Rule 4: the names of fresh watchers that say they are home, when more than one does."""
    homes = [presence for presence in newest(presences) if presence.home and fresh(presence, now)]
    if len(homes) < 2:
        return []
    twice = {presence.name for presence in homes if sum(other.name == presence.name for other in homes) > 1}
    return [f"{p.name} on {p.host}" if p.name in twice else p.name for p in homes]


def taken(
    own: str, is_home: bool, home_name: str | None, seats: Iterable[str], others: Iterable[Presence]
) -> frozenset[str]:
    """Rule 5: the seats another watcher answers. For the home, other watchers' seats it does not
    have itself; for any other watcher, the seats the home watcher has (its last presence, of any
    age: a seat on the home is the home's)."""
    own_seats = set(seats)
    if is_home:
        return (
            frozenset(seat for presence in others if presence.name != own for seat in presence.seats)
            - own_seats
        )
    return frozenset(seat for presence in others if presence.name == home_name for seat in presence.seats)


def file_name(name: str) -> str:
    """The presence file of `watcher:NAME`: `NAME.json` (no `:` — Windows and some sync clients refuse it)."""
    return name.removeprefix("watcher:") + ".json"


def _seen(presence: Presence) -> datetime:
    return datetime.fromisoformat(presence.last_seen)
