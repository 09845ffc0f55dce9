"""The hook protocols' pure rules (SPEC §16): which answer each moment gets, and the stop guard."""

from __future__ import annotations

import pytest

from slopd.core import hooks
from slopd.core.vocabulary import HOOK_HOSTS

WAITING = hooks.News(hub="/h", seat="alice", waiting=("id-1",))
REPLY = hooks.Brief("q.result", "result", "ping", "q", "outbox/q.result.md", "Yes.")


def given(host: str, event: str, active: bool = False) -> hooks.HookInput:
    return hooks.parse(
        host, event, f'{{"session_id": "s", "stop_hook_active": {str(active).lower()}}}'.encode()
    )


def test_the_hosts_are_the_parsers_choices_with_three_moments_each() -> None:
    """`slopd hook HOST` offers exactly the hosts this module answers, each with start, prompt, stop."""
    assert tuple(hooks.HOSTS) == HOOK_HOSTS
    assert all(sorted(moments.values()) == ["prompt", "start", "stop"] for moments in hooks.HOSTS.values())


@pytest.mark.parametrize(
    ("host", "event", "active", "blocks", "news", "expected"),
    [
        ("claude-code", "Stop", False, 0, WAITING, "block"),
        ("codex", "Stop", False, 2, WAITING, "block"),
        ("gemini", "AfterAgent", False, 0, WAITING, "deny"),
        ("claude-code", "Stop", True, 0, WAITING, None),  # the host already goes on because of a stop hook
        ("claude-code", "Stop", False, 3, WAITING, None),  # the cap
        ("claude-code", "Stop", False, 0, hooks.News(hub="/h", seat="alice"), None),  # nothing awaited
        ("claude-code", "Stop", False, 0, hooks.News(hub="/h", seat="alice", arrived=REPLY), "block"),
    ],
)
def test_stop_asks_to_go_on_only_while_awaited_and_never_past_the_guards(
    host: str, event: str, active: bool, blocks: int, news: hooks.News, expected: str | None
) -> None:
    """A block (Gemini: deny) with a reason, or `{}`; stop_hook_active and the cap always win."""
    output, blocked = hooks.answer(host, given(host, event, active), news, blocks=blocks, cap=3)
    assert blocked is (expected is not None)
    assert output.get("decision") == expected
    if expected is not None:
        assert output["reason"].strip()


def test_context_is_bounded_and_empty_without_news() -> None:
    """No news: `{}`; a flood of replies is cut at MAX_CONTEXT characters."""
    hook = given("claude-code", "UserPromptSubmit")
    assert hooks.answer("claude-code", hook, hooks.News(hub="/h", seat="a"), blocks=0, cap=3) == ({}, False)
    flood = hooks.News(hub="/h", seat="a", replies=(REPLY,) * 500)
    output, _ = hooks.answer("claude-code", hook, flood, blocks=0, cap=3)
    assert len(output["hookSpecificOutput"]["additionalContext"]) <= hooks.MAX_CONTEXT
