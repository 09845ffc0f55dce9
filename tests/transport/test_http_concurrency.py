"""Many POSTs at once, and hostile ones (SPEC §12, issue 15 points 3 and 7).

Twenty identical POSTs at once are one envelope: one 202, one file, one ledger row, one set of
replies. Hostile requests (oversized, non-UTF-8, NUL, header injection, path tricks in ids,
non-object JSON, deep nesting, YAML tricks) are each a 4xx — never a 500 — and write nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import pytest

from tests.conftest import HubDir, front_matter
from tests.polling import until_async
from tests.transport.http_rig import bearer, files, in_process, ledger, markdown, with_tokens

pytestmark = pytest.mark.anyio


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


def on_hub(hub: HubDir, name: str) -> list[str]:
    """Where a file of this name is, in inbox/ or the archive."""
    return [
        path for path in (*files(hub, "inbox"), *files(hub, "archive")) if path.rsplit("/", 1)[-1] == name
    ]


async def test_twenty_identical_posts_at_once_are_one_envelope_one_row_and_one_set_of_replies(
    hub: HubDir,
) -> None:
    tokens = with_tokens(hub)
    ident = "20261201t120000z-twenty"
    data = markdown(ident)
    async with in_process(hub) as live:
        answers = await asyncio.gather(*(live.post(tokens["alice"], data) for _ in range(20)))
        statuses = sorted(answer.status_code for answer in answers)
        assert statuses.count(202) == 1, statuses
        assert set(statuses) <= {200, 202, 409}, statuses
        (accepted,) = [answer.json() for answer in answers if answer.status_code == 202]
        assert accepted["sha256"] == hashlib.sha256(data).hexdigest()
        for answer in answers:
            if answer.status_code == 200:
                assert answer.json() == {**accepted, "replayed": True}
        assert on_hub(hub, f"{ident}.md") != []
        await until_async(
            lambda: ledger(hub, "SELECT status FROM inputs WHERE key = ?", ident) == [("done",)]
        )
        await until_async(lambda: hub.replies_to(ident))
        again = await live.post(tokens["alice"], data)
        assert again.status_code == 200
        assert again.json() == {**accepted, "replayed": True}
    assert len(on_hub(hub, f"{ident}.md")) == 1
    assert files(hub, "inbox") == {}
    assert len(files(hub, "archive")) == 1
    assert ledger(hub, "SELECT count(*) FROM inputs") == [(1,)]
    assert ledger(hub, "SELECT key, state FROM receipts") == [(ident, "written")]
    assert ledger(hub, "SELECT count(*) FROM duplicates") == [(0,)]
    assert [reply["type"] for reply in hub.replies_to(ident)] == ["result"]
    assert len(hub.outbox()) == 1


async def test_twenty_posts_of_one_id_with_different_bytes_at_once_keep_exactly_one(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    ident = "20261201t120000z-rivals"
    bodies = [markdown(ident, body=f"Rival number {number}.\n") for number in range(20)]
    async with in_process(hub, daemon=False) as live:
        answers = await asyncio.gather(*(live.post(tokens["alice"], body) for body in bodies))
        statuses = sorted(answer.status_code for answer in answers)
        assert statuses == [202] + [422] * 19, statuses
        (winner,) = [answer.json() for answer in answers if answer.status_code == 202]
        for answer in answers:
            if answer.status_code == 422:
                assert answer.json()["type"].endswith("/id-conflict")
        written = files(hub, "inbox")
        assert list(written) == [f"{ident}.md"]
        assert hashlib.sha256(written[f"{ident}.md"]).hexdigest() == winner["sha256"]
        assert ledger(hub, "SELECT sha256, state FROM receipts") == [(winner["sha256"], "written")]


async def test_twenty_different_envelopes_at_once_are_all_accepted_and_answered(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    idents = [f"20261201t120000z-many{number:02d}" for number in range(20)]
    async with in_process(hub) as live:
        answers = await asyncio.gather(*(live.post(tokens["alice"], markdown(ident)) for ident in idents))
        assert [answer.status_code for answer in answers] == [202] * 20
        assert len({answer.json()["seq"] for answer in answers}) == 20
        assert [answer.json()["id"] for answer in answers] == idents
        await until_async(lambda: ledger(hub, "SELECT count(*) FROM inputs WHERE status = 'done'") == [(20,)])
        await until_async(lambda: len(hub.outbox()) == 20)
    assert sorted(front_matter(text)["in_reply_to"] for text in hub.outbox().values()) == idents


# -- the hostile pass -------------------------------------------------------------------------

HEAD = "---\nprotocol: slop.v1\nid: 20261201t120000z-hostile\ntype: query\nfrom: alice\nto: watcher\n"


def hostile_posts() -> list[tuple[str, bytes, dict[str, str]]]:
    """(what, body, extra headers) of POSTs that must each be refused with a 4xx."""
    valid = markdown("20261201t120000z-hostile")
    md = {"Content-Type": "text/markdown"}
    js = {"Content-Type": "application/json"}
    nested_json = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    deep_yaml_flow = (HEAD + "x: " + "[" * 200 + "]" * 200 + "\n---\nbody\n").encode()
    deep_yaml_block = (
        HEAD
        + "x:\n"
        + "".join("  " * level + f"k{level}:\n" for level in range(1, 60))
        + "  " * 60
        + "v: 1\n---\n"
    ).encode()
    cases: list[tuple[str, bytes, dict[str, str]]] = [
        ("oversized (2 MiB)", markdown("20261201t120000z-hostile", body="x" * (2 << 20) + "\n"), md),
        ("non-UTF-8 byte in the body", valid.replace(b"Body text.", b"Body \xff\xfe text."), md),
        ("Latin-1 front matter", (HEAD + "note: café\n---\nb\n").encode("latin-1"), md),
        ("UTF-16 with its BOM", (HEAD + "---\nb\n").encode("utf-16"), md),
        ("a NUL byte in the body", valid.replace(b"Body text.", b"Body\x00text."), md),
        ("a NUL byte in the front matter", valid.replace(b"to: watcher", b"to: watch\x00er"), md),
        ("a NUL escaped in JSON", json.dumps({"protocol": "slop.v1", "id": "a\u0000b"}).encode(), js),
        (
            "CRLF in Idempotency-Key",
            valid,
            {**md, "Idempotency-Key": "20261201t120000z-hostile\r\nX-Evil: 1"},
        ),
        ("LF in Idempotency-Key", valid, {**md, "Idempotency-Key": "x\nX-Evil: 1"}),
        ("a NUL in Idempotency-Key", valid, {**md, "Idempotency-Key": "20261201t120000z-hostile\x00"}),
        ("a 10 kB Idempotency-Key", valid, {**md, "Idempotency-Key": "k" * 10_000}),
        ("CRLF in Content-Type", valid, {"Content-Type": "text/markdown\r\nX-Evil: 1"}),
        (
            "Content-Type with an injected charset",
            valid,
            {"Content-Type": "text/markdown; charset=utf-8\r\n"},
        ),
        ("a JSON array", b'[{"protocol": "slop.v1"}]', js),
        ("a JSON string", b'"---\\nprotocol: slop.v1\\n---\\n"', js),
        ("JSON null", b"null", js),
        ("a JSON number", b"12345", js),
        ("JSON nested 100 000 deep", nested_json, js),
        ("JSON nested 40 deep", json.dumps({"protocol": "slop.v1", "x": _nest(40)}).encode(), js),
        ("YAML flow nested 200 deep", deep_yaml_flow, md),
        ("YAML block nested 60 deep", deep_yaml_block, md),
        ("a YAML python tag", (HEAD + 'x: !!python/object/apply:os.system ["true"]\n---\n').encode(), md),
        ("YAML anchors and aliases", (HEAD + "x: &a [1, 2]\ny: *a\n---\n").encode(), md),
        ("a duplicate key", (HEAD + "to: human\n---\n").encode(), md),
        ("front matter that is a list", b"---\n- a\n- b\n---\nbody\n", md),
        ("no closing fence", HEAD.encode() + b"body\n", md),
        ("an empty body", b"", md),
        ("an empty JSON object", b"{}", js),
        ("a sidecar path trick", (HEAD + "auth: signed:../authorized/x.md.sig\n---\n").encode(), md),
        (
            "an asset path trick",
            (HEAD + "assets: ['../../etc/passwd sha256:" + "0" * 64 + "']\n---\n").encode(),
            md,
        ),
        ("from with a path trick", markdown("20261201t120000z-hostile", sender="../alice"), md),
    ]
    for trick in [
        "../x",
        "a/b",
        ".hidden",
        "..",
        "x/../../etc/passwd",
        "a\\b",
        "-dash",
        "a b",
        "é",
        "a" * 129,
    ]:
        cases.append((f"id {trick!r}", markdown("PLACEHOLDER").replace(b"PLACEHOLDER", trick.encode()), md))
        quoted = markdown("PLACEHOLDER").replace(b"PLACEHOLDER", json.dumps(trick).encode())
        cases.append((f"quoted id {trick!r}", quoted, md))
        fields = {"protocol": "slop.v1", "id": trick, "type": "query", "from": "alice", "to": "watcher"}
        cases.append((f"JSON id {trick!r}", json.dumps(fields).encode(), js))
    return cases


def _nest(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"x": value}
    return value


async def test_hostile_posts_are_each_a_4xx_problem_and_write_nothing(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    before = files(hub, "authorized")
    failures: list[str] = []
    async with in_process(hub, daemon=False) as live:
        for what, body, headers in hostile_posts():
            answer = await live.client.post(
                "/v1/envelopes", content=body, headers={**bearer(tokens["alice"]), **headers}
            )
            if not 400 <= answer.status_code < 500:
                failures.append(f"{what}: {answer.status_code} {answer.text[:200]}")
            elif not answer.headers.get("content-type", "").startswith("application/problem+json"):
                failures.append(f"{what}: not problem+json: {answer.headers}")
            if "x-evil" in answer.headers:
                failures.append(f"{what}: an injected header came back")
        # Hostile reads: path tricks and injection in ids and query strings.
        for path in [
            "/v1/envelopes/..%2F..%2Fetc%2Fpasswd",
            "/v1/envelopes/..%2F..%2Fetc%2Fpasswd/replies",
            "/v1/envelopes/a%00b",
            "/v1/envelopes/a%0D%0AX-Evil:%201",
            "/v1/envelopes/%2E%2E%2F%2E%2E",
            "/v1/replies?after=1%0D%0AX-Evil:%201",
            "/v1/replies?limit=%00",
            "/v1/replies?after=-1e309",
            "/v1/envelopes/x/replies?wait=%FF",
        ]:
            answer = await live.client.get(path, headers=bearer(tokens["alice"]))
            if not 400 <= answer.status_code < 500:
                failures.append(f"GET {path}: {answer.status_code} {answer.text[:200]}")
            if "x-evil" in answer.headers:
                failures.append(f"GET {path}: an injected header came back")
        for path in ["/v1/replies/..%2F..%2Fetc/ack", "/v1/replies/%00/ack", "/v1/replies/a%0D%0Ab/ack"]:
            answer = await live.client.post(path, headers=bearer(tokens["alice"]))
            if answer.status_code != 404:
                failures.append(f"POST {path}: {answer.status_code} {answer.text[:200]}")
        assert failures == []
        assert files(hub, "inbox") == {}
        assert files(hub, "outbox") == {}
        assert files(hub, "authorized") == before
        assert ledger(hub, "SELECT count(*) FROM receipts") == [(0,)]
        # The server is still well: a valid envelope after all that is accepted.
        assert (await live.post(tokens["alice"], markdown("20261201t120000z-after"))).status_code == 202
        assert list(files(hub, "inbox")) == ["20261201t120000z-after.md"]
