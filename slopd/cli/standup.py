"""`slopd standup --hub HUB PROJECT [--json]`: a project's Standing Standup, read without a daemon."""

from __future__ import annotations

import argparse
import json

from slopd.core.errors import UsageError
from slopd.handoff import digest, standup
from slopd.handoff.board import Board
from slopd.shell.lanes import Hub, require_hub


def show(args: argparse.Namespace) -> int:
    if standup.PROJECT.fullmatch(args.project) is None:
        raise UsageError(
            f"{args.project!r} is not a project name (lower-case letters, digits, '.', '_', '-')"
        )
    hub = Hub(require_hub(args.hub))
    try:
        text = Board(hub).read(args.project)
    finally:
        hub.close()
    if text is None:
        print(
            f"{args.hub}/{digest.path(args.project)}: no such standup (a handoff or handshake with "
            f"`project: {args.project}` starts it)"
        )
        return 1
    if args.json:
        print(json.dumps(digest.as_json(args.project, text), indent=2))
    else:
        print(digest.show(args.project, text), end="")
    return 0
