"""The MCP server's tools and resources (SPEC §13, issue 17 points 2 and 4), in-process through the
SDK's client: every tool and every refusal, black-box — what each call returns, and what it wrote
(or did not write) in the hub, read from the files; replies come from the real daemon
(`slopd run --once`, or a running `slopd run`).

Every successful result is checked for an int `pending` (`Session.call`), and `authorized/` is
checked empty after every call and after every test: no tool writes it, ever.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from slopd.app import load_config
from slopd.baton.score import report
from slopd.core.validation import parse
from slopd.shell.config import Auth, Config
from slopd.shell.lanes import Hub
from slopd.shell.version import version
from slopd.transport.mcp.seat import Seat
from tests.conftest import HubDir, envelope_text, front_matter, toml_argv
from tests.e2e.baton.test_baton_pack import Vessel, letter, state
from tests.e2e.test_standups import entry
from tests.transport.mcp.rig import TOOLS, Session, authorized, inbox, lane, session

pytestmark = pytest.mark.anyio

PROJECT = "slopd"


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def fixture_nothing_ever_in_authorized(hub: HubDir) -> Iterator[None]:
    yield
    assert authorized(hub) == []


@pytest.fixture(name="me")
async def fixture_me(hub: HubDir) -> AsyncIterator[Session]:
    """The seat `claude-code`'s server, in-process."""
    async with session(hub) as opened:
        yield opened


async def send(me: Session, body: str = "How are things?\n", **fields: Any) -> dict[str, Any]:
    """A `query` to the watcher unless `fields` say otherwise; the receipt."""
    fields = {"type": "query", "to": "watcher", **fields}
    return await me.call("slop_send", body=body, **fields)


# -- the listing ----------------------------------------------------------------------------------


async def test_every_tool_of_spec_13_is_listed_with_typed_arguments_and_a_typed_result(me: Session) -> None:
    listed = (await me.client.list_tools()).tools
    assert {tool.name for tool in listed} == TOOLS
    for tool in listed:
        assert tool.description, tool.name
        assert tool.input_schema["type"] == "object", tool.name
        output = tool.output_schema
        assert output is not None, f"{tool.name} has no structured output"
        assert output["properties"]["pending"]["type"] == "integer", tool.name
        assert "pending" in output["required"], tool.name
    send_tool = next(tool for tool in listed if tool.name == "slop_send")
    assert set(send_tool.input_schema["required"]) == {"type", "to", "body"}
    assert "note" in send_tool.input_schema["properties"]["type"]["enum"]


async def test_no_tool_takes_a_from_a_seat_a_sender_or_a_token(me: Session) -> None:
    """The seat comes from --seat or the token, never from a tool argument (SPEC §13)."""
    forbidden = {"from", "from_", "sender", "seat", "as", "token", "auth", "authorization", "principal"}
    for tool in (await me.client.list_tools()).tools:
        properties = set(tool.input_schema.get("properties", {}))
        assert not properties & forbidden, (tool.name, properties & forbidden)


async def test_every_input_schema_refuses_unknown_arguments(me: Session) -> None:
    """SPEC §14: `additionalProperties: false` in every tool's input schema."""
    for tool in (await me.client.list_tools()).tools:
        assert tool.input_schema.get("additionalProperties") is False, tool.name


@pytest.mark.parametrize(
    ("extra", "hint"),
    [
        ({"action": "hello"}, "action is only read from authorized/ (signed orders)"),
        ({"from": "mallory"}, "the seat is fixed by --seat or the token"),
        ({"wait_s": 5}, "only slop_status and slop_replies wait; slop_wait takes timeout_s"),
        ({"from": "mallory", "seat": "mallory", "sender": "x", "from_": "x"}, "no tool takes `from`"),
    ],
    ids=["action", "from", "wait_s", "four"],
)
async def test_an_unknown_argument_is_a_tool_error_naming_it_and_nothing_is_sent(
    me: Session, hub: HubDir, extra: dict[str, Any], hint: str
) -> None:
    """No MCP tool ignores an argument it does not know (SPEC §14): the call is refused, naming
    every unknown argument and what the tool takes; nothing reaches the inbox."""
    said = await me.refused("slop_send", type="instigate", to="watcher", body="run\n", **extra)
    for name in extra:
        assert f"`{name}`" in said
    assert "It takes: type, to, body, in_reply_to, mode, project, id." in said
    assert hint in said
    assert inbox(hub) == {}


async def test_an_unknown_argument_is_refused_by_every_tool(me: Session, hub: HubDir) -> None:
    """The rule holds for each tool, not only slop_send: `bogus` is named, nothing runs."""
    for tool in (await me.client.list_tools()).tools:
        said = await me.refused(tool.name, bogus=1)
        assert f"{tool.name} takes no argument `bogus`" in said, said
    assert inbox(hub) == {}


ANNOTATIONS = {  # tool: (read-only, idempotent, destructive)
    "slop_hub_info": (True, True, False),
    "slop_send": (False, False, False),
    "slop_status": (True, True, False),
    "slop_replies": (True, True, False),
    "slop_read": (True, True, False),
    "slop_ack": (False, True, False),
    "slop_notes": (True, True, False),
    "slop_request_approval": (False, False, False),
    "handoff_lint": (True, True, False),
    "standup_read": (True, True, False),
    "standup_append": (False, False, False),
    "baton_boot": (False, False, False),
    "baton_lease": (False, False, False),
    "baton_pack": (False, False, True),
    "baton_score": (True, True, False),
    "slop_wait": (False, False, False),  # hands each new reply over once (the seat's wake cursor)
}


async def test_annotations_are_true_to_what_each_tool_does(me: Session) -> None:
    """baton_boot records the boot (not read-only), baton_pack replaces CURRENT/ (destructive), a
    send without an id adds a new envelope each time (not idempotent); none reaches beyond the hub."""
    listed = {tool.name: tool.annotations for tool in (await me.client.list_tools()).tools}
    assert set(listed) == set(ANNOTATIONS)
    for name, (read_only, idempotent, destructive) in ANNOTATIONS.items():
        notes = listed[name]
        assert notes is not None, name
        said = (notes.read_only_hint, notes.idempotent_hint, notes.destructive_hint, notes.open_world_hint)
        assert said == (read_only, idempotent, destructive, False), name


async def test_server_info_carries_slopds_version(me: Session) -> None:
    """`serverInfo.version` is the version `slopd --version` prints, never empty."""
    info = me.client.server_info
    assert info is not None
    assert (info.name, info.version) == ("slopd", version())
    assert version()


async def test_the_descriptions_state_the_rules(me: Session) -> None:
    described = {
        tool.name: " ".join((tool.description or "").lower().split())
        for tool in (await me.client.list_tools()).tools
    }
    assert "re-use the id to retry" in described["slop_send"]
    assert "irreversible actions need a human signature" in described["slop_send"]
    assert "reading never consumes" in described["slop_status"]
    assert "reading never consumes" in described["slop_replies"]
    assert "never authorized/" in described["slop_request_approval"]
    assert "human" in described["slop_request_approval"]
    assert me.client.instructions is not None
    assert "reading never consumes" in me.client.instructions.lower()


# -- slop_hub_info --------------------------------------------------------------------------------


async def test_hub_info_names_the_seat_the_hub_the_lanes_the_limits_and_hub_md_in_short(hub: HubDir) -> None:
    guide = "".join(f"line {number} of the rules\n" for number in range(1, 201))
    (hub.root / "HUB.md").write_text(guide, encoding="utf-8")
    async with session(hub, config=Config(names=("watcher",), max_envelope_bytes=4096)) as me:
        info = await me.call("slop_hub_info")
    assert info["seat"] == "claude-code"
    assert Path(info["hub"]) == hub.root.absolute()
    assert info["daemon"] == {"running": False, "pid": None, "state": str(hub.state)}
    assert info["daemon_note"] == "daemon: not found — replies will not be tracked"
    assert {"inbox", "authorized", "outbox", "archive", "assets", "notes"} <= set(info["lanes"])
    assert info["limits"] == {"max_envelope_bytes": 4096, "max_wait_s": 50.0}
    assert info["hub_md"].startswith("line 1 of the rules\n")
    assert guide.startswith(info["hub_md"])
    assert "line 200 of the rules" not in info["hub_md"]  # in short
    assert info["pending"] == 0


async def test_hub_info_sees_a_running_daemon(hub: HubDir, me: Session) -> None:
    with hub.running() as daemon:
        info = await me.call("slop_hub_info")
        assert info["daemon"] == {"running": True, "pid": daemon.pid, "state": str(hub.state)}
        assert info["daemon_note"] is None
    assert (await me.call("slop_hub_info"))["daemon"]["running"] is False


async def test_hub_info_reply_classes_are_the_classes_replies_carry(hub: HubDir, me: Session) -> None:
    await send(me)
    hub.run_once()
    (reply,) = (await me.call("slop_replies"))["replies"]
    info = await me.call("slop_hub_info")
    assert reply["class"] in info["reply_classes"]
    assert set(info["reply_classes"]) == {"silent", "ping", "hybrid", "deliverable"}


# -- slop_send ------------------------------------------------------------------------------------


async def test_send_drops_a_valid_envelope_from_this_seat_and_returns_a_receipt(
    hub: HubDir, me: Session
) -> None:
    receipt = await send(me, "How are things?\n", in_reply_to="20261130t090000z-earlier", mode="discuss")
    assert receipt["seat"] == "claude-code"
    assert receipt["status"] == "accepted"
    assert receipt["replayed"] is False
    assert isinstance(receipt["seq"], int)
    (name, data) = next(iter(inbox(hub).items()))
    assert list(inbox(hub)) == [f"{receipt['id']}.md"]
    assert receipt["sha256"] == hashlib.sha256(data).hexdigest()
    headers = front_matter(data.decode())
    assert headers["from"] == "claude-code"
    assert (headers["id"], headers["type"], headers["to"]) == (receipt["id"], "query", "watcher")
    assert (headers["in_reply_to"], headers["mode"], headers["auth"]) == (
        "20261130t090000z-earlier",
        "discuss",
        "none",
    )
    assert parse(data, name=name).body == "How are things?\n"  # the daemon's own strict parser
    validated = hub.slopd("validate", str(hub.root / "inbox" / name))
    assert validated.returncode == 0, validated.stdout
    assert "from claude-code to watcher" in validated.stdout


async def test_resending_an_id_is_a_no_op_that_returns_the_first_receipt(hub: HubDir, me: Session) -> None:
    """SPEC §14: the same arguments under the same id are a replay (the first receipt, nothing
    written); other arguments are a conflict, refused with the reason, also nothing written."""
    ident = "20261201t120000z-retry-me"
    first = await send(me, "The first body.\n", id=ident)
    before = inbox(hub)
    again = await send(me, "The first body.\n", id=ident)
    assert again == {**first, "replayed": True}
    for other in (
        {"body": "Another body, same id.\n", "id": ident},
        {"body": "The first body.\n", "id": ident.upper()},
    ):
        said = await me.refused("slop_send", type="query", to="watcher", **other)
        assert f"conflict: id {other['id']} was already used with other content" in said
    assert inbox(hub) == before
    assert list(before) == [f"{ident}.md"]
    hub.run_once()  # consumed and archived: a late retry still writes nothing
    assert await send(me, "The first body.\n", id=ident) == {**first, "replayed": True, "pending": 1}
    assert inbox(hub) == {}
    assert hub.archived() == [f"{ident}.md"]


async def test_another_seat_cannot_take_or_replay_an_id_this_seat_sent(hub: HubDir, me: Session) -> None:
    ident = "20261201t120000z-mine"
    await send(me, id=ident)
    before = inbox(hub)
    async with session(hub, "bob") as bob:
        said = await bob.refused("slop_send", type="query", to="watcher", body="Hi.\n", id=ident)
    assert ident in said
    assert inbox(hub) == before


async def test_an_invalid_envelope_is_a_tool_error_naming_every_reason_and_writes_nothing(
    hub: HubDir, me: Session
) -> None:
    cases: list[tuple[dict[str, str], list[str]]] = [
        ({"to": "bad to!"}, ["to:", "bad to!"]),
        ({"type": "result", "to": "not a seat!"}, ["to:", "in_reply_to:"]),  # every reason listed
        ({"in_reply_to": "not an id!"}, ["in_reply_to"]),
        ({"id": "../../authorized/evil"}, ["id"]),
    ]
    for fields, reasons in cases:
        said = await me.refused(
            "slop_send", **{"type": "query", "to": "watcher", "body": "Hello.\n", **fields}
        )
        for reason in reasons:
            assert reason in said, (fields, said)
    assert inbox(hub) == {}
    assert lane(hub, "outbox") == {}


async def test_a_type_that_is_not_one_and_an_oversized_body_are_refused(hub: HubDir) -> None:
    async with session(hub, config=Config(names=("watcher",), max_envelope_bytes=2048)) as me:
        await me.refused("slop_send", type="order", to="watcher", body="Hello.\n")
        said = await me.refused("slop_send", type="query", to="watcher", body="x" * 4096)
        assert "2048" in said
    assert inbox(hub) == {}


# -- slop_status ----------------------------------------------------------------------------------


async def test_status_goes_from_received_to_done_with_its_terminal_reply(hub: HubDir, me: Session) -> None:
    ident = (await send(me))["id"]
    status = await me.call("slop_status", id=ident)
    assert (status["id"], status["state"], status["replies"], status["terminal"]) == (
        ident,
        "received",
        [],
        False,
    )
    hub.run_once()
    status = await me.call("slop_status", id=ident)
    assert (status["state"], status["terminal"]) == ("done", True)
    (reply,) = status["replies"]
    assert (reply["type"], reply["in_reply_to"], reply["acked"]) == ("result", ident, False)
    assert reply["path"] == f"outbox/{ident}.result.md"
    assert (hub.root / reply["path"]).is_file()
    assert "How are things?" in reply["summary"]
    assert status["pending"] == 1
    assert await me.call("slop_status", id=ident.upper()) == {**status, "id": ident.upper()}


async def test_status_waits_until_its_deadline_when_nothing_answers(me: Session) -> None:
    ident = (await send(me))["id"]
    status = await me.call("slop_status", id=ident, wait_s=1)
    assert (status["state"], status["terminal"], status["replies"]) == ("received", False, [])


async def test_status_returns_as_soon_as_a_running_daemon_answers(hub: HubDir, me: Session) -> None:
    with hub.running():
        ident = (await send(me))["id"]
        status = await me.call("slop_status", id=ident, wait_s=40)
    assert status["terminal"] is True
    assert [reply["type"] for reply in status["replies"]] == ["result"]


async def test_status_refuses_an_unknown_id_another_seats_id_and_a_wait_over_50_s(
    hub: HubDir, me: Session
) -> None:
    assert "not known" in await me.refused("slop_status", id="20261201t000000z-nobody")
    await me.refused("slop_status", id="../../etc/passwd")
    ident = (await send(me))["id"]
    await me.refused("slop_status", id=ident, wait_s=51)
    await me.refused("slop_status", id=ident, wait_s=-1)
    async with session(hub, "bob") as bob:
        assert "not known" in await bob.refused("slop_status", id=ident)


# -- slop_replies ---------------------------------------------------------------------------------


async def test_replies_page_from_a_cursor_and_reading_never_consumes(hub: HubDir, me: Session) -> None:
    sent = [(await send(me, f"Question {number}?\n"))["id"] for number in range(3)]
    async with session(hub, "bob") as bob:
        theirs = (await send(bob, "Bob's own question?\n"))["id"]
        hub.run_once()
        everything = await me.call("slop_replies")
        assert [reply["in_reply_to"] for reply in everything["replies"]] == sent  # not bob's
        assert everything["has_more"] is False
        assert everything["pending"] == 3
        assert await me.call("slop_replies") == everything  # reading twice: the same, nothing consumed

        first = await me.call("slop_replies", limit=2)
        assert [reply["in_reply_to"] for reply in first["replies"]] == sent[:2]
        assert first["has_more"] is True
        assert first["next_cursor"] == first["replies"][-1]["seq"]
        rest = await me.call("slop_replies", after=first["next_cursor"], limit=2)
        assert [reply["in_reply_to"] for reply in rest["replies"]] == sent[2:]
        assert rest["has_more"] is False
        end = await me.call("slop_replies", after=rest["next_cursor"])
        assert (end["replies"], end["next_cursor"], end["has_more"]) == ([], rest["next_cursor"], False)

        said = await me.refused("slop_replies", after=everything["tail_cursor"] + 100)
        assert "past" in said
        await me.refused("slop_replies", limit=0)

        bobs = await bob.call("slop_replies")
        assert [reply["in_reply_to"] for reply in bobs["replies"]] == [theirs]
        assert bobs["pending"] == 1
    assert (await me.call("slop_hub_info"))["pending"] == 3


async def test_replies_wait_for_a_reply_and_return_as_it_is_written(hub: HubDir, me: Session) -> None:
    await send(me)
    found: dict[str, Any] = {}

    async def wait() -> None:
        found["feed"] = await me.call("slop_replies", wait_s=40)

    async with anyio.create_task_group() as group:
        group.start_soon(wait)
        await anyio.to_thread.run_sync(hub.run_once)  # the daemon starts after the wait has begun
    assert [reply["type"] for reply in found["feed"]["replies"]] == ["result"]


async def test_replies_wait_until_their_deadline_when_nothing_comes(me: Session) -> None:
    feed = await me.call("slop_replies", wait_s=1)
    assert (feed["replies"], feed["has_more"]) == ([], False)


# -- slop_read ------------------------------------------------------------------------------------


async def test_read_pages_through_a_reply_and_an_envelope_this_seat_sent(hub: HubDir, me: Session) -> None:
    body = "".join(f"Line {number} of a long question.\n" for number in range(40))
    ident = (await send(me, body))["id"]
    before = await me.call("slop_read", id=ident)
    assert before["path"] == f"inbox/{ident}.md"
    assert before["text"] == (hub.root / "inbox" / f"{ident}.md").read_text()
    hub.run_once()
    (reply,) = (await me.call("slop_replies"))["replies"]

    for wanted, on_disk in ((reply["id"], hub.root / reply["path"]), (ident, None)):
        pages, offset = [], 0
        while True:
            page = await me.call("slop_read", id=wanted, offset=offset, max_chars=97)
            assert page["offset"] == offset
            assert len(page["text"]) <= 97
            pages.append(page["text"])
            if page["next_offset"] is None:
                break
            assert page["next_offset"] == offset + len(page["text"])
            offset = page["next_offset"]
        whole = "".join(pages)
        assert len(pages) > 1
        assert page["total_chars"] == len(whole)
        path = on_disk or hub.root / page["path"]
        assert whole == path.read_text(encoding="utf-8")
    assert page["path"].startswith("archive/")  # the sent envelope, now archived
    assert body in whole


async def test_read_refuses_another_seats_reply_or_envelope_and_unknown_ids(hub: HubDir, me: Session) -> None:
    ident = (await send(me))["id"]
    hub.run_once()
    (reply,) = (await me.call("slop_replies"))["replies"]
    async with session(hub, "bob") as bob:
        await bob.refused("slop_read", id=reply["id"])
        await bob.refused("slop_read", id=ident)
        await bob.refused("slop_ack", id=reply["id"])
    await me.refused("slop_read", id="20261201t000000z-nobody")
    await me.refused("slop_read", id="../../HUB.md")
    await me.refused("slop_read", id=ident, max_chars=0)
    assert (await me.call("slop_hub_info"))["pending"] == 1  # bob's ack changed nothing


async def test_read_lists_a_deliverables_files(hub: HubDir, me: Session) -> None:
    script = (
        "import os, pathlib; out = pathlib.Path(os.environ['SLOP_OUT_DIR']); "
        "(out / 'report.txt').write_text('the report'); (out / 'sub').mkdir(); "
        "(out / 'sub' / 'data.json').write_text('{}')"
    )
    hub.write_config(f"[executor]\ncommand = {toml_argv([sys.executable, '-c', script])}\ntimeout = 30\n")
    ident = (await send(me, "Write the report.\n", type="instigate"))["id"]
    hub.run_once()
    status = await me.call("slop_status", id=ident)
    (result,) = [reply for reply in status["replies"] if reply["type"] == "result"]
    assert result["class"] == "deliverable"
    page = await me.call("slop_read", id=result["id"])
    folder = f"outbox/{result['id']}"
    assert page["files"] == [f"{folder}/report.txt", f"{folder}/sub/data.json"]
    assert (hub.root / folder / "report.txt").read_text() == "the report"


# -- slop_ack -------------------------------------------------------------------------------------


async def test_ack_marks_a_reply_seen_and_pending_drops(hub: HubDir, me: Session) -> None:
    await send(me, "One?\n")
    await send(me, "Two?\n")
    hub.run_once()
    one, two = (await me.call("slop_replies"))["replies"]
    assert one["acked"] is False
    acked = await me.call("slop_ack", id=one["id"])
    assert (acked["id"], acked["acked"], acked["pending"]) == (one["id"], True, 1)
    feed = await me.call("slop_replies")
    assert [reply["acked"] for reply in feed["replies"]] == [True, False]  # still there: nothing moved
    assert (hub.root / one["path"]).is_file()
    assert (await me.call("slop_ack", id=two["id"]))["pending"] == 0
    assert "not known" in await me.refused("slop_ack", id="20261201t000000z-nobody.result")


# -- slop_notes -----------------------------------------------------------------------------------


async def test_notes_finds_a_note_once_the_daemon_indexed_it(hub: HubDir, me: Session) -> None:
    ident = (await send(me, "# Remember the milk\n\nAlways the oat milk.\n", type="note"))["id"]
    assert (await me.call("slop_notes"))["notes"] == []
    hub.run_once()
    (note,) = (await me.call("slop_notes", search="milk"))["notes"]
    assert (note["id"], note["from"], note["title"]) == (ident, "claude-code", "Remember the milk")
    assert (await me.call("slop_notes", search="zebra"))["notes"] == []
    assert [found["id"] for found in (await me.call("slop_notes"))["notes"]] == [ident]


async def test_notes_carry_their_text_newest_first_a_page_at_a_time(hub: HubDir, me: Session) -> None:
    """The seed's #learning note is returned with its text; a word only in the text finds it;
    `limit`/`offset` page through the notes newest first; `max_chars` bounds each text, and says so."""
    texts = {
        "n-old": ("2026-07-01T09:00:00Z", "#learning\n- worked: HTTP POST with a signed bearer token\n"),
        "n-mid": ("2026-07-02T09:00:00Z", "#learning\n- pitfall: connection dropped mid-session\n"),
        "n-new": ("2026-07-03T09:00:00Z", "#learning\n- next_time: back off 2s/4s/8s instead\n"),
    }
    for ident, (created, body) in texts.items():
        hub.drop(f"{ident}.md", envelope_text(body, id=ident, type="note", created_at=created))
    hub.run_once()
    first = await me.call("slop_notes", limit=2)
    assert [found["id"] for found in first["notes"]] == ["n-new", "n-mid"]
    assert [found["text"] for found in first["notes"]] == [texts["n-new"][1], texts["n-mid"][1]]
    assert (first["total"], first["offset"], first["next_offset"]) == (3, 0, 2)
    rest = await me.call("slop_notes", limit=2, offset=first["next_offset"])
    assert ([found["id"] for found in rest["notes"]], rest["next_offset"]) == (["n-old"], None)
    (found,) = (await me.call("slop_notes", search="BEARER"))["notes"]  # in the text, not the title
    assert (found["id"], found["title"], found["truncated"]) == ("n-old", "#learning", False)
    (cut,) = (await me.call("slop_notes", search="8s", max_chars=12))["notes"]
    assert (cut["text"], cut["total_chars"], cut["truncated"]) == (
        "#learning\n- ",
        len(texts["n-new"][1]),
        True,
    )
    for wrong in ({"limit": 0}, {"limit": 101}, {"offset": -1}, {"max_chars": 0}):
        await me.refused("slop_notes", **wrong)
    listed = {tool.name: tool for tool in (await me.client.list_tools()).tools}
    schema = listed["slop_notes"].input_schema["properties"]
    assert (schema["limit"]["minimum"], schema["limit"]["maximum"]) == (1, 100)
    assert schema["offset"]["minimum"] == 0
    assert (schema["max_chars"]["minimum"], schema["max_chars"]["maximum"]) == (1, 20_000)
    output = listed["slop_notes"].output_schema
    assert output is not None
    assert {"text", "total_chars", "truncated"} <= set(output["$defs"]["Note"]["properties"])


# -- slop_request_approval ------------------------------------------------------------------------


async def test_request_approval_drafts_the_order_and_the_signing_commands_never_authorized(
    hub: HubDir, me: Session
) -> None:
    asked = await me.call(
        "slop_request_approval", action="deploy", body="Deploy v1.2 to production.", reason="the tests pass"
    )
    path = asked["path"]
    assert path.startswith("outbox/drafts/")
    assert path.endswith(".md")
    assert lane(hub, "outbox/drafts") == {Path(path).name: asked["order"].encode()}
    order = parse(asked["order"].encode(), name=Path(path).name)
    assert (order.type, order.mode, order.action, order.to) == ("instigate", "execute", "deploy", "watcher")
    assert order.auth == f"signed:{Path(path).name}.sig"
    assert order.sender == asked["from"] == "human"
    assert "Deploy v1.2 to production." in order.body
    assert "claude-code" in order.body
    assert "the tests pass" in order.body
    assert path in asked["sign_with_slopd"]
    assert asked["sign_with_slopd"].startswith("slopd sign ")
    assert path in asked["sign_with_ssh_keygen"]
    assert "ssh-keygen -Y sign" in asked["sign_with_ssh_keygen"]
    assert "-n slop" in asked["sign_with_ssh_keygen"]
    assert "authorized/" in asked["then"]
    assert inbox(hub) == {}
    hub.run_once()  # the daemon does not take a draft for an order
    assert lane(hub, "outbox/drafts") == {Path(path).name: asked["order"].encode()}
    assert not list((hub.root / "outbox").glob(f"{order.id}*"))


async def test_request_approval_refuses_a_bad_action_and_writes_nothing(hub: HubDir, me: Session) -> None:
    for action in ("deploy now!", "deploy\nauth: none", "../authorized/x"):
        said = await me.refused("slop_request_approval", action=action, body="Do it.", reason="because")
        assert "action" in said
    assert lane(hub, "outbox") == {}


async def test_request_approval_signs_in_the_configured_namespace_to_the_configured_watcher(
    hub: HubDir,
) -> None:
    config = Config(names=("watcher", "watcher:laptop"), auth=Auth(namespace="acme-orders"))
    async with session(hub, config=config) as me:
        asked = await me.call("slop_request_approval", action="deploy", body="Deploy.", reason="ready")
    assert "-n acme-orders" in asked["sign_with_ssh_keygen"]
    assert "-n slop " not in asked["sign_with_ssh_keygen"]
    assert parse(asked["order"].encode(), name="order.md").to == "watcher:laptop"


async def test_request_approval_does_not_follow_a_drafts_link_into_authorized(
    hub: HubDir, me: Session
) -> None:
    (hub.root / "outbox" / "drafts").symlink_to("../authorized")
    try:
        await me.refused("slop_request_approval", action="deploy", body="Do it.", reason="because")
        assert authorized(hub) == []
    finally:
        (hub.root / "outbox" / "drafts").unlink()


# -- MEP: handoff_lint, standup_read, standup_append ----------------------------------------------


async def test_handoff_lint_gives_findings_for_a_bad_log_and_none_for_a_good_one(
    hub: HubDir, me: Session, tmp_path: Path
) -> None:
    bad = await me.call("handoff_lint", text="hello\n\nnot a log\n")
    assert bad["conformant"] is False
    rules = {finding["rule"] for finding in bad["findings"]}
    assert {"MEP4", "MEP6"} <= rules
    for finding in bad["findings"]:
        assert isinstance(finding["line"], int)
        assert finding["message"]
        assert finding["fix"]
    log = tmp_path / "handoff.md"
    made = hub.slopd(
        "handoff", "new", str(log), "--agent", "Claude", "--platform", "Claude (Code)",
        "--session-type", "code", "--tag-in", "09:00 UTC", "--tag-out", "10:00 UTC",
        "--happened", "Wrote the MCP tests", "--pending", "Run them on CI",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    good = await me.call("handoff_lint", text=log.read_text(encoding="utf-8"))
    assert (good["conformant"], good["findings"]) == (True, [])


async def test_standup_append_refuses_an_entry_that_does_not_lint_and_sends_nothing(
    hub: HubDir, me: Session
) -> None:
    broken = entry("2026-12-01", "Claude", "10:00 UTC").split("\n### What's pending")[0]
    said = await me.refused("standup_append", project=PROJECT, entry=broken)
    assert "MEP3" in said
    assert "What's pending" in said
    assert inbox(hub) == {}
    await me.refused("standup_append", project="../evil", entry=entry("2026-12-01", "Claude", "10:00 UTC"))
    assert inbox(hub) == {}


async def test_standup_append_sends_a_handoff_that_standup_read_shows_once_filed(
    hub: HubDir, me: Session
) -> None:
    assert await me.call("standup_read", project=PROJECT) == {
        "project": PROJECT,
        "found": False,
        "standup": None,
        "pending": 0,
        "daemon_note": "daemon: not found — replies will not be tracked",
    }
    await me.refused("standup_read", project="../etc")
    text = entry("2026-12-01", "Claude", "15:00 UTC", tasks=("**[Pierre]** Review the MCP server",))
    receipt = await me.call("standup_append", project=PROJECT, entry=text)
    (data,) = inbox(hub).values()
    headers = front_matter(data.decode())
    assert (headers["id"], headers["type"], headers["from"], headers["project"]) == (
        receipt["id"],
        "handoff",
        "claude-code",
        PROJECT,
    )
    hub.run_once()
    shown = await me.call("standup_read", project=PROJECT)
    assert shown["found"] is True
    standup = shown["standup"]
    assert standup["entries"] == 1
    assert standup["latest"]["heading"] == text.splitlines()[0]
    assert [task["text"] for task in standup["open_tasks"]["Pierre"]] == ["Review the MCP server"]
    filed = (hub.root / "standups" / f"{PROJECT}.md").read_text(encoding="utf-8")
    assert text in filed
    assert await me.resource(f"slop://standup/{PROJECT}") == filed


async def test_standup_append_reaches_a_watcher_with_the_configured_name(hub: HubDir) -> None:
    hub.write_config('names = ["watcher:laptop"]\n')
    async with session(hub, config=load_config(hub.root, hub.config)) as me:  # as `slopd mcp --config`
        text = entry("2026-12-01", "Claude", "15:00 UTC")
        receipt = await me.call("standup_append", project=PROJECT, entry=text)
        hub.run_once()
        replies = (await me.call("slop_status", id=receipt["id"]))["replies"]
        assert [reply["type"] for reply in replies] == ["result"], replies
        assert (await me.call("standup_read", project=PROJECT))["found"] is True


# -- Baton ----------------------------------------------------------------------------------------


async def test_only_the_vessels_own_seat_leases_and_packs_it(
    hub: HubDir, me: Session, tmp_path: Path
) -> None:
    vessel = Vessel(hub, tmp_path)
    before = vessel.snapshot()
    said = await me.refused("baton_lease", vessel="oracle")
    assert "oracle" in said
    assert "claude-code" in said
    await me.refused("baton_pack", vessel="oracle", lease_id="0" * 64, letter=letter(1), state=state())
    booted = await me.call("baton_boot", vessel="oracle")  # anyone may read what a generation boots
    assert (booted["vessel"], booted["data"]["generation"]) == ("oracle", 0)
    assert vessel.snapshot() == before
    for tool in ("baton_boot", "baton_lease"):
        await me.refused(tool, vessel="nobody")
        await me.refused(tool, vessel="../oracle")


async def test_the_vessel_leases_packs_a_good_letter_as_generation_1_and_a_failing_one_is_refused(
    hub: HubDir, tmp_path: Path
) -> None:
    vessel = Vessel(hub, tmp_path)
    async with session(hub, "oracle") as oracle:
        booted = await oracle.call("baton_boot", vessel="oracle", budget=10_000)
        assert booted["data"]["bootable"] is True
        lease = (await oracle.call("baton_lease", vessel="oracle"))["data"]
        assert lease["generation"] == 1
        assert "leased" in (await oracle.refused("baton_lease", vessel="oracle")).lower()
        before = vessel.snapshot()
        lease_id = lease["lease_id"]
        said = await oracle.refused(
            "baton_pack", vessel="oracle", lease_id=lease_id, letter="too thin", state=state()
        )
        assert "gate" in said
        assert "accept_low_quality" in said  # a parameter the tool has (below)
        await oracle.refused(
            "baton_pack", vessel="oracle", lease_id="0" * 64, letter=letter(1), state=state()
        )
        assert vessel.snapshot() == before
        packed = await oracle.call(
            "baton_pack", vessel="oracle", lease_id=lease_id, letter=letter(1), state=state()
        )
        assert packed["vessel"] == "oracle"
        assert (packed["data"]["generation"], packed["data"]["passes"]) == (1, True)
        assert packed["data"]["LOW_QUALITY"] is False
        assert (vessel.tree / "GENERATION").read_bytes() == b"1"
        assert (vessel.tree / "generations/v1/HANDOFF.md").read_text() == letter(1)
        await oracle.refused(
            "baton_pack", vessel="oracle", lease_id=lease_id, letter=letter(1), state=state()
        )
        assert (await oracle.call("baton_boot", vessel="oracle"))["data"]["generation"] == 1


async def test_a_letter_that_fails_the_gate_commits_marked_low_quality_when_accepted(
    hub: HubDir, tmp_path: Path
) -> None:
    """The refusal names `accept_low_quality`; the tool takes it, and commits the letter marked."""
    vessel = Vessel(hub, tmp_path)
    async with session(hub, "oracle") as oracle:
        lease_id = (await oracle.call("baton_lease", vessel="oracle"))["data"]["lease_id"]
        packed = await oracle.call(
            "baton_pack",
            vessel="oracle",
            lease_id=lease_id,
            letter="too thin",
            state=state(),
            accept_low_quality=True,
        )
    assert (packed["data"]["generation"], packed["data"]["LOW_QUALITY"]) == (1, True)
    assert json.loads((vessel.tree / "generations/v1/STATE.json").read_text())["LOW_QUALITY"] is True


async def test_baton_boot_shows_nothing_of_an_uncommitted_generation_and_records_no_refused_boot(
    hub: HubDir, me: Session, tmp_path: Path
) -> None:
    """The tool is `slopd baton boot`'s code: after a pack killed before its marker, nothing of
    generation 2 and the list of what was left out; the vessel's own refused boot is no boot."""
    vessel = Vessel(hub, tmp_path)
    assert vessel.pack(vessel.lease(), letter(1), state()).returncode == 0
    vessel.killed_pack(vessel.lease(), letter(2, "Zebra-of-gen-2 moved it."), state(), writes=8)
    booted = (await me.call("baton_boot", vessel="oracle"))["data"]
    assert (booted["generation"], booted["bootable"]) == (1, True)
    said = json.dumps(booted, ensure_ascii=False)
    for trace in ("Zebra-of-gen-2", "I was gen 2", "Gen-2 ", '"generation": 2'):
        assert trace not in said, trace
    assert [found.split(" ")[0] for found in booted["left_out"]] == [
        "AUTOBIOGRAPHY.md",
        "evolution/fitness_history.json:",
    ]
    (vessel.tree / "generations" / "v1" / "STATE.json").unlink()
    async with session(hub, "oracle") as oracle:
        assert (await oracle.call("baton_boot", vessel="oracle"))["data"]["bootable"] is False
    listed = hub.slopd("baton", "registry", "--hub", str(hub.root), "--state", str(hub.state), "--json")
    assert json.loads(listed.stdout)["vessels"][0]["last_boot"] is None


async def test_baton_score_is_the_seeds_score_function(me: Session) -> None:
    for text in (letter(2), "too thin", letter(3, "Nothing works yet.")):
        scored = await me.call("baton_score", letter=text)
        assert scored["data"] == json.loads(json.dumps(report(text)))


# -- pending, on every tool -----------------------------------------------------------------------


async def test_every_tool_reports_the_replies_awaiting_this_seat(hub: HubDir, tmp_path: Path) -> None:
    Vessel(hub, tmp_path)
    async with session(hub, "oracle") as oracle:
        ident = (await send(oracle))["id"]
        hub.run_once()
        (reply,) = (await oracle.call("slop_replies"))["replies"]
        lease = (await oracle.call("baton_lease", vessel="oracle"))["data"]["lease_id"]
        calls: list[tuple[str, dict[str, Any]]] = [
            ("slop_hub_info", {}),
            ("slop_send", {"type": "note", "to": "watcher", "body": "A note.\n"}),
            ("slop_status", {"id": ident}),
            ("slop_replies", {}),
            ("slop_read", {"id": reply["id"]}),
            ("slop_wait", {"ids": [ident], "timeout_s": 0}),
            ("slop_notes", {}),
            ("slop_request_approval", {"action": "deploy", "body": "Deploy.", "reason": "ready"}),
            ("handoff_lint", {"text": "not a log\n"}),
            ("standup_read", {"project": PROJECT}),
            ("standup_append", {"project": PROJECT, "entry": entry("2026-12-01", "Oracle", "10:00 UTC")}),
            ("baton_boot", {"vessel": "oracle"}),
            ("baton_lease", {"vessel": "oracle"}),  # refused below: the lease is live
            ("baton_pack", {"vessel": "oracle", "lease_id": lease, "letter": letter(1), "state": state()}),
            ("baton_score", {"letter": letter(2)}),
        ]
        for tool, arguments in calls:
            if tool == "baton_lease":
                await oracle.refused(tool, **arguments)
                continue
            assert (await oracle.call(tool, **arguments))["pending"] == 1, tool
        assert (await oracle.call("slop_ack", id=reply["id"]))["pending"] == 0
        assert {tool for tool, _ in calls} | {"slop_ack"} == TOOLS


# -- resources ------------------------------------------------------------------------------------


async def test_the_resources_read_and_unknown_ones_are_errors(hub: HubDir, me: Session) -> None:
    resources = {resource.uri for resource in (await me.client.list_resources()).resources}
    assert "slop://hub/HUB.md" in resources
    templates = {
        template.uri_template for template in (await me.client.list_resource_templates()).resource_templates
    }
    assert {"slop://reply/{id}", "slop://standup/{project}"} <= templates

    assert await me.resource("slop://hub/HUB.md") == (hub.root / "HUB.md").read_text(encoding="utf-8")
    ident = (await send(me))["id"]
    hub.run_once()
    (reply,) = (await me.call("slop_replies"))["replies"]
    whole = (hub.root / reply["path"]).read_text(encoding="utf-8")
    assert await me.resource(f"slop://reply/{reply['id']}") == whole
    assert reply["in_reply_to"] == ident

    for unknown in (
        "slop://reply/20261201t000000z-nobody.result",
        f"slop://standup/{PROJECT}",  # no standup yet
        "slop://standup/..%2Fevil",
        "slop://hub/SECRET.md",
        "slop://nothing/here",
    ):
        with pytest.raises(MCPError):
            await me.client.read_resource(unknown)
    async with session(hub, "bob") as bob:
        with pytest.raises(MCPError):
            await bob.client.read_resource(f"slop://reply/{reply['id']}")


def test_a_generated_id_that_is_already_taken_is_replaced_not_refused(hub: HubDir) -> None:
    """SPEC §14 (issue 24 point 8): ids carry 64 random bits, and a send whose generated id is
    taken anyway — here forced, by a token source that repeats itself — picks another id instead
    of failing with a conflict."""
    tokens = iter(["0123456789abcdef", "0123456789abcdef", "fedcba9876543210"])
    moment = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    opened = Hub(hub.root)
    seat = Seat(
        opened,
        hub.state,
        "claude-code",
        Config(names=("watcher",)),
        clock=lambda: moment,
        token=tokens.__next__,
    )
    try:
        first = seat.send(type="query", to="watcher", body="One?\n")
        second = seat.send(type="query", to="watcher", body="Two?\n")
    finally:
        seat.close()
        opened.close()
    assert first["id"] == "20261201t120000z-query-0123456789abcdef"
    assert second["id"] == "20261201t120000z-query-fedcba9876543210"
    assert sorted(inbox(hub)) == [f"{first['id']}.md", f"{second['id']}.md"]
