"""Commands that read or set up a hub and its state dir: `init`, `hub home`, `status`, `tail`, `notes`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from slopd.core import guide, home
from slopd.core.errors import UsageError
from slopd.core.layout import LEDGER_FILE, LOG_FILE
from slopd.core.notes import READ_CHARS, READ_LIMIT, clip, page
from slopd.ops import running
from slopd.ops import status as status_view
from slopd.ops import tail as tail_view
from slopd.shell import hubfile
from slopd.shell.lanes import Hub, require_hub
from slopd.shell.lanes import init as init_hub
from slopd.shell.ledger import Ledger


def _ledger(state: Path) -> Ledger | None:
    path = state / LEDGER_FILE
    return Ledger(path) if path.exists() else None


def _watcher(given: str | None) -> tuple[tuple[str, ...], bool | None, int]:
    """The names the hub's watcher will run with, its `home` setting and max_envelope_bytes:
    from `--config`, else the default config if there is one, else the defaults (SPEC §14)."""
    from slopd.shell import config  # noqa: PLC0415  # the TOML reader: only for init

    loaded = config.load(Path(given) if given else None)
    return loaded.names, loaded.home, loaded.max_envelope_bytes


def init(args: argparse.Namespace) -> int:
    root = Path(args.hub)
    names, configured, max_bytes = _watcher(args.config)
    name = args.home or home.specific_name(names)
    if not home.valid_name(name):
        raise UsageError(f"--home {name!r}: must be watcher:NAME (NAME of A-Z a-z 0-9 . _ @ -)")
    made = init_hub(root, guide.render(names=names, max_bytes=max_bytes))
    claim = not args.no_home and (configured is not False or args.home is not None)
    if claim and hubfile.claim(root, name):
        made.append(f"{root / home.FOLDER / home.HUB_FILE} (home watcher: {name})")
    for path in made:
        print(f"created {path}")
    if not made:
        print(f"{root}: already a hub; nothing changed")
    recorded, _problem = hubfile.read_home(root)
    if recorded is not None and recorded != name and not args.no_home:
        print(f"note: the hub's home watcher stays {recorded} (move it: slopd hub home --hub {root} {name})")
    elif not claim and configured is False:
        print("note: the config says home = false: no home recorded; the home watcher's machine claims it")
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
    """The notes newest first, a page at a time, each text bounded (`core.notes` rule 4)."""
    limit = READ_LIMIT if args.limit is None else args.limit
    max_chars = READ_CHARS if args.max_chars is None else args.max_chars
    wrong = [
        f"--{name} {value}: {rule}"
        for name, value, rule in (
            ("limit", limit, "at least 1"),
            ("offset", args.offset, "0 or more"),
            ("max-chars", max_chars, "0 (all) or more"),
        )
        if value < (1 if name == "limit" else 0)
    ]
    if wrong:
        raise UsageError("; ".join(wrong))
    root = require_hub(args.hub)
    ledger = _ledger(running.locate(root, args.state).state)
    found = ledger.notes(args.search, limit=limit, offset=args.offset) if ledger is not None else []
    total = ledger.count_notes(args.search) if ledger is not None else 0
    bound = max_chars or None
    if args.json:
        print(json.dumps(page(found, total, args.offset, bound), indent=2, ensure_ascii=False))
    for note in [] if args.json else found:
        text, cut = clip(note.body, bound)
        more = f"\n\n(… cut at {max_chars} of {len(note.body)} characters: --max-chars 0 shows all)"
        print(f"## {note.created_at} — {note.sender} — {note.id}\n\n{text.strip()}{more if cut else ''}\n")
    end = args.offset + len(found)
    if found and end < total:
        print(f"(notes {args.offset + 1} to {end} of {total}: --offset {end} for the next)", file=sys.stderr)
    if not found:
        print("no notes match" if args.search else "no notes here", file=sys.stderr)
        return 1 if args.search else 0
    return 0
