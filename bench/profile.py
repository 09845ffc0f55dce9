"""Where slopd's time goes at saturation: cProfile over `slopd run --once` on a backlog of handoffs.

    .venv/bin/python bench/profile.py [--count 2000] [--top 30] [--orders]

Builds a hub with `--count` handoffs (or, with --orders, `mode: discuss` signed orders) written a
minute ago (so nothing waits to settle), then runs

    python -m cProfile -o PROFILE -m slopd run --once --hub H --state S --config C

and prints the functions with the most time of their own (tottime) and the most time including
their callees (cumulative). --once runs the loop in the main thread only, which is the thread
that does all of slopd's per-envelope work; the watcher thread is not started.
"""

from __future__ import annotations

import argparse
import io
import os
import pstats
import subprocess
import sys
import time

from common import SLOPD, envelope
from compare import Signer, Slopd


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--orders", action="store_true", help="signed `mode: discuss` orders in authorized/")
    args = parser.parse_args()

    signer = Signer()
    lab = Slopd(signer).lab()
    if args.orders:
        lane = lab.lane("authorized")
        for order_id, data, signature in signer.orders(args.count, "profile", action=False):
            (lane / f"{order_id}.md.sig").write_bytes(signature)
            (lane / f"{order_id}.md").write_bytes(data)
    else:
        lane = lab.lane("inbox")
        for index in range(args.count):
            envelope_id, data = envelope(index, nonce="profile")
            (lane / f"{envelope_id}.md").write_bytes(data)
    old = time.time() - 60
    for name in os.listdir(lane):
        os.utime(lane / name, (old, old))
    os.sync()
    output = lab.base / "slopd.prof"
    command = [
        sys.executable,
        "-m",
        "cProfile",
        "-o",
        str(output),
        *SLOPD[1:],
        "run",
        "--once",
        "--hub",
        str(lab.hub),
        "--state",
        str(lab.state),
        "--config",
        str(lab.config),
    ]
    began = time.monotonic()
    subprocess.run(command, check=True, stderr=subprocess.DEVNULL)
    elapsed = time.monotonic() - began
    replies = sum(1 for name in os.listdir(lab.lane("outbox")) if name.endswith(".result.md"))
    print(f"# {' '.join(command[:5])} … run --once: {replies} replies in {elapsed:.2f} s under cProfile")
    for order in ("tottime", "cumulative"):
        buffer = io.StringIO()
        stats = pstats.Stats(str(output), stream=buffer)
        stats.strip_dirs().sort_stats(order).print_stats(args.top)
        text = buffer.getvalue()
        print(f"\n## top {args.top} by {order}\n")
        print(text[text.find("   ncalls") :].rstrip())


if __name__ == "__main__":
    main()
