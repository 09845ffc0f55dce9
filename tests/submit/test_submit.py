"""`slopd.submit`: composing, dropping and awaiting, as `slopd send` (and the coming transports) use it.

Real hubs made by `slopd init`; replies are written by a thread of the test the way the daemon
writes them (temp file, then rename), so `await_reply` meets exactly what it meets in use.
"""

from __future__ import annotations

import os
import re
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from slopd import submit
from slopd.core.envelope import EnvelopeError, render
from slopd.core.validation import parse
from slopd.shell import waker
from slopd.shell.lanes import Hub
from tests.conftest import HubDir, envelope_text

NOW = datetime(2026, 7, 4, 7, 15, 53, tzinfo=UTC)


def write_reply(root: Path, name: str, text: str) -> None:
    temp = root / "outbox" / f".slopd-tmp-test-{name}.tmp"
    temp.write_text(text, encoding="utf-8")
    os.rename(temp, root / "outbox" / name)


def test_compose_makes_a_canonical_valid_envelope() -> None:
    """A composed envelope has a lower-case id from the time and slug, whole-second UTC and no auth."""
    envelope = submit.compose(
        type="query", sender="me", to="watcher", body="Why?\n", slug="Big Question!", now=NOW
    )
    assert envelope.id.startswith("20260704t071553z-big-question-")
    assert re.fullmatch(r"20260704t071553z-big-question-[0-9a-f]{16}", envelope.id)  # 64 random bits
    assert envelope.created_at == "2026-07-04T07:15:53Z"
    assert envelope.auth == "none"
    assert parse(render(envelope), name="x.md") == envelope


def test_submit_drops_the_rendered_bytes_into_the_inbox_under_the_id(hub: HubDir) -> None:
    """`submit` writes exactly `render(envelope)` as `inbox/ID.md` and leaves no temporary file."""
    envelope = submit.compose(type="note", sender="me", to="watcher", body="Remember.\n", now=NOW)
    submit.submit(Hub(hub.root), envelope)
    assert hub.lane("inbox") == [f"{envelope.id}.md"]
    assert (hub.root / "inbox" / f"{envelope.id}.md").read_bytes() == render(envelope)


def test_drop_refuses_what_the_daemon_would_refuse_and_writes_nothing(hub: HubDir) -> None:
    """Invalid bytes raise EnvelopeError with every reason; the inbox stays empty."""
    with pytest.raises(EnvelopeError) as refused:
        submit.drop(Hub(hub.root), envelope_text(id="Bad Id", type="nonsense").encode(), name="x.md")
    assert any("id" in reason for reason in refused.value.reasons)
    assert any("type" in reason for reason in refused.value.reasons)
    assert hub.lane("inbox") == []


def test_drop_never_replaces_a_file_already_in_the_inbox(hub: HubDir) -> None:
    """A second drop under a taken name is refused; the first file is untouched."""
    first = envelope_text(id="first").encode()
    submit.drop(Hub(hub.root), first, name="same.md")
    with pytest.raises(FileExistsError):
        submit.drop(Hub(hub.root), envelope_text(id="second").encode(), name="same.md")
    assert (hub.root / "inbox" / "same.md").read_bytes() == first
    assert hub.lane("inbox") == ["same.md"]


@pytest.mark.parametrize(
    ("kind", "terminal"),
    [
        ("handshake", ("ack",)),
        ("note", ("ack",)),
        ("query", ("result", "error")),
        ("handoff", ("result", "error")),
        ("instigate", ("result", "error")),
        ("ack", ()),
        ("result", ()),
        ("error", ()),
    ],
)
def test_terminal_kinds(kind: str, terminal: tuple[str, ...]) -> None:
    """A handshake or note ends with its ack, a request with its result or error, a reply with nothing."""
    assert submit.terminal_kinds(kind) == terminal


def test_await_reply_finds_a_reply_written_before_it_began(hub: HubDir) -> None:
    """A reply already in the outbox is returned at once, read whole."""
    write_reply(hub.root, "x-1.result.md", "---\nthe reply\n")
    found = submit.await_reply(hub.root, "x-1", ("result", "error"), timeout=5)
    assert found is not None
    assert (found.kind, found.text) == ("result", "---\nthe reply\n")


def test_await_reply_is_woken_by_the_reply_being_written(
    hub: HubDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With its safety re-check pushed out past the test's timeout, the reply written later is
    still returned: the watch on outbox/ woke it, not a poll."""
    monkeypatch.setattr(waker, "RECHECK", 3600.0)
    writer = threading.Timer(0.3, write_reply, args=(hub.root, "x-2.error.md", "an error\n"))
    writer.start()
    try:
        found = submit.await_reply(hub.root, "x-2", ("result", "error"), timeout=3600.0)
    finally:
        writer.join()
    assert found is not None
    assert found.kind == "error"


def test_await_reply_ignores_other_replies_and_returns_none_at_its_deadline(hub: HubDir) -> None:
    """Replies to other ids and non-terminal kinds do not count; with none of its own, None."""
    write_reply(hub.root, "x-3.ack.md", "an ack\n")
    write_reply(hub.root, "other.result.md", "not mine\n")
    assert submit.await_reply(hub.root, "x-3", ("result", "error"), timeout=0.3) is None
