"""`slop_wait(ids?, timeout_s?)` (issue 27 point 3, SPEC §16), in-process against a real daemon: the
first terminal reply to one of `ids` (an execution's ack is not one), or the first reply new to the
seat — each new reply delivered once, from the seat's wake cursor — woken by the commit, at most
50 s."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from tests.conftest import HubDir, envelope_text, toml_argv
from tests.polling import until_async
from tests.transport.mcp.rig import text_of
from tests.wake.rig import call, seat_session

pytestmark = pytest.mark.anyio

# An executor that answers only once the test creates its `go` file: the ack comes first, long before.
# It gives up after two minutes, so a test that fails before opening the gate leaves no process behind.
GATED = (
    "import pathlib, sys, time\n"
    "go, deadline = pathlib.Path(sys.argv[1]), time.monotonic() + 120\n"
    "while not go.exists() and time.monotonic() < deadline:\n"
    "    time.sleep(0.02)\n"
    "print('done: ' + sys.stdin.read().strip())\n"
)


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


async def test_with_ids_it_returns_the_terminal_reply_not_the_ack(hub: HubDir, tmp_path: Path) -> None:
    """An instigate is acked at once and answered when its executor finishes: slop_wait(ids) is still
    waiting after the ack, and returns the result, whole, once it commits."""
    script, go = tmp_path / "gated.py", tmp_path / "go"
    script.write_text(GATED)
    hub.write_config(f"[executor]\ncommand = {toml_argv([sys.executable, str(script), str(go)])}\n")
    with hub.running() as daemon:
        async with seat_session(hub, "alice") as (client, _heard, _desk):
            sent = await call(client, "slop_send", type="instigate", to="watcher", body="Build it.\n")
            outcome: dict[str, object] = {}

            async def wait() -> None:
                outcome.update(await call(client, "slop_wait", ids=[sent["id"]], timeout_s=50))

            async with anyio.create_task_group() as group:
                group.start_soon(wait)

                async def acked() -> bool:
                    status = await call(client, "slop_status", id=sent["id"], wait_s=0)
                    return [reply["type"] for reply in status["replies"]] == ["ack"]

                await until_async(acked, interval=0.02)
                assert outcome == {}  # acked, and the wait goes on
                go.touch()
            daemon.check_alive()
    reply = outcome["reply"]
    assert isinstance(reply, dict)
    assert (reply["type"], reply["in_reply_to"], outcome["timed_out"]) == ("result", sent["id"], False)
    assert "done: Build it." in str(outcome["text"])


async def test_without_ids_each_new_reply_is_delivered_once_from_the_cursor(hub: HubDir) -> None:
    """A reply from before the seat's first wake-up is not new; the next one is returned once; the
    cursor then stands past it, so an immediate second look finds nothing."""
    hub.drop("old.md", envelope_text("Old news.\n", id="old1", type="query", from_="bob"))
    with hub.running() as daemon:
        daemon.until(lambda: "old1.result.md" in hub.outbox())
        async with seat_session(hub, "bob") as (client, _heard, _desk):
            first = await call(client, "slop_wait", timeout_s=0)
            assert (first["timed_out"], first["reply"]) == (True, None)  # "after now": old1 is not new
            sent = await call(client, "slop_send", type="query", to="watcher", body="Fresh?\n")
            found = await call(client, "slop_wait", timeout_s=50)
            assert (found["timed_out"], found["reply"]["in_reply_to"]) == (False, sent["id"])
            assert found["cursor"] == found["reply"]["seq"]
            again = await call(client, "slop_wait", timeout_s=0)
            assert again["timed_out"] is True
            assert again["cursor"] == found["cursor"]
            by_id = await call(client, "slop_wait", ids=[sent["id"]], timeout_s=0)
            assert by_id["reply"]["id"] == found["reply"]["id"]  # ids find it whatever the cursor says


async def test_an_id_the_seat_did_not_send_and_a_wait_over_50_s_are_refused(hub: HubDir) -> None:
    """Tool errors naming what is wrong; nothing waits."""
    hub.drop("c.md", envelope_text("Carol's.\n", id="c1", type="query", from_="carol"))
    hub.run_once()
    async with seat_session(hub, "alice") as (client, _heard, _desk):
        unknown = await client.call_tool("slop_wait", {"ids": ["c1"], "timeout_s": 1})
        assert unknown.is_error
        assert "c1 is not known to this seat" in text_of(unknown)
        too_long = await client.call_tool("slop_wait", {"timeout_s": 51})
        assert too_long.is_error
        assert "timeout_s" in text_of(too_long)
