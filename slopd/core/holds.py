"""The gate in front of execution, as pure rules: orders waiting for their signatures, envelopes
waiting for their attachments, and the verdicts on both (SPEC §8, §9). Pure.

The daemon reads the signatures and digests once (`core.facts`), and keeps the gate's memory of
first sights (`daemon.gate`); these functions say what follows, and what the memory becomes.

Rules:
1. An order is held — not rejected — while any signature it names has not arrived, until the
   grace has passed since it was first seen; then it is checked with what came (one missing
   signature of a quorum order is one that does not count). A signature that is there but
   cannot be read rejects the order at once.
2. The verdict comes from the pure verifier (`core.orders.check`) over the very bytes that were
   read as the order, with the allowed signers as they were looked at for it.
3. An envelope (any lane) whose listed assets have not all arrived is held the same way, looked
   at again every `ASSET_POLL` seconds (the assets folder is not watched); after the grace, or
   at once for a file that is there but not the one referenced, it is refused naming it
   (`core.assets.check`).
4. A hold records the first sight (if there was none) and, for an order, the signatures whose
   arrival wakes it; any other outcome forgets them.
"""

from __future__ import annotations

from dataclasses import dataclass

from slopd.core import assets, orders
from slopd.core.envelope import Envelope
from slopd.core.facts import Arrival, Now
from slopd.core.plans import Effect, Forget, Hold
from slopd.core.verdicts import Invalid, Verification

ASSET_POLL = 1.0


@dataclass(frozen=True, slots=True)
class Held:
    """Not yet: look again at `until` (monotonic seconds), or when a signature arrives."""

    missing: str  # what it waits for, named for the log
    until: float
    first: bool
    signed: tuple[str, ...] = ()  # an order's signatures already here (a quorum's first signers)


def order(
    facts: Arrival, envelope: Envelope, message: bytes, grace: float, now: Now
) -> tuple[Held | Verification, list[Effect]]:
    """Rules 1, 2 and 4 for the order `facts.name`."""
    name = facts.name
    signatures: dict[str, bytes | None] = {}
    for sidecar in facts.signatures:
        if sidecar.data is not None:
            signatures[sidecar.name] = sidecar.data
        elif sidecar.problem is not None:
            return Invalid(f"its signature {sidecar.name} {sidecar.problem}"), [Forget(name)]
    missing = [sidecar for sidecar in envelope.sidecars if sidecar not in signatures]
    if missing:
        since = now.monotonic if facts.held_since is None else facts.held_since
        if now.monotonic < since + grace:
            held = Held(", ".join(missing), since + grace, facts.held_since is None, tuple(signatures))
            return held, [Hold(name, since, tuple(missing))]
    return orders.check(envelope, message, signatures, facts.trust, now.wall), [Forget(name)]


def attachments(
    facts: Arrival, envelope: Envelope, grace: float, now: Now
) -> tuple[Held | Invalid | None, list[Effect]]:
    """Rules 3 and 4: hold the envelope for its assets, refuse it for one, or None when all are here."""
    key = (facts.lane, facts.name)
    found = {attached.name: attached for attached in facts.assets}
    missing = []
    for asset in envelope.assets:
        attached = found.get(asset.name)
        if attached is None or (attached.digest is None and attached.problem is None):
            missing.append(f"{assets.LANE}/{asset.name}")
            continue
        reason = assets.check(asset, attached.digest, attached.problem)
        if reason is not None:
            return Invalid(reason), [Forget(key)]
    if missing:
        since = now.monotonic if facts.assets_since is None else facts.assets_since
        if now.monotonic < since + grace:
            until = min(since + grace, now.monotonic + ASSET_POLL)
            return Held(", ".join(missing), until, facts.assets_since is None), [Hold(key, since)]
        return Invalid(f"{', '.join(missing)} did not arrive within {grace:g} s"), [Forget(key)]
    return None, [Forget(key)]
