"""`slop://replies` subscriptions (issue 27 point 2, SPEC §16), with the official SDK client's
notification handler: a reply committed for the seat sends `notifications/resources/updated` to
each subscribed session — handshake-era `resources/subscribe` and 2026-07-28 `subscriptions/listen`
— and to no session of another seat. In-process servers wired as `slopd mcp` wires them, against
a real daemon; the real transports are in test_subscriptions_transports.py (slow)."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from tests.conftest import HubDir, envelope_text
from tests.wake.rig import call, seat_session, subscribe

pytestmark = pytest.mark.anyio


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


async def test_a_reply_for_the_seat_notifies_its_subscribed_session_and_no_other_seats(hub: HubDir) -> None:
    """alice and bob subscribe (each on a server of its own, as two `slopd mcp` processes are; one
    server for many seats is /mcp, in test_subscriptions_transports.py); bob's reply notifies bob
    only, alice's alice only; the resource then lists alice's reply."""
    with hub.running():
        async with (
            seat_session(hub, "alice") as (alice, alice_heard, _),
            seat_session(hub, "bob") as (bob, bob_heard, _),
        ):
            await subscribe(alice)
            await subscribe(bob)
            theirs = await call(bob, "slop_send", type="query", to="watcher", body="Bob asks.\n")
            assert await bob_heard.count(1) == ["slop://replies"]
            await call(bob, "slop_status", id=theirs["id"], wait_s=20)
            mine = await call(alice, "slop_send", type="query", to="watcher", body="Alice asks.\n")
            assert await alice_heard.count(1) == ["slop://replies"]
            await call(alice, "slop_hub_info")  # a round trip: anything sent to alice before is in
            await call(bob, "slop_hub_info")
            assert len(alice_heard.updated) == 1  # bob's reply told alice nothing
            assert len(bob_heard.updated) == 1  # and alice's told bob nothing
            feed = json.loads((await alice.read_resource("slop://replies")).contents[0].text)  # type: ignore[union-attr]
            assert [reply["in_reply_to"] for reply in feed["replies"]] == [mine["id"]]
            assert feed["pending"] == 1


async def test_an_unsubscribed_session_hears_nothing_more_while_a_subscribed_one_does(hub: HubDir) -> None:
    """Two sessions of one seat: after one unsubscribes, the next reply reaches only the other."""
    with hub.running():
        async with (
            seat_session(hub, "alice") as (first, first_heard, _),
            seat_session(hub, "alice") as (
                second,
                second_heard,
                _,
            ),
        ):
            await subscribe(first)
            await subscribe(second)
            await call(first, "slop_send", type="query", to="watcher", body="One.\n")
            await first_heard.count(1)
            await second_heard.count(1)
            await subscribe(first, verb="unsubscribe")
            await call(first, "slop_send", type="query", to="watcher", body="Two.\n")
            await second_heard.count(2)
            await call(first, "slop_hub_info")
            assert len(first_heard.updated) == 1


async def test_only_the_reply_feed_can_be_subscribed(hub: HubDir) -> None:
    """Another URI is an invalid-params error naming it and the one that can be; the capability says
    subscribe."""
    async with seat_session(hub, "alice") as (client, _heard, _desk):
        assert client.session.server_capabilities is not None
        resources = client.session.server_capabilities.resources
        assert resources is not None
        assert resources.subscribe is True
        with pytest.raises(MCPError) as refused:
            await subscribe(client, "slop://hub/HUB.md")
        assert "slop://hub/HUB.md" in str(refused.value)
        assert "slop://replies" in str(refused.value)


async def test_a_listen_stream_on_the_feed_gets_the_event_and_another_seats_does_not(hub: HubDir) -> None:
    """2026-07-28 clients: `subscriptions/listen` on slop://replies yields ResourceUpdated for the
    seat's reply; bob's stream stays quiet (checked after alice's event, with a round trip)."""
    with hub.running():
        async with (
            seat_session(hub, "alice", "auto") as (alice, _, _),
            seat_session(hub, "bob", "auto") as (
                bob,
                _,
                _,
            ),
        ):
            assert alice.protocol_version == "2026-07-28"
            async with (
                alice.listen(resource_subscriptions=["slop://replies"]) as mine,
                bob.listen(resource_subscriptions=["slop://replies"]) as theirs,
            ):
                await call(alice, "slop_send", type="query", to="watcher", body="Alice asks.\n")
                with anyio.fail_after(20):
                    event = await anext(aiter(mine))
                assert event.uri == "slop://replies"  # type: ignore[union-attr]
                await call(bob, "slop_hub_info")
                with anyio.move_on_after(0):
                    quiet = await anext(aiter(theirs))
                    pytest.fail(f"bob's stream heard {quiet}")


async def test_a_reply_committed_by_the_daemon_for_a_dropped_file_notifies_too(hub: HubDir) -> None:
    """The seat's envelope dropped as a file (not through MCP): its reply still notifies the session."""
    with hub.running():
        async with seat_session(hub, "carol") as (client, heard, _desk):
            await subscribe(client)
            hub.drop("c.md", envelope_text("By file.\n", id="c1", type="query", from_="carol"))
            assert await heard.count(1) == ["slop://replies"]
