"""The console's links, as notifications carry them (core.links)."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from hypothesis import given
from hypothesis import strategies as st

from slopd.core import links


def test_an_approval_names_where_it_waits_and_its_file() -> None:
    """Rule 2: drafts and orders have their own paths under /approvals."""
    assert links.approval("https://hub.example/", "drafts", "deploy.md") == (
        "https://hub.example/approvals/drafts/deploy.md"
    )
    assert links.approval("http://localhost:8787", "authorized", "a b#c.md") == (
        "http://localhost:8787/approvals/authorized/a%20b%23c.md"
    )


def test_an_activity_link_uses_the_ledger_form_of_the_id() -> None:
    """Rule 3: ids compare case-insensitively, so the link uses the lower-case form."""
    assert links.activity("https://hub.example/console/", "20260704T071553Z-Fix:1") == (
        "https://hub.example/console/activity/20260704t071553z-fix%3A1"
    )


@given(st.text(min_size=1, max_size=40))
def test_any_name_stays_one_path_segment(name: str) -> None:
    """Rule 4: whatever the name, it is one percent-encoded segment that decodes back."""
    path = urlsplit(links.approval("https://h.example", "drafts", name)).path
    assert path.startswith("/approvals/drafts/")
    segment = path.removeprefix("/approvals/drafts/")
    assert "/" not in segment
    assert unquote(segment) == name
