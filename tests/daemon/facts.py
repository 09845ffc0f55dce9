"""Builders for the handler's tables: facts as the daemon would gather them, in-process.

No file, ledger or subprocess: an `Arrival` is made from bytes (admitted by the same
`core.admission.examine` the daemon runs), a `Row` by hand; keys and signatures in-process.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from slopd.core import admission, allowed_signers, routing, sshkeys
from slopd.core.facts import Arrival, Bytes, Now, Policy, Stat
from slopd.core.handling import handle
from slopd.core.lifecycle import Row, Status
from slopd.core.names import Kind, classify
from slopd.core.orders import Trust
from slopd.core.outcome import Outcome
from slopd.core.plans import Ask, Log, Plan
from slopd.core.targets import Target

WALL = datetime(2026, 7, 4, 8, 0, 0, tzinfo=UTC)
NOW = Now(WALL, 1000.0)
GRACE = 30.0
OPERATOR = "alice@example.com"
OPERATOR_KEY = Ed25519PrivateKey.generate()
ROUTING = routing.Policy(
    names=frozenset({"watcher", "watcher:here"}),
    executor=True,
    seats=frozenset({"coder"}),
    actions=frozenset({"deploy"}),
)
POLICY = Policy(ROUTING, watcher="watcher:here", summarizer=False, grace=GRACE, namespace="slop")
INODE = 4242


def policy(**routes: Any) -> Policy:
    """The policy with routing fields changed (`home`, `taken`, `shared`, `executor` …)."""
    return replace(POLICY, routing=replace(ROUTING, **routes))


def envelope(
    id: str = "20260704t080000z-q", type: str = "query", to: str = "watcher", **fields: Any
) -> bytes:
    """An envelope's bytes (`from_` sets `from`; any other field goes in the front matter)."""
    headers: dict[str, Any] = {
        "protocol": "slop.v1",
        "id": id,
        "type": type,
        "from": fields.pop("from_", "agent"),
        "to": to,
        "in_reply_to": fields.pop("in_reply_to", "null"),
        "created_at": WALL.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "auth": "none",
    }
    body = fields.pop("body", "What is the state of the parser?\n")
    headers.update(fields)
    lines = [f"{key}: {value}" for key, value in headers.items() if value is not None]
    text: str = "---\n" + "\n".join(lines) + "\n---\n" + body
    return text.encode()


def arrival(data: bytes, *, lane: str = "inbox", name: str | None = None, **facts: Any) -> Arrival:
    """An entry read whole and admitted, as the daemon gathers it (`facts` replace any field)."""
    if name is None:
        first = admission.examine(data, name="x.md", lane=lane, max_bytes=1 << 20)
        name = f"{first.envelope.id}.md" if isinstance(first, admission.Examined) else "bad.md"
    admitted = admission.examine(data, name=name, lane=lane, max_bytes=1 << 20)
    stat = Stat((INODE, len(data), 1, 2))
    found = Arrival(lane, name, classify(name, lane=lane), stat, Bytes(data, INODE), admitted)
    return replace(found, **facts)


def entry(name: str, *, lane: str = "authorized", links: int = 1, **facts: Any) -> Arrival:
    """An entry that is not read (a lone signature, a bad name)."""
    kind = classify(name, lane=lane)
    assert kind in (Kind.SIDECAR, Kind.BAD_NAME), kind
    return Arrival(lane, name, kind, Stat((INODE, 10, 1, 2), links), **facts)


def row(
    data: bytes,
    *,
    status: Status = Status.RECEIVED,
    lane: str = "inbox",
    file: str | None = None,
    replies: tuple[str, ...] = (),
    archive: str | None = None,
    outcome: Outcome | None = None,
    target: Target | None = None,
    sha256: str | None = None,
) -> Row:
    """The ledger's row of the envelope `data` (its id, its sha256 unless told)."""
    examined = admission.examine(data, name="x.md", lane=lane, max_bytes=1 << 20)
    assert isinstance(examined, admission.Examined)
    env = examined.envelope
    return Row(
        key=env.key,
        id=env.id,
        lane=lane,
        file=file or f"{env.id}.md",
        sha256=sha256 or hashlib.sha256(data).hexdigest(),
        type=env.type,
        sender=env.sender,
        mode="discuss",
        decision="discuss",
        status=status,
        outcome=outcome,
        replies=replies,
        archive=archive,
        received_at="2026-07-04T08:00:00Z",
        updated_at="2026-07-04T08:00:00Z",
        target=target,
    )


def trust() -> Trust:
    public = sshkeys.ed25519(OPERATOR_KEY.public_key().public_bytes_raw())
    signers = allowed_signers.parse(f"{OPERATOR} {public.line()}\n", local_zone=UTC)
    return Trust(signers=signers, namespace="slop", max_age=timedelta(hours=24), names=ROUTING.names)


def planned(facts: Any, chosen: Policy = POLICY, now: Now = NOW) -> Plan:
    """`handle`, answering an `Ask` for a row with "none recorded" and for presences with the
    same policy, as the daemon would on a hub where nothing changed."""
    found = handle(facts, chosen, now)
    for _ in range(2):
        if not isinstance(found, Ask):
            break
        if found.row is not None:
            facts = replace(facts, looked_up=(found.row, None))
        if found.presences:
            facts = replace(facts, rechecked=chosen.routing)
        found = handle(facts, chosen, now)
    assert isinstance(found, Plan), found
    return found


def kinds(plan: Plan) -> list[str]:
    """The effects' kinds in order, with a `Log`'s event: the shape of a plan, for tables."""
    return [
        f"Log:{effect.event}" if isinstance(effect, Log) else type(effect).__name__ for effect in plan.effects
    ]
