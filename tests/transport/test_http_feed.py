"""The reply side of the HTTP transport black-box (SPEC §12, issue 15 point 4).

`GET /v1/envelopes/{id}/replies?wait=` (one envelope's replies, long-polled until terminal),
`GET /v1/replies?after=&limit=&wait=` (the seat's durable feed) and `POST /v1/replies/{id}/ack`,
with the daemon loop really answering what is posted or dropped.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.conftest import HubDir, front_matter
from tests.polling import until_async
from tests.transport.http_rig import Live, bearer, in_process, markdown, problem, samples, value, with_tokens

pytestmark = pytest.mark.anyio

REPLY_KEYS = {"seq", "id", "type", "class", "in_reply_to", "path", "written_at", "acked", "text"}
FEED_KEYS = {"replies", "next_cursor", "has_more", "tail_cursor", "pending"}


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


async def feed(live: Live, token: str, query: str = "") -> dict[str, Any]:
    answer = await live.client.get(f"/v1/replies{query}", headers=bearer(token))
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    assert set(body) == FEED_KEYS, body
    return body


async def feed_of(live: Live, token: str, count: int) -> list[dict[str, Any]]:
    """The seat's whole feed once it holds at least `count` replies."""

    async def enough() -> list[dict[str, Any]] | None:
        replies: list[dict[str, Any]] = (await feed(live, token, "?limit=100"))["replies"]
        return replies if len(replies) >= count else None

    found: list[dict[str, Any]] = await until_async(enough)
    return found


def parked(metrics: Any) -> float | None:
    """`slopd_long_polls_parked` of a `/metrics` answer."""
    return value(samples(metrics.text), "slopd_long_polls_parked")


def check_reply(hub: HubDir, reply: dict[str, Any], in_reply_to: str, type: str, to: str) -> None:
    assert set(reply) == REPLY_KEYS, reply
    assert reply["in_reply_to"] == in_reply_to
    assert reply["type"] == type
    assert isinstance(reply["seq"], int)
    assert reply["path"].startswith("outbox/")
    assert reply["acked"] is False
    on_disk = (hub.root / reply["path"]).read_text(encoding="utf-8")
    assert reply["text"] == on_disk
    headers = front_matter(on_disk)
    assert (headers["id"], headers["type"], headers["to"], headers["in_reply_to"]) == (
        reply["id"],
        type,
        to,
        in_reply_to,
    )
    assert reply["class"] == headers["class"]


# -- one envelope's replies -------------------------------------------------------------------


async def test_a_long_poll_on_an_envelope_returns_as_soon_as_its_terminal_reply_is_written(
    hub: HubDir,
) -> None:
    tokens = with_tokens(hub)
    alice = tokens["alice"]
    cases = {
        "20261201t120000z-query": ("query", {}, "result"),
        "20261201t120000z-handshake": ("handshake", {}, "ack"),
        "20261201t120000z-note": ("note", {}, "ack"),
        "20261201t120000z-nobody": ("note", {"to": "nobody"}, "error"),  # any error is terminal, even here
    }
    async with in_process(hub) as live:
        for ident, (type, fields, _reply) in cases.items():
            assert (await live.post(alice, markdown(ident, type=type, **fields))).status_code == 202
        for ident, (_type, _fields, reply_type) in cases.items():
            waited = await live.client.get(f"/v1/envelopes/{ident}/replies?wait=20", headers=bearer(alice))
            assert waited.status_code == 200, waited.text
            body = waited.json()
            assert set(body) == {"replies", "terminal"}
            assert body["terminal"] is True
            assert [reply["type"] for reply in body["replies"]] == [reply_type], body
            check_reply(hub, body["replies"][0], ident, reply_type, "alice")
            # The case of the id in the URL does not matter; reading never consumes.
            again = await live.client.get(f"/v1/envelopes/{ident.upper()}/replies", headers=bearer(alice))
            assert again.json() == body


async def test_a_long_poll_returns_terminal_false_and_empty_at_its_deadline(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    alice = tokens["alice"]
    ident = "20261201t120000z-a-result"  # a reply arriving in inbox/: recorded, never replied to
    async with in_process(hub) as live:
        posted = await live.post(
            alice, markdown(ident, type="result", in_reply_to="20261130t000000z-earlier")
        )
        assert posted.status_code == 202, posted.text

        async def done() -> bool:
            state = await live.client.get(f"/v1/envelopes/{ident}", headers=bearer(alice))
            return bool(state.json()["state"] == "done")

        await until_async(done)
        waited = await live.client.get(f"/v1/envelopes/{ident}/replies?wait=0.5", headers=bearer(alice))
        assert waited.status_code == 200
        assert waited.json() == {"replies": [], "terminal": False}
        at_once = await live.client.get(f"/v1/envelopes/{ident}/replies", headers=bearer(alice))
        assert at_once.json() == {"replies": [], "terminal": False}
    assert hub.replies_to(ident) == []


async def test_a_long_poll_on_an_unprocessed_query_ends_at_its_deadline_without_a_reply(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    ident = "20261201t120000z-unprocessed"
    async with in_process(hub, daemon=False) as live:
        assert (await live.post(tokens["alice"], markdown(ident))).status_code == 202
        waited = await live.client.get(
            f"/v1/envelopes/{ident}/replies?wait=0.5", headers=bearer(tokens["alice"])
        )
        assert waited.json() == {"replies": [], "terminal": False}
        problem(
            await live.client.get(
                "/v1/envelopes/20261201t120000z-never/replies", headers=bearer(tokens["alice"])
            ),
            404,
            "not-found",
        )


# -- the feed ---------------------------------------------------------------------------------


async def test_the_feed_is_oldest_first_paged_by_cursor_and_reading_never_consumes(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    alice = tokens["alice"]
    idents = [f"20261201t120000z-feed{number}" for number in range(3)]
    async with in_process(hub) as live:
        for ident in idents:
            assert (await live.post(alice, markdown(ident))).status_code == 202
        everything = await feed_of(live, alice, 3)
        assert len(everything) == 3
        seqs = [reply["seq"] for reply in everything]
        assert seqs == sorted(seqs)
        assert len(set(seqs)) == 3
        assert sorted(reply["in_reply_to"] for reply in everything) == idents
        for reply in everything:
            check_reply(hub, reply, reply["in_reply_to"], "result", "alice")

        first = await feed(live, alice, "?after=0&limit=2")
        assert first["replies"] == everything[:2]
        assert first["has_more"] is True
        assert first["next_cursor"] == seqs[1]
        assert first["tail_cursor"] >= seqs[2]
        assert first["pending"] == 3
        assert await feed(live, alice, "?after=0&limit=2") == first  # never consumed

        second = await feed(live, alice, f"?after={first['next_cursor']}&limit=2")
        assert second["replies"] == everything[2:]
        assert second["has_more"] is False
        assert second["next_cursor"] == seqs[2]
        assert second["pending"] == 3

        end = await feed(live, alice, f"?after={second['next_cursor']}&limit=2")
        assert end["replies"] == []
        assert end["has_more"] is False
        assert end["next_cursor"] == seqs[2]
        assert end["tail_cursor"] == second["tail_cursor"]

        exact = await feed(live, alice, "?after=0&limit=3")
        assert exact["replies"] == everything
        assert exact["has_more"] is False
        assert exact["next_cursor"] == seqs[2]

        single = await feed(live, alice, f"?after={seqs[0]}&limit=1")
        assert single["replies"] == [everything[1]]
        assert single["has_more"] is True
        assert (await feed(live, alice))["replies"] == everything  # defaults: after=0, limit 50
        assert (await feed(live, alice, "?limit=1000"))["replies"] == everything  # clamped, not refused


async def test_a_seat_sees_only_replies_addressed_to_it(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    async with in_process(hub) as live:
        for seat in ("alice", "bob"):
            for number in range(2):
                ident = f"20261201t120000z-{seat}{number}"
                assert (await live.post(tokens[seat], markdown(ident, sender=seat))).status_code == 202
        mine = {seat: await feed_of(live, tokens[seat], 2) for seat in ("alice", "bob")}
        for seat, other in (("alice", "bob"), ("bob", "alice")):
            replies = mine[seat]
            assert sorted(reply["in_reply_to"] for reply in replies) == [
                f"20261201t120000z-{seat}0",
                f"20261201t120000z-{seat}1",
            ]
            for reply in replies:
                assert front_matter(reply["text"])["to"] == seat
            page = await feed(live, tokens[seat])
            assert page["pending"] == 2
            assert page["replies"] == replies
            theirs = await live.client.get(
                f"/v1/envelopes/20261201t120000z-{other}0/replies", headers=bearer(tokens[seat])
            )
            problem(theirs, 404, "not-found")
            theirs_reply = mine[other][0]["id"]
            problem(
                await live.client.post(f"/v1/replies/{theirs_reply}/ack", headers=bearer(tokens[seat])),
                404,
                "not-found",
            )
        # bob's refused ack left alice's reply unacked.
        assert all(reply["acked"] is False for reply in (await feed(live, tokens["alice"]))["replies"])


async def test_a_cursor_past_the_tail_is_400_cursor_ahead(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    alice = tokens["alice"]
    async with in_process(hub) as live:
        empty = await feed(live, alice, "?after=0")
        assert empty == {"replies": [], "next_cursor": 0, "has_more": False, "tail_cursor": 0, "pending": 0}
        problem(await live.client.get("/v1/replies?after=1", headers=bearer(alice)), 400, "cursor-ahead")
        assert (await live.post(alice, markdown("20261201t120000z-ahead"))).status_code == 202
        (reply,) = await feed_of(live, alice, 1)
        tail = (await feed(live, alice))["tail_cursor"]
        assert tail == reply["seq"]
        assert (await feed(live, alice, f"?after={tail}"))["replies"] == []
        for after in (tail + 1, tail + 1000):
            problem(
                await live.client.get(f"/v1/replies?after={after}", headers=bearer(alice)),
                400,
                "cursor-ahead",
            )


BAD_NUMBERS = [
    "after=-1",
    "after=-inf",
    "after=abc",
    "after=",
    "after=nan",
    "after=1x",
    "after=0x10",
    "limit=0",
    "limit=-5",
    "limit=ten",
    "limit=",
    "wait=-1",
    "wait=soon",
    "wait=nan",
    "wait=-inf",
    "wait=",
]


async def test_a_negative_or_non_numeric_after_limit_or_wait_is_400(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    alice = bearer(tokens["alice"])
    async with in_process(hub, daemon=False) as live:
        assert (await live.post(tokens["alice"], markdown("20261201t120000z-numbers"))).status_code == 202
        for query in BAD_NUMBERS:
            body = problem(await live.client.get(f"/v1/replies?{query}", headers=alice), 400, "bad-request")
            assert query.partition("=")[0] in body["detail"], body
            if query.startswith("wait="):
                problem(
                    await live.client.get(
                        f"/v1/envelopes/20261201t120000z-numbers/replies?{query}", headers=alice
                    ),
                    400,
                    "bad-request",
                )


async def test_an_infinite_after_is_400_not_500(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    async with in_process(hub, daemon=False) as live:
        for after in ("inf", "1e400", "Infinity"):
            answer = await live.client.get(f"/v1/replies?after={after}", headers=bearer(tokens["alice"]))
            assert answer.status_code == 400, (after, answer.text)


async def test_a_wait_over_30_seconds_is_clamped_and_returns_at_once_when_replies_are_ready(
    hub: HubDir,
) -> None:
    tokens = with_tokens(hub)
    alice = tokens["alice"]
    ident = "20261201t120000z-clamped"
    async with in_process(hub) as live:
        assert (await live.post(alice, markdown(ident))).status_code == 202
        await feed_of(live, alice, 1)
        page = await live.client.get("/v1/replies?after=0&wait=1000", headers=bearer(alice))
        assert page.status_code == 200
        assert len(page.json()["replies"]) == 1
        replies = await live.client.get(f"/v1/envelopes/{ident}/replies?wait=1000", headers=bearer(alice))
        assert replies.status_code == 200
        assert replies.json()["terminal"] is True


async def test_a_long_poll_on_the_feed_wakes_when_a_reply_is_committed(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    alice = tokens["alice"]
    ident = "20261201t120000z-dropped"
    answers: list[Any] = []
    async with in_process(hub) as live:
        assert (await feed(live, alice))["replies"] == []

        async def poll() -> None:
            answers.append(await live.client.get("/v1/replies?after=0&wait=20", headers=bearer(alice)))

        async with anyio.create_task_group() as group:
            group.start_soon(poll)
            await until_async(lambda: live.service.doorbell.parked > 0)  # asleep, not looking
            assert parked(await live.client.get("/metrics")) == 1
            # Meanwhile an envelope arrives through the file lane, not over HTTP.
            await anyio.to_thread.run_sync(lambda: hub.drop(f"{ident}.md", markdown(ident)))
        assert parked(await live.client.get("/metrics")) == 0
        (answer,) = answers
        assert answer.status_code == 200
        (reply,) = answer.json()["replies"]
        check_reply(hub, reply, ident, "result", "alice")
        assert answer.json()["next_cursor"] == reply["seq"]


async def test_the_cursor_survives_a_restart_without_missing_or_repeating_a_reply(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    alice = tokens["alice"]
    async with in_process(hub) as live:
        for number in range(2):
            assert (await live.post(alice, markdown(f"20261201t120000z-before{number}"))).status_code == 202
        before = await feed_of(live, alice, 2)
        cursor = (await feed(live, alice))["next_cursor"]
    async with in_process(hub) as live:
        assert (await feed(live, alice, f"?after={cursor}"))["replies"] == []
        assert (await live.post(alice, markdown("20261201t120000z-after"))).status_code == 202
        everything = await feed_of(live, alice, 3)
        assert everything[:2] == before
        new = await feed(live, alice, f"?after={cursor}")
        assert [reply["in_reply_to"] for reply in new["replies"]] == ["20261201t120000z-after"]
        assert new["replies"] == everything[2:]


# -- acks -------------------------------------------------------------------------------------


async def test_an_ack_is_204_marks_the_reply_acked_and_lowers_pending_idempotently(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    alice = tokens["alice"]
    async with in_process(hub) as live:
        for number in range(2):
            assert (await live.post(alice, markdown(f"20261201t120000z-ack{number}"))).status_code == 202
        first, second = await feed_of(live, alice, 2)
        assert (await feed(live, alice))["pending"] == 2
        for _ in range(2):
            acked = await live.client.post(f"/v1/replies/{first['id']}/ack", headers=bearer(alice))
            assert acked.status_code == 204, acked.text
            assert acked.content == b""
            assert "ratelimit" in acked.headers
            assert "ratelimit-policy" in acked.headers
            page = await feed(live, alice)
            assert page["pending"] == 1
            assert [reply["acked"] for reply in page["replies"]] == [True, False]
            assert [reply["id"] for reply in page["replies"]] == [first["id"], second["id"]]
        replies = await live.client.get(
            f"/v1/envelopes/{first['in_reply_to']}/replies", headers=bearer(alice)
        )
        assert replies.json()["replies"][0]["acked"] is True
        for unknown in ["20261201t120000z-never.result", first["in_reply_to"], "..%2F..%2Fetc", "x" * 300]:
            problem(
                await live.client.post(f"/v1/replies/{unknown}/ack", headers=bearer(alice)), 404, "not-found"
            )
        assert (await feed(live, alice))["pending"] == 1
        # Another seat cannot ack it, and acking is per seat.
        problem(
            await live.client.post(f"/v1/replies/{second['id']}/ack", headers=bearer(tokens["bob"])),
            404,
            "not-found",
        )
        assert (await feed(live, alice))["pending"] == 1
        assert (
            await live.client.post(f"/v1/replies/{second['id']}/ack", headers=bearer(alice))
        ).status_code == 204
        assert (await feed(live, alice))["pending"] == 0


async def test_an_ack_matches_the_reply_id_case_insensitively(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    alice = tokens["alice"]
    ident = "20261201T120000Z-MixedCase"
    async with in_process(hub) as live:
        assert (await live.post(alice, markdown(ident))).status_code == 202
        (reply,) = await feed_of(live, alice, 1)
        assert reply["id"] == f"{ident.lower()}.result"
        acked = await live.client.post(f"/v1/replies/{ident}.result/ack", headers=bearer(alice))
        assert acked.status_code == 204, acked.text
        assert (await feed(live, alice))["pending"] == 0
