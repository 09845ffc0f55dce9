"""The commands about one envelope: send it (into the lanes or over HTTP), validate it.

Rules:
1. Their handlers are `slopd.cli.messages` (`send`) and `slopd.cli.envelopes` (`validate`).
2. The choices (types, modes) and the size limit come from `core.vocabulary`: what the daemon
   accepts is what the parser offers.
"""

from __future__ import annotations

from slopd.cli.parser.options import Commands, command
from slopd.core.vocabulary import MAX_ENVELOPE_BYTES, MODES, TYPES


def add(commands: Commands) -> None:
    sub = command(
        commands, "send", "slopd.cli.messages:send", "drop a valid envelope into the inbox; prints its id"
    )
    where = sub.add_mutually_exclusive_group(required=True)
    where.add_argument("--hub", help="the hub folder to drop it into")
    where.add_argument("--url", help="post it to a hub's HTTP server instead (http[s]://HOST:PORT)")
    text = "with --url: a file holding the seat's token (default: $SLOPD_TOKEN)"
    sub.add_argument("--token-file", metavar="FILE", help=text)
    sub.add_argument("--type", required=True, choices=TYPES, help="the envelope type")
    sub.add_argument("--from", dest="sender", required=True, help="who sends it (your seat)")
    sub.add_argument("--to", required=True, help="the recipient: watcher, watcher:NAME, a seat, human")
    sub.add_argument("--in-reply-to", metavar="ID", help="the id this answers")
    sub.add_argument("--mode", choices=MODES, help="an instigate's mode (default execute)")
    sub.add_argument("--slug", help="a few words for the id")
    text = "the Standing Standup (standups/PROJECT.md) a handoff is filed in, or a handshake tags in to"
    sub.add_argument("--project", help=text)
    sub.add_argument("--wait", type=float, metavar="SECS", help="print the terminal reply")
    text = "copy FILE into assets/ and reference it by its SHA-256 (repeatable)"
    sub.add_argument("--asset", action="append", default=[], metavar="FILE", help=text)
    sub.add_argument("file", nargs="?", metavar="FILE|-", help="the body (- for stdin)")

    sub = command(commands, "validate", "slopd.cli.envelopes:validate", "lint envelopes as the daemon would")
    sub.add_argument("files", nargs="+", metavar="FILE", help="envelope files (.md or .json)")
    sub.add_argument(
        "--max-bytes", type=int, default=MAX_ENVELOPE_BYTES, help="the size limit (max_envelope_bytes)"
    )
