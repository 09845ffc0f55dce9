"""Admission's rules (`core.admission`, SPEC §14) as a table, and its totality over any bytes."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slopd.core.admission import (
    ACTION_OUTSIDE,
    Examined,
    New,
    Refusal,
    Refused,
    Replay,
    examine,
    judge,
)
from tests.conftest import envelope_text

LIMIT = 1 << 20


def data(**fields: Any) -> bytes:
    return envelope_text(**fields).encode()


def sha(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def examined(raw: bytes, lane: str = "inbox", seat: str | None = None) -> Examined:
    found = examine(raw, name="x.md", lane=lane, max_bytes=LIMIT, seat=seat)
    assert isinstance(found, Examined), found
    return found


def test_bytes_that_do_not_parse_are_invalid_with_every_reason() -> None:
    """Rule 1: the parser's reasons, all of them, and the id and sender when they could be read."""
    raw = data(to="bad to!", type="bogus")
    refused = examine(raw, name="x.md", lane="inbox", max_bytes=LIMIT)
    assert isinstance(refused, Refused)
    assert refused.refusal is Refusal.INVALID
    assert len(refused.reasons) == 2
    assert (refused.id, refused.sender) == ("20260704t071553z-example", "claude-code")
    assert refused.sha256 == sha(raw)


def test_a_seat_speaks_only_for_itself_and_a_file_has_no_seat() -> None:
    """Rule 2: over HTTP and MCP `from` must be the seat; in a lane anyone may drop anything."""
    raw = data(from_="mallory")
    refused = examine(raw, name="x.md", lane="inbox", max_bytes=LIMIT, seat="alice")
    assert isinstance(refused, Refused)
    assert refused.refusal is Refusal.WRONG_SEAT
    assert refused.reasons == ("the envelope is from 'mallory'; this seat is 'alice'",)
    assert examined(raw).envelope.sender == "mallory"


@pytest.mark.parametrize(
    ("action", "lane", "known", "expected"),
    [
        (None, "inbox", None, New),
        (None, "inbox", "same", Replay),
        (None, "inbox", "other", Refusal.CONFLICT),
        ("deploy", "inbox", None, Refusal.ACTION),
        ("deploy", "authorized", None, New),
        ("deploy", "inbox", "same", Replay),  # rule 3 before 5: a replayed order is the duplicate no-op
        ("deploy", "inbox", "other", Refusal.CONFLICT),
        (None, "authorized", "other", Refusal.CONFLICT),
    ],
)
def test_judge_table(action: str | None, lane: str, known: str | None, expected: object) -> None:
    """Rules 3-6, in order: the first that applies decides."""
    raw = data(action=action, type="instigate")
    found = examined(raw, lane)
    recorded = {None: None, "same": sha(raw), "other": "0" * 64}[known]
    judged = judge(found, recorded)
    if isinstance(expected, Refusal):
        assert isinstance(judged, Refused)
        assert judged.refusal is expected
        assert (judged.id, judged.sender, judged.sha256) == (found.envelope.id, "claude-code", sha(raw))
    else:
        assert type(judged) is expected
        assert judged.examined == found  # type: ignore[union-attr]


def test_the_reasons_name_the_rule_and_only_the_refused_bytes() -> None:
    """Rules 4 and 5's reasons: the conflict names the id and the refused bytes' digest, never the
    first's (it may be another seat's)."""
    raw = data(id="Run-7", action="deploy", type="instigate")
    conflict = judge(examined(raw), "f" * 64)
    assert isinstance(conflict, Refused)
    assert conflict.reasons == (
        f"conflict: id Run-7 was already used with other content (this content's sha256 {sha(raw)})",
    )
    assert "f" * 64 not in conflict.reasons[0]
    action = judge(examined(raw), None)
    assert isinstance(action, Refused)
    assert action.reasons == (ACTION_OUTSIDE,)


@given(st.binary(max_size=2048), st.sampled_from(["inbox", "authorized"]), st.sampled_from([None, "alice"]))
def test_examine_answers_any_bytes_with_a_value(raw: bytes, lane: str, seat: str | None) -> None:
    """Total: whatever the bytes, a value — never an exception — with their digest."""
    found = examine(raw, name="x.md", lane=lane, max_bytes=LIMIT, seat=seat)
    assert found.sha256 == sha(raw)
    if isinstance(found, Refused):
        assert found.reasons
