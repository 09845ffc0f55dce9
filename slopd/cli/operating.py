"""Commands for the human who runs slopd: `doctor` (check the set-up), `service install`."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

from slopd.ops import doctor as doctor_checks
from slopd.ops import running
from slopd.ops import service as services


def doctor(args: argparse.Namespace) -> int:
    hub = Path(args.hub).expanduser().absolute()
    config = Path(args.config).expanduser() if args.config else None
    findings = doctor_checks.diagnose(hub, config, running.locate(hub, args.state), datetime.now(UTC))
    for finding in findings:
        print(finding.line())
    problems = [finding.topic for finding in findings if finding.level == "problem"]
    warnings = sum(finding.level == "warn" for finding in findings)
    if problems:
        print(f"{len(problems)} problem(s): {', '.join(problems)}")
        return 1
    print(f"no problems ({warnings} warning(s))")
    return 0


def service_install(args: argparse.Namespace) -> int:
    plan = services.plan_for(args.kind, hub=args.hub, config=args.config, target_dir=args.target_dir)
    if args.dry_run:
        for path, data in plan.files:
            print(f"# {path}\n{data.decode().rstrip()}\n")
        print("# --dry-run: nothing written")
    else:
        for line in services.install(plan):
            print(line)
    for note in plan.notes:
        print(f"note: {note}")
    print("next:")
    for command in plan.commands:
        print(f"  {command}")
    return 0
