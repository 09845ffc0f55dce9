"""`slopd doctor`: checks a hub's set-up and says, in plain words, what is wrong and how to fix it.

Here: the checks of the hub itself (its lanes, the state dir, who holds it), and `diagnose`,
which runs every check in order. Elsewhere: the configuration's (`ops.config_checks`), the
machine's (`ops.machine_checks`), a shared hub's watchers' (`ops.homes`); what a finding is
(`ops.findings`).

Rules:
1. Checks only look: nothing is created, changed or started. A check whose input is broken
   (the config) is skipped by the checks that need it, which say so.
2. Exit status: 0 when there is no problem, 1 otherwise (with the problems listed at the end).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from slopd.core.layout import LANES
from slopd.ops import homes
from slopd.ops.config_checks import check_commands, check_config, check_signers
from slopd.ops.findings import Finding
from slopd.ops.machine_checks import check_clock, check_filesystem, check_inotify
from slopd.ops.running import Located
from slopd.shell import config as config_module
from slopd.shell.config import ConfigError


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
