"""The defaults that come from the machine and the environment: the only module reading them.

Rules:
1. A watcher's names default to `watcher` and `watcher:HOSTNAME` (the short host name, with
   anything outside `[A-Za-z0-9._-]` replaced by `-`).
2. The config is `$XDG_CONFIG_HOME/slopd/config.toml` (default `~/.config`).
3. A hub's state dir is `$XDG_STATE_HOME/slopd/NAME-HASH/` (default `~/.local/state`), NAME
   and HASH from the hub's real path, so two hubs never share one.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def default_names() -> tuple[str, ...]:
    host = _UNSAFE.sub("-", os.uname().nodename.split(".")[0]) or "localhost"  # gethostname(), sans socket
    return ("watcher", f"watcher:{host}")


def default_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "slopd" / "config.toml"


def default_state_dir(hub: Path) -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    real = os.path.realpath(hub)
    slug = _UNSAFE.sub("-", Path(real).name) or "hub"
    return Path(base) / "slopd" / f"{slug}-{hashlib.sha256(real.encode()).hexdigest()[:10]}"


def state_dir(hub: Path, given: str | Path | None) -> Path:
    """The state dir: the one given, else the default for this hub."""
    return Path(given) if given else default_state_dir(hub)
