"""Idle cost: CPU% and RSS of a daemon watching an empty hub, with inotify and with --polling.

.venv/bin/python bench/idle.py [--seconds 30] [--runs 3]
"""

from __future__ import annotations

import argparse
import time

from common import cpu_seconds, make_hub, rss_mb, start, stop, wait_until


def one_run(seconds: float, polling: bool) -> tuple[float, float]:
    hub, state, config = make_hub()
    daemon = start(hub, state, config, *(["--polling"] if polling else []))
    try:
        wait_until((state / "slopd.log").exists, timeout=30, interval=0.05)
        time.sleep(2.0)
        before = cpu_seconds(daemon.pid)
        time.sleep(seconds)
        used = cpu_seconds(daemon.pid) - before
        return 100 * used / seconds, rss_mb(daemon.pid)
    finally:
        stop(daemon)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"{'observer':10} {'run':>4} {'CPU % of a core':>16} {'RSS MB':>8}")
    for label, polling in (("inotify", False), ("polling", True)):
        for run in range(1, args.runs + 1):
            cpu, rss = one_run(args.seconds, polling)
            print(f"{label:10} {run:>4} {cpu:>16.3f} {rss:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
