"""`slopd.core.ratelimit.RateLimit`: at most `burst` notifier runs per window, the rest coalesced.

Pure bookkeeping with the time handed in; the daemon-level behaviour (12 errors → 5 runs and one
"7 more") is in tests/e2e/test_running_daemon.py.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from slopd.core.ratelimit import BURST, WINDOW, RateLimit

SUMMARY = re.compile(r"(\d+) more notifications \(see slopd tail\); the last: (.*)", re.DOTALL)


def test_the_defaults_are_five_per_minute() -> None:
    """The daemon's limiter lets 5 notifications through per 60 s."""
    assert (BURST, WINDOW) == (5, 60.0)
    limit = RateLimit()
    assert (limit.burst, limit.window) == (5, 60.0)


def test_a_burst_passes_then_the_rest_is_held() -> None:
    """The first `burst` offers in a window are sent as they are; later ones are held (None)."""
    limit = RateLimit(burst=3, window=60.0)
    assert [limit.offer(f"n{i}", 0.0) for i in range(3)] == ["n0", "n1", "n2"]
    assert limit.offer("n3", 1.0) is None
    assert limit.offer("n4", 59.5) is None
    assert limit.held == ["n3", "n4"]
    assert limit.deadline() == 60.0


def test_nothing_held_means_no_summary_and_no_deadline() -> None:
    """Below the burst there is nothing to coalesce: `due`/`flush` give None, `deadline` is inf."""
    limit = RateLimit(burst=3, window=60.0)
    assert limit.deadline() == math.inf
    assert limit.offer("only", 0.0) == "only"
    assert limit.due(1000.0) is None
    assert limit.flush() is None
    assert limit.deadline() == math.inf


def test_the_window_rolls_over_after_window_seconds() -> None:
    """An offer `window` seconds after the window began starts a new window with a fresh burst."""
    limit = RateLimit(burst=2, window=60.0)
    assert limit.offer("a", 10.0) == "a"
    assert limit.offer("b", 20.0) == "b"
    assert limit.offer("c", 69.5) is None  # still the window that began at 10
    assert limit.offer("d", 70.0) == "d"  # 60 s after 10: a new window
    assert limit.offer("e", 70.0) == "e"
    assert limit.offer("f", 70.0) is None


def test_due_at_the_window_end_gives_one_summary_with_the_count_and_the_last_text() -> None:
    """At the window's end the held texts become one "N more" notification naming the last one."""
    limit = RateLimit(burst=5, window=60.0)
    for number in range(12):
        limit.offer(f"error for file-{number}.md: bad", 0.0)
    assert limit.due(59.0) is None
    summary = limit.due(60.0)
    assert summary == "7 more notifications (see slopd tail); the last: error for file-11.md: bad"
    assert limit.held == []
    assert limit.due(200.0) is None  # said once


def test_the_summary_opens_the_next_window_and_uses_one_of_its_burst() -> None:
    """The summary counts against the new window: burst − 1 more pass before holding again."""
    limit = RateLimit(burst=3, window=60.0)
    for number in range(5):
        limit.offer(f"t{number}", 0.0)
    assert limit.due(60.0) is not None
    assert limit.offer("u0", 61.0) == "u0"
    assert limit.offer("u1", 61.0) == "u1"
    assert limit.offer("u2", 61.0) is None
    assert limit.deadline() == 120.0


def test_flush_sends_what_is_held_at_once() -> None:
    """`flush` (shutdown) does not wait for the window's end and counts everything held."""
    limit = RateLimit(burst=1, window=60.0)
    limit.offer("first", 0.0)
    limit.offer("second", 1.0)
    limit.offer("third", 2.0)
    summary = limit.flush()
    assert summary is not None
    match = SUMMARY.fullmatch(summary)
    assert match is not None
    assert (match.group(1), match.group(2)) == ("2", "third")
    assert limit.held == []
    assert limit.flush() is None


def test_a_summary_is_at_most_400_characters() -> None:
    """A long held text cannot make the summary long: it is cut at 400 characters."""
    limit = RateLimit(burst=1, window=60.0)
    limit.offer("x", 0.0)
    limit.offer("y" * 5000, 0.0)
    summary = limit.due(60.0)
    assert summary is not None
    assert len(summary) == 400
    assert summary.startswith("1 more notifications")


# -- any sequence --------------------------------------------------------------------------------


@dataclass
class Sent:
    at: float
    text: str
    summary: bool


steps = st.lists(
    st.tuples(
        st.integers(0, 90),  # seconds since the previous step
        st.integers(0, 9),  # notifications offered at this step
        st.booleans(),  # whether the loop's tick runs before (True) or after the offers
    ),
    max_size=40,
)


def drive(limit: RateLimit, plan: list[tuple[int, int, bool]]) -> tuple[list[Sent], int, Sent | None]:
    """Run `plan` the way the daemon does (offers from handling, `due` from its tick), then flush."""
    sent: list[Sent] = []
    offered, now = 0, 0.0

    def tick() -> None:
        summary = limit.due(now)
        if summary is not None:
            sent.append(Sent(now, summary, True))

    for gap, count, tick_first in plan:
        now += gap
        if tick_first:
            tick()
        for _ in range(count):
            text = f"notification {offered}"
            offered += 1
            allowed = limit.offer(text, now)
            if allowed is not None:
                assert allowed == text
                sent.append(Sent(now, allowed, False))
        if not tick_first:
            tick()
    final = limit.flush()
    return sent, offered, Sent(math.inf, final, True) if final is not None else None


def summarized(message: Sent) -> int:
    match = SUMMARY.fullmatch(message.text)
    assert match is not None, message.text
    return int(match.group(1))


@settings(max_examples=400, deadline=None)
@given(plan=steps, burst=st.integers(1, 6), window=st.sampled_from([1.0, 30.0, 60.0]))
def test_any_sequence_is_rate_limited_and_loses_nothing(
    plan: list[tuple[int, int, bool]], burst: int, window: float
) -> None:
    """Never more than `burst` runs per window (plus the shutdown summary); sent + summarized == offered."""
    limit = RateLimit(burst=burst, window=window)
    sent, offered, final = drive(limit, plan)

    # Nothing lost, nothing counted twice.
    individual = [message for message in sent if not message.summary]
    counted = sum(summarized(message) for message in sent if message.summary)
    if final is not None:
        counted += summarized(final)
    assert len(individual) + counted == offered
    # Individual notifications keep their order and are never repeated.
    numbers = [int(message.text.split()[-1]) for message in individual]
    assert numbers == sorted(set(numbers))

    # Windows: each starts at a send at least `window` after the previous window's start.
    start: float | None = None
    in_window = 0
    for message in sent:
        if start is None or message.at - start >= window:
            start, in_window = message.at, 0
        in_window += 1
        assert in_window <= burst, (message, start)

    assert limit.held == []  # the shutdown flush left nothing behind


@settings(max_examples=200, deadline=None)
@given(plan=steps, burst=st.integers(1, 6))
def test_held_notifications_are_summarized_by_the_window_deadline(
    plan: list[tuple[int, int, bool]], burst: int
) -> None:
    """After any sequence, a tick at `deadline()` releases every held notification."""
    limit = RateLimit(burst=burst, window=60.0)
    offered, now = 0, 0.0
    for gap, count, _ in plan:
        now += gap
        for _ in range(count):
            limit.offer(f"n{offered}", now)
            offered += 1
    held = len(limit.held)
    deadline = limit.deadline()
    if held == 0:
        assert deadline == math.inf
        return
    if deadline > now:
        assert limit.due(math.nextafter(deadline, -math.inf)) is None
    summary = limit.due(max(deadline, now))
    assert summary is not None
    assert summary.startswith(f"{held} more notifications")
    assert limit.held == []
