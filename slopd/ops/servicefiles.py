"""The service files' text: a systemd unit, its drop-in, a LaunchAgent plist, with this installation's paths.

Rules:
1. Rendering reads nothing but the environment's state directory when none is given
   (`defaults.default_state_dir`): template text and paths in, file text out. Templates name
   /usr/local/bin/slopd and example paths; rendering rewrites the `ExecStart=` line (and, per
   user, `Description=` and `PATH`) or the plist's keys, and nothing else.
"""

from __future__ import annotations

import plistlib
import re
from pathlib import Path

from slopd.shell import defaults
from slopd.shell.config import ConfigError

GRACE = 30  # seconds; the units' TimeoutStopSec / ExitTimeOut (45 s) must stay above it


def escape_path(path: str) -> str:
    """The unit-name form of an absolute path, as `systemd-escape --path` prints it."""
    if not path.startswith("/"):
        raise ValueError(f"{path!r}: not an absolute path")
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise ValueError(f"{path!r}: not a normalized path (it has ..)")
    if not parts:
        return "-"
    text = "/".join(parts)
    escaped = [_escape_char(text[0])] if text[0] == "." else []
    for char in text[len(escaped) :]:
        if char == "/":
            escaped.append("-")
        elif char.isascii() and (char.isalnum() or char in ":_."):
            escaped.append(char)
        else:
            escaped.append(_escape_char(char))
    return "".join(escaped)


def _escape_char(char: str) -> str:
    return "".join(f"\\x{byte:02x}" for byte in char.encode("utf-8", "surrogateescape"))


def _unit_word(arg: str) -> str:
    """One ExecStart argument: specifiers (%) and variables ($) doubled, quoted when needed."""
    if any(ord(char) < 32 for char in arg):
        raise ConfigError(f"{arg!r}: a control character cannot go into a unit file")
    text = arg.replace("%", "%%").replace("$", "$$")
    if re.fullmatch(r"[A-Za-z0-9_@%+=:,./$-]+", text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _exec_start(slopd: Path, hub: str, state: str, config: Path | None) -> str:
    words = [_unit_word(str(slopd)), "run", "--hub", hub, "--state", state]
    if config is not None:
        words += ["--config", _unit_word(str(config))]
    return "ExecStart=" + " ".join([*words, "--grace", str(GRACE)])


def _replace_line(text: str, key: str, line: str) -> str:
    pattern = re.compile(rf"^{re.escape(key)}=.*$", re.MULTILINE)
    if len(pattern.findall(text)) != 1:
        raise ValueError(f"the template must have exactly one {key}= line")
    return pattern.sub(lambda _: line, text)


def render_systemd(
    template_text: str,
    *,
    slopd: Path,
    hub: Path,
    config: Path | None,
    state: Path | None,
    user: bool,
    path_env: str | None = None,
) -> str:
    """The unit file: per user, for `hub`; the system template takes its hub from the instance name.

    For the system template `hub` is not written (ExecStart keeps `%f`); its `config` belongs in
    `render_dropin`, since the template is shared by every hub. Without `state`, the system unit
    uses its StateDirectory and a user unit the state dir `slopd status --hub` looks in.
    """
    if not user:
        state_arg = _unit_word(str(state)) if state else "${STATE_DIRECTORY}"
        return _replace_line(template_text, "ExecStart", _exec_start(slopd, "%f", state_arg, config))
    state_dir = state or defaults.default_state_dir(hub)
    line = _exec_start(slopd, _unit_word(str(hub)), _unit_word(str(state_dir)), config)
    if path_env:
        value = ("PATH=" + path_env).replace("%", "%%").replace("\\", "\\\\").replace('"', '\\"')
        line += f'\nEnvironment="{value}"'
    text = _replace_line(template_text, "ExecStart", line)
    description = "Description=slopd: SLOP.md hub at " + str(hub).replace("%", "%%")
    return _replace_line(text, "Description", description)


def render_dropin(*, slopd: Path, config: Path) -> str:
    """The system instance's drop-in: the template's ExecStart again, with this hub's config."""
    line = _exec_start(slopd, "%f", "${STATE_DIRECTORY}", config)
    return f"# Written by `slopd service install`: this hub's config.\n[Service]\nExecStart=\n{line}\n"


def render_launchd(
    template: bytes,
    *,
    slopd: Path,
    hub: Path,
    config: Path | None,
    state: Path | None,
    label: str,
    log: Path,
    path_env: str | None = None,
) -> bytes:
    """The LaunchAgent plist for `hub`: the template's keys with this installation's values."""
    plist = plistlib.loads(template)
    state_dir = state or defaults.default_state_dir(hub)
    argv = [str(slopd), "run", "--hub", str(hub), "--state", str(state_dir)]
    if config is not None:
        argv += ["--config", str(config)]
    plist["Label"] = label
    plist["ProgramArguments"] = [*argv, "--grace", str(GRACE)]
    plist["StandardOutPath"] = plist["StandardErrorPath"] = str(log)
    if path_env:
        plist["EnvironmentVariables"] = {**plist.get("EnvironmentVariables", {}), "PATH": path_env}
    return plistlib.dumps(plist, sort_keys=False)
