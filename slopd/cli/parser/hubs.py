"""The commands about a hub and its daemon: init, hub home, run, status, tail, notes.

Rules:
1. Their handlers are `slopd.cli.hubs` and `slopd.cli.daemon` (`run`).
2. A command that reads a hub's state takes `--hub` and `--state` (`options.hub_and_state`).
"""

from __future__ import annotations

from slopd.cli.parser.options import (
    DEFAULT_CONFIG,
    DEFAULT_LOG,
    JSON,
    Commands,
    command,
    hub_and_state,
)
from slopd.core.vocabulary import LOG_LEVELS


def add(commands: Commands) -> None:
    sub = command(
        commands, "init", "slopd.cli.hubs:init", "create the lanes and HUB.md (changes nothing that exists)"
    )
    sub.add_argument("hub", metavar="HUB", help="the hub folder (made if missing)")
    homing = sub.add_mutually_exclusive_group()
    text = "the hub's home watcher, the one that answers `watcher` (default: the config's watcher:NAME)"
    homing.add_argument("--home", metavar="watcher:NAME", help=text)
    text = "record no home: the first watcher that starts on the hub claims it"
    homing.add_argument("--no-home", action="store_true", help=text)
    text = "the config the watcher will run with: its names give the home (default: the default config)"
    sub.add_argument("--config", help=text)

    sub = command(commands, "hub", "slopd.cli.hubs:hub_home", "the hub's own settings: `slopd hub home`")
    verbs = sub.add_subparsers(dest="verb", required=True)
    text = "move the hub's home watcher (then reload every slopd watching the hub)"
    verb = verbs.add_parser("home", help=text, description=text)
    verb.add_argument("--hub", required=True, help="the hub folder")
    verb.add_argument("name", metavar="watcher:NAME", help="the watcher that becomes home")

    sub = command(commands, "run", "slopd.cli.daemon:run", "run the daemon on a hub")
    hub_and_state(sub)
    sub.add_argument("--config", help=DEFAULT_CONFIG)
    sub.add_argument("--once", action="store_true", help="drain what is there, then exit")
    text = "also serve the HTTP transport on HOST:PORT (default [http] listen; needs slopd[http])"
    sub.add_argument("--http", metavar="HOST:PORT", help=text)
    sub.add_argument(
        "--polling", action="store_true", help="poll the lanes (network/FUSE filesystems without events)"
    )
    sub.add_argument("--log-file", help=DEFAULT_LOG)
    sub.add_argument("--log-level", default="info", choices=LOG_LEVELS, help="the least level logged")
    sub.add_argument(
        "--grace",
        type=float,
        default=30.0,
        help="seconds running executions get to finish on SIGTERM (default 30)",
    )

    sub = command(
        commands, "status", "slopd.cli.hubs:status", "lanes, pending items, last replies, daemon pid"
    )
    hub_and_state(sub)
    sub.add_argument("--json", action="store_true", help=JSON)

    sub = command(commands, "tail", "slopd.cli.hubs:tail", "the JSON log, readable")
    hub_and_state(sub)
    sub.add_argument("-f", "--follow", action="store_true", help="keep printing new lines")
    sub.add_argument("--id", help="only lines about this envelope id")
    sub.add_argument("--level", default="debug", choices=LOG_LEVELS, help="minimum level")
    sub.add_argument("--lane", choices=("inbox", "authorized"), help="only lines about this lane")
    sub.add_argument("-n", "--lines", type=int, default=40, help="how many lines (default 40)")
    sub.add_argument("--log-file", help=DEFAULT_LOG)

    sub = command(
        commands, "notes", "slopd.cli.hubs:notes", "the indexed notes, newest first, with their text"
    )
    hub_and_state(sub)
    sub.add_argument("--search", metavar="TEXT", help="only notes whose text, id, sender or title holds TEXT")
    sub.add_argument("--limit", type=int, metavar="N", help="notes per page (default 20)")
    sub.add_argument("--offset", type=int, default=0, metavar="N", help="skip the N newest (the next page)")
    sub.add_argument("--max-chars", type=int, metavar="N", help="each text's bound (default 4000; 0: none)")
    sub.add_argument("--json", action="store_true", help="the MCP tool slop_notes's JSON")
