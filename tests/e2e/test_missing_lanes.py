"""Hubs as git and sync clients leave them: empty lane folders gone, paths typed relative (SPEC §7).

A hub kept in git, or synced by a client that drops empty folders, arrives without `authorized/`,
`notes/`… ; slopd makes them again (at start, and when one vanishes later) and refuses only a
folder without `inbox/`. Commands get absolute paths whatever the user typed.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import SLOPD, HubDir, envelope_text, toml_argv
from tests.polling import until

EMPTY_LANES = ("authorized", "outbox", "archive", "assets", "notes")


def test_a_hub_that_lost_its_empty_lanes_is_served_and_the_lanes_are_made_again(hub: HubDir) -> None:
    """With every lane but `inbox/` gone, `slopd run` starts, makes each missing lane (logging
    `lane.created`), and answers and archives what is in the inbox."""
    for lane in EMPTY_LANES:
        (hub.root / lane).rmdir()
    hub.drop("hello.md", envelope_text(id="lost-lanes-1", type="handshake"))
    with hub.running() as daemon:
        daemon.until(lambda: hub.archived() == ["hello.md"])
    assert sorted(record["lane"] for record in hub.events("lane.created")) == sorted(EMPTY_LANES)
    assert all((hub.root / lane).is_dir() for lane in EMPTY_LANES)
    assert list(hub.outbox()) == ["lost-lanes-1.ack.md"]


def test_run_once_on_a_hub_without_its_empty_lanes_answers_everything(hub: HubDir) -> None:
    """The `--once` drain makes the missing lanes too, and its replies land in the new outbox."""
    for lane in EMPTY_LANES:
        (hub.root / lane).rmdir()
    hub.drop("q.md", envelope_text(id="lost-lanes-2", type="query"))
    hub.run_once()
    assert list(hub.outbox()) == ["lost-lanes-2.result.md"]
    assert hub.archived() == ["q.md"]


def test_a_lane_removed_while_running_is_made_again_and_served(hub: HubDir) -> None:
    """`authorized/` removed under a running daemon comes back at the next scan, and a file then
    dropped into it is answered (an invalid order: an error reply, archived)."""
    hub.write_config("rescan_interval = 0.5\n")
    with hub.running() as daemon:
        (hub.root / "authorized").rmdir()
        daemon.until(
            lambda: (hub.root / "authorized").is_dir() and hub.events("lane.created", lane="authorized")
        )
        hub.drop("order.md", "not an order at all\n", lane="authorized")
        daemon.until(lambda: hub.archived() == ["order.md"])
    (error,) = hub.outbox().values()
    assert "authorized/order.md" in error


def test_a_folder_without_inbox_is_still_refused_naming_it(hub: HubDir) -> None:
    """No `inbox/`: not a hub. `slopd run` exits 2 saying so and how to make one; nothing is made."""
    shutil.rmtree(hub.root / "inbox")
    result = hub.slopd("run", "--hub", str(hub.root), "--state", str(hub.state), "--once")
    assert result.returncode == 2
    assert f"{hub.root}: not a hub (no inbox/)" in result.stderr
    assert not (hub.root / "inbox").exists()


@pytest.mark.parametrize("once", [True, False])
def test_relative_paths_reach_commands_absolute_so_deliverables_are_kept(hub: HubDir, once: bool) -> None:
    """`slopd run --hub hub --state state` as people type it: the executor's `SLOP_HUB` and
    `SLOP_OUT_DIR` are absolute, the file it writes there becomes a deliverable under
    `outbox/ID.result/`, and the reply is classed `deliverable`."""
    script = 'printf "%s" "$SLOP_HUB" > "$SLOP_OUT_DIR/where.txt"; echo done'
    hub.write_config(f"[executor]\ncommand = {toml_argv(['sh', '-c', script])}\ntimeout = 30\n")
    hub.drop("work.md", envelope_text(id="relative-1", type="instigate"))
    base = hub.root.parent
    args = ["run", "--hub", hub.root.name, "--state", hub.state.name, "--config", hub.config.name]
    if once:
        command = [*SLOPD, *args, "--once"]
        result = subprocess.run(
            command, cwd=base, env=hub.env, capture_output=True, text=True, timeout=60, check=False
        )
        assert result.returncode == 0, result.stderr
    else:
        daemon = subprocess.Popen(
            [*SLOPD, *args], cwd=base, env=hub.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            until((hub.root / "outbox" / "relative-1.result.md").is_file)
        finally:
            daemon.terminate()
            assert daemon.wait(timeout=30) == 0
    produced = hub.root / "outbox" / "relative-1.result" / "where.txt"
    assert produced.read_text() == str(hub.root.absolute())
    assert "class: deliverable" in hub.reply("relative-1", "result")
