"""The home watcher and presence records (`core.home`), pure: every rule of its docstring."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slopd.core import home
from slopd.core.envelope import Envelope
from slopd.core.home import Presence
from slopd.core.routing import Lane, Leave, Policy, decide, elsewhere

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
NAMES = ("watcher", "watcher:laptop")


def presence(name: str, *, is_home: bool, ago: timedelta = timedelta()) -> Presence:
    seen = (NOW - ago).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Presence(name, name.removeprefix("watcher:"), 7, "0.1.0", ("watcher", name), is_home, seen)


def test_the_hub_file_round_trips_and_names_a_watcher() -> None:
    """What `render_hub_file` writes, `parse_hub_file` reads back."""
    assert home.parse_hub_file(home.render_hub_file("watcher:desk-1")) == "watcher:desk-1"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "home = 3",
        'home = "watcher"',
        'home = "laptop"',
        'home = "watcher:a b"',
        "home = [",
        'home = "watcher:"',
    ],
)
def test_a_bad_hub_file_is_an_error_saying_why(text: str) -> None:
    """Anything but `home = "watcher:NAME"` is a `HubFileError`."""
    with pytest.raises(home.HubFileError):
        home.parse_hub_file(text)


@pytest.mark.parametrize(
    ("configured", "hub_home", "problem", "expected"),
    [
        (None, "watcher:laptop", None, True),
        (None, "watcher:desk", None, False),
        (None, None, None, True),  # claimed
        (None, None, "not valid TOML", False),  # nobody acts as home
        (True, "watcher:desk", None, True),  # the trusted config overrides the hub
        (False, "watcher:laptop", None, False),
        (True, None, "not valid TOML", True),
    ],
)
def test_who_is_home(
    configured: bool | None, hub_home: str | None, problem: str | None, expected: bool
) -> None:
    """Rule 2: config first, then the hub file; absent → claimed; unreadable → not home."""
    decided = home.decide(configured, hub_home, NAMES, problem)
    assert decided.home is expected
    assert decided.reason


def policy(*, is_home: bool) -> Policy:
    return Policy(names=frozenset(NAMES), executor=True, seats=frozenset({"claude-code"}), home=is_home)


def envelope(to: str, kind: str = "instigate") -> Envelope:
    return Envelope(
        protocol="slop.v1", id="e-1", type=kind, sender="agent", to=to, created_at=None, in_reply_to="x"
    )


@pytest.mark.parametrize(
    ("to", "kind", "left_by_non_home"),
    [
        ("watcher", "instigate", True),
        ("human", "instigate", True),
        ("nobody-known", "query", True),
        ("watcher", "result", True),
        ("watcher:laptop", "instigate", False),
        ("watcher:laptop", "ack", False),
        ("claude-code", "instigate", False),
        ("watcher:desk", "instigate", True),
    ],
)
def test_a_non_home_watcher_answers_only_its_own_names_and_seats(
    to: str, kind: str, left_by_non_home: bool
) -> None:
    """Rule 3: the home watcher leaves only other watchers' envelopes; a non-home one leaves
    everything but its specific names and its seats."""
    item = envelope(to, kind)
    assert (elsewhere(item, policy(is_home=False)) is not None) is left_by_non_home
    assert (elsewhere(item, policy(is_home=True)) is not None) is (to == "watcher:desk")
    if left_by_non_home:
        assert isinstance(decide(item, Lane.AUTHORIZED, policy(is_home=False)), Leave)


def test_presence_round_trips_and_junk_is_none() -> None:
    """Rule 4: a presence reads back as written; junk, naive times and bad names are None."""
    record = presence("watcher:laptop", is_home=True)
    assert home.parse_presence(home.render_presence(record)) == record
    for junk in (b"", b"{}", b"[1]", b'{"name": "watcher:x"}', b"\xff"):
        assert home.parse_presence(junk) is None
    naive = home.render_presence(record).replace(b"Z", b"")
    assert home.parse_presence(naive) is None


@given(st.binary(max_size=300))
def test_any_bytes_are_a_presence_or_none(data: bytes) -> None:
    """A presence file anyone can write never raises."""
    assert home.parse_presence(data) is None or isinstance(home.parse_presence(data), Presence)


def test_the_newest_record_of_a_watcher_wins_and_stale_homes_do_not_count() -> None:
    """Rule 4: conflict copies collapse to the newest; two fresh homes are rivals, a stale one is not."""
    old = presence("watcher:desk", is_home=True, ago=timedelta(minutes=10))
    new = presence("watcher:desk", is_home=False, ago=timedelta(seconds=5))
    assert home.newest([old, new]) == [new]
    laptop = presence("watcher:laptop", is_home=True)
    assert home.rivals([laptop, old], NOW) == []
    rival = presence("watcher:desk", is_home=True, ago=timedelta(seconds=30))
    assert home.rivals([laptop, rival], NOW) == ["watcher:desk", "watcher:laptop"]


def test_presence_files_have_no_colon_in_their_name() -> None:
    """`watcher:laptop` is kept as `laptop.json` (Windows and some sync clients refuse `:`)."""
    assert home.file_name("watcher:laptop") == "laptop.json"


def test_one_name_home_on_two_hosts_is_two_homes() -> None:
    """A config copied to two machines: both are `watcher:laptop`; both fresh homes are rivals,
    named with their hosts, and both are listed."""
    one = presence("watcher:laptop", is_home=True)
    other = Presence("watcher:laptop", "desk", 9, "0.1.0", ("watcher", "watcher:laptop"), True, one.last_seen)
    assert len(home.newest([one, other])) == 2
    assert home.rivals([one, other], NOW) == ["watcher:laptop on desk", "watcher:laptop on laptop"]


def test_a_stopped_watcher_is_neither_fresh_nor_a_rival() -> None:
    """A watcher writes `stopped` at shutdown: a new home need not wait for it to go stale."""
    laptop = presence("watcher:laptop", is_home=True)
    desk = Presence(
        "watcher:desk", "desk", 9, "0.1.0", ("watcher:desk",), True, laptop.last_seen, stopped=True
    )
    assert home.parse_presence(home.render_presence(desk)) == desk
    assert not home.fresh(desk, NOW)
    assert home.rivals([laptop, desk], NOW) == []


@pytest.mark.parametrize(
    ("configured", "hub_home", "seen", "unseen"),
    [
        (None, "watcher:desk", [], "watcher:desk"),  # the trap: named, never seen, not us
        (None, "watcher:desk", ["watcher:desk"], None),  # the home ran on this hub once
        (None, "watcher:desk", ["watcher:other"], "watcher:desk"),  # others were seen, not the home
        (None, "watcher:laptop", [], None),  # this watcher is the home
        (None, None, [], None),  # no hub file: the first watcher claims it
        (False, "watcher:desk", [], None),  # the config decided: not home, knowingly
        (True, "watcher:desk", [], None),  # the config decided: home
    ],
)
def test_unseen_home_is_only_the_single_machine_trap(
    configured: bool | None, hub_home: str | None, seen: list[str], unseen: str | None
) -> None:
    """Rule 6: a home named by the hub file, never seen on the hub, that this watcher is not —
    and only when the config leaves the decision to the hub file."""
    others = [presence(name, is_home=True, ago=timedelta(days=30)) for name in seen]
    assert home.unseen_home(configured, hub_home, NAMES, others) == unseen


def test_a_presence_round_trips_its_state_dir_and_tolerates_its_absence() -> None:
    """Rule 4: `state` is written and read back; an older slopd's record without it reads as None."""
    written = Presence("watcher:a", "h", 1, "v", ("watcher:a",), True, "2026-12-01T12:00:00Z", state="/s")
    assert home.parse_presence(home.render_presence(written)) == written
    older = written.record()
    del older["state"]
    assert home.parse_presence(json.dumps(older).encode()) == replace(written, state=None)
