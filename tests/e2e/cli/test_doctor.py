"""`slopd doctor` through its command line: real hubs, configs, keys and files in temp dirs.

Each problem is made for real and must turn the exit status to 1 and be named in the output.
The command runs in-process (`slopd.cli.main`, through `tests/slopd_commands.py`), except one
black-box run in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from slopd.core.guide import render
from slopd.core.vocabulary import MAX_ENVELOPE_BYTES
from slopd.ops.machine_checks import filesystem_type
from slopd.shell import lock
from slopd.shell.defaults import default_names
from slopd.shell.lanes import init
from tests import ROOT, slopd_commands
from tests.conftest import HubDir, toml_argv, toml_string
from tests.slopd_commands import Result

COMMANDS = [sys.executable, "-m", "slopd"]
SAMPLE_SIGNERS = ROOT / "sample-config" / "allowed_signers"


@pytest.fixture(name="hub")
def fixture_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HubDir:
    """A hub made as `slopd init` makes it, with XDG dirs of its own (in this process too)."""
    root = tmp_path / "hub"
    init(root, render(names=default_names(), max_bytes=MAX_ENVELOPE_BYTES))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    return HubDir(root=root, state=tmp_path / "state", config=tmp_path / "config.toml", env=dict(os.environ))


def doctor(hub: HubDir, *extra: str, state: Path | None = None) -> Result:
    return slopd_commands.run("doctor", "--hub", str(hub.root), "--state", str(state or hub.state), *extra)


def lines(result: Result, level: str) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith(level + " ")]


def signers(hub: HubDir, text: str | None = None) -> Path:
    path = hub.root.parent / "allowed_signers"
    path.write_text(text if text is not None else SAMPLE_SIGNERS.read_text(encoding="utf-8"))
    return path


def config_with(hub: HubDir, body: str, *, signers_path: Path | None = None) -> str:
    auth = f"[auth]\nallowed_signers = {toml_string(signers_path)}\n" if signers_path else ""
    return str(hub.write_config(body + "\n" + auth))


def test_healthy_hub_passes(hub: HubDir) -> None:
    """A fresh hub with a valid config, a key and an existing action: exit 0, no warn or problem."""
    config = config_with(
        hub,
        f"[actions.hello]\ncommand = {toml_argv([sys.executable, '-c', 'pass'])}\n"
        f"cwd = {toml_string(hub.root.parent)}\n"
        '[executor]\ncommand = ["sh", "-c", "cat"]',
        signers_path=signers(hub),
    )
    result = doctor(hub, "--config", config)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not lines(result, "problem"), result.stdout
    assert not lines(result, "warn"), result.stdout
    for topic in ("hub", "config", "allowed_signers", "actions.hello", "executor", "clock", "filesystem"):
        assert any(line.split()[1] == f"{topic}:" for line in lines(result, "ok")), (topic, result.stdout)
    assert "lists 1 key(s): alice@example.com" in result.stdout
    assert "no problems" in result.stdout.splitlines()[-1]


def test_no_config_means_safe_defaults_black_box(hub: HubDir) -> None:
    """Run as a program without any config file, doctor says the safe defaults apply and exits 0."""
    args = [*COMMANDS, "doctor", "--hub", str(hub.root), "--state", str(hub.state)]
    result = subprocess.run(args, capture_output=True, text=True, env=hub.env, timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "safe defaults" in result.stdout


def test_missing_lane_is_a_problem(hub: HubDir) -> None:
    """A removed lane is a problem that names the lane and suggests `slopd init`."""
    (hub.root / "outbox").rmdir()
    result = doctor(hub)
    assert result.returncode == 1
    (problem,) = lines(result, "problem")
    assert "lane outbox/" in problem
    assert "missing" in problem
    assert "slopd init" in problem
    assert result.stdout.splitlines()[-1] == "1 problem(s): lane outbox/"


def test_config_inside_the_hub_is_a_problem(hub: HubDir) -> None:
    """A config inside the hub (agents could rewrite it) is a problem naming the config."""
    inside = hub.root / "assets" / "config.toml"
    inside.write_text('names = ["watcher"]\n')
    result = doctor(hub, "--config", str(inside))
    assert result.returncode == 1
    assert any("config:" in line and "inside the hub" in line for line in lines(result, "problem")), (
        result.stdout
    )


def test_invalid_config_is_a_problem_and_skips_what_needs_it(hub: HubDir) -> None:
    """An unknown key is a problem naming the key; the checks that need the config say they skipped."""
    result = doctor(hub, "--config", str(hub.write_config("nmaes = []\n")))
    assert result.returncode == 1
    assert any("nmaes: unknown key" in line for line in lines(result, "problem")), result.stdout
    assert "commands: skipped until the config is valid" in result.stdout


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_unreadable_allowed_signers_is_a_problem(hub: HubDir, kind: str) -> None:
    """An allowed_signers path that is missing or not a file is a problem naming it (root reads any mode)."""
    path = hub.root.parent / "allowed_signers"
    if kind == "directory":
        path.mkdir()
    config = config_with(hub, 'names = ["watcher"]', signers_path=path)
    result = doctor(hub, "--config", config)
    assert result.returncode == 1
    (problem,) = lines(result, "problem")
    assert "allowed_signers:" in problem
    assert "cannot read" in problem
    assert str(path) in problem


def test_lines_of_other_key_types_are_warnings_and_the_rest_still_counts(hub: HubDir) -> None:
    """A git-signing allowed_signers file: an RSA colleague and a cert-authority line are each a
    warning naming the line and why; the Ed25519 key is still listed as ok; no problem."""
    principal, rest = SAMPLE_SIGNERS.read_text(encoding="utf-8").strip().split(" ", 1)
    text = (
        f"# keys\n{principal} {rest}\nbob@example.com ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQ== bob\n"
        f"{principal} cert-authority {rest}\n"
    )
    path = signers(hub, text)
    result = doctor(hub, "--config", config_with(hub, 'names = ["watcher"]', signers_path=path))
    assert result.returncode == 0, result.stdout
    warnings = [line for line in lines(result, "warn") if "allowed_signers" in line]
    assert len(warnings) == 2, warnings
    assert "line 3 skipped: key type 'ssh-rsa' is not accepted for orders" in warnings[0]
    assert "line 4 skipped: cert-authority" in warnings[1]
    assert any("lists 1 key(s)" in line for line in lines(result, "ok"))


def test_empty_allowed_signers_is_a_problem(hub: HubDir) -> None:
    """An allowed_signers file with no key at all is a problem: no order could ever be verified."""
    path = signers(hub, "# nobody yet\n")
    result = doctor(hub, "--config", config_with(hub, 'names = ["watcher"]', signers_path=path))
    assert result.returncode == 1
    assert any("lists no signer" in line for line in lines(result, "problem")), result.stdout


def test_allowed_signers_inside_the_hub_is_a_problem(hub: HubDir) -> None:
    """Trusted keys inside the hub are a problem: an agent could add its own key."""
    path = hub.root / "assets" / "allowed_signers"
    path.write_text(SAMPLE_SIGNERS.read_text(encoding="utf-8"))
    result = doctor(hub, "--config", config_with(hub, 'names = ["watcher"]', signers_path=path))
    assert result.returncode == 1
    assert any("allowed_signers:" in line and "inside the hub" in line for line in lines(result, "problem"))


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ('["/nonexistent/deploy", "prod"]', "/nonexistent/deploy does not exist"),
        ('["no-such-program-slopd-test"]', "'no-such-program-slopd-test' is not on PATH"),
    ],
)
def test_action_command_that_does_not_exist_is_a_problem(hub: HubDir, command: str, expected: str) -> None:
    """An action whose program is missing (by path or on PATH) is a problem naming the action."""
    config = config_with(hub, f"[actions.deploy]\ncommand = {command}", signers_path=signers(hub))
    result = doctor(hub, "--config", config)
    assert result.returncode == 1
    (problem,) = lines(result, "problem")
    assert problem.startswith("problem actions.deploy: ")
    assert expected in problem


def test_non_executable_command_file_is_a_problem(hub: HubDir) -> None:
    """A command file without an execute bit is a problem with the chmod that fixes it."""
    script = hub.root.parent / "deploy.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o644)
    result = doctor(hub, "--config", config_with(hub, f"[executor]\ncommand = {toml_argv([script])}"))
    assert result.returncode == 1
    (problem,) = lines(result, "problem")
    assert f"executor: {script} is not executable" in problem
    assert f"chmod +x {script}" in problem


def test_missing_action_cwd_is_a_problem(hub: HubDir) -> None:
    """An action whose cwd does not exist is a problem naming the action."""
    body = '[actions.build]\ncommand = ["sh", "-c", "true"]\ncwd = "/nonexistent/checkout"'
    result = doctor(hub, "--config", config_with(hub, body, signers_path=signers(hub)))
    assert result.returncode == 1
    assert any("actions.build: its cwd /nonexistent/checkout" in line for line in lines(result, "problem"))


def test_actions_without_allowed_signers_warn(hub: HubDir) -> None:
    """Actions with no allowed_signers can never run: a warning, not a problem."""
    result = doctor(hub, "--config", config_with(hub, '[actions.x]\ncommand = ["sh"]'))
    assert result.returncode == 0
    assert any("allowed_signers:" in line for line in lines(result, "warn")), result.stdout


def test_group_writable_config_warns(hub: HubDir) -> None:
    """A config other users may write is a warning with the chmod that fixes it."""
    config = hub.write_config('names = ["watcher"]\n')
    config.chmod(0o664)
    result = doctor(hub, "--config", str(config))
    assert result.returncode == 0
    assert any(f"chmod go-w {config}" in line for line in lines(result, "warn")), result.stdout


def test_clock_behind_the_hub_is_a_problem(hub: HubDir) -> None:
    """A hub file modified an hour in the future means this clock is behind: a problem."""
    future = time.time() + 3600
    path = hub.root / "inbox" / "from-the-future.md"
    path.write_text("x")
    os.utime(path, (future, future))
    result = doctor(hub)
    assert result.returncode == 1
    assert any(line.startswith("problem clock: ") for line in lines(result, "problem")), result.stdout


def test_daemon_holding_the_hub_is_information(hub: HubDir) -> None:
    """A daemon holding the hub's lock is reported with its pid, and is not a problem."""
    hub.state.mkdir()
    fd = lock.acquire(hub.state)
    try:
        result = doctor(hub)
    finally:
        os.close(fd)
    assert result.returncode == 0, result.stdout
    assert f"info    daemon: slopd (pid {os.getpid()}) holds this hub" in result.stdout


def test_state_dir_inside_the_hub_is_a_problem(hub: HubDir) -> None:
    """A state dir inside the hub is a problem: the ledger must not be writable by agents."""
    result = doctor(hub, state=hub.root / "notes" / "state")
    assert result.returncode == 1
    assert any(line.startswith("problem state dir: ") for line in lines(result, "problem")), result.stdout


def test_inotify_limits_are_reported(hub: HubDir) -> None:
    """On Linux the inotify instance and watch limits are read and reported with their use."""
    result = doctor(hub)
    (line,) = [line for line in result.stdout.splitlines() if " inotify: " in line]
    limit = Path("/proc/sys/fs/inotify/max_user_instances").read_text().strip()
    assert f"of {limit} instances" in line


MOUNTINFO = """\
22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
30 22 0:40 / /mnt/nas rw,relatime shared:2 - nfs4 nas:/export rw
31 30 0:41 / /mnt/nas/local\\040copy rw,relatime - ext4 /dev/sdb1 rw
32 22 0:42 / /home/alice/remote rw,nosuid - fuse.sshfs alice@box:/ rw
"""


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/srv/hub", "ext4"),
        ("/mnt/nas/hub", "nfs4"),
        ("/mnt/nas/local copy/hub", "ext4"),
        ("/mnt/nasty/hub", "ext4"),
        ("/home/alice/remote/hub", "fuse.sshfs"),
    ],
)
def test_filesystem_type_takes_the_deepest_mount(path: str, expected: str) -> None:
    """The filesystem type is the one of the deepest mount point containing the path (escapes decoded)."""
    assert filesystem_type(Path(path), MOUNTINFO) == expected


def test_real_hub_filesystem_is_reported(hub: HubDir) -> None:
    """The real hub's filesystem type, as /proc/self/mountinfo gives it, is in the output."""
    expected = filesystem_type(hub.root, Path("/proc/self/mountinfo").read_text())
    result = doctor(hub)
    assert f"filesystem: the hub is on {expected}" in result.stdout
