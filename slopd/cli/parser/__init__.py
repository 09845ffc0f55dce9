"""Every `slopd` command and option, one module per command group, built from imports that cost nothing.

A command's handler is named `module:function` and imported only when that command runs, so
`slopd send` never loads the daemon, watchdog, SQLite or cryptography.

Rules:
1. `build` lists the command groups in the order `slopd --help` shows them; each group is one
   module here (`hubs`, `envelopes`, `keys`, `handoff`, `access`, `baton`, `agents`,
   `operating`), grouped as `slopd.cli` groups the handlers.
2. A group module imports argparse, `core.vocabulary` and `options` alone.
3. Each command's `--help` ends with its example (`cli.examples`), at every depth.
"""

from __future__ import annotations

import argparse

from slopd.cli.examples import epilog
from slopd.cli.parser import access, agents, baton, envelopes, handoff, hubs, keys, operating
from slopd.cli.parser.argparser import Parser, Version


def build() -> argparse.ArgumentParser:
    text = "a safe handoff hub between AI agents and their human: SLOP envelopes, MEP logs, the Baton keeper"
    parser: argparse.ArgumentParser = Parser(prog="slopd", description=text)
    parser.add_argument("--version", action=Version)
    commands = parser.add_subparsers(dest="command", required=True)
    for group in (hubs, envelopes, keys, handoff, access, baton, agents, operating):
        group.add(commands)
    _add_examples(parser, "")
    return parser


def _add_examples(parser: argparse.ArgumentParser, command: str) -> None:
    """Each command's `--help` ends with its example (`cli.examples`), at every depth (rule 3)."""
    parser.epilog = epilog(command)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                _add_examples(sub, f"{command} {name}".strip())
