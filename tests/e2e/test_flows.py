"""Routing flows through the real daemon (SPEC §3–§5): one `slopd run --once` on a real temp hub,
then the hub's files, the ledger (read-only SQL) and the log are inspected."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

from tests.conftest import HubDir, body_of, envelope_text, front_matter

REPLY_KEYS = {
    "protocol",
    "id",
    "type",
    "from",
    "to",
    "in_reply_to",
    "created_at",
    "auth",
    "class",
    "mode",
}
UTC_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|\+00:00)")


# -- helpers ---------------------------------------------------------------------------------


def ledger(hub: HubDir, sql: str, *params: Any) -> list[dict[str, Any]]:
    """Rows of a read-only query on the daemon's ledger."""
    uri = (hub.state / "ledger.sqlite3").as_uri() + "?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
        db.row_factory = sqlite3.Row
        return [dict(row) for row in db.execute(sql, params)]


def tree(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every regular file under `root`: its bytes and mtime (ns), by relative path."""
    found: dict[str, tuple[bytes, int]] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            found[str(path.relative_to(root))] = (path.read_bytes(), path.stat().st_mtime_ns)
    return found


def hub_files(hub: HubDir) -> dict[str, tuple[bytes, int]]:
    """Everything slopd writes or moves inside the hub: outbox, archive, notes, lanes."""
    return {
        f"{lane}/{name}": value
        for lane in ("inbox", "authorized", "outbox", "archive", "notes")
        for name, value in tree(hub.root / lane).items()
    }


def drop_aged(hub: HubDir, name: str, content: str | bytes, age: float, lane: str = "inbox") -> Path:
    """Drop a file and set its mtime `age` seconds in the past (the daemon reads oldest first)."""
    path = hub.drop(name, content, lane=lane)
    when = path.stat().st_mtime - age
    os.utime(path, (when, when))
    return path


def only_reply(hub: HubDir, envelope_id: str) -> tuple[dict[str, Any], str]:
    """The one reply answering `envelope_id`: its front matter and body."""
    texts = [text for text in hub.outbox().values() if front_matter(text).get("in_reply_to") == envelope_id]
    assert len(texts) == 1, f"expected one reply to {envelope_id}, got {len(texts)}: {hub.outbox()}"
    return front_matter(texts[0]), body_of(texts[0])


def invalid_replies(hub: HubDir) -> dict[str, tuple[str, dict[str, Any], str]]:
    """Replies carrying a `file:` key, by that key: (reply file name, front matter, body)."""
    found: dict[str, tuple[str, dict[str, Any], str]] = {}
    for name, text in hub.outbox().items():
        headers = front_matter(text)
        if "file" in headers:
            assert headers["file"] not in found, f"two replies name {headers['file']}"
            found[headers["file"]] = (name, headers, body_of(text))
    return found


# -- SPEC §4, row by row ---------------------------------------------------------------------


def test_handshake_gets_exactly_one_silent_ack(hub: HubDir) -> None:
    """A handshake is answered by one silent `ack` addressed to its sender, then archived."""
    hub.drop("hello.md", envelope_text(id="hs1", type="handshake", from_="grok"))
    hub.run_once()

    assert list(hub.outbox()) == ["hs1.ack.md"]
    headers = front_matter(hub.reply("hs1", "ack"))
    assert headers["type"] == "ack"
    assert headers["class"] == "silent"
    assert headers["in_reply_to"] == "hs1"
    assert headers["to"] == "grok"
    assert hub.lane("inbox") == []
    assert hub.archived() == ["hello.md"]
    assert not hub.events("notify"), "a silent ack notifies nobody"


def test_notes_are_acked_indexed_newest_first_and_listed(hub: HubDir) -> None:
    """Each note gets a silent ack; notes/INDEX.md and `slopd notes` list them newest `created_at` first."""
    notes = {
        "n-mid": ("2026-07-02T09:00:00Z", "# Middle note\n\nRetry with backoff, mid.\n"),
        "n-new": ("2026-07-03T09:00:00Z", "# Newest note\n\nThe cache key changed, new.\n"),
        "n-old": ("2026-07-01T09:00:00Z", "# Oldest note\n\nThe flaky test is timing, old.\n"),
    }
    # Arrival order mid, new, old: neither arrival order nor its reverse is the created_at order.
    for age, note_id in zip((30, 20, 10), notes, strict=True):
        created, body = notes[note_id]
        drop_aged(hub, f"{note_id}.md", envelope_text(body, id=note_id, type="note", created_at=created), age)
    hub.run_once()

    assert sorted(hub.outbox()) == ["n-mid.ack.md", "n-new.ack.md", "n-old.ack.md"]
    for note_id in notes:
        assert front_matter(hub.reply(note_id, "ack"))["class"] == "silent"
    index = (hub.root / "notes" / "INDEX.md").read_text(encoding="utf-8")
    positions = [index.index(note_id) for note_id in ("n-new", "n-mid", "n-old")]
    assert positions == sorted(positions), index
    assert "The cache key changed, new." in index

    listed = hub.slopd("notes", "--hub", str(hub.root), "--state", str(hub.state))
    assert listed.returncode == 0, listed.stderr
    positions = [listed.stdout.index(note_id) for note_id in ("n-new", "n-mid", "n-old")]
    assert positions == sorted(positions), listed.stdout
    assert len(ledger(hub, "SELECT id FROM notes")) == 3


def test_short_query_gets_one_ping_result_with_the_summary(hub: HubDir) -> None:
    """A query gets exactly one discuss-mode `result`, class ping when short, carrying the summary."""
    hub.drop(
        "q.md", envelope_text("# Envelope limits\n\nHow large may an envelope be?\n", id="q1", type="query")
    )
    hub.run_once()

    assert list(hub.outbox()) == ["q1.result.md"]
    headers, body = only_reply(hub, "q1")
    assert headers["type"] == "result"
    assert headers["mode"] == "discuss"
    assert headers["class"] == "ping"
    assert "Envelope limits" in body
    assert "How large may an envelope be?" in body
    assert hub.events("notify", id="q1"), "a ping result notifies the human"


def test_long_handoff_gets_one_hybrid_result_with_title_sentences_and_pending_items(hub: HubDir) -> None:
    """A handoff's summary (title, first sentences, MEP "What's pending" items) comes back as a hybrid."""
    body = (
        "# Migrate the streaming tokenizer\n\n"
        "The tokenizer now streams its input instead of loading whole files into memory, which fixes "
        "the out-of-memory crash on the large production logs. Error positions are now reported as a "
        "line and a column for every token, including tokens inside nested blocks.\n\n"
        "### What happened\n"
        "- Split the reader from the validator\n\n"
        "### What's pending\n"
        "- [ ] Port the YAML conformance tests to the streaming tokenizer\n"
        "- [ ] Benchmark the one-gigabyte fixture on the slow disk\n"
    )
    hub.drop("h.md", envelope_text(body, id="h1", type="handoff"))
    hub.run_once()

    assert list(hub.outbox()) == ["h1.result.md"]
    headers, reply = only_reply(hub, "h1")
    assert headers["type"] == "result"
    assert headers["mode"] == "discuss"
    assert headers["class"] == "hybrid"
    assert "Migrate the streaming tokenizer" in reply
    assert "The tokenizer now streams its input" in reply
    assert "Port the YAML conformance tests to the streaming tokenizer" in reply
    assert "Benchmark the one-gigabyte fixture on the slow disk" in reply
    assert "Split the reader from the validator" not in reply, "only the pending items are listed"
    notified = hub.events("notify", id="h1")
    assert len(notified) == 1
    assert "outbox/h1.result.md" in notified[0]["text"], "a hybrid notification names the reply's path"


def test_instigate_without_an_executor_gets_only_an_error_saying_so(hub: HubDir) -> None:
    """With no config, an instigate gets one `error` saying no executor is configured, and no ack."""
    hub.drop("i.md", envelope_text("Run the tests.\n", id="i1", type="instigate"))
    hub.run_once()

    assert list(hub.outbox()) == ["i1.error.md"]
    headers, body = only_reply(hub, "i1")
    assert headers["type"] == "error"
    assert headers["mode"] == "execute"
    assert headers["class"] == "ping"
    assert "no executor is configured" in body
    assert hub.archived() == ["i.md"]
    assert ledger(hub, "SELECT status FROM inputs WHERE id = 'i1'") == [{"status": "done"}]


def test_instigate_asking_to_discuss_gets_one_discuss_result(hub: HubDir) -> None:
    """An instigate with `mode: discuss`, "discuss only" in its body, or `to: human` gets one result."""
    variants = {
        "i-mode": ({"mode": "discuss"}, "What would it take?"),
        "i-dash": ({}, "Please DISCUSS-ONLY, nothing runs."),
        "i-space": ({}, "Discuss only: what would it take?"),
        "i-human": ({"to": "human"}, "What would it take?"),
    }
    for envelope_id, (fields, text) in variants.items():
        body = f"# Plan {envelope_id}\n\n{text}\n"
        hub.drop(f"{envelope_id}.md", envelope_text(body, id=envelope_id, type="instigate", **fields))
    hub.run_once()

    assert sorted(hub.outbox()) == sorted(f"{envelope_id}.result.md" for envelope_id in variants)
    for envelope_id in variants:
        headers, reply = only_reply(hub, envelope_id)
        assert headers["type"] == "result", envelope_id
        assert headers["mode"] == "discuss", envelope_id
        assert f"Plan {envelope_id}" in reply
    assert hub.archived() == sorted(f"{envelope_id}.md" for envelope_id in variants)


def test_replies_arriving_get_no_reply_are_archived_and_notified(hub: HubDir) -> None:
    """An ack/result/error in the inbox is recorded and archived, the human notified, and nothing answered."""
    kinds = ("ack", "result", "error")
    for kind in kinds:
        text = envelope_text(
            f"Done: {kind} text.\n", id=f"r-{kind}", type=kind, in_reply_to="q-older", from_="grok"
        )
        hub.drop(f"{kind}.md", text)
    hub.run_once()

    assert hub.outbox() == {}
    assert hub.lane("inbox") == []
    assert hub.archived() == sorted(f"{kind}.md" for kind in kinds)
    for kind in kinds:
        notified = hub.events("notify", id=f"r-{kind}")
        assert len(notified) == 1, kind
        assert "grok" in notified[0]["text"]
        assert f"Done: {kind} text." in notified[0]["text"]
        rows = ledger(hub, "SELECT status, replies, archive FROM inputs WHERE id = ?", f"r-{kind}")
        assert len(rows) == 1
        assert rows[0]["status"] == "done"
        assert rows[0]["replies"] == ""
        assert rows[0]["archive"] is not None


def test_envelope_for_another_watcher_is_left_untouched(hub: HubDir) -> None:
    """`to: watcher:elsewhere` is left in the inbox byte for byte, mtime and inode too, run after run."""
    path = hub.drop("other.md", envelope_text(id="o1", type="instigate", to="watcher:elsewhere"))
    before = path.read_bytes(), path.stat().st_mtime_ns, path.stat().st_ino
    hub.run_once()
    hub.run_once()

    assert hub.outbox() == {}
    assert hub.lane("inbox") == ["other.md"]
    assert (path.read_bytes(), path.stat().st_mtime_ns, path.stat().st_ino) == before
    assert hub.archived() == []
    assert not ledger(hub, "SELECT key FROM inputs")


def test_unknown_recipient_gets_an_error(hub: HubDir) -> None:
    """An envelope addressed to nobody this watcher knows gets an error naming the recipient."""
    hub.drop("u.md", envelope_text(id="u1", type="query", to="someone-else"))
    hub.run_once()

    assert list(hub.outbox()) == ["u1.error.md"]
    _, body = only_reply(hub, "u1")
    assert "unknown recipient" in body
    assert "someone-else" in body
    assert hub.archived() == ["u.md"]


def test_action_in_the_inbox_gets_an_error(hub: HubDir) -> None:
    """`action:` is refused outside authorized/ (SPEC §14): an error naming why, nothing else, and
    the id is not claimed — the sender may send it again without the action."""
    hub.drop("a.md", envelope_text(id="a1", type="instigate", action="deploy"))
    hub.run_once()

    (name,) = hub.outbox()
    assert name.startswith("a1.invalid-")
    headers, body = only_reply(hub, "a1")
    assert (headers["type"], headers["to"]) == ("error", "claude-code")
    assert "- action is only read from authorized/ (signed orders)\n" in body
    assert hub.archived() == ["a.md"]

    hub.drop("a.md", envelope_text(id="a1", type="query"))  # corrected: the id is free
    hub.run_once()
    assert "a1.result.md" in hub.outbox()


def test_authorized_orders_are_refused_and_archived_with_their_sidecars(hub: HubDir) -> None:
    """Without allowed_signers, any order in authorized/ is refused; it and its .sig are archived."""
    signature = "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n"
    for envelope_id, kind in (("o1", "instigate"), ("o2", "handshake")):
        hub.drop(f"{envelope_id}.md.sig", signature, lane="authorized")
        text = envelope_text(
            "Deploy.\n", id=envelope_id, type=kind, action="deploy", auth=f"signed:{envelope_id}.md.sig"
        )
        hub.drop(f"{envelope_id}.md", text, lane="authorized")
    hub.run_once()

    assert sorted(hub.outbox()) == ["o1.error.md", "o2.error.md"]
    for envelope_id in ("o1", "o2"):
        _, body = only_reply(hub, envelope_id)
        assert "no allowed_signers file is configured" in body
        assert "nothing was run" in body
    assert hub.lane("authorized") == []
    assert hub.archived() == ["o1.md", "o1.md.sig", "o2.md", "o2.md.sig"]
    archived_sig = next((hub.root / "archive").glob("*/o1.md.sig"))
    assert archived_sig.read_text(encoding="utf-8") == signature


# -- JSON envelopes ---------------------------------------------------------------------------


def test_json_envelopes_are_routed_like_markdown_ones(hub: HubDir) -> None:
    """A `.json` query gets a result summarizing its `body`, a `.json` handshake an ack; both archived."""
    common = {
        "protocol": "slop.v1",
        "from": "codex",
        "to": "watcher",
        "in_reply_to": None,
        "created_at": "2026-07-04T07:15:53Z",
        "auth": "none",
    }
    query = common | {"id": "j1", "type": "query", "body": "# JSON limits\n\nHow deep may JSON nest?\n"}
    hello = common | {"id": "j2", "type": "handshake"}
    hub.drop("j1.json", json.dumps(query))
    hub.drop("j2.json", json.dumps(hello))
    hub.run_once()

    assert sorted(hub.outbox()) == ["j1.result.md", "j2.ack.md"]
    headers, body = only_reply(hub, "j1")
    assert headers["to"] == "codex"
    assert "JSON limits" in body
    assert "How deep may JSON nest?" in body
    assert front_matter(hub.reply("j2", "ack"))["class"] == "silent"
    assert hub.archived() == ["j1.json", "j2.json"]


# -- duplicates -------------------------------------------------------------------------------


def test_same_id_with_other_bytes_in_a_later_run_is_a_conflict(hub: HubDir) -> None:
    """The same id dropped again later with other bytes (SPEC §14): an error reply naming the
    conflict to its sender, nothing runs, it is archived beside the original, which is untouched."""
    first = envelope_text("# First\n\nThe original.\n", id="d1", type="handoff")
    second = envelope_text("# Second\n\nA replay with other bytes.\n", id="d1", type="handoff")
    hub.drop("d1.md", first)
    hub.run_once()
    outbox = tree(hub.root / "outbox")
    assert list(outbox) == ["d1.result.md"]

    hub.drop("d1.md", second)
    hub.run_once()

    added = {name: text for name, text in hub.outbox().items() if name != "d1.result.md"}
    (name, text), sha = next(iter(added.items())), hashlib.sha256(second.encode()).hexdigest()
    assert name.startswith("d1.invalid-")
    assert (front_matter(text)["type"], front_matter(text)["in_reply_to"]) == ("error", "d1")
    assert f"- conflict: id d1 was already used with other content (this content's sha256 {sha})" in text
    assert tree(hub.root / "outbox")["d1.result.md"] == outbox["d1.result.md"]
    assert hub.lane("inbox") == []
    assert hub.archived() == ["d1-2.md", "d1.md"]
    original = ledger(hub, "SELECT archive FROM inputs WHERE id = 'd1' AND key = 'd1'")
    assert (hub.root / original[0]["archive"]).read_text(encoding="utf-8") == first
    assert hub.events("envelope.refused", id="d1")[0]["refusal"] == "conflict"


def test_same_id_same_bytes_under_another_name_is_a_recorded_archived_duplicate(hub: HubDir) -> None:
    """The same bytes dropped again later under another name: no new reply, a second archive
    entry and a `duplicates` row (SPEC §4)."""
    text = envelope_text("# First\n\nThe original.\n", id="d1", type="handoff")
    hub.drop("d1.md", text)
    hub.run_once()
    outbox = tree(hub.root / "outbox")

    hub.drop("again.md", text)
    hub.run_once()

    assert tree(hub.root / "outbox") == outbox
    assert hub.archived() == ["again.md", "d1.md"]
    duplicates = ledger(hub, "SELECT id, lane, file, archive FROM duplicates")
    assert [(row["id"], row["file"]) for row in duplicates] == [("d1", "again.md")]
    assert hub.events("envelope.duplicate", id="d1")


def test_sync_conflict_copies_in_the_same_run_get_one_reply_set(hub: HubDir) -> None:
    """An envelope and its Dropbox and Syncthing conflict copies, dropped together, are answered once."""
    text = envelope_text("# Conflicted\n\nSame id three times.\n", id="x1", type="handoff")
    names = ["x.md", "x (conflicted copy 2026-01-01).md", "x.sync-conflict-20260101-120000-ABCDEFG.md"]
    for name in names:
        hub.drop(name, text)
    hub.run_once()

    assert list(hub.outbox()) == ["x1.result.md"]
    assert len(ledger(hub, "SELECT id FROM replies")) == 1
    assert len(ledger(hub, "SELECT id FROM inputs")) == 1
    assert len(ledger(hub, "SELECT id FROM duplicates WHERE id = 'x1'")) == 2
    assert hub.lane("inbox") == []
    assert hub.archived() == sorted(names)


# -- order of effects and idempotence ---------------------------------------------------------


def test_every_input_is_done_and_archived_and_a_rerun_changes_nothing(hub: HubDir) -> None:
    """Each input ends `done`, archived, its replies on disk; a second --once changes nothing."""
    dropped = {
        "hs.md": envelope_text(id="e-hs", type="handshake"),
        "note.md": envelope_text("# A note\n", id="e-note", type="note"),
        "query.md": envelope_text("# Q\n\nWhy?\n", id="e-query", type="query"),
        "handoff.md": envelope_text("# H\n\nDone.\n", id="e-handoff", type="handoff"),
        "inst.md": envelope_text("Run it.\n", id="e-inst", type="instigate"),
        "unknown.md": envelope_text(id="e-unknown", type="query", to="nobody"),
        "ack.md": envelope_text(id="e-ack", type="ack", in_reply_to="e-x"),
        "bad.md": "---\nprotocol: slop.v1\nid: e-bad\n---\n",
        "x.json": json.dumps({"id": "e-json", "type": "handshake"}),
    }
    for name, text in dropped.items():
        hub.drop(name, text)
    hub.run_once()

    assert hub.lane("inbox") == []
    rows = ledger(hub, "SELECT * FROM inputs")
    assert sorted(row["file"] for row in rows) == sorted(dropped)
    for row in rows:
        assert row["status"] == "done", row
        assert row["archive"] is not None, row
        archived = hub.root / row["archive"]
        assert archived.read_text(encoding="utf-8") == dropped[row["file"]], row
        for reply_id in row["replies"].split():
            assert (hub.root / "outbox" / f"{reply_id}.md").is_file(), row
        if row["id"] != "e-ack":
            assert row["replies"], f"{row['file']} got no reply"
    for reply in ledger(hub, "SELECT path FROM replies"):
        assert (hub.root / reply["path"]).is_file()
    assert len(hub.outbox()) == len(dropped) - 1

    before = hub_files(hub)
    before_rows = ledger(hub, "SELECT * FROM inputs ORDER BY key")
    written = len(hub.events("reply.written"))
    hub.run_once()

    assert hub_files(hub) == before
    assert ledger(hub, "SELECT * FROM inputs ORDER BY key") == before_rows
    assert len(hub.events("reply.written")) == written


# -- invalid envelopes ------------------------------------------------------------------------


def test_invalid_id_gets_one_error_listing_every_reason_with_null_in_reply_to(hub: HubDir) -> None:
    """An input breaking several rules, its id among them, gets one error listing all, `in_reply_to: null`."""
    text = envelope_text(id="Not/A-Valid-ID", protocol="slop.v2", type="shout", created_at="yesterday")
    hub.drop("broken.md", text)
    hub.run_once()

    replies = invalid_replies(hub)
    assert list(replies) == ["inbox/broken.md"]
    name, headers, body = replies["inbox/broken.md"]
    assert re.fullmatch(r"input\.invalid-[0-9a-f]{12}\.md", name), name
    assert list(hub.outbox()) == [name]
    assert headers["in_reply_to"] is None
    assert headers["type"] == "error"
    assert headers["to"] == "claude-code"
    assert "inbox/broken.md" in body
    bullets = [line for line in body.splitlines() if line.startswith("- ")]
    for key in ("id:", "protocol:", "type:", "created_at:"):
        assert any(line.startswith(f"- {key}") for line in bullets), f"{key} missing from {body!r}"
    assert hub.lane("inbox") == []
    assert hub.archived() == ["broken.md"]
    assert (next((hub.root / "archive").glob("*/broken.md"))).read_text(encoding="utf-8") == text


def test_invalid_fields_with_a_valid_id_get_an_error_linked_to_that_id(hub: HubDir) -> None:
    """When only other fields are bad, the error lists each reason and has `in_reply_to: <id>`."""
    hub.drop("v.md", envelope_text(id="v1", protocol="slop.v0", type="shout", created_at="2026-13-45"))
    hub.run_once()

    replies = invalid_replies(hub)
    assert list(replies) == ["inbox/v.md"]
    name, headers, body = replies["inbox/v.md"]
    assert re.fullmatch(r"v1\.invalid-[0-9a-f]{12}\.md", name), name
    assert headers["in_reply_to"] == "v1"
    assert headers["to"] == "claude-code"
    for key in ("protocol:", "type:", "created_at:"):
        assert f"- {key}" in body, f"{key} missing from {body!r}"
    assert "- id:" not in body
    assert hub.archived() == ["v.md"]


# -- reply format -----------------------------------------------------------------------------


def test_replies_have_exactly_the_spec_front_matter_and_validate(hub: HubDir) -> None:
    """Every reply carries exactly the SPEC §5 keys, from this watcher to the sender, and is itself valid."""
    hub.write_config('names = ["watcher", "watcher:testhost"]\n')
    sender = "agent-7@box"
    hub.drop("hs.md", envelope_text(id="f-hs", type="handshake", from_=sender))
    hub.drop("q.md", envelope_text("# Q\n\nWhat?\n", id="f-q", type="query", from_=sender))
    hub.drop("i.md", envelope_text(id="f-i", type="instigate", from_=sender))
    hub.drop("u.md", envelope_text(id="f-u", type="handoff", to="nobody", from_=sender))
    hub.drop("bad.md", envelope_text(id="f-bad", type="shout", from_=sender))
    hub.run_once()

    expected = {
        "f-hs.ack.md": ("f-hs", "ack", "silent", "discuss"),
        "f-q.result.md": ("f-q", "result", "ping", "discuss"),
        "f-i.error.md": ("f-i", "error", "ping", "execute"),
        "f-u.error.md": ("f-u", "error", "ping", "discuss"),
    }
    outbox = hub.outbox()
    assert set(expected) < set(outbox)
    assert len(outbox) == len(expected) + 1
    for name, (original, kind, reply_class, mode) in expected.items():
        headers = front_matter(outbox[name])
        assert set(headers) == REPLY_KEYS, name
        assert headers["protocol"] == "slop.v1"
        assert headers["id"] == f"{original}.{kind}"
        assert headers["type"] == kind
        assert headers["from"] == "watcher:testhost"
        assert headers["to"] == sender
        assert headers["in_reply_to"] == original
        assert isinstance(headers["created_at"], str)
        assert UTC_STAMP.fullmatch(headers["created_at"]), headers["created_at"]
        assert headers["auth"] == "none"
        assert headers["class"] == reply_class, name
        assert headers["mode"] == mode, name
    checked = hub.slopd("validate", *(str(hub.root / "outbox" / name) for name in outbox))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count(": valid (") == len(outbox), checked.stdout


# -- names ------------------------------------------------------------------------------------


def test_temporary_names_are_ignored_until_renamed_then_answered_once(hub: HubDir) -> None:
    """Temp/partial names get nothing and stay; renamed to a real `.md` name, each is answered once."""
    temp_names = [".x.md.tmp", "x.md.partial", "~$x.md", "x.md.crdownload", ".syncthing.x.md.tmp"]
    contents = {}
    for number, name in enumerate(temp_names):
        contents[name] = envelope_text(id=f"t{number}", type="handshake")
        hub.drop(name, contents[name])
    hub.run_once()

    assert hub.outbox() == {}
    assert hub.lane("inbox") == sorted(temp_names)
    for name, text in contents.items():
        assert (hub.root / "inbox" / name).read_text(encoding="utf-8") == text
    assert hub.archived() == []

    for number, name in enumerate(temp_names):
        (hub.root / "inbox" / name).rename(hub.root / "inbox" / f"x{number}.md")
    hub.run_once()
    hub.run_once()

    assert sorted(hub.outbox()) == sorted(f"t{number}.ack.md" for number in range(len(temp_names)))
    assert len(ledger(hub, "SELECT id FROM replies")) == len(temp_names)
    assert hub.lane("inbox") == []
    assert hub.archived() == sorted(f"x{number}.md" for number in range(len(temp_names)))


def test_unrecognized_names_are_left_in_place_and_listed_by_status(hub: HubDir) -> None:
    """`readme.txt` in the inbox gets no reply, stays byte for byte, and `slopd status` lists it."""
    path = hub.drop("readme.txt", envelope_text(id="r-txt", type="handshake"))
    before = path.read_bytes(), path.stat().st_mtime_ns
    hub.run_once()

    assert hub.outbox() == {}
    assert hub.lane("inbox") == ["readme.txt"]
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    shown = hub.slopd("status", "--hub", str(hub.root), "--state", str(hub.state))
    assert shown.returncode == 0, shown.stderr
    assert "readme.txt" in shown.stdout
    report = hub.slopd("status", "--hub", str(hub.root), "--state", str(hub.state), "--json")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["lanes"]["inbox"]["unrecognized"] == ["readme.txt"]
