"""The commands about MEP handoff logs and Standing Standups: handoff lint, merge, install-merge-driver,
new; standup.

Rules:
1. Their handlers are `slopd.cli.handoff` and `slopd.cli.standup`.
2. `handoff merge` takes git's merge-driver arguments (`%O %A %B`, `%L`) in git's order.
"""

from __future__ import annotations

import argparse

from slopd.cli.parser.options import JSON, Commands, command


def add(commands: Commands) -> None:
    text = "MEP handoff logs: lint, merge (a git merge driver), install the driver, add an entry"
    handoff = commands.add_parser("handoff", help=text, description=text)
    verbs = handoff.add_subparsers(dest="verb", required=True)

    def verb(name: str, handler: str, text: str) -> argparse.ArgumentParser:
        return command(verbs, name, f"slopd.cli.handoff:{handler}", text)

    sub = verb(
        "lint", "lint_files", "check handoff logs against the MEP schema (FILE:LINE: RULE message — fix)"
    )
    sub.add_argument("files", nargs="+", metavar="FILE", help="handoff logs")
    sub.add_argument("--json", action="store_true", help="one object per file")
    sub.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")

    sub = verb("merge", "merge", "a git merge driver: merge THEIRS into OURS, entry by entry, losing none")
    sub.add_argument(
        "--marker-size", type=int, default=7, metavar="N", help="conflict marker length (git's %%L)"
    )
    for name, text in (("base", "%%O"), ("ours", "%%A, where the result goes"), ("theirs", "%%B")):
        sub.add_argument(name, metavar=name.upper(), help=f"git's {text}")

    text = "register the merge driver in a git repository (git config + .gitattributes); idempotent"
    sub = verb("install-merge-driver", "install_merge_driver", text)
    sub.add_argument("--repo", default=".", metavar="DIR", help="the repository (default: here)")
    text = "a path pattern to merge with the driver (repeatable; default handoff.md, machines/handoff.md)"
    sub.add_argument("--pattern", action="append", default=[], metavar="GLOB", help=text)

    text = "prepend a conformant entry to FILE (sections from the options, or Markdown on stdin)"
    sub = verb("new", "new", text)
    sub.add_argument("file", metavar="FILE", help="the handoff log (made if missing)")
    sub.add_argument("--agent", required=True, help="who wrote the entry (v2 agent name)")
    sub.add_argument("--context", help="v1 header context: 'machine (branch)'")
    sub.add_argument("--platform", help="v2: the platform, e.g. 'Claude (Hot Rod)'")
    sub.add_argument("--session-type", help="v2: code, cowork, brainstorm, research, …")
    sub.add_argument("--date", help="YYYY-MM-DD (default: today, UTC)")
    sub.add_argument("--tag-in", metavar="TIME", help="e.g. '14:30 ET'")
    sub.add_argument("--tag-out", metavar="TIME", help="e.g. '16:45 ET' or [active]")
    for name, text in (
        ("happened", "a What happened bullet"),
        ("pending", "a What's pending task"),
        ("watch", "a Watch out for bullet"),
    ):
        sub.add_argument(
            f"--{name}", action="append", default=[], metavar="TEXT", help=f"{text} (repeatable)"
        )

    text = "a project's Standing Standup: the party line, the latest entry, open tasks by owner"
    sub = command(commands, "standup", "slopd.cli.standup:show", text)
    sub.add_argument("--hub", required=True, help="the hub folder")
    sub.add_argument("project", metavar="PROJECT", help="the project (standups/PROJECT.md)")
    sub.add_argument("--json", action="store_true", help=JSON)
