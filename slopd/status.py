"""`slopd status`: what is in the lanes, what the ledger has in progress, who holds the hub."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from slopd.core.names import Kind, classify
from slopd.hub import INPUT_LANES, Hub
from slopd.ledger import Ledger

LISTED = 20


def gather(hub: Hub, ledger: Ledger | None, holder: int | None, state: Path) -> dict[str, Any]:
    lanes: dict[str, Any] = {}
    for lane in INPUT_LANES:
        waiting, ignored, other = [], 0, []
        for entry in hub.scan(lane):
            kind = classify(entry.name, lane=lane)
            if kind is Kind.IGNORED:
                ignored += 1
            elif kind is Kind.OTHER:
                other.append(ascii(entry.name)[1:-1])
            else:
                waiting.append(ascii(entry.name)[1:-1])
        lanes[lane] = {"waiting": waiting, "ignored": ignored, "unrecognized": other}
    report: dict[str, Any] = {
        "hub": str(hub.root),
        "state": str(state),
        "daemon": {"running": holder is not None, "pid": holder if holder and holder > 0 else None},
        "lanes": lanes,
        "outbox": len(hub.scan("outbox")),
        "ledger": None,
        "in_progress": [],
        "last_replies": [],
    }
    if ledger is not None:
        report["ledger"] = ledger.counts()
        report["in_progress"] = [
            {"id": row.id, "status": row.status, "file": f"{row.lane}/{row.file}"}
            for row in ledger.unfinished()
        ]
        report["last_replies"] = ledger.last_replies()
    return report


def render(report: dict[str, Any]) -> str:
    daemon = report["daemon"]
    lines = [
        f"hub:     {report['hub']}",
        f"state:   {report['state']}",
        "daemon:  " + (f"running (pid {daemon['pid']})" if daemon["running"] else "not running"),
    ]
    for lane, info in report["lanes"].items():
        waiting = info["waiting"]
        lines.append(f"{lane + ':':9}{len(waiting)} waiting, {info['ignored']} ignored (temporary names)")
        lines.extend(f"           {name}" for name in waiting[:LISTED])
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
            f"  in progress: {item['id']}  {item['status']}  {item['file']}"
            for item in report["in_progress"][:LISTED]
        )
        if report["last_replies"]:
            lines.append("last replies:")
            lines.extend(
                f"  {reply['written_at']}  {reply['type']:6} {reply['class']:11} {reply['path']}"
                for reply in report["last_replies"]
            )
    return "\n".join(lines) + "\n"
