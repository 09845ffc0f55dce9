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


def test_a_presence_temp_file_left_by_a_crash_is_removed_at_the_next_write(hub: HubDir) -> None:
    """A kill -9 mid-write leaves `.slopd-tmp-…-alpha.json.tmp`; the watcher's next presence
    write removes it (only that watcher writes that file); another watcher's temp is left."""
    hub.write_config('names = ["watcher", "watcher:alpha"]\n')
    folder = hub.root / ".slopd" / "watchers"
    folder.mkdir(parents=True)
    mine, theirs = folder / ".slopd-tmp-0a1b-alpha.json.tmp", folder / ".slopd-tmp-2c3d-beta.json.tmp"
    for path in (mine, theirs):
        path.write_text("{half")
    hub.run_once()
    assert not mine.exists()
    assert theirs.exists()
    assert (folder / "alpha.json").exists()
