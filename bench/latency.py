"""Drop → reply latency for a running daemon, at a low rate (no queueing).

    .venv/bin/python bench/latency.py [--runs 3] [--count 200] [--rate 20]

Two ways of dropping: an atomic rename from a staging dir beside the hub (how agents and sync
clients deliver; must not pay the settle wait), and a plain write in the lane itself (open,
write, close; read only after `settle`). Latency runs from just before the writer's last
syscall to the moment the reply file exists.
"""

from __future__ import annotations

import argparse
import os
import time

from common import envelope, make_hub, percentiles, reply_name, start, stop, table, wait_until


def one_run(count: int, rate: float, in_place: bool) -> list[float]:
    hub, state, config = make_hub("rescan_interval = 30\n")
    daemon = start(hub, state, config)
    try:
        wait_until((state / "slopd.log").exists, timeout=30)
        time.sleep(0.5)
        latencies = []
        for index in range(count):
            envelope_id, data = envelope(index)
            reply = hub / "outbox" / reply_name(envelope_id)
            if in_place:
                with open(hub / "inbox" / f"{envelope_id}.md", "wb") as writer:
                    writer.write(data)
                    began = time.monotonic()
            else:
                staged = hub.parent / "staging" / f"{envelope_id}.md"
                staged.write_bytes(data)
                began = time.monotonic()
                os.rename(staged, hub / "inbox" / f"{envelope_id}.md")
            done = wait_until(reply.exists, timeout=30)
            latencies.append((done - began) * 1000)
            time.sleep(max(1 / rate - (time.monotonic() - began), 0))
        return latencies
    finally:
        stop(daemon)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--rate", type=float, default=20.0)
    args = parser.parse_args()
    rows = []
    for label, in_place in (("rename into inbox/", False), ("written in place (settle)", True)):
        medians, all_values = [], []
        for _ in range(args.runs):
            values = one_run(args.count, args.rate, in_place)
            medians.append(percentiles(values)["median"])
            all_values.extend(values)
        rows.append((label, percentiles(all_values)))
        print(f"{label}: per-run medians {', '.join(f'{m:.2f}' for m in medians)} ms", flush=True)
    print(
        table(f"drop -> reply latency, {args.count} drops at {args.rate:g}/s x {args.runs} runs", rows, "ms")
    )


if __name__ == "__main__":
    main()
