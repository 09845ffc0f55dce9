"""`slopd status`: what is in the lanes, what the ledger has in progress, who holds the hub."""

from __future__ import annotations

import contextlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from slopd.core.ids import stamp_seconds
from slopd.core.layout import INPUT_LANES, LOCK_FILE, LOG_FILE
from slopd.core.names import Kind, classify
from slopd.core.vocabulary import MAX_ENVELOPE_BYTES
from slopd.ops import homes
from slopd.shell.lanes import Hub
from slopd.shell.ledger import Ledger
from slopd.shell.reads import Contents

LISTED = 20
LOG_TAIL_BYTES = 1 << 20


def _shown(name: str) -> str:
    return ascii(name)[1:-1] if not name.isprintable() else name


def lanes(hub: Hub) -> dict[str, Any]:
    lanes: dict[str, Any] = {}
    for lane in INPUT_LANES:
        try:
            entries = hub.scan(lane)
        except OSError as error:
            lanes[lane] = {
                "error": str(error),
                "waiting": [],
                "held": [],
                "missing": {},
                "ignored": 0,
                "unrecognized": [],
            }
            continue
        names = {entry.name for entry in entries}
        waiting, held, ignored, other = [], [], 0, []
        missing: dict[str, list[str]] = {}
        for entry in entries:
            kind = classify(entry.name, lane=lane)
            if kind is Kind.IGNORED:
                ignored += 1
            elif kind is Kind.OTHER:
                other.append(_shown(entry.name))
            elif kind is Kind.SIDECAR:
                continue
            elif lane == "authorized" and (absent := _missing_signatures(hub, entry.name, names)):
                held.append(_shown(entry.name))
                missing[_shown(entry.name)] = [_shown(name) for name in absent]
            else:
                waiting.append(_shown(entry.name))
        lanes[lane] = {
            "waiting": waiting,
            "held": held,
            "missing": missing,
            "ignored": ignored,
            "unrecognized": other,
        }
    return lanes


def _missing_signatures(hub: Hub, name: str, present: set[str]) -> list[str]:
    """The sidecars an order in `authorized/` names that are not in the lane yet (its own
    `NAME.sig` when it cannot be read as an envelope)."""
    # Loaded on first use (PLC0415): the YAML parser only when an order is there to read.
    from slopd.core.envelope import EnvelopeError  # noqa: PLC0415
    from slopd.core.validation import parse  # noqa: PLC0415

    contents = hub.read("authorized", name, MAX_ENVELOPE_BYTES)
    sidecars: tuple[str, ...] = (f"{name}.sig",)
    if isinstance(contents, Contents):
        with contextlib.suppress(EnvelopeError):
            sidecars = parse(contents.data, name=name).sidecars
    return [sidecar for sidecar in sidecars if sidecar not in present]


def last_error(log_file: Path) -> dict[str, Any] | None:
    """The newest error-level line of the log (read from its last megabyte)."""
    try:
        with log_file.open("rb") as reader:
            reader.seek(max(os.fstat(reader.fileno()).st_size - LOG_TAIL_BYTES, 0))
            lines = reader.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("level") in ("error", "critical"):
            return record
    return None


def gather(
    hub: Hub, ledger: Ledger | None, holder: int | None, state: Path, found_by: str = "given"
) -> dict[str, Any]:
    """`found_by`: how the state dir was chosen (`ops.running`: given, presence, default)."""
    since = None
    if holder is not None:
        try:
            started = (state / LOCK_FILE).stat().st_mtime
            since = stamp_seconds(started)
        except OSError:
            pass
    try:
        outbox = len(hub.scan("outbox"))
    except OSError:
        outbox = 0
    report: dict[str, Any] = {
        "hub": str(hub.root),
        "state": str(state),
        "state_found_by": found_by,
        "daemon": {
            "running": holder is not None,
            "pid": holder if holder and holder > 0 else None,
            "since": since,
        },
        "lanes": lanes(hub),
        "outbox": outbox,
        "ledger": None,
        "executing": [],
        "in_progress": [],
        "last_replies": [],
        "last_error": last_error(state / LOG_FILE),
        "hub_watchers": homes.report(hub.root, datetime.now(UTC)),
    }
    if ledger is not None:
        report["ledger"] = ledger.counts()
        rows = ledger.unfinished()
        report["executing"] = [
            {"id": row.id, "since": row.updated_at, "file": f"{row.lane}/{row.file}"}
            for row in rows
            if row.status == "executing"
        ]
        report["in_progress"] = [
            {"id": row.id, "status": row.status, "since": row.updated_at, "file": f"{row.lane}/{row.file}"}
            for row in rows
            if row.status != "executing"
        ]
        report["last_replies"] = ledger.last_replies()
    return report


def render(report: dict[str, Any]) -> str:
    daemon = report["daemon"]
    running = f"running (pid {daemon['pid']}) since {daemon['since']}" if daemon["running"] else "not running"
    how = " (the running daemon's, found through the hub)" if report["state_found_by"] == "presence" else ""
    lines = [f"hub:     {report['hub']}", f"state:   {report['state']}{how}", f"daemon:  {running}"]
    lines += homes.render(report["hub_watchers"])
    for lane, info in report["lanes"].items():
        if "error" in info:
            lines.append(f"{lane + ':':8} unreadable: {info['error']}")
            continue
        waiting, held = info["waiting"], info["held"]
        counts = f"{len(waiting)} waiting, {info['ignored']} ignored (temporary names)"
        if lane == "authorized":
            counts += f", {len(held)} held (waiting for signatures)"
        lines.append(f"{lane + ':':8} {counts}")
        lines.extend(f"           {name}" for name in waiting[:LISTED])
        lines.extend(
            f"           {name}  (held: waiting for {', '.join(info['missing'].get(name, []))})"
            for name in held[:LISTED]
        )
        if len(waiting) > LISTED:
            lines.append(f"           … and {len(waiting) - LISTED} more")
        if info["unrecognized"]:
            lines.append(f"         not envelopes, left in place: {', '.join(info['unrecognized'][:LISTED])}")
    lines.append(f"outbox:  {report['outbox']} entries")
    counts = report["ledger"]
    if counts is None:
        lines.append("ledger:  none yet (slopd has not run with this state dir)")
    else:
        lines.append("ledger:  " + ", ".join(f"{name} {number}" for name, number in counts.items()))
        lines.extend(
            f"  executing: {item['id']} since {item['since']} ({item['file']})"
            for item in report["executing"]
        )
        lines.extend(
            f"  in progress: {item['id']}  {item['status']} since {item['since']}  {item['file']}"
            for item in report["in_progress"][:LISTED]
        )
        if report["last_replies"]:
            lines.append("last replies:")
            lines.extend(
                f"  {reply['written_at']}  {reply['type']:6} {reply['class']:11} {reply['path']}"
                for reply in report["last_replies"]
            )
    error = report["last_error"]
    if error is not None:
        exception_lines = str(error.get("exception", "")).strip().splitlines()
        detail = error.get("reason") or (exception_lines[-1] if exception_lines else "")
        lines.append(f"last error: {error.get('timestamp')} {error.get('event')} {detail}".rstrip())
    else:
        lines.append("last error: none")
    return "\n".join(lines) + "\n"
