"""`slopd validate`: lint envelope files as the daemon would read them, without a hub."""

from __future__ import annotations

import argparse
from pathlib import Path

from slopd.core.envelope import EnvelopeError
from slopd.core.names import Kind, classify
from slopd.core.validation import parse
from slopd.shell.reads import Unreadable, read_once


def validate(args: argparse.Namespace) -> int:
    worst = 0
    for name in args.files:
        path = Path(name)
        kind = classify(path.name, lane=path.parent.name)
        if kind is Kind.IGNORED:
            print(f"{name}: note: the daemon ignores this name (hidden or temporary) until renamed")
        elif kind in (Kind.OTHER, Kind.BAD_NAME):
            print(f"{name}: note: the daemon does not read this name as an envelope")
        contents = read_once(path, args.max_bytes)
        if isinstance(contents, Unreadable):
            print(f"{name}: invalid\n  - the file {contents.reason}")
            worst = 1
            continue
        try:
            envelope = parse(contents.data, name=path.name, max_bytes=args.max_bytes)
        except EnvelopeError as error:
            print(f"{name}: invalid")
            for reason in error.reasons:
                print(f"  - {reason}")
            worst = 1
            continue
        print(f"{name}: valid ({envelope.type} {envelope.id} from {envelope.sender} to {envelope.to})")
    return worst
