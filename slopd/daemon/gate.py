"""The gate in front of execution: orders waiting for their signatures, envelopes waiting for
their attachments, and the verdicts on both.

Rules:
1. An order is held — not rejected — while any sidecar it names has not arrived, until
   `sig_grace` has passed since slopd first saw it; then it is checked with what came (one
   missing signature of a quorum order is one that does not count).
2. A sidecar arriving releases the order waiting for it at once (to wait on for the others).
3. A `NAME.md.sig` whose `NAME.md` has not arrived is held the same way; after the grace it
   is answered as a signature without an order.
4. The signature is read once, bounded, never through a link; the verdict comes from the
   pure verifier (`core.orders.check`) over the very bytes that were read as the order.
5. An envelope (any lane) whose listed assets have not all arrived is held the same way, looked
   at again every `ASSET_POLL` seconds (the assets folder is not watched); after the grace, or
   at once for a file that is there but not the one referenced, it is refused naming it
   (`core.assets.check`).
6. The allowed-signers file is looked at (one stat) before each order is verified, and re-read
   when it changed (`shell.reloading`, SPEC §14): an order checked after an edit uses the new
   file, with no signal. A file that cannot be read or parsed fails closed — no signer is
   trusted until it is mended, and each order says why — and one that lists no signer any more
   is taken as it is: every key was revoked.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from datetime import datetime, timedelta

from slopd.core import assets, orders, sshsig
from slopd.core.envelope import Envelope
from slopd.core.verdicts import Invalid, Verification
from slopd.shell import reloading
from slopd.shell.config import Config, load_trust
from slopd.shell.fs import MISSING, Contents
from slopd.shell.lanes import Hub
from slopd.shell.log import Logger
from slopd.shell.reloading import Reloading

LANE = "authorized"
ASSET_POLL = 1.0


@dataclass(frozen=True, slots=True)
class Hold:
    """Not yet: look again at `until` (monotonic seconds), or when a sidecar arrives."""

    missing: str  # what it waits for, named for the log
    until: float
    first: bool
    signed: tuple[str, ...] = ()  # an order's signatures already here (a quorum's first signers)


Trusted = Reloading[orders.Trust | None] | None  # None: no allowed-signers file is configured


def trusted(config: Config, log: Logger) -> Trusted:
    """Rule 6: the configured allowed signers, loaded now (a `ConfigError` if they cannot be)."""
    path = config.auth.allowed_signers
    if path is None:
        return None
    seen = reloading.version(path)  # before the read: an edit during it is seen next time
    return Reloading(
        path,
        lambda: load_trust(config, empty=True),
        load_trust(config),
        seen,
        log,
        "trust",
        facts=lambda trust: {
            "signers": len(trust.signers) if trust is not None else 0,
            "skipped": len(trust.skipped) if trust is not None else 0,
        },
        closed=lambda reason: nobody(config, reason),
    )


def nobody(config: Config, reason: str) -> orders.Trust:
    """The trust of a file that cannot be used (rule 6): no signer, and why."""
    return orders.Trust(
        signers=(),
        namespace=config.auth.namespace,
        max_age=timedelta(seconds=config.auth.max_age),
        names=frozenset(config.names),
        unusable=reason,
    )


class Gate:
    def __init__(self, hub: Hub, trusted: Trusted, grace: float, clock: Callable[[], datetime]):
        self.hub, self.trusted, self.grace, self.clock = hub, trusted, grace, clock
        # When each held thing was first seen: an order or a lone sidecar by name, an envelope
        # waiting for assets by (lane, name).
        self._first_seen: dict[Hashable, float] = {}
        self._waiting: dict[str, str] = {}  # sidecar -> the order waiting for it

    @property
    def trust(self) -> orders.Trust | None:
        return self.trusted.value if self.trusted is not None else None

    def _seen(self, name: Hashable, now: float) -> tuple[float, bool]:
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
                return Hold(", ".join(missing), since + self.grace, first, tuple(signatures))
        self.forget(name)
        trust = self.trusted.check() if self.trusted is not None else None  # rule 6
        return orders.check(envelope, message, signatures, trust, self.clock())

    def attachments(self, lane: str, name: str, envelope: Envelope, now: float) -> Hold | Invalid | None:
        """Rule 5: hold `lane/name` for its assets, refuse it for one, or None when all are here."""
        key = (lane, name)
        missing = []
        for asset in envelope.assets:
            found = self._digest(asset.name)
            if found is None:
                missing.append(f"{assets.LANE}/{asset.name}")
                continue
            reason = assets.check(asset, *found)
            if reason is not None:
                self._first_seen.pop(key, None)
                return Invalid(reason)
        if missing:
            since, first = self._seen(key, now)
            if now < since + self.grace:
                return Hold(", ".join(missing), min(since + self.grace, now + ASSET_POLL), first)
        self._first_seen.pop(key, None)
        if missing:
            return Invalid(f"{', '.join(missing)} did not arrive within {self.grace:g} s")
        return None

    def _digest(self, name: str) -> tuple[str | None, str | None] | None:
        """An asset's (digest, None) or (None, why it cannot be read); None while it is absent."""
        try:
            found = self.hub.digest(assets.LANE, name)
        except OSError:  # assets/ itself is missing (made again at the next scan)
            return None
        if isinstance(found, str):
            return found, None
        if found.reason == MISSING:
            return None
        return None, found.reason

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
