"""The one way a test waits: poll a condition until it holds, with a deadline.

Rules:
1. `until(condition, timeout, interval)` calls `condition` until it returns something truthy and
   returns that value. The condition is always called at least once, and once more after the
   deadline has passed, so a slow machine never fails a condition that holds by then.
2. Past `timeout` seconds it raises `DeadlineError` (an `AssertionError`): "condition not met within
   T s", with the condition's name and its last value. A test that wants to go on and let its
   own checks say what is missing suppresses `DeadlineError`.
3. `until_async` is the same for async tests: same arguments, same failure; the condition may be
   a function or a coroutine function, and the wait between calls is `anyio.sleep`, so the event
   loop (an in-process server, a client's task) runs meanwhile.
4. Nothing here sleeps to let time pass: a test that must prove something did NOT happen waits
   for a later event that proves the daemon went past that point, then asserts.
   (`RunningDaemon.until` is `until` that also fails at once if the daemon has exited.)
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

TIMEOUT = 20.0
INTERVAL = 0.05


class DeadlineError(AssertionError):
    """A condition did not hold within its deadline."""


def until(condition: Callable[[], Any], timeout: float = TIMEOUT, interval: float = INTERVAL) -> Any:
    """Call `condition` until it returns something truthy (returned); `DeadlineError` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        expired = time.monotonic() > deadline
        value = condition()
        if value:
            return value
        if expired:
            raise DeadlineError(_message(condition, timeout, value))
        time.sleep(interval)


async def until_async(
    condition: Callable[[], Any | Awaitable[Any]], timeout: float = TIMEOUT, interval: float = INTERVAL
) -> Any:
    """`until` for async tests: `condition` may return an awaitable, which is awaited."""
    deadline = time.monotonic() + timeout
    while True:
        expired = time.monotonic() > deadline
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if expired:
            raise DeadlineError(_message(condition, timeout, value))
        await anyio.sleep(interval)


def _message(condition: Callable[[], Any], timeout: float, last: Any) -> str:
    name = getattr(condition, "__qualname__", repr(condition))
    shown = repr(last)
    shown = shown if len(shown) <= 500 else shown[:500] + "…"
    return f"condition not met within {timeout} s: {name} last gave {shown}"
