"""`slopd doctor`'s checks of what the operator configured: the config, the signers, the commands.

Rules:
1. No config at the default path is fine (the safe defaults); a config that does not load is a
   problem for each of its reasons, and no `Config` comes back (`ops.doctor` rule 1).
2. The config and the allowed-signers file must be outside the hub and load; either one that
   other users may write is a warn, and so are actions without allowed signers and each line of
   allowed_signers that is skipped.
3. A command (executor, seats, actions, notify, summarizer) must be found where it will run: a
   bare name on this shell's PATH, an absolute path to an executable file, a `cwd` that is a
   folder. A relative path is a warn.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

from slopd.ops.findings import Finding
from slopd.shell import config as config_module
from slopd.shell import defaults
from slopd.shell.config import Command, Config, ConfigError


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
