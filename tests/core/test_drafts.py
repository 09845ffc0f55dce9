"""Who asked for a draft, and what counts as one (`core.drafts`): one answer for the console, the
hooks and the approval notices."""

from __future__ import annotations

from typing import Any

import pytest

from slopd.core import drafts
from slopd.core.envelope import Envelope


def draft(body: str, **extra: Any) -> Envelope:
    return Envelope(
        protocol="slop.v1", id="d1", type="instigate", sender="human", to="watcher", in_reply_to=None,
        created_at=None, auth="signed:d1.md.sig", mode="execute", body=body, extra=extra,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("envelope", "seat"),
    [
        (draft("Deploy.\n\n" + drafts.footer("claude-code", "ship it")), "claude-code"),
        (draft("Deploy.\n\n" + drafts.footer("claude-code", "x"), requested_by="codex"), "codex"),
        (draft("Deploy.\n\n" + drafts.footer("claude-code", "x"), requested_by="bad seat!"), "claude-code"),
        (draft("Requested by a: one\nRequested by b: two\n"), "b"),
        (draft("Nothing says who.\n"), None),
        (draft("Requested by bad seat!: x\n"), None),
    ],
    ids=["footer", "front-matter-first", "invalid-key-falls-back", "last-line", "nobody", "invalid-name"],
)
def test_the_requester_is_the_front_matter_key_else_the_last_footer_line(
    envelope: Envelope, seat: str
) -> None:
    assert drafts.requester(envelope) == seat


@pytest.mark.parametrize(
    ("name", "is_one"),
    [("deploy.md", True), (".slopd-tmp-ab-x.md.tmp", False), ("~lock.md", False), (".hidden.md", False),
     ("notes.txt", False), (".md", False)],
)  # fmt: skip
def test_a_draft_is_a_plain_markdown_file(name: str, is_one: bool) -> None:
    assert drafts.is_draft(name) is is_one
