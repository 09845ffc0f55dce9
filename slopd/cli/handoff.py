"""`slopd handoff lint|merge|install-merge-driver|new`: MEP handoff logs, no hub or daemon needed.

Exit status: lint 0 clean, 1 findings, 2 a file that cannot be read; merge 0 clean, 1 conflict
markers left (git's contract); new 1 when the entry was refused (nothing written).
"""

from __future__ import annotations

import argparse
import json
import stat
import sys
from datetime import UTC, datetime
from pathlib import Path

from slopd.core.errors import UsageError
from slopd.handoff import compose, gitdriver
from slopd.handoff.lint import Finding, Report, lint
from slopd.handoff.merge import merge as merge_logs
from slopd.shell import fs, reads

MAX_LOG_BYTES = 64 << 20


def _read(path: Path) -> bytes:
    contents = reads.read_once(path, MAX_LOG_BYTES)
    if isinstance(contents, reads.Unreadable):
        raise OSError(0, f"the file {contents.reason}", str(path))
    return contents.data


def _line(name: str, finding: Finding) -> str:
    return f"{name}:{finding.line}: {finding.rule} {finding.message} — {finding.fix}"


def lint_files(args: argparse.Namespace) -> int:
    worst, reports = 0, []
    for name in args.files:
        try:
            report = lint(_read(Path(name)))
        except OSError as error:
            print(f"{name}: {error.strerror or error}", file=sys.stderr)
            reports.append({"file": name, "error": str(error.strerror or error)})
            worst = 2
            continue
        reports.append({"file": name, **_as_json(report)})
        if not args.json:
            for finding in report.findings:
                print(_line(name, finding))
        if not report.clean(strict=args.strict):
            worst = max(worst, 1)
    if args.json:
        print(json.dumps(reports if len(args.files) > 1 else (reports[0] if reports else {}), indent=2))
    return worst


def _as_json(report: Report) -> dict[str, object]:
    return {"conformant": report.conformant, "findings": [finding.as_dict() for finding in report.findings]}


def merge(args: argparse.Namespace) -> int:
    """git's contract: read BASE, OURS, THEIRS; write the result into OURS; 0 clean, 1 conflicts."""
    if args.marker_size < 1:
        raise UsageError("--marker-size must be at least 1")
    texts = [
        _read(Path(name)).decode("utf-8", "surrogateescape") for name in (args.base, args.ours, args.theirs)
    ]
    merged = merge_logs(*texts, marker_size=args.marker_size)
    ours = Path(args.ours)
    fs.write_file(ours, merged.text.encode("utf-8", "surrogateescape"), mode=_mode(ours), replace=True)
    if merged.conflicts:
        what = (
            "the file headers conflict" if merged.log else "a side is not a handoff log: whole-file conflict"
        )
        print(f"slopd handoff merge: {ours}: {what}; markers written", file=sys.stderr)
    return 1 if merged.conflicts else 0


def _mode(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return 0o644


def install_merge_driver(args: argparse.Namespace) -> int:
    patterns = tuple(args.pattern) or gitdriver.DEFAULT_PATTERNS
    installed = gitdriver.install(Path(args.repo), patterns)
    print(f"merge.mep.driver = {installed.driver}")
    for line in installed.added:
        print(f"{installed.attributes}: added {line}")
    if not installed.added:
        print(f"{installed.attributes}: already routes {', '.join(patterns)} to the driver")
    return 0


def new(args: argparse.Namespace) -> int:
    path = Path(args.file)
    v2 = args.platform is not None or args.session_type is not None
    if args.context is not None and v2:
        raise UsageError("give --context (a v1 header) or --platform and --session-type (v2), not both")
    if args.context is None and not (args.platform and args.session_type):
        raise UsageError("a v2 header needs --platform and --session-type (or give --context for v1)")
    listed = args.happened or args.pending or args.watch
    if not listed and sys.stdin.isatty():
        raise UsageError("give --happened/--pending/--watch, or pipe the sections in as Markdown")
    sections = None if listed else sys.stdin.read()
    day = args.date or datetime.now(UTC).date().isoformat()
    parts = compose.Parts(
        date=day,
        agent=args.agent,
        context=args.context,
        platform=args.platform,
        session_type=args.session_type,
        tag_in=args.tag_in,
        tag_out=args.tag_out,
        happened=tuple(args.happened),
        pending=tuple(args.pending),
        watch=tuple(args.watch),
        sections=sections,
    )
    existing = _read(path).decode("utf-8", "surrogateescape") if path.exists() else None
    text, problems = compose.accepts(existing, compose.entry(parts))
    if problems:
        for finding in problems:
            where = f"{path}: the new entry, line {finding.line}"
            print(f"{where}: {finding.rule} {finding.message} — {finding.fix}", file=sys.stderr)
        print(f"slopd handoff new: {path}: the entry was refused; nothing was written", file=sys.stderr)
        return 1
    fs.write_file(path, text.encode("utf-8", "surrogateescape"), mode=_mode(path), replace=True)
    print(f"{path}: entry for {day} added")
    return 0
