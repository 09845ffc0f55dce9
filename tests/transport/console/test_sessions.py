"""The console's ceremonies (`console.sessions` rule 3): what anyone may begin never evicts what a
signed-in human began, and expired ones are dropped."""

from __future__ import annotations

from slopd.transport.console import sessions
from slopd.transport.console.sessions import Sessions


def test_a_flood_of_sign_ins_never_evicts_a_humans_pending_approval() -> None:
    table = Sessions(ttl=3600)
    pin = table.begin("pin", b"order", now=0.0, ttl=3600, session="s1", name="x.md")
    for number in range(sessions._MAX + 50):  # more than the table keeps: anyone can ask for options
        table.begin("signin", f"state {number}", now=1.0)
    taken = table.take(pin, "pin", now=2.0)
    assert taken is not None
    assert taken.data["name"] == "x.md"


def test_a_ceremony_is_taken_once_of_its_kind_before_it_expires() -> None:
    table = Sessions(ttl=3600)
    one = table.begin("approve", "state", now=0.0)
    assert table.take(one, "signin", now=1.0) is None  # another kind: and it is gone
    two = table.begin("approve", "state", now=0.0)
    assert table.take(two, "approve", now=sessions.CEREMONY_TTL + 1) is None  # expired
    three = table.begin("approve", "state", now=0.0)
    assert table.take(three, "approve", now=1.0) is not None
    assert table.take(three, "approve", now=1.0) is None  # once
