"""Commands that read or set up a hub and its state dir: `init`, `hub home`, `status`, `tail`, `notes`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from slopd.core import guide, home
from slopd.core.errors import UsageError
from slopd.core.layout import LEDGER_FILE, LOG_FILE
from slopd.core.vocabulary import MAX_ENVELOPE_BYTES
from slopd.ops import running
from slopd.ops import status as status_view
from slopd.ops import tail as tail_view
from slopd.shell import hubfile
from slopd.shell.defaults import default_names
from slopd.shell.lanes import Hub, require_hub
from slopd.shell.lanes import init as init_hub
from slopd.shell.ledger import Ledger


def _ledger(state: Path) -> Ledger | None:
    path = state / LEDGER_FILE
    return Ledger(path) if path.exists() else None


def init(args: argparse.Namespace) -> int:
    root = Path(args.hub)
    name = args.home or home.specific_name(default_names())
    if not home.valid_name(name):
        raise UsageError(f"--home {name!r}: must be watcher:NAME (NAME of A-Z a-z 0-9 . _ @ -)")
    made = init_hub(root, guide.render(names=default_names(), max_bytes=MAX_ENVELOPE_BYTES))
    if not args.no_home and hubfile.claim(root, name):
        made.append(f"{root / home.FOLDER / home.HUB_FILE} (home watcher: {name})")
    for path in made:
        print(f"created {path}")
    if not made:
        print(f"{root}: already a hub; nothing changed")
    return 0


def hub_home(args: argparse.Namespace) -> int:
    """`slopd hub home --hub HUB watcher:NAME`: a human moves the home (SPEC §7)."""
    root = require_hub(args.hub)
    if not home.valid_name(args.name):
        raise UsageError(f"{args.name!r}: must be watcher:NAME (NAME of A-Z a-z 0-9 . _ @ -)")
    before, _problem = hubfile.read_home(root)
    hubfile.write_home(root, args.name)
    print(f"{root}: home watcher {before or '(none)'} -> {args.name}")
    print("reload every slopd watching this hub (systemctl --user reload slopd, or kill -HUP its pid)")
    return 0


def status(args: argparse.Namespace) -> int:
    root = require_hub(args.hub)
    located = running.locate(root, args.state)
    state = located.state
    report = status_view.gather(Hub(root), _ledger(state), located.pid, state, located.how)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(status_view.render(report))
    return 0


def tail(args: argparse.Namespace) -> int:
    root = require_hub(args.hub)
    path = Path(args.log_file) if args.log_file else running.locate(root, args.state).state / LOG_FILE
    if not path.exists() and not args.follow:
        raise UsageError(f"{path}: no log yet (has slopd run on this hub with this state dir?)")
    tail_view.show(
        path, follow=args.follow, envelope_id=args.id, level=args.level, lines=args.lines, lane=args.lane
    )
    return 0


def notes(args: argparse.Namespace) -> int:
    root = require_hub(args.hub)
    ledger = _ledger(running.locate(root, args.state).state)
    found = ledger.notes(args.search) if ledger is not None else []
    for note in found:
        print(f"## {note.created_at} — {note.sender} — {note.id}\n\n{note.body.strip()}\n")
    if not found:
        print("no notes match" if args.search else "no notes yet", file=sys.stderr)
        return 1 if args.search else 0
    return 0
