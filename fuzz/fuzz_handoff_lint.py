#!/usr/bin/env python3
"""Coverage-guided fuzzing of the MEP handoff lint and grammar with atheris (libFuzzer).

Invariants (slopd/handoff/lint.py and grammar.py rule 1), for any bytes:
- `lint(data)` returns a `Report` (it never raises), whose findings are sorted by line, name a
  line of the file (1 ≤ line ≤ its number of lines), a rule MEP1–MEP11, a message and a fix;
  the report is conformant exactly when no finding is an error;
- the text lint read (UTF-8, undecodable bytes as surrogate escapes) renders back exactly:
  `render(parse(text)) == text`, and so does the report (a standup's preamble, then its log).

    python fuzz/fuzz_handoff_lint.py -runs=100000        # seed corpus fuzz/corpus/handoff_lint
    python fuzz/fuzz_handoff_lint.py -max_total_time=600 WORK_DIR fuzz/corpus/handoff_lint
"""

from __future__ import annotations

import sys

import atheris
from common import libfuzzer_argv

with atheris.instrument_imports(include=["slopd"]):
    from slopd.handoff.grammar import parse, render
    from slopd.handoff.lint import ERROR, Report, lint

RULES = frozenset(f"MEP{number}" for number in range(1, 12))


def test_one_input(data: bytes) -> None:
    report = lint(data)
    if not isinstance(report, Report):
        raise AssertionError(f"lint returned {type(report).__name__}")
    text = data.decode("utf-8", "surrogateescape")
    if render(parse(text)) != text or report.head + render(report.log) != text:
        raise AssertionError("render(parse(text)) is not the text lint read")
    lines = max(1, len(text.splitlines()))
    order = [(finding.line, finding.rule) for finding in report.findings]
    if order != sorted(order):
        raise AssertionError(f"findings out of line order: {order}")
    for finding in report.findings:
        if not 1 <= finding.line <= lines:
            raise AssertionError(f"{finding.rule} names line {finding.line} of a {lines}-line file")
        if finding.rule not in RULES or not finding.message or not finding.fix:
            raise AssertionError(f"a finding without a known rule, a message or a fix: {finding}")
    if report.conformant != (not any(finding.severity == ERROR for finding in report.findings)):
        raise AssertionError("conformant does not match the findings' severities")


def main() -> None:
    atheris.Setup(libfuzzer_argv(sys.argv, "handoff_lint"), test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
