"""The commands that let a seat or a human in: token add and revoke, console enroll.

Rules:
1. Their handlers are `slopd.cli.tokens` and `slopd.cli.console`.
2. A command that writes a trusted file names it (`--tokens`) or shows what it would append and
   asks first (`console enroll`, unless `--yes`).
"""

from __future__ import annotations

from slopd.cli.parser.options import DEFAULT_CONFIG, Commands, command, hub_and_state


def add(commands: Commands) -> None:
    """`slopd token add|revoke` and `slopd console enroll`."""
    _tokens(commands)
    _console(commands)


def _tokens(commands: Commands) -> None:
    text = "the seats' bearer tokens for HTTP and MCP: only their hashes are stored"
    token = commands.add_parser("token", help=text, description=text)
    verbs = token.add_subparsers(dest="verb", required=True)
    for verb, text in (
        ("add", "make a new token for SEAT, print it once, store its hash in the tokens file"),
        ("revoke", "remove every token of SEAT from the tokens file"),
    ):
        sub = command(verbs, verb, f"slopd.cli.tokens:{verb}", text)
        sub.add_argument("--tokens", required=True, metavar="F", help="the tokens file (outside the hub)")
        sub.add_argument("seat", metavar="SEAT", help="the `from` the token may send as")


def _console(commands: Commands) -> None:
    text = "the human's console (slopd run --http serves it at /; needs slopd[console])"
    console = commands.add_parser("console", help=text, description=text)
    verbs = console.add_subparsers(dest="verb", required=True)
    text = (
        "print a one-time code (10 minutes) for the console's enrolment page, show the new "
        "passkey's allowed_signers line, and append it when you answer yes"
    )
    sub = command(verbs, "enroll", "slopd.cli.console:enroll", text)
    hub_and_state(sub)
    sub.add_argument(
        "--principal", required=True, help="who the passkey signs as (an allowed_signers principal)"
    )
    sub.add_argument("--config", help=DEFAULT_CONFIG)
    sub.add_argument("--yes", action="store_true", help="append the line without asking (scripts)")
