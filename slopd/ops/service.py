"""`slopd service install`: a hub's unit or LaunchAgent, where it goes, and the commands to run next.

The files' text is rendered by `ops.servicefiles`; this module plans the install and writes it.

Rules:
1. The system unit is one template, `slopd@.service`, for every hub: the instance name is the
   hub's path escaped as `systemd-escape --path` does (`/srv/hub` -> `slopd@srv-hub.service`).
   A `--config` goes into that instance's drop-in, never into the shared template.
2. A per-user unit or LaunchAgent is one file per hub, named after the hub's path under $HOME,
   and passes the state dir `slopd status --hub` finds by default.
3. An existing file is never overwritten: an identical one is left as it is, a different one is
   a `ConfigError` (exit 2) naming it. `--dry-run` prints the files and the commands, writes nothing.
4. Templates and the sample hub are package data (`slopd/_data/` in a wheel), else the
   checkout's top-level `systemd/`, `launchd/` and `sample-hub/`.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from slopd.ops.servicefiles import escape_path, render_dropin, render_launchd, render_systemd
from slopd.shell import config as config_module
from slopd.shell import defaults
from slopd.shell.config import ConfigError
from slopd.shell.fs import write_file
from slopd.shell.lanes import require_hub

SYSTEM_TEMPLATE = "slopd@.service"
USER_TEMPLATE = "slopd.user.service"
LAUNCHD_TEMPLATE = "dev.slopd.plist"
SYSTEM_UNIT_DIR = Path("/etc/systemd/system")
_UNIT_NAME_MAX = 255
# Where macOS asks for Files & Folders or Full Disk Access before a LaunchAgent may read.
_TCC_PLACES = ("Desktop", "Documents", "Downloads", "Library/CloudStorage", "Library/Mobile Documents")


def data_path(name: str) -> Path:
    """`systemd`, `launchd` or `sample-hub`: from the wheel's package data, else from the checkout."""
    packaged = resources.files("slopd").joinpath("_data", name)
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[2] / name
    if checkout.is_dir():
        return checkout
    raise ConfigError(f"{packaged}: slopd's {name}/ files are missing from this installation")


def hub_name(hub: Path, home: Path) -> str:
    """A readable, file-name-safe name for a hub: its path under $HOME (`Dropbox-hub`)."""
    try:
        text = str(hub.relative_to(home))
    except ValueError:
        text = str(hub)
    return re.sub(r"[^A-Za-z0-9_.]+", "-", text).strip("-.") or "hub"


@dataclass
class Plan:
    """What an install writes and what the user runs next."""

    files: list[tuple[Path, bytes]] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _slopd_executable() -> Path:
    """The `slopd` being run, else the one beside this interpreter (`python -m slopd`), else on PATH."""
    running = Path(sys.argv[0])
    if running.name == "slopd" and running.is_file():
        return running.resolve()
    beside = Path(sys.executable).parent / "slopd"
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside.absolute()
    found = shutil.which("slopd")
    if found is None:
        raise ConfigError("cannot find the slopd executable (not run as `slopd`, none on PATH)")
    return Path(found).resolve()


def _hub(value: str) -> Path:
    return require_hub(Path(value).expanduser().resolve())


def _config(value: str | None, hub: Path) -> Path | None:
    """The config to pass: the one given, else the default file if it exists; checked like `run`."""
    path = Path(value).expanduser().resolve() if value else defaults.default_config_path()
    if value is None and not path.exists():
        return None
    if not path.is_file():
        raise ConfigError(f"{path}: no such config file")
    config_module.load(path)
    config_module.ensure_outside(hub, path, "the config")
    return path


def _q(path: Path | str) -> str:
    return shlex.quote(str(path))


def plan_systemd(*, slopd: Path, hub: Path, config: Path | None, unit_dir: Path) -> Plan:
    instance = escape_path(str(hub))
    unit = f"slopd@{instance}.service"
    if len(unit) > _UNIT_NAME_MAX:
        raise ConfigError(f"{hub}: the path is too long for a systemd unit name ({len(unit)} > 255)")
    template = (data_path("systemd") / SYSTEM_TEMPLATE).read_text(encoding="utf-8")
    text = render_systemd(template, slopd=slopd, hub=hub, config=None, state=None, user=False)
    plan = Plan(files=[(unit_dir / SYSTEM_TEMPLATE, text.encode())])
    if config is not None:
        dropin = render_dropin(slopd=slopd, config=config)
        plan.files.append((unit_dir / f"{unit}.d" / "slopd.conf", dropin.encode()))
    else:
        plan.notes.append(
            "no --config: slopd reads ~slopd/.config/slopd/config.toml if there is one, else runs on "
            "the safe defaults; keep a config in /etc/slopd and install again with --config"
        )
    unsearchable = next((p for p in slopd.parents if not os.stat(p).st_mode & stat.S_IXOTH), None)
    if unsearchable is not None:
        plan.notes.append(
            f"{slopd} is inside {unsearchable}, which other users cannot enter: the slopd user "
            "cannot run it; install slopd system-wide (e.g. a venv in /opt) and install again"
        )
    unit_q = _q(unit)
    plan.commands = [
        "getent passwd slopd >/dev/null || useradd --system --user-group --home-dir /var/lib/slopd "
        "--shell /usr/sbin/nologin slopd",
        f"chgrp -R slopd {_q(hub)} && chmod -R g+rwX {_q(hub)}   # the hub must be writable by slopd",
        "systemctl daemon-reload",
        f"systemctl enable --now {unit_q}",
        f"systemctl status {unit_q}",
        f"journalctl -u {unit_q} -f",
        f"systemctl reload {unit_q}   # after changing the config",
        f"slopd status --hub {_q(hub)} --state {_q('/var/lib/slopd/' + instance)}",
    ]
    return plan


def plan_systemd_user(*, slopd: Path, hub: Path, config: Path | None, unit_dir: Path, home: Path) -> Plan:
    unit = f"slopd-{hub_name(hub, home)}.service"
    template = (data_path("systemd") / USER_TEMPLATE).read_text(encoding="utf-8")
    text = render_systemd(
        template, slopd=slopd, hub=hub, config=config, state=None, user=True, path_env=os.environ.get("PATH")
    )
    unit_q = _q(unit)
    return Plan(
        files=[(unit_dir / unit, text.encode())],
        commands=[
            "systemctl --user daemon-reload",
            f"systemctl --user enable --now {unit_q}",
            f"systemctl --user status {unit_q}",
            f"journalctl --user -u {unit_q} -f",
            f"systemctl --user reload {unit_q}   # after changing the config",
            'loginctl enable-linger "$USER"   # keep it running while you are logged out',
            f"slopd status --hub {_q(hub)}",
        ],
    )


def plan_launchd(*, slopd: Path, hub: Path, config: Path | None, agent_dir: Path, home: Path) -> Plan:
    name = hub_name(hub, home)
    label = f"dev.slopd.{name}"
    log = home / "Library" / "Logs" / f"slopd-{name}.log"
    template = (data_path("launchd") / LAUNCHD_TEMPLATE).read_bytes()
    data = render_launchd(
        template,
        slopd=slopd,
        hub=hub,
        config=config,
        state=None,
        label=label,
        log=log,
        path_env=os.environ.get("PATH"),
    )
    target = agent_dir / f"{label}.plist"
    plan = Plan(
        files=[(target, data)],
        commands=[
            f'launchctl bootstrap gui/"$(id -u)" {_q(target)}',
            f'launchctl print gui/"$(id -u)"/{label}',
            f'launchctl kickstart -k gui/"$(id -u)"/{label}   # restart, e.g. after changing the config',
            f"tail -f {_q(log)}",
            f'launchctl bootout gui/"$(id -u)"/{label}   # stop and unload',
            f"slopd status --hub {_q(hub)}",
        ],
    )
    if any(hub.is_relative_to(home / place) for place in _TCC_PLACES) or hub.is_relative_to("/Volumes"):
        python = Path(sys.executable).resolve()
        plan.notes.append(
            f"macOS asks before a background job may read {hub}: in System Settings > Privacy & "
            f"Security > Full Disk Access, add {python} (the interpreter slopd runs on), or slopd "
            "gets 'Operation not permitted'"
        )
    return plan


def install(plan: Plan) -> list[str]:
    """Write the plan's files (an identical one is left alone; a different one is refused)."""
    done = []
    for path, data in plan.files:
        if path.exists() or path.is_symlink():
            if path.is_file() and path.read_bytes() == data:
                done.append(f"unchanged {path}")
                continue
            raise ConfigError(
                f"{path} exists and differs from what slopd would write; see the difference with "
                "--dry-run, then move it away and install again"
            )
    for path, data in plan.files:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_file(path, data, mode=0o644)
            done.append(f"wrote {path}")
    return done


def plan_for(kind: str, *, hub: str, config: str | None, target_dir: str | None) -> Plan:
    """The plan for `slopd service install --KIND`: this installation's paths, the usual place."""
    slopd = _slopd_executable()
    hub_path = _hub(hub)
    config_path = _config(config, hub_path)
    home = Path.home()
    target = Path(target_dir) if target_dir else None
    if kind == "systemd":
        return plan_systemd(slopd=slopd, hub=hub_path, config=config_path, unit_dir=target or SYSTEM_UNIT_DIR)
    if kind == "systemd-user":
        config_home = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
        unit_dir = target or config_home / "systemd" / "user"
        return plan_systemd_user(slopd=slopd, hub=hub_path, config=config_path, unit_dir=unit_dir, home=home)
    agent_dir = target or home / "Library" / "LaunchAgents"
    return plan_launchd(slopd=slopd, hub=hub_path, config=config_path, agent_dir=agent_dir, home=home)
