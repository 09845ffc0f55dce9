"""Where slopd's time goes at saturation: a profile of `slopd run --once` on a backlog of handoffs.

    .venv/bin/python bench/profile.py [--count 2000] [--top 30] [--orders] [--py-spy]

With --py-spy the run is sampled by py-spy (500 Hz, not blocking the process), which skews
small Python calls far less than cProfile does, and the samples are summed per function:
inclusive (the function and what it calls) and self time, as shares of all samples.

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
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from common import SLOPD, envelope, precompile
from compare import Signer, Slopd


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--orders", action="store_true", help="signed `mode: discuss` orders in authorized/")
    parser.add_argument("--py-spy", action="store_true", help="sample with py-spy instead of cProfile")
    args = parser.parse_args()

    precompile()
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
    output = lab.base / ("slopd.spy" if args.py_spy else "slopd.prof")
    run = ["run", "--once", "--hub", str(lab.hub), "--state", str(lab.state), "--config", str(lab.config)]
    if args.py_spy:
        spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or "py-spy"
        record = [spy, "record", "--nonblocking", "--rate", "500", "--format", "raw", "-o", str(output)]
        command = [*record, "--", *SLOPD, *run]
    else:
        command = [sys.executable, "-m", "cProfile", "-o", str(output), *SLOPD[1:], *run]
    began = time.monotonic()
    subprocess.run(command, check=True, stderr=subprocess.DEVNULL)
    elapsed = time.monotonic() - began
    replies = sum(1 for name in os.listdir(lab.lane("outbox")) if name.endswith(".result.md"))
    sampler = "py-spy" if args.py_spy else "cProfile"
    print(f"# {' '.join(command[:5])} … run --once: {replies} replies in {elapsed:.2f} s under {sampler}")
    if args.py_spy:
        print_samples(output, args.top)
        return
    for order in ("tottime", "cumulative"):
        buffer = io.StringIO()
        stats = pstats.Stats(str(output), stream=buffer)
        stats.strip_dirs().sort_stats(order).print_stats(args.top)
        text = buffer.getvalue()
        print(f"\n## top {args.top} by {order}\n")
        print(text[text.find("   ncalls") :].rstrip())


def print_samples(path: Path, top: int) -> None:
    """Sum py-spy's raw (collapsed) stacks per function: inclusive and self shares."""
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        stack, _, count = line.rpartition(" ")
        samples = int(count)
        total += samples
        frames = [re.sub(r":\d+\)$", ")", frame) for frame in stack.split(";")]
        for frame in set(frames):
            inclusive[frame] += samples
        own[frames[-1]] += samples
    for title, counter in (("inclusive", inclusive), ("self", own)):
        print(f"\n## top {top} by {title} samples (of {total})\n")
        for frame, samples in counter.most_common(top):
            print(f"{100 * samples / total:5.1f} %  {frame}")


if __name__ == "__main__":
    main()
