"""Where the console sends a human after signing in (`site.local_path`): its own pages only."""

from __future__ import annotations

import pytest

from slopd.transport.console.site import local_path


@pytest.mark.parametrize(
    ("wanted", "went"),
    [
        ("/approvals", "/approvals"),
        ("/activity/20260704t071553z-q1", "/activity/20260704t071553z-q1"),
        ("/approvals/drafts/x.md?done=1", "/approvals/drafts/x.md?done=1"),
        ("/", "/"),
        ("//evil.example", "/approvals"),
        ("/\\evil.example", "/approvals"),  # browsers read `/\` as `//`: an open redirect
        ("/\\\\evil.example", "/approvals"),
        ("https://evil.example/", "/approvals"),
        ("javascript:alert(1)", "/approvals"),
        ("/a//b", "/approvals"),
        ("/\tx", "/approvals"),
        ("", "/approvals"),
        (None, "/approvals"),
        (["/approvals"], "/approvals"),
    ],
)
def test_only_a_plain_path_of_this_console_is_followed(wanted: object, went: str) -> None:
    assert local_path(wanted) == went
