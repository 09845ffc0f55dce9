"""Issue 17 point 3: `slop_send` and `slopd send` are one path (`submit.compose`, the strict parser, the
atomic drop into `inbox/`), so for the same input they drop the same bytes."""

from __future__ import annotations

import re

import pytest

from tests.conftest import HubDir
from tests.transport.mcp.rig import inbox, session

pytestmark = pytest.mark.anyio

SEAT = "claude-code"
ENTRY = (
    "## 2026-12-01 — Claude | Claude (Code) | code\n**Tag-in:** 09:00 UTC | **Tag-out:** 10:00 UTC\n\n"
    "### What happened\n- Wrote the MCP server — with “quotes” and ünïcödé\n\n"
    "### What's pending\n- [ ] Ship it\n"
)
CASES = {
    "a query": {"type": "query", "to": "watcher", "body": "How are things?\n"},
    "a handoff with every field": {
        "type": "handoff",
        "to": "watcher",
        "body": ENTRY,
        "in_reply_to": "20261130t090000z-earlier",
        "mode": "discuss",
        "project": "slopd",
    },
    "an instigate to the human, no final newline": {
        "type": "instigate",
        "to": "human",
        "body": "Ship it: key: value\n---\nnot front matter",
        "mode": "execute",
    },
    "a note with an empty body": {"type": "note", "to": "watcher:vm", "body": ""},
}
OPTIONS = {"in_reply_to": "--in-reply-to", "mode": "--mode", "project": "--project"}
CREATED_AT = re.compile(rb"^created_at: .*$", re.MULTILINE)


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


def generic(data: bytes, ident: str, type: str) -> bytes:
    """`data` with its generated values replaced: the id (once, in `id:`) and `created_at` (once)."""
    assert re.fullmatch(rf"\d{{8}}t\d{{6}}z-{type}-[0-9a-f]{{16}}", ident), ident
    assert data.count(ident.encode()) == 1, data
    assert data.count(f"\nid: {ident}\n".encode()) == 1, data
    stamped, count = CREATED_AT.subn(b"created_at: CREATED_AT", data.replace(ident.encode(), b"ID"))
    assert count == 1, data
    assert re.search(rb'^created_at: "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"$', data, re.MULTILINE), data
    return stamped


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
async def test_slop_send_drops_the_same_bytes_as_slopd_send(hub: HubDir, case: str) -> None:
    """The same input through the CLI and through the tool gives byte-identical files in `inbox/`,
    once the two generated values are replaced: the `id` (its time, and a random suffix that keeps
    two sends apart) and `created_at` (the clock at the send) differ by construction."""
    fields = CASES[case]
    argv = ["send", "--hub", str(hub.root), "--type", fields["type"], "--from", SEAT, "--to", fields["to"]]
    for key, option in OPTIONS.items():
        if key in fields:
            argv += [option, fields[key]]
    sent = hub.slopd(*argv, "-", stdin=fields["body"])
    assert sent.returncode == 0, sent.stderr
    by_cli = sent.stdout.strip()
    cli_file = inbox(hub)[f"{by_cli}.md"]

    async with session(hub, SEAT) as me:
        receipt = await me.call("slop_send", **fields)
    by_tool = receipt["id"]
    assert by_tool != by_cli
    assert set(inbox(hub)) == {f"{by_cli}.md", f"{by_tool}.md"}  # the same name, ID.md
    tool_file = inbox(hub)[f"{by_tool}.md"]

    assert generic(tool_file, by_tool, fields["type"]) == generic(cli_file, by_cli, fields["type"])
    assert fields["body"].encode() in tool_file
