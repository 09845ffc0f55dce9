"""The gate in front of `authorized/`: which orders wait for their signature, and their verdicts.

Rules:
1. An order is held — not rejected — while any sidecar it names has not arrived, until
   `sig_grace` has passed since slopd first saw it; then it is checked with what came (one
   missing signature of a quorum order is one that does not count).
2. A sidecar arriving releases the order waiting for it at once (to wait on for the others).
3. A `NAME.md.sig` whose `NAME.md` has not arrived is held the same way; after the grace it
   is answered as a signature without an order.
4. The signature is read once, bounded, never through a link; the verdict comes from the
   pure verifier (`core.orders.check`) over the very bytes that were read as the order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from slopd.core import orders, sshsig
from slopd.core.envelope import Envelope
from slopd.core.verdicts import Invalid, Verification
from slopd.shell.fs import Contents
from slopd.shell.lanes import Hub

LANE = "authorized"


@dataclass(frozen=True, slots=True)
class Hold:
    """Not yet: look again at `until` (monotonic seconds), or when the sidecar arrives."""

    sidecar: str
    until: float
    first: bool


class Gate:
    def __init__(self, hub: Hub, trust: orders.Trust | None, grace: float, clock: Callable[[], datetime]):
        self.hub, self.trust, self.grace, self.clock = hub, trust, grace, clock
        self._first_seen: dict[str, float] = {}
        self._waiting: dict[str, str] = {}  # sidecar -> the order waiting for it

    def _seen(self, name: str, now: float) -> tuple[float, bool]:
        first = name not in self._first_seen
        return self._first_seen.setdefault(name, now), first

    def examine(self, name: str, envelope: Envelope, message: bytes, now: float) -> Hold | Verification:
        """Hold the order `name`, or verify it (its signature is read here, once)."""
        signatures: dict[str, bytes | None] = {}
        for sidecar in envelope.sidecars:
            read = self.hub.read(LANE, sidecar, sshsig.MAX_SIGNATURE_BYTES)
            if isinstance(read, Contents):
                signatures[sidecar] = read.data
            elif read.stat is not None:
                self.forget(name)
                return Invalid(f"its signature {sidecar} {read.reason}")
        missing = [sidecar for sidecar in envelope.sidecars if sidecar not in signatures]
        if missing:
            since, first = self._seen(name, now)
            if now < since + self.grace:
                self._waiting.update(dict.fromkeys(missing, name))
                return Hold(", ".join(missing), since + self.grace, first)
        self.forget(name)
        return orders.check(envelope, message, signatures, self.trust, self.clock())

    def forget(self, name: str) -> None:
        self._first_seen.pop(name, None)
        for sidecar in [sidecar for sidecar, order in self._waiting.items() if order == name]:
            del self._waiting[sidecar]

    def arrived(self, sidecar: str) -> str | None:
        """A sidecar appeared: the order that waited for it, if any (it is due now)."""
        return self._waiting.pop(sidecar, None)

    def orphan_until(self, sidecar: str, now: float) -> float:
        """When a sidecar whose order has not arrived stops waiting for it."""
        since, _first = self._seen(sidecar, now)
        return since + self.grace

    def waiting_for(self, sidecar: str) -> bool:
        return sidecar in self._waiting
