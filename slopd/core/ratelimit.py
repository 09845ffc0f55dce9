"""How many notifications reach the human: at most `burst` per `window` seconds. Pure: time comes in.

Rules:
1. Within a window the first `burst` notifications go out as they come; the rest are held.
2. When the window ends, everything held goes out as one "N more notifications" message
   (the last one quoted), so a burst of errors never floods a phone.
3. On shutdown, whatever is held goes out at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BURST = 5
WINDOW = 60.0


@dataclass
class RateLimit:
    """Pure bookkeeping: which notifications go out now, and what the window's end owes."""

    burst: int = BURST
    window: float = WINDOW
    started: float | None = None
    sent: int = 0
    held: list[str] = field(default_factory=list)

    def offer(self, text: str, now: float) -> str | None:
        """The text to send now, or None when it is held for the summary."""
        if self.started is None or now - self.started >= self.window:
            self.started, self.sent = now, 0
        if self.sent < self.burst:
            self.sent += 1
            return text
        self.held.append(text)
        return None

    def due(self, now: float) -> str | None:
        """At the window's end: one notification standing for everything held back."""
        if not self.held or (self.started is not None and now - self.started < self.window):
            return None
        count, last = len(self.held), self.held[-1]
        self.held.clear()
        self.started, self.sent = now, 1
        return f"{count} more notifications (see slopd tail); the last: {last}"[:400]

    def flush(self) -> str | None:
        """On shutdown: whatever is held, at once."""
        if not self.held:
            return None
        self.started = None
        summary = self.due(float("inf"))
        self.started = None
        return summary

    def deadline(self) -> float:
        if not self.held or self.started is None:
            return float("inf")
        return self.started + self.window
