"""The keeper's registry (the seed's "Keeper baton registry"): every vessel of a hub at a glance.

Rules:
1. The vessels are the folders of `HUB/batons/` whose names are vessel names; a hub without
   `batons/` has none (reading never makes the folder).
2. A vessel's entry: its GENERATION (null, with the reason, when the marker is missing or
   garbled), its live lease's holder and expiry (null when none is live), its last boot (the
   seed's BATON_RECEIVED, from the store) and the score of the generation GENERATION names.
"""

from __future__ import annotations

import os
from typing import Any

from slopd.baton.store import Boot, Store
from slopd.baton.tree import FOLDER, VESSEL, BatonError, Tree
from slopd.core.ids import stamp_seconds
from slopd.shell.lanes import Hub, LaneError


def vessels(hub: Hub) -> list[str]:
    """Rule 1."""
    try:
        fd = hub.lane_fd(FOLDER)
    except LaneError:
        return []
    return sorted(name for name in os.listdir(fd) if VESSEL.fullmatch(name))


def entry(tree: Tree, store: Store, *, boots: dict[str, Boot] | None = None, now: float) -> dict[str, Any]:
    """Rule 2."""
    found: dict[str, Any] = {"vessel": tree.vessel, "generation": None, "lease": None, "last_boot": None}
    found["last_score"] = None
    try:
        generation = tree.generation()
        found["generation"] = generation
        score = tree.read_json(f"generations/v{generation}/SCORE.json") if generation else None
        if isinstance(score, dict):
            found["last_score"] = {"average": score.get("average"), "passes": score.get("passes")}
    except BatonError as error:
        found["error"] = f"{error.filename}: {error.strerror}"
    lease = store.get(tree.vessel)
    if lease is not None and lease.live(now):
        found["lease"] = {
            "holder": lease.holder,
            "expires": stamp_seconds(lease.expires),
            "generation": lease.generation,
        }
    boot = (boots if boots is not None else store.boots()).get(tree.vessel)
    if boot is not None:
        found["last_boot"] = {
            "generation": boot.generation,
            "at": stamp_seconds(boot.at),
            "bootable": boot.bootable,
        }
    return found


def registry(hub: Hub, store: Store, *, now: float) -> list[dict[str, Any]]:
    boots = store.boots()
    return [entry(Tree(hub, name), store, boots=boots, now=now) for name in vessels(hub)]
