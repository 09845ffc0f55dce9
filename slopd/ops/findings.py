"""What `slopd doctor` finds: one line each, a level, a topic, what is so and how to fix it.

Rules:
1. Every check yields findings: `ok`, `info` (worth knowing, never wrong), `warn` (works, but
   may bite) or `problem` (slopd will refuse to start, or a lane or command will fail). A warn or
   a problem always carries a fix.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Finding:
    level: str  # ok, info, warn, problem
    topic: str
    text: str
    fix: str | None = None

    def line(self) -> str:
        fix = f"{'' if self.text.endswith(('.', '?')) else '.'} Fix: {self.fix}" if self.fix else ""
        return f"{self.level:<8}{self.topic}: {self.text}{fix}"
