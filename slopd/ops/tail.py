"""`slopd tail`: the JSON log made readable, filtered by id and level, optionally followed."""

from __future__ import annotations

import json
import os
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any

from slopd.core.vocabulary import LOG_LEVELS

FIRST_KEYS = ("id", "lane", "file", "type")
SKIPPED_KEYS = frozenset({"timestamp", "level", "event"})


def format_line(raw: str) -> str:
    """`TIME LEVEL EVENT id=… lane=… key=value…`; a line that is not JSON is shown as is."""
    try:
        record: dict[str, Any] = json.loads(raw)
    except ValueError:
        return raw.rstrip("\n")
    if not isinstance(record, dict):
        return raw.rstrip("\n")
    keys = [key for key in FIRST_KEYS if key in record]
    keys += sorted(key for key in record if key not in SKIPPED_KEYS and key not in FIRST_KEYS)
    fields = " ".join(f"{key}={_value(record[key])}" for key in keys)
    head = f"{record.get('timestamp', '-')} {record.get('level', '-')!s:7} {record.get('event', '-')}"
    return f"{head} {fields}".rstrip()


def _value(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=True)
    shown = text.encode("unicode_escape").decode("ascii")
    return json.dumps(shown) if (" " in shown or not shown) else shown


def wanted(raw: str, *, envelope_id: str | None, level: str, lane: str | None = None) -> bool:
    try:
        record = json.loads(raw)
    except ValueError:
        return envelope_id is None and lane is None
    if not isinstance(record, dict):
        return envelope_id is None and lane is None
    if envelope_id is not None and envelope_id not in (record.get("id"), record.get("in_reply_to")):
        return False
    if lane is not None and record.get("lane") != lane:
        return False
    rank = LOG_LEVELS.index(level)
    found = record.get("level")
    return not (found in LOG_LEVELS and LOG_LEVELS.index(found) < rank)


def show(
    path: Path, *, follow: bool, envelope_id: str | None, level: str, lines: int, lane: str | None = None
) -> None:
    recent: deque[str] = deque(maxlen=max(lines, 0) or None)
    position, inode = 0, None
    if path.exists():
        with path.open(encoding="utf-8", errors="replace") as log_file:
            for raw in log_file:
                if wanted(raw, envelope_id=envelope_id, level=level, lane=lane):
                    recent.append(format_line(raw))
            position, inode = log_file.tell(), os.fstat(log_file.fileno()).st_ino
    for line in recent:
        print(line)
    sys.stdout.flush()
    while follow:
        time.sleep(0.2)
        try:
            current = os.stat(path).st_ino
        except FileNotFoundError:
            continue
        if current != inode:
            position, inode = 0, current
        with path.open(encoding="utf-8", errors="replace") as log_file:
            log_file.seek(position)
            for raw in log_file:
                if raw.endswith("\n") and wanted(raw, envelope_id=envelope_id, level=level, lane=lane):
                    print(format_line(raw), flush=True)
            position = log_file.tell()
