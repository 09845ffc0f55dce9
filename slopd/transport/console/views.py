"""The console's views: each a small function building a page's context from the same read-only
modules the CLI uses (`ops.status`, `ops.doctor`, `ops.homes`, `handoff.digest`, `baton.registry`).

Rules:
1. Views only read: the hub, the ledger (`shell.ledger.history`, read-only) and the state dir.
2. A context is plain data (str, numbers, lists, dicts): templates hold no logic beyond loops and
   conditionals, and every context is also served as JSON (`?format=json`).
3. Lists are bounded (`LISTED`); what is cut is counted.
"""

from __future__ import annotations

import os
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from slopd.baton import registry
from slopd.baton.metrics import rows as metric_rows
from slopd.baton.store import Store
from slopd.baton.tree import BatonError, Tree
from slopd.core import replies
from slopd.core.envelope import EnvelopeError
from slopd.core.layout import LOG_FILE
from slopd.core.validation import parse
from slopd.handoff import digest
from slopd.handoff.board import FOLDER as STANDUPS
from slopd.ops import doctor, homes, running, status
from slopd.shell.config import Config
from slopd.shell.lanes import Hub, LaneError
from slopd.shell.ledger.history import History
from slopd.shell.reads import Contents
from slopd.transport.console import approvals, chart
from slopd.transport.console.shelf import Shelf

LISTED = 200
_REPLY_BYTES = 256 * 1024


def _action(config: Config, name: str | None) -> dict[str, Any] | None:
    action = config.actions.get(name or "")
    if action is None:
        return None
    return {"name": name, "argv": list(action.argv), "quorum": action.quorum, "require": action.require}


def _item(item: approvals.Waiting, config: Config) -> dict[str, Any]:
    envelope = item.envelope
    return {
        "where": item.where,
        "name": item.name,
        "problem": item.problem,
        "id": envelope.id if envelope else None,
        "from": envelope.sender if envelope else None,
        "action": _action(config, envelope.action if envelope else None),
        "action_name": envelope.action if envelope else None,
        "requested_by": item.requested_by,
        "created_at": envelope.created_at if envelope else None,
        "sha256": item.sha256,
        "missing": list(item.missing),
        "present": list(item.present),
        "text": item.data.decode("utf-8", "replace") if item.data is not None else "",
    }


def approvals_page(hub: Hub, config: Config, shelf: Shelf | None = None) -> dict[str, Any]:
    """Every draft and every order waiting for signatures (`approvals` rule 1), the unchanged
    files as `shelf` kept them (`shelf` rule 3)."""
    drafts, total = approvals.waiting_drafts(hub, LISTED, shelf)
    orders = approvals.waiting_orders(hub, shelf)  # each is read to know it waits
    return {
        "drafts": [_item(item, config) for item in drafts],
        "orders": [_item(item, config) for item in orders[:LISTED]],
        "more": max(total - LISTED, 0) + max(len(orders) - LISTED, 0),
    }


def approval_page(
    item: approvals.Waiting, config: Config, order: bytes | None, sidecar: str | None
) -> dict[str, Any]:
    """One approval: what waits, and the exact bytes the human would sign."""
    import hashlib  # noqa: PLC0415  # one page's digest

    context = _item(item, config)
    signed = order if order is not None else item.data
    context["signed_text"] = signed.decode("utf-8", "replace") if signed is not None else ""
    context["signed_sha256"] = hashlib.sha256(signed).hexdigest() if signed is not None else ""
    context["sidecar"] = sidecar
    context["body"] = item.envelope.body if item.envelope else ""
    return context


def _notification(hub: Hub, reply: dict[str, Any]) -> str | None:
    if reply["class"] not in ("ping", "hybrid"):
        return None
    found = hub.read("outbox", f"{reply['id']}.md", _REPLY_BYTES)
    if not isinstance(found, Contents):
        return None
    try:
        return replies.notification(parse(found.data, name=f"{reply['id']}.md"), reply["path"])
    except (EnvelopeError, KeyError, ValueError):
        return None


def activity_page(hub: Hub, history: History) -> dict[str, Any]:
    """Recent envelopes by seat and type, replies with the notifications they made, executions."""
    inputs, answers = history.recent(LISTED)
    for reply in answers[:50]:
        reply["notification"] = _notification(hub, reply)
    by_seat: dict[str, int] = {}
    by_type: dict[str, int] = {}
    for row in inputs:
        by_seat[row["sender"] or "?"] = by_seat.get(row["sender"] or "?", 0) + 1
        by_type[row["type"] or "invalid"] = by_type.get(row["type"] or "invalid", 0) + 1
    return {
        "inputs": inputs,
        "replies": answers,
        "by_seat": sorted(by_seat.items()),
        "by_type": sorted(by_type.items()),
        "running": [row for row in inputs if row["status"] in ("queued", "executing")],
        "refused": [
            row
            for row in inputs
            if row["decision"] in ("invalid",) or str(row["decision"]).startswith("reject")
        ],
    }


def envelope_page(hub: Hub, history: History, key: str) -> dict[str, Any] | None:
    row, answers = history.envelope(key.lower())
    if row is None and not answers:
        return None
    for reply in answers:
        found = hub.read("outbox", f"{reply['id']}.md", _REPLY_BYTES)
        reply["text"] = found.data.decode("utf-8", "replace") if isinstance(found, Contents) else None
    return {"id": key, "input": row, "replies": answers}


def standups_page(hub: Hub) -> dict[str, Any]:
    """Per project: open tasks by owner and the newest entry (`handoff.digest`)."""
    projects = []
    try:
        fd = hub.lane_fd(STANDUPS)
        names = sorted(name for name in os.listdir(fd) if name.endswith(".md"))
    except (LaneError, OSError):
        names = []
    for name in names[:LISTED]:
        found = hub.read(STANDUPS, name, 4 * 1024 * 1024)
        if isinstance(found, Contents):
            projects.append(digest.as_json(name.removesuffix(".md"), found.data.decode("utf-8", "replace")))
    return {"projects": projects}


def batons_page(hub: Hub, store: Store) -> dict[str, Any]:
    """Per vessel: generation, last score, LOW_QUALITY, and fitness across generations."""
    vessels = registry.registry(hub, store, now=time.time())
    for vessel in vessels:
        vessel["low_quality"], vessel["chart"] = False, ""
        try:
            tree = Tree(hub, vessel["vessel"])
            generation = vessel["generation"] or 0
            table = metric_rows(tree.read_json("evolution/fitness_history.json"), generation)
            state = tree.read_json(f"generations/v{generation}/STATE.json") if generation else None
        except (BatonError, ValueError):
            continue
        vessel["low_quality"] = isinstance(state, dict) and bool(state.get("LOW_QUALITY"))
        series = {
            name: [(row["generation"], row[name]) for row in table]
            for name in ("handoff_score", "confidence", "trust_density")
        }
        vessel["chart"] = chart.line_chart(f"{vessel['vessel']}: fitness across generations", series)
    return {"vessels": vessels}


def hub_page(root: Path, state: Path, config_path: Path | None, now: datetime) -> dict[str, Any]:
    """Watchers and the home, the last error, and `slopd doctor`'s findings."""
    findings = doctor.diagnose(root, config_path, running.locate(root, state), now)
    return {
        "hub": str(root),
        "watchers": homes.report(root, now),
        "last_error": status.last_error(state / LOG_FILE),
        "findings": [
            {"level": finding.level, "topic": finding.topic, "text": finding.text, "fix": finding.fix}
            for finding in findings
        ],
    }
