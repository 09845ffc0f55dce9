"""Leases with fencing (SPEC §11; Kleppmann's fencing tokens): who may commit a vessel's next
generation. Pure: the store reads a vessel's lease row and asks these functions, inside one
transaction, what to do.

Rules:
1. A vessel has at most one live lease: one not released and not expired at `now`.
2. `take` grants a new lease when none is live — a fresh random id (the caller's 32 random
   bytes, never derived from the vessel or the time), `expires = now + ttl`, and the generation
   the holder is to write (`GENERATION + 1`); while one is live it refuses, naming the holder
   and the expiry.
3. `admit` lets a commit through only with the live lease's id and the generation that lease
   was granted for; anything else (unknown, released, expired, another's, a stale generation)
   is refused with the reason, and nothing may be written.
4. Times are seconds since the epoch (the store passes its clock in); ttl is 1 s to 1 day.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_TTL = 300.0
MAX_TTL = 86400.0


@dataclass(frozen=True, slots=True)
class Lease:
    vessel: str
    lease_id: str
    holder: str
    expires: float
    generation: int  # the generation this lease may commit
    released: bool = False

    def live(self, now: float) -> bool:
        return not self.released and now < self.expires


@dataclass(frozen=True, slots=True)
class Held:
    """Rule 2's refusal."""

    holder: str
    expires: float


@dataclass(frozen=True, slots=True)
class Refused:
    """Rule 3's refusal."""

    reason: str


def check_ttl(ttl: float) -> float:
    if not 1.0 <= ttl <= MAX_TTL:
        raise ValueError(f"a lease lasts 1 to {MAX_TTL:g} seconds, not {ttl:g}")
    return ttl


def take(
    current: Lease | None, *, vessel: str, holder: str, ttl: float, generation: int, now: float, random: bytes
) -> Lease | Held:
    """Rule 2 (`generation`: the vessel's GENERATION now). A lease for a generation that is
    already committed (its pack was cut short after GENERATION was written) is stale: not live."""
    if current is not None and current.live(now) and current.generation > generation:
        return Held(current.holder, current.expires)
    if len(random) < 16:
        raise ValueError("a lease id needs at least 128 random bits")
    return Lease(vessel, random.hex(), holder, now + check_ttl(ttl), generation + 1)


def admit(
    current: Lease | None, *, lease_id: str, generation: int, marker: int, now: float
) -> Lease | Refused:
    """Rule 3 (`marker`: the vessel's GENERATION as it is now)."""
    if current is None or current.lease_id != lease_id:
        return Refused("no such lease: it was never granted, or another lease replaced it")
    if current.released:
        return Refused(f"the lease was released (its holder was {current.holder})")
    if not current.live(now):
        return Refused(f"the lease expired {now - current.expires:.0f} s ago")
    if generation != current.generation or marker + 1 != generation:
        granted = f"GENERATION is {marker}, the lease is for {current.generation}"
        return Refused(f"generation {generation} is not the next one: {granted}")
    return current
