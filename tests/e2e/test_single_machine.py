"""The single-machine trap (SPEC §14, issue 24 point 9), reproduced as the issue states it.

On one machine, `slopd init HUB` records `watcher:THIS-HOST` as the home; a config with
`names = ["watcher", "watcher:odysseus"]` then gives a watcher that is not home, and the home
it waits for has never run. slopd must say so on the terminal (stderr a TTY, here a real pty),
keep its log JSON, and `slopd doctor` must exit 1 with the one command that fixes it; `slopd
init --config CFG` avoids the trap by taking the home from the config's names.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import threading
from pathlib import Path

import pytest

from slopd.core import home
from slopd.shell.defaults import default_names
from tests.conftest import SLOPD, HubDir, envelope_text, hub_env

CONFIG = 'names = ["watcher", "watcher:odysseus"]\nsettle = 0.05\n'
QUERY = "20260704t110000z-anyone-home"


@pytest.fixture(name="machine")
def fixture_machine(tmp_path: Path) -> HubDir:
    """A hub path, a state dir and the config of the issue, nothing created in the hub yet."""
    if home.specific_name(default_names()) == "watcher:odysseus":
        pytest.skip("this machine is called odysseus: the issue's config names it, no trap")
    made = HubDir(tmp_path / "hub", tmp_path / "state", tmp_path / "config.toml", hub_env(tmp_path))
    made.write_config(CONFIG)
    return made


def on_a_terminal(hub: HubDir, *args: str) -> tuple[int, str]:
    """`slopd ARGS` with stderr on a pseudo-terminal: its exit status and what the terminal showed."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [*SLOPD, *args], env=hub.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave
    )
    os.close(slave)
    shown: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                return
            if not data:
                return
            shown.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    code = process.wait(timeout=60)
    reader.join(timeout=10)
    os.close(master)
    return code, b"".join(shown).decode("utf-8", "replace").replace("\r\n", "\n")


def run_once(hub: HubDir) -> list[str]:
    args = ["--hub", str(hub.root), "--state", str(hub.state), "--config", str(hub.config), "--once"]
    return ["run", *args]


def test_init_then_another_name_is_said_on_the_terminal_and_doctor_gives_the_fix(machine: HubDir) -> None:
    """The issue's reproduction: the query to `watcher` is left unanswered, and the terminal, the
    JSON log and doctor all say why and how to fix it; the fix makes it answered."""
    hub = machine
    made = hub.slopd("init", str(hub.root))
    assert made.returncode == 0, made.stderr
    hub.drop(f"{QUERY}.md", envelope_text(id=QUERY, type="query", to="watcher"))
    fix = f"slopd hub home --hub {hub.root} watcher:odysseus"

    code, shown = on_a_terminal(hub, *run_once(hub))
    assert code == 0, shown
    plain = [line for line in shown.splitlines() if line and not line.startswith("{")]
    assert plain == [
        "slopd run: nothing addressed to `watcher` or `human` will be answered: the hub file names "
        f"{home.specific_name(default_names())} as the home watcher, no watcher of that name has ever "
        "run on this hub, and this watcher is watcher:odysseus (a config whose names differ from the "
        "ones `slopd init` used?).",
        f"  Fix: {fix}",
        plain[2],
    ]
    assert plain[2].startswith("  then reload this slopd (kill -HUP ")
    assert hub.lane("inbox") == [f"{QUERY}.md"]
    assert hub.outbox() == {}

    piped = hub.slopd(*run_once(hub))  # stderr a pipe: JSON lines only, the warning among them
    assert piped.returncode == 0, piped.stderr
    records = [json.loads(line) for line in piped.stderr.splitlines()]
    (warned,) = [record for record in records if record["event"] == "hub.home_unseen"]
    assert (warned["level"], warned["fix"], warned["this_watcher"]) == ("warning", fix, "watcher:odysseus")

    doctor = hub.slopd(
        "doctor", "--hub", str(hub.root), "--config", str(hub.config), "--state", str(hub.state)
    )
    assert doctor.returncode == 1, doctor.stdout
    (problem,) = [line for line in doctor.stdout.splitlines() if line.startswith("problem home:")]
    assert problem.endswith(f"Fix: {fix}")
    assert doctor.stdout.splitlines()[-1] == "1 problem(s): home"

    moved = hub.slopd(*fix.split()[1:])
    assert moved.returncode == 0, moved.stderr
    again = hub.slopd(*run_once(hub))
    assert again.returncode == 0, again.stderr
    assert "hub.home_unseen" not in again.stderr
    assert hub.lane("inbox") == []
    assert list(hub.outbox()) == [f"{QUERY}.result.md"]
    healthy = hub.slopd(
        "doctor", "--hub", str(hub.root), "--config", str(hub.config), "--state", str(hub.state)
    )
    assert not [line for line in healthy.stdout.splitlines() if line.startswith("problem home:")], (
        healthy.stdout
    )


def test_init_with_the_config_takes_the_home_from_its_names(machine: HubDir) -> None:
    """`slopd init --config CFG HUB` records watcher:odysseus as home and lists the config's names
    in HUB.md: the first run answers `watcher`, and nothing warns."""
    hub = machine
    made = hub.slopd("init", "--config", str(hub.config), str(hub.root))
    assert made.returncode == 0, made.stderr
    assert "(home watcher: watcher:odysseus)" in made.stdout
    assert 'home = "watcher:odysseus"' in (hub.root / ".slopd" / "hub.toml").read_text(encoding="utf-8")
    assert "`watcher`, `watcher:odysseus`" in (hub.root / "HUB.md").read_text(encoding="utf-8")
    hub.drop(f"{QUERY}.md", envelope_text(id=QUERY, type="query", to="watcher"))
    code, shown = on_a_terminal(hub, *run_once(hub))
    assert code == 0, shown
    assert [line for line in shown.splitlines() if line and not line.startswith("{")] == []
    assert list(hub.outbox()) == [f"{QUERY}.result.md"]


def test_init_reads_the_default_config_and_a_home_false_config_claims_nothing(machine: HubDir) -> None:
    """Without --config, init reads the default config as `slopd run` would; with `home = false`
    it records no home (the home's own machine claims it) and says so."""
    hub = machine
    default = Path(hub.env["XDG_CONFIG_HOME"]) / "slopd" / "config.toml"
    default.parent.mkdir(parents=True)
    default.write_text(CONFIG + "home = false\n", encoding="utf-8")
    made = hub.slopd("init", str(hub.root))
    assert made.returncode == 0, made.stderr
    assert not (hub.root / ".slopd" / "hub.toml").exists()
    assert "home = false" in made.stdout
    assert "`watcher`, `watcher:odysseus`" in (hub.root / "HUB.md").read_text(encoding="utf-8")
    default.write_text("names = 3\n", encoding="utf-8")
    broken = hub.slopd("init", str(hub.root))
    assert broken.returncode == 2
    assert f"{default}: names: expected" in broken.stderr
