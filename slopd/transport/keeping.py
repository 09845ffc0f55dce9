"""The keeper's operations as the transports answer them: HTTP's keeper API and MCP's baton tools.

Rules (SPEC §11):
1. A vessel is looked up by name: not a vessel name, or no such tree, is 404.
2. Only the seat named like the vessel leases and commits it (403 otherwise).
3. A lease while another is live is 409 naming the holder and the expiry; a commit with a
   stale, released or foreign lease, or another generation than the lease's, is 409; a letter
   that fails the gate (without `accept_low_quality`) is 422 with its score. A refusal writes
   nothing: the work is `baton.keeper`'s, the same as `slopd baton`'s.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from slopd.baton import keeper, leases
from slopd.baton.store import Store
from slopd.baton.tree import Tree
from slopd.core.ids import stamp_seconds, timestamp
from slopd.shell.lanes import Hub
from slopd.transport.problems import Problem


def vessel(hub: Hub, name: str) -> Tree:
    """Rule 1."""
    try:
        tree = Tree(hub, name)
    except ValueError as error:
        raise Problem("not-found", str(error)) from None
    if not tree.exists():
        raise Problem("not-found", f"no vessel {tree.vessel} on this hub (slopd baton init)")
    return tree


def own(tree: Tree, seat: str) -> None:
    """Rule 2."""
    if seat != tree.vessel:
        raise Problem(
            "wrong-seat", f"only the seat {tree.vessel!r} leases and commits it; this seat is {seat!r}"
        )


def lease(tree: Tree, store: Store, holder: str, ttl: float) -> dict[str, Any]:
    """Rule 3's lease (`ttl` already checked)."""
    taken = store.take(tree.vessel, holder, ttl, tree.generation)
    if isinstance(taken, leases.Held):
        until = stamp_seconds(taken.expires)
        detail = f"{tree.vessel} is leased to {taken.holder} until {until}"
        raise Problem("leased", detail, extra={"holder": taken.holder, "expires": until})
    return {
        "lease_id": taken.lease_id,
        "expires": stamp_seconds(taken.expires),
        "generation": taken.generation,
    }


def commit(
    tree: Tree, store: Store, asked: keeper.Request, *, summarize: keeper.Summarizer | None, watcher: str
) -> dict[str, Any]:
    """Rule 3's commit: the score, the generation written and the projected handoff's id."""
    now = timestamp(datetime.now(UTC))
    done = keeper.pack(tree, store, asked, now=now, summarize=summarize, watcher=watcher)
    if isinstance(done, keeper.Gated):
        detail = "the letter fails the gate; send accept_low_quality to commit it marked LOW_QUALITY"
        raise Problem("fails-gate", detail, extra={"score": done.score})
    if isinstance(done, leases.Refused):
        raise Problem("stale-lease", done.reason)
    return done.as_json()
