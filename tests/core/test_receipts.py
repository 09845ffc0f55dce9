"""The receipt and cursor decisions of SPEC §12 (`core.receipts`), as the tables of docs/http.md."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slopd.core.receipts import (
    WRITTEN,
    Cursor,
    Receipt,
    check_cursor,
    is_terminal,
    public_state,
)


def receipt(sha: str = "a" * 64, state: str = WRITTEN) -> Receipt:
    return Receipt(1, "x", "X", "alice", "query", "X.md", sha, "2026-12-01T00:00:00.000Z", state)


@pytest.mark.parametrize(
    ("status", "same", "duplicate", "expected"),
    [
        (None, True, False, "received"),
        ("received", True, False, "received"),
        ("queued", True, False, "received"),
        ("executing", True, False, "executing"),
        ("finished", True, False, "executing"),
        ("done", True, False, "done"),
        ("done", False, True, "duplicate"),
        ("done", False, False, "done"),
        (None, False, True, "received"),
    ],
)
def test_public_state_table(status: str | None, same: bool, duplicate: bool, expected: str) -> None:
    assert public_state(status, same_bytes=same, seen_as_duplicate=duplicate) == expected


@pytest.mark.parametrize(
    ("after", "oldest", "tail", "expected"),
    [
        (0, 0, 0, Cursor.OK),
        (1, 0, 0, Cursor.AHEAD),
        (5, 1, 5, Cursor.OK),
        (6, 1, 5, Cursor.AHEAD),
        (0, 1, 5, Cursor.OK),
        (3, 5, 9, Cursor.EXPIRED),
        (4, 5, 9, Cursor.OK),
        (2, 5, 9, Cursor.EXPIRED),
    ],
)
def test_cursor_table(after: int, oldest: int, tail: int, expected: Cursor) -> None:
    assert check_cursor(after, oldest=oldest, tail=tail) is expected


@given(st.integers(0, 10**6), st.integers(1, 10**6), st.integers(0, 10**6))
def test_a_cursor_within_what_is_kept_is_always_good(oldest: int, span: int, offset: int) -> None:
    """Every cursor from oldest - 1 to the tail reads; one past the tail is ahead."""
    tail = oldest + span
    after = max(oldest - 1, 0) + offset % (tail - max(oldest - 1, 0) + 1)
    assert check_cursor(after, oldest=oldest, tail=tail) is Cursor.OK
    assert check_cursor(tail + 1, oldest=oldest, tail=tail) is Cursor.AHEAD


@pytest.mark.parametrize(
    ("types", "kinds", "expected"),
    [
        ([], ("result", "error"), False),
        (["ack"], ("result", "error"), False),
        (["ack", "result"], ("result", "error"), True),
        (["ack"], ("ack",), True),
        (["error"], ("ack",), True),
        (["error"], (), True),
        (["ack"], (), False),
    ],
)
def test_terminal_replies(types: list[str], kinds: tuple[str, ...], expected: bool) -> None:
    assert is_terminal(types, kinds) is expected
