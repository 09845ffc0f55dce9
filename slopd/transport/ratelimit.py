"""Requests per seat per window, and the headers that say so (draft-ietf-httpapi-ratelimit-headers). Pure.

Rules:
1. Each partition (a seat, or `ip:ADDRESS` before a token is known) gets `quota` requests per
   fixed window of `window` seconds, the window starting at its first request.
2. Every answer carries `RateLimit-Policy: "default";q=QUOTA;w=WINDOW` and
   `RateLimit: "default";r=REMAINING;t=SECONDS-TO-RESET`; a refused one adds `Retry-After`.
3. Time comes in (`now`, monotonic seconds); partitions idle for a window are forgotten.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Allowance:
    allowed: bool
    headers: dict[str, str]


@dataclass
class Limiter:
    quota: int
    window: float = 60.0
    _windows: dict[str, tuple[float, int]] = field(default_factory=dict)

    def take(self, partition: str, now: float) -> Allowance:
        """Rules 1 and 2: one request of `partition` at `now`."""
        if len(self._windows) > 4096:
            self._windows = {key: seen for key, seen in self._windows.items() if now - seen[0] < self.window}
        started, used = self._windows.get(partition, (now, 0))
        if now - started >= self.window:
            started, used = now, 0
        allowed = used < self.quota
        used += allowed
        self._windows[partition] = (started, used)
        reset = max(0, math.ceil(self.window - (now - started)))  # not started + window - now: float error
        headers = {
            "RateLimit-Policy": f'"default";q={self.quota};w={self.window:g}',
            "RateLimit": f'"default";r={self.quota - used};t={reset}',
        }
        if not allowed:
            headers["Retry-After"] = str(max(1, reset))
        return Allowance(allowed, headers)
