"""Drain time for a backlog: N envelopes already in inbox/ when the daemon starts.

    .venv/bin/python bench/drain.py [--runs 3] [--count 10000]

Prints spawn → last reply, throughput, and the daemon's RSS at start and at its peak, so a
memory that grows with the backlog shows.
"""

from __future__ import annotations

import argparse
import os
import time

from common import envelope, make_hub, rss_mb, start, stop


def one_run(count: int) -> dict[str, float]:
    hub, state, config = make_hub("rescan_interval = 30\n")
    for index in range(count):
        envelope_id, data = envelope(index)
        (hub / "inbox" / f"{envelope_id}.md").write_bytes(data)
    old = time.time() - 60
    for name in os.listdir(hub / "inbox"):
        os.utime(hub / "inbox" / name, (old, old))
    began = time.monotonic()
    daemon = start(hub, state, config)
    peak = first = 0.0
    try:
        while True:
            try:
                rss = rss_mb(daemon.pid)
            except (FileNotFoundError, IndexError):
                rss = 0.0
            first = first or rss
            peak = max(peak, rss)
            if len(os.listdir(hub / "outbox")) >= count:
                break
            if time.monotonic() - began > 600:
                raise TimeoutError("drain did not finish in 10 minutes")
            time.sleep(0.05)
        elapsed = time.monotonic() - began
    finally:
        stop(daemon)
    return {"seconds": elapsed, "per_second": count / elapsed, "rss_first": first, "rss_peak": peak}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--count", type=int, default=10_000)
    args = parser.parse_args()
    print(f"{'run':>4} {'drain s':>9} {'msgs/s':>9} {'RSS start MB':>13} {'RSS peak MB':>12}")
    results = []
    for run in range(1, args.runs + 1):
        result = one_run(args.count)
        results.append(result)
        print(
            f"{run:>4} {result['seconds']:>9.2f} {result['per_second']:>9.0f} "
            f"{result['rss_first']:>13.1f} {result['rss_peak']:>12.1f}",
            flush=True,
        )
    ordered = sorted(result["seconds"] for result in results)
    print(f"median drain of {args.count}: {ordered[len(ordered) // 2]:.2f} s")


if __name__ == "__main__":
    main()
