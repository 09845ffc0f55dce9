"""`slopd service install`: rendering, where files go, refusing to clobber, and the path escaping.

Real hubs, configs and target dirs in temp dirs; the escaping is checked against the real
`systemd-escape`. The command runs in-process through `slopd.cli.main` (`tests/slopd_commands.py`).
"""

from __future__ import annotations

import plistlib
import random
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from slopd.core.guide import render
from slopd.core.vocabulary import MAX_ENVELOPE_BYTES
from slopd.ops import service, servicefiles
from slopd.shell.defaults import default_names, default_state_dir
from slopd.shell.lanes import init
from slopd.shell.version import version
from tests import ROOT
from tests.slopd_commands import run

SLOPD_BIN = Path(sys.executable).parent / "slopd"


def systemd_tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is missing: install the Debian package `systemd` (.ci/run does it)")
    return found


@pytest.fixture(name="home")
def fixture_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of its own, with the XDG dirs under it, for this process."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("PATH", f"{home / 'bin'}:/usr/bin:/bin")
    return home


def make_hub(path: Path) -> Path:
    init(path, render(names=default_names(), max_bytes=MAX_ENVELOPE_BYTES))
    return path


def make_config(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('names = ["watcher"]\n')
    return path


def test_escape_path_matches_systemd_escape() -> None:
    """escape_path agrees with `systemd-escape --path` on tricky and on random absolute paths."""
    tricky = ["/", "//", "/.", "/srv/hub", "/srv/hub/", "//a//b/./c/", "/.dot/.x", "/a-b", "/-a", "/a b"]
    tricky += ["/ü/日本", "/a\\b", "/x:y_z.w", "/...", "/a'b\"c", "/a%b$c", "/tab\there", "/~user"]
    alphabet = "ab-_.:/ \\%$~'ü日"
    chance = random.Random(20260704)
    paths = tricky + ["/" + "".join(chance.choices(alphabet, k=chance.randint(1, 20))) for _ in range(300)]
    paths = [path for path in paths if ".." not in path.split("/")]
    result = subprocess.run(
        [systemd_tool("systemd-escape"), "--path", "--", *paths], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == [servicefiles.escape_path(path) for path in paths]


def test_escape_path_refuses_what_systemd_escape_refuses() -> None:
    """A path with a `..` component is refused, as `systemd-escape --path` refuses it."""
    result = subprocess.run(
        [systemd_tool("systemd-escape"), "--path", "/a/../b"], capture_output=True, check=False
    )
    assert result.returncode != 0
    with pytest.raises(ValueError, match="normalized"):
        servicefiles.escape_path("/a/../b")


def test_user_unit_renders_this_installation(tmp_path: Path, home: Path) -> None:
    """The user unit names the real slopd, hub, config, default state dir and PATH; nothing else moves."""
    template = (service.data_path("systemd") / "slopd.user.service").read_text()
    hub, config = home / "Dropbox" / "hub", home / ".config" / "slopd" / "config.toml"
    text = servicefiles.render_systemd(
        template, slopd=SLOPD_BIN, hub=hub, config=config, state=None, user=True, path_env="/opt/x:/usr/bin"
    )
    state = default_state_dir(hub)
    expected = f"ExecStart={SLOPD_BIN} run --hub {hub} --state {state} --config {config} --grace 30"
    assert expected in text.splitlines()
    assert 'Environment="PATH=/opt/x:/usr/bin"' in text.splitlines()
    assert f"Description=slopd: SLOP.md hub at {hub}" in text.splitlines()
    changed = set(text.splitlines()) - set(template.splitlines())
    assert len(changed) == 3, changed


def test_system_template_keeps_the_instance_hub() -> None:
    """The system template keeps %f and the StateDirectory; only the slopd path changes."""
    template = (service.data_path("systemd") / "slopd@.service").read_text()
    text = servicefiles.render_systemd(
        template,
        slopd=Path("/opt/slopd/bin/slopd"),
        hub=Path("/srv/hub"),
        config=None,
        state=None,
        user=False,
    )
    assert "ExecStart=/opt/slopd/bin/slopd run --hub %f --state ${STATE_DIRECTORY} --grace 30" in text
    assert text.replace("/opt/slopd/bin/slopd", "/usr/local/bin/slopd") == template


def test_paths_with_specials_are_quoted_for_systemd(tmp_path: Path) -> None:
    """Spaces, quotes, % and $ in paths are quoted and doubled so systemd reads them back verbatim."""
    template = (service.data_path("systemd") / "slopd.user.service").read_text()
    hub = Path('/home/a b/50% "x"/$HOME')
    text = servicefiles.render_systemd(
        template, slopd=Path("/o p/slopd"), hub=hub, config=None, state=Path("/s"), user=True
    )
    line = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    assert line == 'ExecStart="/o p/slopd" run --hub "/home/a b/50%% \\"x\\"/$$HOME" --state /s --grace 30'


def test_install_systemd_writes_template_and_dropin(tmp_path: Path, home: Path) -> None:
    """--systemd writes the template once and a drop-in with the config, and prints how to run it."""
    hub = make_hub(tmp_path / "srv" / "my-hub")
    config = make_config(tmp_path / "etc" / "hub.toml")
    units = tmp_path / "units"
    result = run(
        "service",
        "install",
        "--systemd",
        "--hub",
        str(hub),
        "--config",
        str(config),
        "--target-dir",
        str(units),
    )
    assert result.returncode == 0, result.stderr
    instance = servicefiles.escape_path(str(hub))
    assert "\\x2d" in instance
    template = (units / "slopd@.service").read_text()
    assert f"ExecStart={SLOPD_BIN} run --hub %f --state ${{STATE_DIRECTORY}} --grace 30" in template
    dropin = (units / f"slopd@{instance}.service.d" / "slopd.conf").read_text()
    assert f"--config {config} --grace 30" in dropin
    assert "\nExecStart=\n" in dropin
    quoted = f"'slopd@{instance}.service'"
    for command in ("systemctl daemon-reload", f"systemctl enable --now {quoted}", f"journalctl -u {quoted}"):
        assert command in result.stdout, result.stdout
    assert f"--state '/var/lib/slopd/{instance}'" in result.stdout


def test_install_user_unit_where_systemd_looks(tmp_path: Path, home: Path) -> None:
    """--systemd-user writes ~/.config/systemd/user/slopd-NAME.service, NAME from the hub under $HOME."""
    hub = make_hub(home / "Dropbox" / "hub")
    default_config = make_config(home / ".config" / "slopd" / "config.toml")
    result = run("service", "install", "--systemd-user", "--hub", str(hub))
    assert result.returncode == 0, result.stderr
    unit = home / ".config" / "systemd" / "user" / "slopd-Dropbox-hub.service"
    assert f"wrote {unit}" in result.stdout
    text = unit.read_text()
    assert f"--state {default_state_dir(hub)} --config {default_config} --grace 30" in text
    assert f'Environment="PATH={home / "bin"}:/usr/bin:/bin"' in text
    assert "systemctl --user enable --now slopd-Dropbox-hub.service" in result.stdout
    assert "journalctl --user -u slopd-Dropbox-hub.service" in result.stdout


def test_install_launchd_agent(tmp_path: Path, home: Path) -> None:
    """--launchd writes ~/Library/LaunchAgents/dev.slopd.NAME.plist and prints launchctl bootstrap."""
    hub = make_hub(home / "Documents" / "hub")
    result = run("service", "install", "--launchd", "--hub", str(hub))
    assert result.returncode == 0, result.stderr
    path = home / "Library" / "LaunchAgents" / "dev.slopd.Documents-hub.plist"
    plist = plistlib.loads(path.read_bytes())
    assert plist["Label"] == "dev.slopd.Documents-hub"
    assert plist["ProgramArguments"][:4] == [str(SLOPD_BIN), "run", "--hub", str(hub)]
    assert f'launchctl bootstrap gui/"$(id -u)" {path}' in result.stdout
    assert "launchctl kickstart -k gui/" in result.stdout
    assert "Full Disk Access" in result.stdout
    assert str(Path(sys.executable).resolve()) in result.stdout


def test_dry_run_prints_and_writes_nothing(tmp_path: Path, home: Path) -> None:
    """--dry-run prints the rendered file and the commands, and creates nothing."""
    hub = make_hub(home / "hub")
    result = run("service", "install", "--systemd-user", "--hub", str(hub), "--dry-run")
    assert result.returncode == 0, result.stderr
    assert f"ExecStart={SLOPD_BIN} run --hub {hub}" in result.stdout
    assert "systemctl --user enable --now slopd-hub.service" in result.stdout
    assert not (home / ".config").exists()


def test_same_file_again_is_left_alone(tmp_path: Path, home: Path) -> None:
    """Installing twice leaves the identical file as it is and succeeds."""
    hub = make_hub(home / "hub")
    assert run("service", "install", "--launchd", "--hub", str(hub)).returncode == 0
    again = run("service", "install", "--launchd", "--hub", str(hub))
    assert again.returncode == 0, again.stderr
    assert "unchanged" in again.stdout


def test_different_existing_file_is_refused(tmp_path: Path, home: Path) -> None:
    """A different file already in place is not overwritten: exit 2 naming it, the file untouched."""
    hub = make_hub(tmp_path / "hub")
    units = tmp_path / "units"
    units.mkdir()
    (units / "slopd@.service").write_text("[Service]\nExecStart=/bin/true\n")
    result = run("service", "install", "--systemd", "--hub", str(hub), "--target-dir", str(units))
    assert result.returncode == 2
    assert f"{units / 'slopd@.service'} exists and differs" in result.stderr
    assert (units / "slopd@.service").read_text() == "[Service]\nExecStart=/bin/true\n"


@pytest.mark.parametrize("problem", ["not-a-hub", "config-inside", "bad-config", "missing-config"])
def test_bad_setups_are_refused(tmp_path: Path, home: Path, problem: str) -> None:
    """A folder that is not a hub, or a config missing, invalid or inside the hub: exit 2, nothing written."""
    hub = make_hub(tmp_path / "hub") if problem != "not-a-hub" else tmp_path
    config = {
        "config-inside": make_config(hub / "assets" / "c.toml"),
        "bad-config": tmp_path / "bad.toml",
        "missing-config": tmp_path / "none.toml",
    }.get(problem)
    if problem == "bad-config":
        tmp_path.joinpath("bad.toml").write_text("nmaes = 1\n")
    extra = ["--config", str(config)] if config else []
    result = run("service", "install", "--launchd", "--hub", str(hub), *extra)
    assert result.returncode == 2, result.stdout
    assert result.stderr.startswith("slopd service: ")
    assert not (home / "Library").exists()


def test_data_and_version() -> None:
    """The templates and the sample hub are found, and the version is the package's."""
    assert (service.data_path("systemd") / "slopd@.service").is_file()
    assert (service.data_path("launchd") / "dev.slopd.plist").is_file()
    assert (service.data_path("sample-hub") / "inbox").is_dir()
    pyproject = ROOT / "pyproject.toml"
    assert version() == tomllib.loads(pyproject.read_text())["project"]["version"]
