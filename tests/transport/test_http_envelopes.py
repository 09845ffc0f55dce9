"""`POST /v1/envelopes` and `GET`/`HEAD /v1/envelopes/{id}` black-box (SPEC §12, issue 15 points 2-3).

Every answer is checked on the wire (status, headers, problem+json body) and on the hub: what is
in `inbox/` (byte for byte), `authorized/` and the ledger. Most tests run without the daemon
loop (`daemon=False`) so that what a POST wrote is still in `inbox/` to be read; the ones about
processing run it and poll the ledger.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import httpx2
import pytest

from slopd.transport import tokens as token_file
from tests.conftest import HubDir
from tests.polling import until_async
from tests.transport.http_rig import (
    bearer,
    files,
    in_process,
    json_form,
    ledger,
    markdown,
    problem,
    with_tokens,
)

pytestmark = pytest.mark.anyio

RECEIPT_KEYS = {"id", "seat", "received_at", "sha256", "seq", "status"}
POLICY = re.compile(r'"default";q=(\d+);w=(\d+)')
REMAINING = re.compile(r'"default";r=(\d+);t=(\d+)')


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sized(id: str, size: int) -> bytes:
    """A valid envelope of exactly `size` bytes."""
    bare = markdown(id, body="\n")
    data = markdown(id, body="x" * (size - len(bare)) + "\n")
    assert len(data) == size
    return data


def input_row(hub: HubDir, key: str) -> tuple[object, ...] | None:
    rows = ledger(hub, "SELECT lane, file, sender, type, status, sha256 FROM inputs WHERE key = ?", key)
    return rows[0] if rows else None


def receipt_rows(hub: HubDir) -> list[tuple[object, ...]]:
    return ledger(hub, "SELECT key, seat, sha256, state FROM receipts ORDER BY seq")


def archived(hub: HubDir) -> dict[str, bytes]:
    """The archive's files by their own name (the day folder dropped)."""
    return {name.rsplit("/", 1)[-1]: data for name, data in files(hub, "archive").items()}


def limited(response: httpx2.Response) -> tuple[int, int]:
    """Rule 1 of the app: every answer carries both rate-limit headers, well formed; (quota, remaining)."""
    policy = POLICY.fullmatch(response.headers.get("ratelimit-policy", ""))
    remaining = REMAINING.fullmatch(response.headers.get("ratelimit", ""))
    assert policy is not None, response.headers
    assert remaining is not None, response.headers
    return int(policy[1]), int(remaining[1])


# -- 202, the receipt, the bytes -------------------------------------------------------------


async def test_a_post_gets_202_a_location_and_a_receipt_and_its_exact_bytes_land_in_inbox(
    hub: HubDir,
) -> None:
    tokens = with_tokens(hub)
    ident = "20261201T120000Z-Receipt"
    data = markdown(ident, body="Exact bytes: ünïcode,\r\nCRLF and  trailing spaces  \r\n\n")
    async with in_process(hub, daemon=False) as live:
        before = datetime.now(UTC)
        posted = await live.post(tokens["alice"], data)
        after = datetime.now(UTC)
        assert posted.status_code == 202, posted.text
        assert posted.headers["content-type"].startswith("application/json")
        assert posted.headers["location"] == f"/v1/envelopes/{ident}"
        limited(posted)
        receipt = posted.json()
        assert set(receipt) == RECEIPT_KEYS
        assert receipt["id"] == ident
        assert receipt["seat"] == "alice"
        assert receipt["sha256"] == sha(data)
        assert receipt["status"] == "accepted"
        assert isinstance(receipt["seq"], int)
        assert receipt["seq"] >= 1
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", receipt["received_at"])
        stamped = datetime.fromisoformat(receipt["received_at"].replace("Z", "+00:00"))
        assert before.replace(microsecond=0) <= stamped.replace(microsecond=0) <= after
        # Durable before the 202: the receipt is a written row of the ledger already.
        assert receipt_rows(hub) == [(ident.lower(), "alice", sha(data), "written")]
        assert files(hub, "inbox") == {f"{ident}.md": data}
        second = await live.post(tokens["alice"], markdown("20261201t120001z-next"))
        assert second.status_code == 202
        assert second.json()["seq"] > receipt["seq"]
        followed = await live.client.get(posted.headers["location"], headers=bearer(tokens["alice"]))
        assert followed.status_code == 200
        assert {key: followed.json()[key] for key in RECEIPT_KEYS} == receipt


async def test_the_json_form_is_written_as_id_json_with_the_posted_bytes(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    data = json_form("20261201t120000z-json", body="From JSON.\n", extra_key=[1, {"a": "b"}])
    async with in_process(hub, daemon=False) as live:
        posted = await live.post(tokens["alice"], data, media="application/json")
        assert posted.status_code == 202, posted.text
        assert posted.json()["sha256"] == sha(data)
        assert files(hub, "inbox") == {"20261201t120000z-json.json": data}


async def test_a_posted_envelope_and_a_dropped_file_are_indistinguishable_after_intake(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    posted_id, dropped_id = "20261201t120000z-posted", "20261201t120000z-dropped"
    posted_bytes, dropped_bytes = markdown(posted_id), markdown(dropped_id)
    async with in_process(hub) as live:
        answer = await live.post(tokens["alice"], posted_bytes)
        assert answer.status_code == 202
        hub.drop(f"{dropped_id}.md", dropped_bytes)
        await until_async(
            lambda: all(
                (row := input_row(hub, key)) is not None and row[4] == "done"
                for key in (posted_id, dropped_id)
            )
        )
    posted_row, dropped_row = input_row(hub, posted_id), input_row(hub, dropped_id)
    assert posted_row == ("inbox", f"{posted_id}.md", "alice", "query", "done", sha(posted_bytes))
    assert dropped_row == ("inbox", f"{dropped_id}.md", "alice", "query", "done", sha(dropped_bytes))
    assert archived(hub) == {f"{posted_id}.md": posted_bytes, f"{dropped_id}.md": dropped_bytes}
    assert files(hub, "inbox") == {}
    assert [reply["type"] for reply in hub.replies_to(posted_id)] == ["result"]
    assert [reply["type"] for reply in hub.replies_to(dropped_id)] == ["result"]
    assert hub.replies_to(posted_id)[0]["to"] == hub.replies_to(dropped_id)[0]["to"] == "alice"


# -- resends ----------------------------------------------------------------------------------


async def test_an_identical_resend_is_200_with_the_same_receipt_and_replayed(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    ident = "20261201t120000z-resend"
    data = markdown(ident)
    async with in_process(hub, daemon=False) as live:
        first = await live.post(tokens["alice"], data)
        assert first.status_code == 202
        for _ in range(2):
            again = await live.post(tokens["alice"], data)
            assert again.status_code == 200, again.text
            assert again.json() == {**first.json(), "replayed": True}
            assert again.headers["location"] == first.headers["location"]
            limited(again)
        assert files(hub, "inbox") == {f"{ident}.md": data}
        assert len(receipt_rows(hub)) == 1


async def test_the_same_id_with_other_bytes_is_422_id_conflict_and_writes_nothing(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    ident = "20261201t120000z-conflict"
    data = markdown(ident)
    async with in_process(hub, daemon=False) as live:
        assert (await live.post(tokens["alice"], data)).status_code == 202
        others = [
            markdown(ident, body="Other bytes.\n"),
            markdown(ident.upper()),  # ids compare case-insensitively
            json_form(ident),
        ]
        for other in others:
            media = "application/json" if other.startswith(b"{") else "text/markdown"
            refused = await live.post(tokens["alice"], other, media=media)
            problem(refused, 422, "id-conflict")
            limited(refused)
        assert files(hub, "inbox") == {f"{ident}.md": data}
        assert receipt_rows(hub) == [(ident, "alice", sha(data), "written")]
        assert (await live.post(tokens["alice"], data)).status_code == 200


# -- tokens and seats -------------------------------------------------------------------------


async def test_401_is_byte_identical_for_a_missing_malformed_or_unknown_token(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    alice = tokens["alice"]
    tampered = alice[:-1] + ("A" if alice[-1] != "A" else "B")
    data = markdown("20261201t120000z-noauth")
    attempts: list[dict[str, str]] = [
        {},
        {"Authorization": "Bearer slopd_not-a-token-anyone-was-given"},
        {"Authorization": f"Bearer {tampered}"},
        {"Authorization": f"Basic {alice}"},
        {"Authorization": "Bearer"},
        {"Authorization": "Bearer "},
        {"Authorization": alice},
    ]
    async with in_process(hub, daemon=False) as live:
        answers = [
            await live.client.post(
                "/v1/envelopes", content=data, headers={"Content-Type": "text/markdown", **headers}
            )
            for headers in attempts
        ]
        # A token in the URL is never read.
        answers.append(
            await live.client.post(
                f"/v1/envelopes?access_token={alice}&token={alice}",
                content=data,
                headers={"Content-Type": "text/markdown"},
            )
        )
        for answer in answers:
            problem(answer, 401, "unauthorized")
            assert answer.headers["www-authenticate"] == 'Bearer realm="slopd"'
            assert answer.content == answers[0].content
            assert alice not in answer.text
            assert alice not in str(answer.headers)
            limited(answer)
        assert files(hub, "inbox") == {}
        assert receipt_rows(hub) == []


async def test_every_v1_route_needs_a_token_but_health_does_not(hub: HubDir) -> None:
    with_tokens(hub)
    async with in_process(hub, daemon=False) as live:
        for method, path in [
            ("POST", "/v1/envelopes"),
            ("GET", "/v1/envelopes/x1"),
            ("HEAD", "/v1/envelopes/x1"),
            ("GET", "/v1/envelopes/x1/replies"),
            ("GET", "/v1/replies"),
            ("POST", "/v1/replies/x1.result/ack"),
        ]:
            answer = await live.client.request(method, path)
            assert answer.status_code == 401, (method, path, answer.text)
            assert answer.headers["www-authenticate"] == 'Bearer realm="slopd"'
        health = await live.client.get("/v1/health")
        assert health.status_code == 200
        assert health.json() == {"status": "ok"}


async def test_a_revoked_token_is_refused_from_then_on(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    path = hub.config.parent / "tokens"
    async with in_process(hub, daemon=False) as live:
        assert (
            await live.post(tokens["bob"], markdown("20261201t120000z-bob1", sender="bob"))
        ).status_code == 202
        text, removed = token_file.revoke(path.read_text(encoding="utf-8"), "bob")
        assert removed == 1
        path.write_text(text, encoding="utf-8")
        refused = await live.post(tokens["bob"], markdown("20261201t120000z-bob2", sender="bob"))
        problem(refused, 401, "unauthorized")
        assert (await live.post(tokens["alice"], markdown("20261201t120000z-alice"))).status_code == 202
        assert sorted(files(hub, "inbox")) == ["20261201t120000z-alice.md", "20261201t120000z-bob1.md"]


async def test_403_when_the_envelopes_from_is_not_the_tokens_seat(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    async with in_process(hub, daemon=False) as live:
        as_bob = await live.post(tokens["alice"], markdown("20261201t120000z-spoof", sender="bob"))
        problem(as_bob, 403, "wrong-seat")
        assert tokens["alice"] not in as_bob.text
        limited(as_bob)
        as_alice = await live.post(
            tokens["bob"], json_form("20261201t120000z-spoof2", sender="alice"), media="application/json"
        )
        problem(as_alice, 403, "wrong-seat")
        as_watcher = await live.post(tokens["alice"], markdown("20261201t120000z-spoof3", sender="watcher"))
        problem(as_watcher, 403, "wrong-seat")
        assert files(hub, "inbox") == {}
        assert receipt_rows(hub) == []


# -- size, media type, validity ---------------------------------------------------------------


async def _chunks(data: bytes, size: int = 500) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


async def test_413_over_http_max_body_and_nothing_written(hub: HubDir) -> None:
    tokens = with_tokens(hub, extra="max_body = 2048")
    async with in_process(hub, daemon=False) as live:
        at_limit = sized("20261201t120000z-at-limit", 2048)
        assert (await live.post(tokens["alice"], at_limit)).status_code == 202
        over = sized("20261201t120000z-overlimit", 2049)
        refused = await live.post(tokens["alice"], over)
        problem(refused, 413, "too-large")
        limited(refused)
        # Without a Content-Length (chunked), the limit holds while reading.
        streamed = await live.client.post(
            "/v1/envelopes",
            content=_chunks(sized("20261201t120000z-streaming", 50_000)),
            headers={"Content-Type": "text/markdown", **bearer(tokens["alice"])},
        )
        assert "content-length" not in streamed.request.headers
        problem(streamed, 413, "too-large")
        assert files(hub, "inbox") == {"20261201t120000z-at-limit.md": at_limit}
        assert len(receipt_rows(hub)) == 1


async def test_413_over_max_envelope_bytes_when_no_max_body_is_set(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    hub.write_config("max_envelope_bytes = 2048\n" + hub.config.read_text(encoding="utf-8"))
    async with in_process(hub, daemon=False) as live:
        assert (await live.post(tokens["alice"], sized("20261201t120000z-at-limit", 2048))).status_code == 202
        problem(await live.post(tokens["alice"], sized("20261201t120000z-overlimit", 2049)), 413, "too-large")
        assert sorted(files(hub, "inbox")) == ["20261201t120000z-at-limit.md"]


async def test_a_max_body_above_max_envelope_bytes_never_lets_an_oversized_envelope_in(hub: HubDir) -> None:
    tokens = with_tokens(hub, extra="max_body = 100000")
    hub.write_config("max_envelope_bytes = 2048\n" + hub.config.read_text(encoding="utf-8"))
    async with in_process(hub, daemon=False) as live:
        refused = await live.post(tokens["alice"], sized("20261201t120000z-oversized", 4096))
        assert files(hub, "inbox") == {}
        problem(refused, 413, "too-large")


REFUSED_MEDIA = [
    "text/plain",
    "application/octet-stream",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=xyz",
    "application/problem+json",
    "text/markdown; charset=latin-1",
    "text/markdown; charset=utf-16",
    "application/json; charset=iso-8859-1",
    "text/markdownx",
    None,
]


async def test_415_for_other_media_types_and_charsets_and_nothing_written(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    data = markdown("20261201t120000z-media")
    async with in_process(hub, daemon=False) as live:
        for media in REFUSED_MEDIA:
            headers = bearer(tokens["alice"]) | ({"Content-Type": media} if media is not None else {})
            refused = await live.client.post("/v1/envelopes", content=data, headers=headers)
            problem(refused, 415, "unsupported-media-type")
            limited(refused)
        assert files(hub, "inbox") == {}
        assert receipt_rows(hub) == []


async def test_markdown_and_json_in_utf_8_are_accepted(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    accepted = [
        ("20261201t120000z-utf8-1", "text/markdown; charset=utf-8", False),
        ("20261201t120000z-utf8-2", 'text/markdown; charset="UTF-8"', False),
        ("20261201t120000z-utf8-3", "Text/Markdown", False),
        ("20261201t120000z-utf8-4", "application/json; charset=utf-8", True),
        ("20261201t120000z-utf8-5", "application/json", True),
    ]
    async with in_process(hub, daemon=False) as live:
        for ident, media, json_body in accepted:
            data = json_form(ident) if json_body else markdown(ident)
            posted = await live.post(tokens["alice"], data, media=media)
            assert posted.status_code == 202, (media, posted.text)
            assert files(hub, "inbox")[f"{ident}.{'json' if json_body else 'md'}"] == data
        assert len(files(hub, "inbox")) == len(accepted)


async def test_text_markdown_with_a_variant_parameter_is_accepted(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    async with in_process(hub, daemon=False) as live:
        posted = await live.post(
            tokens["alice"],
            markdown("20261201t120000z-gfm"),
            media="text/markdown; charset=UTF-8; variant=GFM",
        )
        assert posted.status_code == 202, posted.text


async def test_422_lists_every_reason_of_an_invalid_envelope_and_writes_nothing(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    faulty = markdown(
        "20261201t120000z-faults",
        protocol="slop.v2",
        type="gossip",
        created_at="yesterday",
        mode="sometimes",
    )
    async with in_process(hub, daemon=False) as live:
        refused = await live.post(tokens["alice"], faulty)
        body = problem(refused, 422, "invalid-envelope")
        limited(refused)
        reasons = [error["reason"] for error in body["errors"]]
        assert len(reasons) == 4, reasons
        for key in ("protocol", "type", "created_at", "mode"):
            assert sum(reason.startswith(f"{key}:") for reason in reasons) == 1, (key, reasons)
        single = problem(
            await live.post(tokens["alice"], markdown("20261201t120000z-one", type="gossip")),
            422,
            "invalid-envelope",
        )
        assert len(single["errors"]) == 1
        assert single["errors"][0]["reason"].startswith("type:")
        no_front_matter = problem(await live.post(tokens["alice"], b"just text\n"), 422, "invalid-envelope")
        assert no_front_matter["errors"]
        assert files(hub, "inbox") == {}
        assert files(hub, "outbox") == {}
        assert receipt_rows(hub) == []


# -- Idempotency-Key --------------------------------------------------------------------------


async def test_an_idempotency_key_equal_to_the_id_is_accepted_plain_or_quoted_and_another_is_400(
    hub: HubDir,
) -> None:
    tokens = with_tokens(hub)
    alice = tokens["alice"]
    async with in_process(hub, daemon=False) as live:
        plain = markdown("20261201t120000z-key1")
        assert (
            await live.post(alice, plain, **{"Idempotency-Key": "20261201t120000z-key1"})
        ).status_code == 202
        quoted = markdown("20261201t120000z-key2")
        assert (
            await live.post(alice, quoted, **{"Idempotency-Key": '"20261201t120000z-key2"'})
        ).status_code == 202
        replay = await live.post(alice, plain, **{"Idempotency-Key": '"20261201t120000z-key1"'})
        assert replay.status_code == 200
        assert replay.json()["replayed"] is True
        other = markdown("20261201t120000z-key3")
        for key in ["20261201t120000z-key1", "something-else", '"20261201t120000z-key3-x"', ""]:
            refused = await live.post(alice, other, **{"Idempotency-Key": key})
            problem(refused, 400, "bad-request")
            limited(refused)
        assert sorted(files(hub, "inbox")) == ["20261201t120000z-key1.md", "20261201t120000z-key2.md"]
        assert len(receipt_rows(hub)) == 2


# -- ids the file lane already has ------------------------------------------------------------


async def test_an_id_still_in_inbox_as_a_file_is_replayed_for_the_same_bytes_and_422_for_others(
    hub: HubDir,
) -> None:
    tokens = with_tokens(hub)
    ident = "20261201t120000z-filed"
    data = markdown(ident)
    hub.drop(f"{ident}.md", data)
    async with in_process(hub, daemon=False) as live:
        conflict = await live.post(tokens["alice"], markdown(ident, body="Other.\n"))
        problem(conflict, 422, "id-conflict")
        same = await live.post(tokens["alice"], data)
        assert same.status_code == 200, same.text
        receipt = same.json()
        assert receipt["replayed"] is True
        assert (receipt["id"], receipt["seat"], receipt["sha256"], receipt["status"]) == (
            ident,
            "alice",
            sha(data),
            "accepted",
        )
        problem(await live.post(tokens["alice"], markdown(ident, body="Other.\n")), 422, "id-conflict")
        assert files(hub, "inbox") == {f"{ident}.md": data}


async def test_an_id_the_file_lane_already_processed_is_replayed_for_the_same_bytes_and_422_for_others(
    hub: HubDir,
) -> None:
    tokens = with_tokens(hub)
    ident = "20261201t120000z-processed"
    data = markdown(ident)
    async with in_process(hub) as live:
        hub.drop(f"{ident}.md", data)
        await until_async(lambda: (row := input_row(hub, ident)) is not None and row[4] == "done")
        await until_async(lambda: hub.replies_to(ident))
        await until_async(lambda: files(hub, "inbox") == {})  # `done` is committed before the move
        other = await live.post(tokens["alice"], markdown(ident, body="Other.\n"))
        problem(other, 422, "id-conflict")
        assert files(hub, "inbox") == {}
        same = await live.post(tokens["alice"], data)
        assert same.status_code == 200, same.text
        assert same.json()["replayed"] is True
        assert same.json()["sha256"] == sha(data)
        problem(await live.post(tokens["alice"], markdown(ident, body="Other.\n")), 422, "id-conflict")
        assert files(hub, "inbox") == {}
        state = await live.client.get(f"/v1/envelopes/{ident}", headers=bearer(tokens["alice"]))
        assert state.json()["state"] == "done"
    assert archived(hub) == {f"{ident}.md": data}
    assert ledger(hub, "SELECT count(*) FROM duplicates") == [(0,)]


async def test_409_while_the_same_id_is_still_being_written(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    ident = "20261201t120000z-writing"
    data = markdown(ident)
    async with in_process(hub, daemon=False) as live:
        _claimed, made = live.service.receipts.claim(
            key=ident,
            id=ident,
            seat="alice",
            type="query",
            file=f"{ident}.md",
            sha256=sha(data),
            now="2026-12-01T12:00:00.000Z",
        )
        assert made
        busy = await live.post(tokens["alice"], data)
        problem(busy, 409, "in-flight")
        limited(busy)
        problem(await live.post(tokens["alice"], markdown(ident, body="Other.\n")), 422, "id-conflict")
        assert files(hub, "inbox") == {}


# -- 429, rate-limit headers, 503 -------------------------------------------------------------


async def test_429_with_retry_after_once_over_the_rate_limit(hub: HubDir) -> None:
    tokens = with_tokens(hub, extra="rate_limit = 3")
    alice = tokens["alice"]
    async with in_process(hub, daemon=False) as live:
        answers = [
            await live.post(alice, markdown("20261201t120000z-rl1")),
            await live.post(alice, markdown("20261201t120000z-rl1")),
            await live.client.get("/v1/envelopes/20261201t120000z-rl1", headers=bearer(alice)),
        ]
        assert [answer.status_code for answer in answers] == [202, 200, 200]
        assert [limited(answer) for answer in answers] == [(3, 2), (3, 1), (3, 0)]
        for answer in answers:
            assert "retry-after" not in answer.headers
        refused = await live.post(alice, markdown("20261201t120000z-rl2"))
        problem(refused, 429, "rate-limited")
        assert int(refused.headers["retry-after"]) >= 1
        assert limited(refused) == (3, 0)
        problem(await live.client.get("/v1/replies", headers=bearer(alice)), 429, "rate-limited")
        # The quota is the seat's: bob still has his.
        assert (await live.client.get("/v1/replies", headers=bearer(tokens["bob"]))).status_code == 200
        assert sorted(files(hub, "inbox")) == ["20261201t120000z-rl1.md"]


async def test_every_answer_carries_ratelimit_policy_and_ratelimit(hub: HubDir) -> None:
    tokens = with_tokens(hub, extra="max_body = 4096")
    alice = tokens["alice"]
    async with in_process(hub, daemon=False) as live:
        client = live.client
        answers = {
            202: await live.post(alice, markdown("20261201t120000z-h1")),
            200: await live.post(alice, markdown("20261201t120000z-h1")),
            400: await client.get("/v1/replies?after=-1", headers=bearer(alice)),
            401: await client.get("/v1/replies"),
            403: await live.post(alice, markdown("20261201t120000z-h2", sender="bob")),
            404: await client.get("/v1/envelopes/20261201t120000z-none", headers=bearer(alice)),
            405: await client.delete("/v1/envelopes", headers=bearer(alice)),
            413: await live.post(alice, sized("20261201t120000z-h3", 5000)),
            415: await live.post(alice, markdown("20261201t120000z-h4"), media="text/plain"),
            422: await live.post(alice, markdown("20261201t120000z-h5", type="gossip")),
        }
        for status, answer in answers.items():
            assert answer.status_code == status, (status, answer.text)
            limited(answer)
        for path in ["/v1/health", "/metrics", "/openapi.json", "/no/such/route", "/v1/envelopes/a/b/c"]:
            answer = await client.get(path)
            limited(answer)
        unknown = await client.get("/no/such/route", headers=bearer(alice))
        problem(unknown, 404, "not-found")
        limited(unknown)
        ack = await client.post("/v1/replies/nothing.result/ack", headers=bearer(alice))
        problem(ack, 404, "not-found")
        limited(ack)


async def test_503_with_retry_after_on_every_route_but_health_while_stopping(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    alice = bearer(tokens["alice"])
    async with in_process(hub, daemon=False) as live:
        live.service.stopping = True
        requests = [
            ("POST", "/v1/envelopes"),
            ("GET", "/v1/envelopes/20261201t120000z-stop"),
            ("HEAD", "/v1/envelopes/20261201t120000z-stop"),
            ("GET", "/v1/envelopes/20261201t120000z-stop/replies?wait=5"),
            ("GET", "/v1/replies?wait=5"),
            ("POST", "/v1/replies/x.result/ack"),
            ("GET", "/metrics"),
            ("GET", "/openapi.json"),
        ]
        for method, path in requests:
            for headers in (alice, {}):
                answer = await live.client.request(
                    method,
                    path,
                    headers={"Content-Type": "text/markdown", **headers},
                    content=markdown("20261201t120000z-stop") if method == "POST" else None,
                )
                assert answer.status_code == 503, (method, path, answer.text)
                if method != "HEAD":
                    problem(answer, 503, "stopping")
                assert int(answer.headers["retry-after"]) >= 1
                limited(answer)
        health = await live.client.get("/v1/health")
        assert health.status_code == 503
        assert health.json() == {"status": "stopping"}
        assert files(hub, "inbox") == {}
        live.service.stopping = False
        assert (await live.client.get("/v1/health")).json() == {"status": "ok"}
        assert (await live.post(tokens["alice"], markdown("20261201t120000z-stop"))).status_code == 202


async def test_nothing_posted_ever_reaches_authorized(hub: HubDir) -> None:
    """An order posted over HTTP is refused at once (422, SPEC §14): `action:` is read only from
    authorized/, which no request reaches; other keys naming a lane are only kept."""
    tokens = with_tokens(hub)
    before = files(hub, "authorized")
    ident = "20261201t120000z-"
    orders = {
        markdown(ident + "signed", type="instigate", auth="signed:order.md.sig", action="deploy"): 422,
        markdown(ident + "action", type="instigate", mode="execute", action="deploy"): 422,
        markdown(ident + "lane", type="instigate", lane="authorized", path="../authorized/x.md"): 202,
        json_form(ident + "jsonorder", type="instigate", auth="signed:o.md.sig", action="deploy"): 422,
    }
    async with in_process(hub) as live:
        for order, status in orders.items():
            media = "application/json" if order.startswith(b"{") else "text/markdown"
            answer = await live.post(tokens["alice"], order, media=media)
            assert answer.status_code == status, answer.text
            if status == 422:
                assert answer.json()["errors"] == [
                    {"reason": "action is only read from authorized/ (signed orders)"}
                ]
            assert files(hub, "authorized") == before
        await until_async(lambda: hub.replies_to("20261201t120000z-lane"))
    assert files(hub, "authorized") == before
    assert ledger(hub, "SELECT count(*) FROM inputs WHERE lane != 'inbox'") == [(0,)]
    assert ledger(hub, "SELECT count(*) FROM receipts") == [(1,)]  # refusals claim no id


# -- GET / HEAD /v1/envelopes/{id} ------------------------------------------------------------


async def test_get_and_head_an_envelope_not_yet_processed_say_received(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    ident = "20261201t120000z-state"
    async with in_process(hub, daemon=False) as live:
        receipt = (await live.post(tokens["alice"], markdown(ident))).json()
        got = await live.client.get(f"/v1/envelopes/{ident}", headers=bearer(tokens["alice"]))
        assert got.status_code == 200
        assert got.json() == {**receipt, "state": "received"}
        limited(got)
        upper = await live.client.get(f"/v1/envelopes/{ident.upper()}", headers=bearer(tokens["alice"]))
        assert upper.status_code == 200
        assert upper.json()["sha256"] == receipt["sha256"]
        head = await live.client.head(f"/v1/envelopes/{ident}", headers=bearer(tokens["alice"]))
        assert head.status_code == 200
        assert head.content == b""
        limited(head)
        missing = await live.client.head(
            "/v1/envelopes/20261201t120000z-none", headers=bearer(tokens["alice"])
        )
        assert missing.status_code == 404
        assert missing.content == b""


async def test_an_envelopes_state_goes_from_received_to_done_as_the_daemon_processes_it(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    ident = "20261201t120000z-progress"
    seen: list[str] = []
    async with in_process(hub) as live:
        receipt = (await live.post(tokens["alice"], markdown(ident))).json()

        async def done() -> bool:
            answer = await live.client.get(f"/v1/envelopes/{ident}", headers=bearer(tokens["alice"]))
            assert answer.status_code == 200
            seen.append(answer.json()["state"])
            assert {key: answer.json()[key] for key in RECEIPT_KEYS} == receipt
            return seen[-1] == "done"

        await until_async(done)
    assert seen[-1] == "done"
    assert set(seen) <= {"received", "done"}, seen


async def test_404_for_an_unknown_id_and_for_another_seats_envelope(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    alice, bob = bearer(tokens["alice"]), bearer(tokens["bob"])
    posted, dropped = "20261201t120000z-alices", "20261201t120000z-alicefile"
    async with in_process(hub) as live:
        assert (await live.post(tokens["alice"], markdown(posted))).status_code == 202
        hub.drop(f"{dropped}.md", markdown(dropped))
        await until_async(lambda: input_row(hub, dropped))
        for ident in (posted, dropped):
            assert (await live.client.get(f"/v1/envelopes/{ident}", headers=alice)).status_code == 200
            problem(await live.client.get(f"/v1/envelopes/{ident}", headers=bob), 404, "not-found")
            assert (await live.client.head(f"/v1/envelopes/{ident}", headers=bob)).status_code == 404
            problem(await live.client.get(f"/v1/envelopes/{ident}/replies", headers=bob), 404, "not-found")
        unknown = await live.client.get("/v1/envelopes/20261201t120000z-never", headers=alice)
        problem(unknown, 404, "not-found")
        limited(unknown)
        # Bob's 404 for alice's envelope is the same as for one that does not exist.
        theirs = await live.client.get(f"/v1/envelopes/{posted}", headers=bob)
        never = await live.client.get(f"/v1/envelopes/{posted[:-1]}x", headers=bob)
        assert theirs.json()["title"] == never.json()["title"]


async def test_404_for_ids_with_path_tricks_spaces_or_over_128_characters(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    alice = bearer(tokens["alice"])
    longest = "a" * 128
    async with in_process(hub, daemon=False) as live:
        assert (await live.post(tokens["alice"], markdown(longest))).status_code == 202
        assert (await live.client.get(f"/v1/envelopes/{longest}", headers=alice)).status_code == 200
        for path in [
            "/v1/envelopes/..%2F..%2Fetc",
            "/v1/envelopes/..%2F..%2Fetc%2Fpasswd",
            "/v1/envelopes/%2E%2E",
            "/v1/envelopes/.hidden",
            "/v1/envelopes/a%20b",
            "/v1/envelopes/a b",
            "/v1/envelopes/%20" + longest,
            "/v1/envelopes/" + longest + "a",
            "/v1/envelopes/" + longest + "%00",
            "/v1/envelopes/a%2Fb",
            "/v1/envelopes/-leading-dash",
            "/v1/envelopes/a%0D%0AX-Evil:%201",
        ]:
            answer = await live.client.get(path, headers=alice)
            problem(answer, 404, "not-found")
            assert "x-evil" not in answer.headers
            limited(answer)


async def test_tokens_and_bodies_never_appear_in_the_log(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    async with in_process(hub, daemon=False) as live:
        assert (await live.post(tokens["alice"], markdown("20261201t120000z-log"))).status_code == 202
        await live.post(tokens["alice"], markdown("20261201t120000z-log2", sender="bob"))
        await live.client.get("/v1/replies", headers={"Authorization": "Bearer slopd_wrongwrongwrong"})
    log = (hub.state / "slopd.log").read_text(encoding="utf-8")
    assert "http.received" in log
    for token in tokens.values():
        assert token not in log
    assert "slopd_wrongwrongwrong" not in log
    assert json.dumps(tokens) not in log
