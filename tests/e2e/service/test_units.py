"""The shipped systemd units, checked offline with the real `systemd-analyze`.

`systemd-analyze verify` exits 0 after a typo'd key or value and only complains on stderr, so any
stderr fails a test. Units are rendered with the installer first, so that ExecStart names an
executable that exists. `systemd-analyze` comes from the Debian package `systemd`, which .ci/run
installs; without it these tests fail rather than skip.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from slopd.ops import service, servicefiles

SLOPD_BIN = Path(sys.executable).parent / "slopd"
SYSTEM_THRESHOLD = 15  # tenths: the system unit scores 1.5
USER_THRESHOLD = 75  # the user unit scores 7.5 (see the unit's header for why)
REQUIRED = [
    "Type=notify",
    "NotifyAccess=main",
    "WatchdogSec=60s",
    "Restart=on-failure",
    "RestartSec=5s",
    "ExecReload=/bin/kill -HUP $MAINPID",
    "TimeoutStopSec=45s",
    "KillMode=mixed",
    "NoNewPrivileges=yes",
]
SYSTEM_REQUIRED = ["StateDirectory=slopd/%i", "ReadWritePaths=%f", "ProtectSystem=strict", "PrivateTmp=yes"]
LEFT_OUT = ["IPAddressDeny", "MemoryDenyWriteExecute", "PrivateNetwork"]


@pytest.fixture(name="analyze", scope="module")
def fixture_analyze() -> str:
    found = shutil.which("systemd-analyze")
    if found is None:
        pytest.fail("systemd-analyze is missing: install the Debian package `systemd` (.ci/run does)")
    return found


@pytest.fixture(name="user_env")
def fixture_user_env(tmp_path: Path) -> dict[str, str]:
    """`--user` needs a runtime dir (a private one, as pam_systemd makes it)."""
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    return {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}


def shipped(name: str) -> str:
    return (service.data_path("systemd") / name).read_text(encoding="utf-8")


def rendered_system(directory: Path) -> Path:
    text = servicefiles.render_systemd(
        shipped("slopd@.service"), slopd=SLOPD_BIN, hub=Path("/srv/hub"), config=None, state=None, user=False
    )
    path = directory / "slopd@.service"
    path.write_text(text)
    return path


def rendered_user(directory: Path) -> Path:
    text = servicefiles.render_systemd(
        shipped("slopd.user.service"),
        slopd=SLOPD_BIN,
        hub=Path("/home/alice/Dropbox/hub"),
        config=Path("/home/alice/.config/slopd/config.toml"),
        state=None,
        user=True,
        path_env="/home/alice/.local/bin:/usr/bin:/bin",
    )
    path = directory / "slopd-Dropbox-hub.service"
    path.write_text(text)
    return path


def analyze_run(
    analyze: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([analyze, *args], capture_output=True, text=True, env=env, timeout=60, check=False)


def exposure(output: str) -> float:
    found = re.search(r"Overall exposure level for \S+: (\d+\.\d)", output)
    assert found, output
    return float(found.group(1))


@pytest.mark.parametrize("name", ["slopd@.service", "slopd.user.service"])
def test_shipped_units_have_the_service_contract(name: str) -> None:
    """Each unit has Type=notify, the watchdog, restarts, reload and a stop timeout above the grace."""
    text = shipped(name)
    lines = text.splitlines()
    for directive in REQUIRED + (SYSTEM_REQUIRED if "@" in name else ["UMask=0077"]):
        assert directive in lines, directive
    timeout = int(re.search(r"^TimeoutStopSec=(\d+)s$", text, re.MULTILINE).group(1))  # type: ignore[union-attr]
    assert timeout > servicefiles.GRACE
    assert f"--grace {servicefiles.GRACE}" in text


@pytest.mark.parametrize("name", ["slopd@.service", "slopd.user.service"])
def test_left_out_directives_are_absent_and_explained(name: str) -> None:
    """Directives that would break actions are not set, and the header comment says why."""
    text = shipped(name)
    header = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    for directive in LEFT_OUT:
        assert not re.search(rf"^{directive}=", text, re.MULTILINE), directive
        assert f"{directive}=" in header, directive


def test_system_template_verifies_silently(tmp_path: Path, analyze: str) -> None:
    """`systemd-analyze verify` on the rendered template (as instance slopd@srv-hub) says nothing."""
    unit = rendered_system(tmp_path)
    for target in (str(unit), f"{unit}:slopd@srv-hub.service"):
        result = analyze_run(analyze, "verify", target)
        assert (result.returncode, result.stderr, result.stdout) == (0, "", ""), target


def test_installed_instance_with_dropin_verifies_silently(tmp_path: Path, analyze: str) -> None:
    """What `service install --systemd --config` writes (template and drop-in) verifies silently."""
    hub, config = tmp_path / "srv hub", tmp_path / "etc" / "hub.toml"
    (hub / "inbox").mkdir(parents=True)
    config.parent.mkdir()
    config.write_text('names = ["watcher"]\n')
    units = tmp_path / "units"
    plan = service.plan_systemd(slopd=SLOPD_BIN, hub=hub, config=config, unit_dir=units)
    service.install(plan)
    instance = f"slopd@{servicefiles.escape_path(str(hub))}.service"
    assert (units / f"{instance}.d" / "slopd.conf").is_file()
    env = {**os.environ, "SYSTEMD_UNIT_PATH": f"{units}:"}
    result = analyze_run(analyze, "verify", instance, env=env)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr


def test_user_unit_verifies_silently(tmp_path: Path, analyze: str, user_env: dict[str, str]) -> None:
    """`systemd-analyze verify --user` on the rendered user unit says nothing."""
    unit = rendered_user(tmp_path)
    result = analyze_run(analyze, "verify", "--user", str(unit), env=user_env)
    assert (result.returncode, result.stderr, result.stdout) == (0, "", "")


def test_verify_complains_on_stderr_only(tmp_path: Path, analyze: str) -> None:
    """A typo'd key still exits 0 but prints to stderr: the reason every test above checks stderr."""
    unit = rendered_system(tmp_path)
    unit.write_text(unit.read_text().replace("NoNewPrivileges=yes", "NoNewPrivilege=yes"))
    result = analyze_run(analyze, "verify", str(unit))
    assert result.returncode == 0
    assert "Unknown key 'NoNewPrivilege'" in result.stderr


def test_verify_fails_when_execstart_is_missing(tmp_path: Path, analyze: str) -> None:
    """The shipped template's placeholder ExecStart only verifies once rendered with a real path."""
    unit = tmp_path / "slopd@.service"
    unit.write_text(shipped("slopd@.service").replace("/usr/local/bin/slopd", str(tmp_path / "no-slopd")))
    result = analyze_run(analyze, "verify", str(unit))
    assert result.returncode != 0
    assert "is not executable" in result.stderr


def test_system_unit_exposure(tmp_path: Path, analyze: str) -> None:
    """`systemd-analyze security --offline` rates the system unit at most 1.5 and passes the threshold."""
    unit = rendered_system(tmp_path)
    target = f"{unit}:slopd@srv-hub.service"
    result = analyze_run(analyze, "security", "--offline=yes", f"--threshold={SYSTEM_THRESHOLD}", target)
    assert result.returncode == 0, result.stdout + result.stderr
    assert exposure(result.stdout) <= SYSTEM_THRESHOLD / 10


def test_user_unit_exposure(tmp_path: Path, analyze: str, user_env: dict[str, str]) -> None:
    """`systemd-analyze security --user --offline` rates the user unit at most 7.5."""
    unit = rendered_user(tmp_path)
    args = ["security", "--user", "--offline=yes", f"--threshold={USER_THRESHOLD}", str(unit)]
    result = analyze_run(analyze, *args, env=user_env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert exposure(result.stdout) <= USER_THRESHOLD / 10


def test_threshold_fails_a_bare_unit(tmp_path: Path, analyze: str) -> None:
    """The same security check fails an unhardened unit: the threshold really gates."""
    unit = tmp_path / "bare.service"
    unit.write_text(f"[Service]\nExecStart={SLOPD_BIN} run\n")
    result = analyze_run(analyze, "security", "--offline=yes", f"--threshold={SYSTEM_THRESHOLD}", str(unit))
    assert result.returncode != 0
    assert exposure(result.stdout) > 9
