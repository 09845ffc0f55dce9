"""SPEC §14's table, row by row, on all three surfaces at once: a file in `inbox/`, `POST
/v1/envelopes` and MCP `slop_send`, against one hub with its daemon running — the same outcome
and the same reasons on each (ids and digests aside, which differ because each surface sends its
own envelope)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from slopd.app import load_config
from tests.conftest import HubDir, body_of, envelope_text, front_matter
from tests.polling import until_async
from tests.transport.http_rig import Live, in_process, with_tokens
from tests.transport.mcp.rig import Session, inbox, session

pytestmark = pytest.mark.anyio
SEAT = "alice"
ACTION_OUTSIDE = "action is only read from authorized/ (signed orders)"


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


@dataclass
class Surfaces:
    hub: HubDir
    live: Live
    mcp: Session
    token: str

    async def drop(self, name: str, data: bytes) -> None:
        self.hub.drop(name, data)

    async def post(self, data: bytes) -> tuple[int, dict[str, Any]]:
        answer = await self.live.post(self.token, data)
        return answer.status_code, answer.json()

    async def reply(self, envelope_id: str, kind: str | None = None) -> tuple[dict[str, Any], str]:
        """The one reply (of `kind`, if given) to `envelope_id`, once written."""

        def found() -> list[str]:
            return [
                text
                for text in self.hub.outbox().values()
                if front_matter(text).get("in_reply_to") == envelope_id
                and kind in (None, front_matter(text)["type"])
            ]

        (text,) = await until_async(found)
        return front_matter(text), body_of(text)


@pytest.fixture(name="surfaces")
async def fixture_surfaces(hub: HubDir) -> AsyncIterator[Surfaces]:
    tokens = with_tokens(hub, (SEAT,))
    async with in_process(hub) as live, session(hub, SEAT, load_config(hub.root, hub.config)) as mcp:
        yield Surfaces(hub, live, mcp, tokens[SEAT])


def envelope(ident: str, **fields: Any) -> bytes:
    fields.setdefault("type", "query")
    fields.setdefault("to", "watcher")
    return envelope_text(fields.pop("body", "A question?\n"), id=ident, from_=SEAT, **fields).encode()


def listed(body: str) -> list[str]:
    """The reasons an error reply lists, one `- reason` line each."""
    return [line[2:] for line in body.splitlines() if line.startswith("- ")]


def problem_reasons(problem: dict[str, Any]) -> list[str]:
    return [error["reason"] for error in problem["errors"]]


def generic(reason: str, ident: str, data: bytes | None = None) -> str:
    """A reason with what differs between surfaces — the id, the refused bytes' digest — named."""
    text = reason.replace(ident, "ID")
    if data is not None:
        text = text.replace(hashlib.sha256(data).hexdigest(), "SHA")
    return re.sub(r"\b[0-9a-f]{64}\b", "SHA", text)


async def mcp_send(surfaces: Surfaces, **arguments: Any) -> dict[str, Any]:
    arguments.setdefault("type", "query")
    arguments.setdefault("to", "watcher")
    arguments.setdefault("body", "A question?\n")
    return await surfaces.mcp.call("slop_send", **arguments)


async def mcp_refused(surfaces: Surfaces, **arguments: Any) -> str:
    arguments.setdefault("type", "query")
    arguments.setdefault("to", "watcher")
    arguments.setdefault("body", "A question?\n")
    return await surfaces.mcp.refused("slop_send", **arguments)


async def test_valid_new_id_is_routed_accepted_and_received(surfaces: Surfaces) -> None:
    """Row 1: the folder routes it (a result), HTTP 202 with a receipt, MCP the receipt; each is
    answered the same way."""
    await surfaces.drop("r1.md", envelope("r1-folder"))
    status, receipt = await surfaces.post(envelope("r1-http"))
    assert (status, receipt["status"], receipt["seat"]) == (202, "accepted", SEAT)
    sent = await mcp_send(surfaces, id="r1-mcp")
    assert (sent["status"], sent["replayed"]) == ("accepted", False)
    for ident in ("r1-folder", "r1-http", "r1-mcp"):
        headers, _ = await surfaces.reply(ident)
        assert (headers["type"], headers["to"]) == ("result", SEAT)


async def test_the_same_id_and_bytes_again_is_a_replay(surfaces: Surfaces) -> None:
    """Row 2: the folder archives the copy as a duplicate (no new reply), HTTP answers 200
    `replayed`, MCP returns the first receipt `replayed`."""
    first = envelope("r2-folder")
    await surfaces.drop("r2.md", first)
    await surfaces.reply("r2-folder")
    await surfaces.drop("r2 (conflicted copy).md", first)
    await until_async(lambda: surfaces.hub.events("envelope.duplicate", id="r2-folder"))
    assert len(surfaces.hub.replies_to("r2-folder")) == 1

    data = envelope("r2-http")
    assert (await surfaces.post(data))[0] == 202
    status, again = await surfaces.post(data)
    assert (status, again["replayed"]) == (200, True)

    once = await mcp_send(surfaces, id="r2-mcp")
    twice = await mcp_send(surfaces, id="r2-mcp")
    assert twice == {**once, "replayed": True, "pending": twice["pending"]}


async def test_the_same_id_with_other_bytes_is_a_conflict_with_one_reason(surfaces: Surfaces) -> None:
    """Row 3: an error reply (folder), 422 (HTTP), a tool error (MCP) — the same reason on each,
    and nothing runs: the first envelope's one reply stays the only answer to it."""
    reasons = []
    await surfaces.drop("r3.md", envelope("r3-folder"))
    await surfaces.reply("r3-folder", "result")
    other = envelope("r3-folder", body="Another question?\n")
    await surfaces.drop("r3 again.md", other)
    headers, body = await surfaces.reply("r3-folder", "error")
    assert headers["to"] == SEAT
    (reason,) = listed(body)
    reasons.append(generic(reason, "r3-folder", other))

    assert (await surfaces.post(envelope("r3-http")))[0] == 202
    other = envelope("r3-http", body="Another question?\n")
    status, problem = await surfaces.post(other)
    assert (status, problem["type"].rsplit("/", 1)[1]) == (422, "id-conflict")
    (reason,) = problem_reasons(problem)
    reasons.append(generic(reason, "r3-http", other))

    await mcp_send(surfaces, id="r3-mcp")
    said = await mcp_refused(surfaces, id="r3-mcp", body="Another question?\n")
    found = re.search(r"conflict: id .*", said)
    assert found is not None, said
    reasons.append(generic(found.group(0), "r3-mcp"))

    assert reasons == ["conflict: id ID was already used with other content (this content's sha256 SHA)"] * 3
    for ident in ("r3-http", "r3-mcp"):
        await surfaces.reply(ident, "result")
    assert [reply["type"] for reply in surfaces.hub.replies_to("r3-mcp")] == ["result"]


async def test_an_invalid_envelope_is_refused_with_every_reason(surfaces: Surfaces) -> None:
    """Row 4: every reason, the same on each surface (here a bad `to` and a bad `in_reply_to`)."""
    bad = {"to": "bad to!", "in_reply_to": "no/good"}
    data = envelope("r4-folder", **bad)
    await surfaces.drop("r4.md", data)
    _, body = await surfaces.reply("r4-folder")
    folder = listed(body)
    assert len(folder) == 2

    status, problem = await surfaces.post(envelope("r4-folder", **bad))
    assert status == 422
    assert problem_reasons(problem) == folder

    said = await mcp_refused(surfaces, **bad)
    for reason in folder:
        assert reason in said
    assert inbox(surfaces.hub) == {}


async def test_action_outside_authorized_is_refused_with_one_reason(surfaces: Surfaces) -> None:
    """Row 5: the folder's error reply, HTTP's 422 and MCP's tool error give the same reason, and
    the id is not claimed on any surface: it may be sent again without the action."""
    await surfaces.drop("r5.md", envelope("r5-folder", type="instigate", action="deploy"))
    headers, body = await surfaces.reply("r5-folder")
    assert (headers["type"], listed(body)) == ("error", [ACTION_OUTSIDE])

    status, problem = await surfaces.post(envelope("r5-http", type="instigate", action="deploy"))
    assert (status, problem_reasons(problem)) == (422, [ACTION_OUTSIDE])

    said = await mcp_refused(surfaces, type="instigate", action="deploy")
    assert "`action`" in said
    assert ACTION_OUTSIDE in said
    assert inbox(surfaces.hub) == {}

    assert (await surfaces.post(envelope("r5-http")))[0] == 202  # the id was never taken
    await surfaces.drop("r5 fixed.md", envelope("r5-folder"))
    await surfaces.reply("r5-folder", "result")


async def test_a_recipient_nobody_here_answers_is_accepted_then_answered_with_one_error(
    surfaces: Surfaces,
) -> None:
    """Row 6: the folder answers an error; HTTP and MCP accept (another watcher may answer that
    seat) and the daemon answers the same error."""
    await surfaces.drop("r6.md", envelope("r6-folder", to="nobody"))
    status, _ = await surfaces.post(envelope("r6-http", to="nobody"))
    assert status == 202
    await mcp_send(surfaces, id="r6-mcp", to="nobody")
    reasons = []
    for ident in ("r6-folder", "r6-http", "r6-mcp"):
        headers, body = await surfaces.reply(ident)
        assert headers["type"] == "error"
        reasons.append(listed(body))
    assert reasons[0] == reasons[1] == reasons[2]
    assert reasons[0][0].startswith("unknown recipient 'nobody': this watcher handles ")


async def test_an_unknown_argument_or_json_key_is_refused_naming_it(surfaces: Surfaces) -> None:
    """Row 7: a request's unknown key is refused naming it — over HTTP a JSON body's (422
    `unknown-keys`), over MCP a tool argument (a tool error); nothing is done. (The envelope's
    own unknown keys are kept, SPEC §3: they are its content, not request arguments.)"""
    said = await mcp_refused(surfaces, id="r7-mcp", priority="high")
    assert "slop_send takes no argument `priority`" in said
    assert "baton_score takes no argument `strict`" in await surfaces.mcp.refused(
        "baton_score", letter="thin", strict=True
    )
    assert inbox(surfaces.hub) == {}
    answer = await surfaces.live.client.post(
        "/baton/alice/score",
        json={"letter": "thin", "strict": True},
        headers={"Authorization": f"Bearer {surfaces.token}"},
    )
    assert (answer.status_code, answer.json()["type"].rsplit("/", 1)[1]) == (422, "unknown-keys")
    assert problem_reasons(answer.json()) == ["`strict`: this endpoint takes no such key"]
    status, _ = await surfaces.post(envelope("r7-http", priority="high"))
    assert status == 202
