"""The commands an agent's host runs: mcp (tools on stdio), hook (its hook protocol), wait.

Rules:
1. Their handlers are `slopd.cli.mcp`, `slopd.cli.hooks` and `slopd.cli.wake`.
2. The seat defaults to $SLOPD_SEAT; over `--url`, the token ($SLOPD_TOKEN) fixes the seat.
"""

from __future__ import annotations

from slopd.cli.parser.options import DEFAULT_CONFIG, DEFAULT_STATE, Commands, command, hub_and_state
from slopd.core.vocabulary import HOOK_HOSTS


def add(commands: Commands) -> None:
    """`slopd mcp`, `slopd hook` and `slopd wait`."""
    _mcp(commands)
    _wake(commands)


def _mcp(commands: Commands) -> None:
    text = "serve a seat of the hub as MCP tools on stdio (for coding agents; needs slopd[mcp])"
    sub = command(commands, "mcp", "slopd.cli.mcp:serve", text)
    where = sub.add_mutually_exclusive_group(required=True)
    where.add_argument("--hub", help="the hub folder")
    text = "a daemon's HTTP server instead (its /mcp; the token in $SLOPD_TOKEN fixes the seat)"
    where.add_argument("--url", help=text)
    sub.add_argument("--state", help=DEFAULT_STATE)
    sub.add_argument("--seat", help="with --hub: the seat this session speaks for (default $SLOPD_SEAT)")
    sub.add_argument("--config", help=DEFAULT_CONFIG)


def _wake(commands: Commands) -> None:
    text = "answer an agent host's hook (JSON on stdin and stdout): new replies, approvals, outstanding waits"
    sub = command(commands, "hook", "slopd.cli.hooks:hook", text)
    sub.add_argument("host", choices=HOOK_HOSTS, help="the agent host whose hook protocol to speak")
    text = (
        "the host's event: SessionStart, UserPromptSubmit, Stop (Gemini: SessionStart, BeforeAgent, "
        "AfterAgent); or `settings` to print the host's hook configuration"
    )
    sub.add_argument("event", metavar="EVENT", help=text)
    hub_and_state(sub)
    sub.add_argument("--seat", help="the seat this agent speaks for (default $SLOPD_SEAT)")
    text = "at the stop event: first wait up to S seconds (≤ 50) for an outstanding reply (default 0)"
    sub.add_argument("--wait", type=float, default=0.0, metavar="S", help=text)
    text = "at the stop event: ask the agent to go on at most N times a session (default 3)"
    sub.add_argument("--max-blocks", type=int, default=3, metavar="N", help=text)

    text = "block until a reply for a seat comes (woken by the filesystem, or the HTTP feed), print it"
    sub = command(commands, "wait", "slopd.cli.wake:wait", text)
    where = sub.add_mutually_exclusive_group(required=True)
    where.add_argument("--hub", help="the hub folder")
    where.add_argument("--url", help="a daemon's HTTP server instead (the token's seat; long-polls its feed)")
    sub.add_argument("--seat", help="with --hub: whose replies (default $SLOPD_SEAT)")
    sub.add_argument("--state", help=DEFAULT_STATE)
    text = "the terminal reply to this envelope instead of any new reply (repeatable: the first of them)"
    sub.add_argument("--id", action="append", default=[], metavar="ID", help=text)
    sub.add_argument(
        "--timeout", type=float, metavar="S", help="give up after S seconds: exit 1 (default: wait)"
    )
    sub.add_argument("--json", action="store_true", help="print the reply as one JSON object (with its seq)")
    text = "with --url: a file holding the seat's token (default: $SLOPD_TOKEN)"
    sub.add_argument("--token-file", metavar="FILE", help=text)
    text = "with --url: a reply is new after this seq (default: the feed's tail when it starts)"
    sub.add_argument("--after", type=int, metavar="SEQ", help=text)
