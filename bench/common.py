"""Shared helpers for slopd's benchmarks: hubs, envelopes, daemons, /proc readings, statistics."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SLOPD = [sys.executable, "-m", "slopd"]
TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def make_hub(config: str = "") -> tuple[Path, Path, Path]:
    """A fresh hub, its state dir and config file, all in a new temp dir (kept for inspection)."""
    base = Path(tempfile.mkdtemp(prefix="slopd-bench-", dir=os.environ.get("BENCH_TMP", "/var/tmp")))
    hub = base / "hub"
    subprocess.run([*SLOPD, "init", str(hub)], check=True, capture_output=True)
    (base / "staging").mkdir()
    cfg = base / "config.toml"
    cfg.write_text(config, encoding="utf-8")
    return hub, base / "state", cfg


def envelope(index: int, kind: str = "handoff", body_bytes: int = 900) -> tuple[str, bytes]:
    """An envelope like an agent's handoff (~1.3 KB), its id derived from `index`."""
    envelope_id = f"20260704t071553z-bench-{index:07d}"
    body = ("# Bench handoff\n\nA sentence of work to hand over. " * 40)[:body_bytes]
    text = (
        f"---\nprotocol: slop.v1\nid: {envelope_id}\ntype: {kind}\nfrom: bench\nto: watcher\n"
        f"in_reply_to: null\ncreated_at: 2026-07-04T07:15:53Z\nauth: none\n---\n{body}\n"
    )
    return envelope_id, text.encode()


def reply_name(envelope_id: str, kind: str = "handoff") -> str:
    return f"{envelope_id}.{'ack' if kind in ('handshake', 'note') else 'result'}.md"


def start(hub: Path, state: Path, config: Path, *extra: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, XDG_CONFIG_HOME=str(config.parent / "xdg"))
    return subprocess.Popen(
        [*SLOPD, "run", "--hub", str(hub), "--state", str(state), "--config", str(config), *extra],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_until(condition, timeout: float = 120.0, interval: float = 0.0002) -> float:  # type: ignore[no-untyped-def]
    """Spin until `condition()` is true; returns the monotonic time it became true."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("benchmark condition not met")
        time.sleep(interval)
    return time.monotonic()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mb(pid: int) -> float:
    pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return pages * PAGE / 1e6


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def at(fraction: float) -> float:
        return ordered[min(int(fraction * len(ordered)), len(ordered) - 1)]

    return {
        "median": statistics.median(ordered),
        "p90": at(0.90),
        "p99": at(0.99),
        "min": ordered[0],
        "max": ordered[-1],
    }


def table(title: str, rows: list[tuple[str, dict[str, float]]], unit: str) -> str:
    lines = [title, f"{'':28} {'median':>10} {'p90':>10} {'p99':>10} {'min':>10} {'max':>10}  ({unit})"]
    for label, values in rows:
        cells = " ".join(f"{values[key]:>10.2f}" for key in ("median", "p90", "p99", "min", "max"))
        lines.append(f"{label:28} {cells}")
    return "\n".join(lines)
