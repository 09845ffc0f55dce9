"""`slopd mcp`: a hub's seat as MCP tools on stdio (SPEC §13), for Claude Code, Cursor, Codex CLI,
Gemini CLI. The seat is `--seat` (or `SLOPD_SEAT`), fixed for the session."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from slopd.core.envelope import PARTY_PATTERN
from slopd.core.errors import UsageError
from slopd.shell import defaults
from slopd.shell.lanes import Hub, require_hub

_MCP_EXTRA = "slopd mcp needs the MCP extra: pip install 'slopd[mcp]'"


def serve(args: argparse.Namespace) -> int:
    seat = args.seat or os.environ.get("SLOPD_SEAT", "")
    if PARTY_PATTERN.fullmatch(seat) is None:
        raise UsageError(f"--seat {seat!r}: give the seat this session speaks for (a valid `from`)")
    try:
        from slopd.transport.mcp import server as mcp_server  # noqa: PLC0415  # the SDK, only here
        from slopd.transport.mcp.seat import Seat  # noqa: PLC0415
    except ImportError as missing:
        raise UsageError(f"{_MCP_EXTRA} ({missing.name} is not installed)") from None
    from slopd.app import load_config  # noqa: PLC0415
    from slopd.shell.config import load_trust  # noqa: PLC0415

    root = require_hub(args.hub).absolute()
    config = load_config(root, Path(args.config) if args.config else None)
    hub = Hub(root)
    desk = Seat(hub, defaults.state_dir(root, args.state), seat, config, trust=load_trust(config))
    try:
        mcp_server.build(lambda _context: desk, desk.guide).run()
    finally:
        desk.close()
        hub.close()
    return 0
