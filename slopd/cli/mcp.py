"""`slopd mcp`: a hub's seat as MCP tools on stdio (SPEC §13), for Claude Code, Cursor, Codex CLI,
Gemini CLI. The seat is `--seat` (or `SLOPD_SEAT`), fixed for the session; the ledger is the running
daemon's, found through the hub (`ops.running`) unless `--state` is given."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from slopd.core.errors import UsageError
from slopd.core.validation import PARTY_PATTERN
from slopd.ops import running
from slopd.shell import stdlog
from slopd.shell.lanes import Hub, require_hub

_MCP_EXTRA = "slopd mcp needs the MCP extra: pip install 'slopd[mcp]'"


def serve(args: argparse.Namespace) -> int:
    with stdlog.routed():  # stdout is the protocol; stderr is a log of JSON lines (SPEC §14)
        return _proxy(args) if args.url is not None else _serve(args)


def _serve(args: argparse.Namespace) -> int:
    seat = args.seat or os.environ.get("SLOPD_SEAT", "")
    if PARTY_PATTERN.fullmatch(seat) is None:
        raise UsageError(f"--seat {seat!r}: give the seat this session speaks for (a valid `from`)")
    try:
        from slopd.transport.mcp import news  # noqa: PLC0415
        from slopd.transport.mcp import server as mcp_server  # noqa: PLC0415  # the SDK, only here
        from slopd.transport.mcp.seat import Seat  # noqa: PLC0415
    except ImportError as missing:
        raise UsageError(f"{_MCP_EXTRA} ({missing.name} is not installed)") from None
    from slopd.app import load_config  # noqa: PLC0415
    from slopd.shell.config import load_trust  # noqa: PLC0415

    root = require_hub(args.hub).absolute()
    config = load_config(root, Path(args.config) if args.config else None)
    located = running.locate(root, args.state)  # the running daemon's ledger, found through the hub
    hub = Hub(root)
    desk = Seat(hub, located.state, seat, config, trust=load_trust(config))
    try:
        mcp_server.build(lambda _context: desk, desk.guide, news.watching(desk)).run()
    finally:
        desk.close()
        hub.close()
    return 0


def _proxy(args: argparse.Namespace) -> int:
    """--url: the daemon's /mcp on stdio; the seat is the token's, never an argument."""
    if args.seat is not None:
        raise UsageError("--seat goes with --hub; with --url the token's seat is the seat")
    token = os.environ.get("SLOPD_TOKEN", "").strip()
    if not token:
        raise UsageError("--url needs the seat's token in SLOPD_TOKEN")
    try:
        import anyio  # noqa: PLC0415

        from slopd.transport.mcp import proxy  # noqa: PLC0415
    except ImportError as missing:
        raise UsageError(f"{_MCP_EXTRA} ({missing.name} is not installed)") from None
    anyio.run(proxy.serve, args.url, token)
    return 0
