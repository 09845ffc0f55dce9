"""The pure pieces of the HTTP transport: rate-limit windows and headers, problem details."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from slopd.transport.problems import BASE, TITLES, Problem
from slopd.transport.ratelimit import Limiter


def test_a_window_allows_its_quota_then_refuses_with_retry_after_then_resets() -> None:
    limiter = Limiter(quota=3, window=60)
    answers = [limiter.take("alice", 100.0 + step) for step in range(4)]
    assert [answer.allowed for answer in answers] == [True, True, True, False]
    assert answers[0].headers["RateLimit-Policy"] == '"default";q=3;w=60'
    assert [answer.headers["RateLimit"] for answer in answers] == [
        '"default";r=2;t=60',
        '"default";r=1;t=59',
        '"default";r=0;t=58',
        '"default";r=0;t=57',
    ]
    assert answers[3].headers["Retry-After"] == "57"
    assert "Retry-After" not in answers[2].headers
    assert limiter.take("bob", 103.0).allowed  # partitions are separate
    assert limiter.take("alice", 160.0).allowed  # a new window
    assert limiter.take("alice", 160.0).headers["RateLimit"] == '"default";r=1;t=60'


def test_a_fresh_window_never_resets_later_than_the_window() -> None:
    """`t` and `Retry-After` at a window's first request are the window, however the start adds up
    in floating point (221.00244132750024 + 60 - 221.00244132750024 is a hair over 60, whose
    ceiling is 61)."""
    for now in (17.008900283665973, 221.00244132750024, 32708.045194681847):
        answer = Limiter(0).take("alice", now)
        assert answer.headers["Retry-After"] == "60", now
        assert answer.headers["RateLimit"].endswith(";t=60"), now


@given(st.lists(st.floats(0, 1000, allow_nan=False), min_size=1, max_size=200), st.integers(1, 10))
def test_never_more_than_the_quota_in_one_window(offsets: list[float], quota: int) -> None:
    """Fixed windows, each begun by the first request at or past the end of the last: the first
    `quota` requests of a window pass, the rest do not; so no 60 s span passes more than twice it."""
    limiter = Limiter(quota=quota, window=60)
    times = sorted(offsets)
    allowed = [now for now in times if limiter.take("s", now).allowed]
    start, passed, expected = None, 0, []
    for now in times:
        if start is None or now - start >= 60:
            start, passed = now, 0
        if passed < quota:
            expected.append(now)
            passed += 1
    assert allowed == expected
    for first in allowed:
        assert sum(1 for now in allowed if first <= now < first + 60) <= 2 * quota


def test_every_problem_kind_renders_with_its_type_and_status() -> None:
    for kind, (status, title) in TITLES.items():
        body = Problem(kind, "why").body()
        assert body == {"type": BASE + kind, "title": title, "status": status, "detail": "why"}
        assert Problem(kind, "why").status == status
    invalid = Problem("invalid-envelope", "two faults", ("a", "b")).body()
    assert invalid["errors"] == [{"reason": "a"}, {"reason": "b"}]
    json.dumps(invalid)
