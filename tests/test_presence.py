"""A watcher's presence file (SPEC §7): written before the first scan, marked stopped at shutdown."""

from __future__ import annotations

import json

from tests.conftest import HubDir


def test_a_running_watcher_is_present_and_a_stopped_one_says_so(hub: HubDir) -> None:
    """While it runs, `.slopd/watchers/NAME.json` says home; after SIGTERM it says stopped, so
    `slopd status` lists it as stopped and a new home would not wait for it."""
    hub.write_config('names = ["watcher", "watcher:alpha"]\n')
    path = hub.root / ".slopd" / "watchers" / "alpha.json"
    with hub.running() as daemon:
        daemon.until(path.exists)
        running = json.loads(path.read_text())
        assert (running["name"], running["home"], running["stopped"]) == ("watcher:alpha", True, False)
    stopped = json.loads(path.read_text())
    assert (stopped["home"], stopped["stopped"]) == (False, True)
    text = hub.slopd("status", "--hub", str(hub.root), "--state", str(hub.state)).stdout
    assert "watcher watcher:alpha on" in text
    assert ": stopped; last seen" in text
