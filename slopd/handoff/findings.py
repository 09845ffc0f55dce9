"""What lint finds: a rule broken at a line, with what is wrong and how to fix it. Pure.

Rules (SPEC §10): MEP1–MEP6 are errors, MEP7–MEP11 warnings; a file is conformant when it has
no error.
"""

from __future__ import annotations

from dataclasses import dataclass

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True, slots=True)
class Finding:
    line: int
    rule: str
    message: str
    fix: str

    @property
    def severity(self) -> str:
        return ERROR if int(self.rule[3:]) <= 6 else WARNING

    def as_dict(self) -> dict[str, object]:
        return {
            "line": self.line,
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "fix": self.fix,
        }

    def moved(self, lines: int) -> Finding:
        """The same finding `lines` lines further down (a log that starts inside a larger file)."""
        return Finding(self.line + lines, self.rule, self.message, self.fix)
