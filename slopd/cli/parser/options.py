"""What the command groups share: how a command names its handler, and the options many take.

Rules:
1. A command names its handler as `module:function` (a string): the handler's module is imported
   only when that command runs (`slopd.cli`).
2. An option that several commands take (`--hub` with `--state`, `--config`, `--log-file`,
   `--json`) says the same thing, with the same default, wherever it appears.
"""

from __future__ import annotations

import argparse
from typing import TypeAlias

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

DEFAULT_STATE = "state dir (default $XDG_STATE_HOME/slopd/<hub-id>)"
DEFAULT_CONFIG = "TOML config (default $XDG_CONFIG_HOME/slopd/config.toml)"
DEFAULT_LOG = "log file (default STATE/slopd.log)"
JSON = "print JSON, for scripts"
VESSEL = "the vessel: one agent lineage, HUB/batons/VESSEL/"


def command(commands: Commands, name: str, handler: str, text: str) -> argparse.ArgumentParser:
    """A command `slopd NAME` that runs `handler` (rule 1), its help and description `text`."""
    sub = commands.add_parser(name, help=text, description=text)
    sub.set_defaults(handler=handler)
    return sub


def hub_and_state(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--hub", required=True, help="the hub folder")
    sub.add_argument("--state", help=DEFAULT_STATE)
