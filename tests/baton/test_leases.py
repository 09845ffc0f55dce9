"""Leases with fencing (SPEC §11), pure: one live lease per vessel, a commit only with the live
lease and the generation it was granted for."""

from __future__ import annotations

import pytest

from slopd.baton import leases
from slopd.baton.leases import Held, Lease, Refused

RANDOM = bytes(range(32))


def granted(now: float = 1000.0, ttl: float = 300.0, generation: int = 4) -> Lease:
    lease = leases.take(
        None, vessel="v", holder="gen5", ttl=ttl, generation=generation, now=now, random=RANDOM
    )
    assert isinstance(lease, Lease)
    return lease


def test_a_lease_is_for_the_next_generation_with_a_random_id() -> None:
    """The id is the random bytes (never the vessel or the time); it may commit GENERATION + 1."""
    lease = granted()
    assert lease.lease_id == RANDOM.hex()
    assert (lease.holder, lease.expires, lease.generation) == ("gen5", 1300.0, 5)
    with pytest.raises(ValueError, match="128 random bits"):
        leases.take(None, vessel="v", holder="h", ttl=300, generation=0, now=0, random=b"short")


def test_a_live_lease_refuses_a_second_claimant_naming_its_holder() -> None:
    """While live: Held(holder, expires); expired or released: a new lease."""
    lease = granted()
    assert leases.take(
        lease, vessel="v", holder="other", ttl=60, generation=4, now=1299.9, random=RANDOM
    ) == Held("gen5", 1300.0)
    again = leases.take(lease, vessel="v", holder="other", ttl=60, generation=4, now=1300.0, random=bytes(32))
    assert isinstance(again, Lease)
    assert again.holder == "other"
    released = Lease("v", "x", "gen5", 1300.0, 5, released=True)
    assert isinstance(
        leases.take(released, vessel="v", holder="o", ttl=60, generation=4, now=1000, random=RANDOM), Lease
    )


@pytest.mark.parametrize("ttl", [0.0, 0.5, 86400.1, -1.0])
def test_a_ttl_outside_one_second_to_one_day_is_refused(ttl: float) -> None:
    """check_ttl guards the CLI and the API alike."""
    with pytest.raises(ValueError, match="a lease lasts"):
        leases.check_ttl(ttl)


def test_admit_takes_only_the_live_lease_and_its_generation() -> None:
    """The right id, not expired, not released, generation = lease's = GENERATION + 1."""
    lease = granted()
    assert leases.admit(lease, lease_id=lease.lease_id, generation=5, marker=4, now=1200) == lease


@pytest.mark.parametrize(
    ("current", "lease_id", "generation", "marker", "now", "reason"),
    [
        (None, "abc", 5, 4, 1200, "no such lease"),
        ("live", "someone-else", 5, 4, 1200, "no such lease"),
        ("released", None, 5, 4, 1200, "was released"),
        ("live", None, 5, 4, 1300, "expired"),
        ("live", None, 6, 4, 1200, "generation 6 is not the next one"),
        ("live", None, 5, 5, 1200, "GENERATION is 5"),  # another commit moved the marker
    ],
)
def test_admit_refuses_every_other_commit(
    current: str | None, lease_id: str | None, generation: int, marker: int, now: float, reason: str
) -> None:
    """Each refusal says why; the store then writes nothing."""
    lease = granted()
    row = {
        None: None,
        "live": lease,
        "released": Lease("v", lease.lease_id, "gen5", 1300.0, 5, released=True),
    }[current]
    refused = leases.admit(
        row, lease_id=lease_id or lease.lease_id, generation=generation, marker=marker, now=now
    )
    assert isinstance(refused, Refused)
    assert reason in refused.reason


def test_a_lease_for_a_generation_already_committed_is_stale() -> None:
    """Its pack was cut short after GENERATION was written: the next claimant is not kept waiting."""
    lease = granted(generation=4)  # for generation 5
    again = leases.take(lease, vessel="v", holder="next", ttl=60, generation=5, now=1100, random=bytes(32))
    assert isinstance(again, Lease)
    assert again.generation == 6
