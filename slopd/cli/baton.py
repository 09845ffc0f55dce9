"""`slopd baton score FILE`: a handoff letter's score, as the commit gate will see it (SPEC §11).

Exit status: 0 the letter passes the gate, 1 it does not, 2 the file cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from slopd.baton.score import report
from slopd.shell import fs

MAX_LETTER_BYTES = 1 << 20


def score(args: argparse.Namespace) -> int:
    data = sys.stdin.buffer.read() if args.file == "-" else _read(Path(args.file))
    try:
        letter = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise OSError(0, f"not UTF-8 ({error.reason} at byte {error.start})", args.file) from None
    result = report(letter)
    print(json.dumps(result, indent=2))
    return 0 if result["passes"] else 1


def _read(path: Path) -> bytes:
    contents = fs.read_once(path, MAX_LETTER_BYTES)
    if isinstance(contents, fs.Unreadable):
        raise OSError(0, f"the file {contents.reason}", str(path))
    return contents.data
