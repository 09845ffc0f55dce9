"""Commands find the running daemon's state dir through the hub (SPEC §14, issue 24 point 5).

The presence file of a running watcher names its state dir; the hub is untrusted, so a claim is
taken only when a live process of this user holds that dir's lock for this very hub. The table
below plants hostile or stale claims with real files and a real `flock` held by this process;
the black-box test runs a daemon with `--state X` and asks `slopd status` and `slopd notes` from
another environment.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from slopd.core.home import Presence
from slopd.core.ids import timestamp
from slopd.ops import running
from slopd.shell import hubfile, lock
from tests.conftest import HubDir, envelope_text, hub_env


@pytest.fixture(name="held")
def fixture_held(tmp_path: Path) -> Iterator[Callable[[Path, Path], None]]:
    """Take the lock of a state dir for a hub, as a daemon does (released after the test)."""
    fds: list[int] = []

    def take(state: Path, hub: Path) -> None:
        state.mkdir(parents=True, exist_ok=True)
        fds.append(lock.acquire(state, hub))

    yield take
    for fd in fds:
        os.close(fd)


def claim(hub: HubDir, where: Path | str, **changes: object) -> None:
    """A presence file on the hub, from this host and this process, naming the state dir `where`."""
    presence = Presence(
        name="watcher:here",
        host=os.uname().nodename,
        pid=os.getpid(),
        version="test",
        names=("watcher", "watcher:here"),
        home=True,
        last_seen=timestamp(datetime.now(UTC)),
        state=str(where),
    )
    hubfile.write_presence(hub.root, replace(presence, **changes))  # type: ignore[arg-type]


def ledger_in(state: Path) -> None:
    (state / "ledger.sqlite3").write_bytes(b"")


def test_a_running_daemons_claim_is_taken(
    hub: HubDir, tmp_path: Path, held: Callable[[Path, Path], None]
) -> None:
    """Held by the presence's pid, for this hub, with a ledger: that state dir is the one used."""
    state = tmp_path / "daemon-state"
    held(state, hub.root)
    ledger_in(state)
    claim(hub, state)
    located = running.locate(hub.root, None)
    assert (located.state, located.pid, located.how, located.note) == (state, os.getpid(), "presence", None)


PASSED_OVER: list[tuple[str, Callable[[HubDir, Path], dict[str, object]], str]] = [
    ("another host", lambda _hub, _state: {"host": "elsewhere.example"}, ""),
    ("stopped", lambda _hub, _state: {"stopped": True}, ""),
    ("a relative path", lambda _hub, _state: {"state": "daemon-state"}, "not an absolute path"),
    ("another pid", lambda _hub, _state: {"pid": 1}, "not the presence's pid 1"),
    ("no such dir", lambda _hub, state: {"state": str(state / "nowhere")}, "cannot be looked at"),
    ("a dir inside the hub", lambda hub, _state: {"state": str(hub.root / "assets")}, "inside the hub"),
]


@pytest.mark.parametrize(("case", "changes", "reason"), PASSED_OVER, ids=[row[0] for row in PASSED_OVER])
def test_a_claim_that_is_not_the_running_daemons_is_passed_over(
    hub: HubDir,
    tmp_path: Path,
    held: Callable[[Path, Path], None],
    case: str,
    changes: Callable[[HubDir, Path], dict[str, object]],
    reason: str,
) -> None:
    """Each row spoils one fact of a good claim: the default state dir is used, with the note."""
    state = tmp_path / "daemon-state"
    held(state, hub.root)
    ledger_in(state)
    claim(hub, state, **changes(hub, state))
    located = running.locate(hub.root, None)
    assert located.how == "default", case
    assert located.state != state
    assert located.note == "daemon: not found — replies will not be tracked"
    if reason:
        (said,) = located.passed_over
        assert reason in said
    else:
        assert located.passed_over == ()


def test_a_dir_held_for_another_hub_or_without_a_ledger_is_passed_over_and_left_alone(
    hub: HubDir, tmp_path: Path, held: Callable[[Path, Path], None]
) -> None:
    """A live daemon's dir, but for another hub (a hostile presence pointing at it), is not used;
    nor is one with no ledger — and nothing is created in either."""
    other_hub = tmp_path / "other-hub"
    other_hub.mkdir()
    theirs = tmp_path / "their-state"
    held(theirs, other_hub)
    ledger_in(theirs)
    claim(hub, theirs)
    located = running.locate(hub.root, None)
    assert located.how == "default"
    assert "serves another hub" in located.passed_over[0]

    empty = tmp_path / "empty-state"
    held(empty, hub.root)
    claim(hub, empty)
    located = running.locate(hub.root, None)
    assert located.how == "default"
    assert "no ledger there" in located.passed_over[0]
    assert sorted(path.name for path in empty.iterdir()) == ["slopd.lock"]


def test_given_state_wins_and_says_whether_a_daemon_holds_it(
    hub: HubDir, tmp_path: Path, held: Callable[[Path, Path], None]
) -> None:
    """--state is used as given; the note is there exactly when no daemon holds it."""
    state = tmp_path / "given"
    assert running.locate(hub.root, state).note == running.NOT_FOUND
    held(state, hub.root)
    located = running.locate(hub.root, str(state))
    assert (located.state, located.pid, located.how, located.note) == (state, os.getpid(), "given", None)


def test_status_and_notes_find_a_daemon_run_with_state_from_another_environment(
    hub: HubDir, tmp_path: Path
) -> None:
    """`slopd run --state X`, then `slopd status --hub` and `slopd notes --hub` with another
    XDG_STATE_HOME and no --state: both read X, the running daemon's."""
    other = hub_env(tmp_path / "elsewhere")
    hub.drop("note.md", envelope_text("# A found note\n", id="20260704t100000z-found", type="note"))
    with hub.running() as daemon:
        daemon.until(lambda: hub.events("envelope.archived"))
        status = HubDir(hub.root, hub.state, hub.config, other).slopd(
            "status", "--hub", str(hub.root), "--json"
        )
        assert status.returncode == 0, status.stderr
        report = json.loads(status.stdout)
        assert (report["state"], report["state_found_by"]) == (str(hub.state), "presence")
        assert (report["daemon"]["running"], report["daemon"]["pid"]) == (True, daemon.pid)
        notes = HubDir(hub.root, hub.state, hub.config, other).slopd("notes", "--hub", str(hub.root))
        assert "A found note" in notes.stdout, notes.stderr
    assert not (tmp_path / "elsewhere" / "xdg-state").exists()  # nothing made in the other environment
