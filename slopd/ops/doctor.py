"""`slopd doctor`: checks a hub's set-up and says, in plain words, what is wrong and how to fix it.

Rules:
1. Every check yields findings: `ok`, `info` (worth knowing, never wrong), `warn` (works, but
   may bite) or `problem` (slopd will refuse to start, or a lane or command will fail). A warn or
   a problem always carries a fix.
2. Checks only look: nothing is created, changed or started. A check whose input is broken
   (the config) is skipped by the checks that need it, which say so.
3. Exit status: 0 when there is no problem, 1 otherwise (with the problems listed at the end).
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from slopd.core.layout import LANES
from slopd.ops import homes
from slopd.ops.running import Located
from slopd.shell import config as config_module
from slopd.shell import defaults
from slopd.shell.config import Command, Config, ConfigError

CLOCK_SLACK = 300  # seconds the newest file in the hub may be ahead of our clock
NETWORK_FILESYSTEMS = frozenset({"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "virtiofs", "afs", "ceph"})
_INOTIFY = Path("/proc/sys/fs/inotify")


@dataclass(frozen=True, slots=True)
class Finding:
    level: str  # ok, info, warn, problem
    topic: str
    text: str
    fix: str | None = None

    def line(self) -> str:
        fix = f"{'' if self.text.endswith(('.', '?')) else '.'} Fix: {self.fix}" if self.fix else ""
        return f"{self.level:<8}{self.topic}: {self.text}{fix}"


def check_hub(hub: Path) -> Iterator[Finding]:
    if not hub.is_dir():
        yield Finding("problem", "hub", f"{hub} is not a folder", f"slopd init {hub}")
        return
    bad = False
    for lane in LANES:
        path = hub / lane
        if path.is_symlink() or not path.is_dir():
            what = "a symlink" if path.is_symlink() else "not a folder" if path.exists() else "missing"
            fix = f"slopd init {hub} (it creates missing lanes and changes nothing else)"
            yield Finding("problem", f"lane {lane}/", f"{path} is {what}; slopd needs every lane", fix)
            bad = True
        elif not os.access(path, os.W_OK | os.X_OK):
            fix = f"give the user slopd runs as write access to {path}"
            yield Finding("problem", f"lane {lane}/", f"{path} is not writable by this user", fix)
            bad = True
    if not bad:
        yield Finding("ok", "hub", f"{hub} has all {len(LANES)} lanes, each writable")


def check_state(hub: Path, state: Path) -> Iterator[Finding]:
    try:
        config_module.ensure_outside(hub, state, "the state dir")
    except ConfigError as error:
        yield Finding("problem", "state dir", str(error), "pass a --state outside the hub")
        return
    if not state.exists():
        yield Finding("ok", "state dir", f"{state} does not exist yet; slopd run creates it")
    elif not state.is_dir() or not os.access(state, os.W_OK | os.X_OK):
        yield Finding("problem", "state dir", f"{state} is not a writable folder", f"fix or remove {state}")
    else:
        yield Finding("ok", "state dir", f"{state} is writable")


def check_config(hub: Path, given: Path | None) -> tuple[list[Finding], Config | None]:
    path = given or defaults.default_config_path()
    if given is None and not path.exists():
        text = f"no config at {path}: slopd runs on the safe defaults (ack, discuss, index; no execution)"
        return [Finding("ok", "config", text)], config_module.load(None)
    try:
        config = config_module.load(path)
        config_module.ensure_outside(hub, path, "the config")
    except ConfigError as error:
        fix = (
            "correct the file; the message names the key"
            if path.is_file()
            else "give --config an existing file"
        )
        if "inside the hub" in str(error):
            fix = "move the config outside the hub and pass --config NEWPATH"
        head = f"{error.where}: " if error.where else ""
        return [Finding("problem", "config", head + reason, fix) for reason in error.reasons], None
    return [Finding("ok", "config", f"{path} is valid"), *_loose_mode(path, "config")], config


def _loose_mode(path: Path, topic: str) -> list[Finding]:
    try:
        mode = path.stat().st_mode
    except OSError:
        return []
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        text = f"{path} is writable by other users, who could then change what slopd trusts"
        return [Finding("warn", topic, text, f"chmod go-w {path}")]
    return []


def check_signers(hub: Path, config: Config) -> Iterator[Finding]:
    path = config.auth.allowed_signers
    if path is None:
        if config.actions:
            text = "actions are configured but [auth] allowed_signers is not: no order can be verified"
            yield Finding("warn", "allowed_signers", text, "set [auth] allowed_signers to a file of keys")
        else:
            yield Finding(
                "ok", "allowed_signers", "none configured: signed orders in authorized/ are refused"
            )
        return
    try:
        config_module.ensure_outside(hub, path, "the allowed-signers file")
        trust = config_module.load_trust(config)
    except ConfigError as error:
        fix = f"list each signer on one line of {path}, as `slopd keygen` prints it"
        if "inside the hub" in str(error):
            fix = "move it outside the hub and update [auth] allowed_signers"
        elif "cannot read" in str(error):
            fix = f"make {path} a readable text file, or correct [auth] allowed_signers"
        yield Finding("problem", "allowed_signers", str(error), fix)
        return
    assert trust is not None
    principals = ", ".join(sorted({entry.principals for entry in trust.signers}))
    yield Finding("ok", "allowed_signers", f"{path} lists {len(trust.signers)} key(s): {principals}")
    for skipped in trust.skipped:
        fix = "nothing to do if that key does not sign orders; else give its owner an Ed25519 or security key"
        yield Finding("warn", "allowed_signers", f"{path} line {skipped.line} skipped: {skipped.reason}", fix)
    yield from _loose_mode(path, "allowed_signers")


def _commands(config: Config) -> Iterator[tuple[str, tuple[str, ...], str | None]]:
    named: list[tuple[str, Command | None]] = [("executor", config.executor)]
    named += [(f"seats.{name}", command) for name, command in config.seats.items()]
    named += [(f"actions.{name}", command) for name, command in config.actions.items()]
    for topic, command in named:
        if command is not None:
            yield topic, command.argv, command.cwd
    for topic, argv in (("notify", config.notify), ("summarizer", config.summarizer)):
        if argv is not None:
            yield topic, argv, None


def check_commands(config: Config) -> Iterator[Finding]:
    for topic, argv, cwd in _commands(config):
        program = argv[0]
        if "/" not in program:
            found = shutil.which(program)
            if found is None:
                text = f"{program!r} is not on PATH (this shell's PATH; a service's may be shorter)"
                yield Finding("problem", topic, text, "install it, or give its absolute path in the config")
                continue
            path = Path(found)
        elif not program.startswith("/"):
            text = f"{program!r} is relative, so it depends on the directory the command runs in"
            yield Finding("warn", topic, text, "give its absolute path")
            continue
        else:
            path = Path(program)
            if not path.is_file():
                what = "does not exist" if not path.exists() else "is not a file"
                yield Finding("problem", topic, f"{program} {what}", "install it or correct the path")
                continue
            if not os.access(path, os.X_OK):
                yield Finding("problem", topic, f"{program} is not executable", f"chmod +x {program}")
                continue
        if cwd is not None and not Path(cwd).is_dir():
            yield Finding("problem", topic, f"its cwd {cwd} is not a folder", "create it or correct cwd")
            continue
        yield Finding("ok", topic, f"runs {path}")


def check_clock(hub: Path, now: datetime) -> Iterator[Finding]:
    if now.year < 2024:
        yield Finding("problem", "clock", f"the clock says {now:%Y-%m-%d}", "set the date (enable NTP)")
        return
    newest = 0.0
    for lane in ("", *LANES):
        try:
            with os.scandir(hub / lane) as entries:
                for entry in entries:
                    newest = max(newest, entry.stat(follow_symlinks=False).st_mtime)
        except OSError:
            continue
    ahead = newest - now.timestamp()
    if ahead > CLOCK_SLACK:
        text = f"a file in the hub was modified {ahead:.0f} s in the future: this clock is behind"
        yield Finding(
            "problem", "clock", text, "sync the clock (enable NTP) here and where the hub is written"
        )
    else:
        yield Finding("ok", "clock", f"{now:%Y-%m-%d %H:%M:%S} UTC, not behind the hub's files")


def _inotify_in_use() -> tuple[int, int]:
    """Inotify instances and watches held by this user's processes (those we can inspect)."""
    instances = watches = 0
    uid = os.getuid()
    for pid in (name for name in os.listdir("/proc") if name.isdigit()):
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:inotify":
                    continue
                instances += 1
                with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii", errors="replace") as info:
                    watches += sum(line.startswith("inotify wd:") for line in info)
        except OSError:
            continue
    return instances, watches


def check_inotify() -> Iterator[Finding]:
    try:
        max_instances = int((_INOTIFY / "max_user_instances").read_text())
        max_watches = int((_INOTIFY / "max_user_watches").read_text())
    except (OSError, ValueError):
        yield Finding("info", "inotify", "no inotify limits here (not Linux): nothing to check")
        return
    instances, watches = _inotify_in_use()
    text = f"this user holds {instances} of {max_instances} instances and {watches} of {max_watches} watches"
    if max_instances - instances < 4 or max_watches - watches < 64:
        fix = (
            "raise them: sysctl fs.inotify.max_user_instances=1024 fs.inotify.max_user_watches=524288 "
            "(and put the same in /etc/sysctl.d/60-inotify.conf), or run slopd with --polling"
        )
        yield Finding("warn", "inotify", f"{text}; slopd needs 2 instances and 2 watches", fix)
    else:
        yield Finding("ok", "inotify", text)


def check_daemon(located: Located) -> Iterator[Finding]:
    state, pid = located.state, located.pid
    if pid is None:
        yield Finding("info", "daemon", f"no slopd holds this hub (state dir {state})")
    else:
        shown = "unknown pid" if pid < 0 else f"pid {pid}"
        how = ", found through the hub" if located.how == "presence" else ""
        yield Finding("info", "daemon", f"slopd ({shown}) holds this hub (state dir {state}{how})")
    for claim in located.passed_over:
        yield Finding("info", "daemon", f"a presence file {claim}")


def filesystem_type(path: Path, mountinfo: str) -> str | None:
    """The type of the filesystem `path` is on, from the text of /proc/self/mountinfo."""
    real = os.path.realpath(path)
    best, best_type = "", None
    for line in mountinfo.splitlines():
        fields, _, rest = line.partition(" - ")
        parts = fields.split(" ")
        if len(parts) < 5 or not rest:
            continue
        point = parts[4]
        for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
            point = point.replace(code, char)
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, best_type = point, rest.split(" ")[0]
    return best_type


def check_filesystem(hub: Path) -> Iterator[Finding]:
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = "cannot tell the filesystem type here; on a network or cloud folder, events may be missed"
        yield Finding("info", "filesystem", text)
        return
    kind = filesystem_type(hub, mountinfo)
    if kind is not None and (kind in NETWORK_FILESYSTEMS or kind.startswith("fuse.") or kind == "fuse"):
        text = f"the hub is on {kind}: changes made on other machines raise no events here"
        yield Finding("warn", "filesystem", text, "run slopd with --polling")
    else:
        yield Finding("ok", "filesystem", f"the hub is on {kind or 'an unknown filesystem'}")


def diagnose(hub: Path, config_path: Path | None, located: Located, now: datetime) -> list[Finding]:
    findings = [*check_hub(hub), *check_state(hub, located.state)]
    config_findings, config = check_config(hub, config_path)
    findings += config_findings
    if config is None:
        skipped = "skipped until the config is valid"
        findings += [Finding("info", "allowed_signers", skipped), Finding("info", "commands", skipped)]
    else:
        findings += [*check_signers(hub, config), *check_commands(config)]
        findings += [Finding(level, "home", text, fix) for level, text, fix in homes.check(hub, config, now)]
    findings += [*check_clock(hub, now), *check_inotify(), *check_daemon(located), *check_filesystem(hub)]
    return findings
