"""Tool round-trips of the MCP server against `slopd send` as a process (issue 17's performance).

    .venv/bin/python bench/mcp_tools.py          # 300 calls in-process, 150 on stdio, 20 CLI sends
    .venv/bin/python bench/mcp_tools.py --quick  # a smoke pass (a few seconds)

Contenders, on one fresh hub (no daemon: the figures are the transport's, not the pipeline's):
  in-process  the SDK's `Client(server)` on `slopd.transport.mcp.server.build` (memory streams)
  stdio       the SDK's stdio client driving `slopd mcp --hub HUB --seat SEAT` (one process, kept)
  cli         `slopd send --hub HUB …` spawned once per message, as an agent without MCP does
For `slop_send` (an envelope written atomically into inbox/, its receipt in the ledger) and
`slop_status` (its state read back). Time is perf_counter around each call; the table prints
the median and p99 in ms. Goal: MCP at least 10× faster per message than spawning the CLI —
printed MET or MISSED, never asserted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
from common import SLOPD, machine_line, make_hub, percentiles, render_table
from mcp import Client, StdioServerParameters

from slopd.shell.config import Config
from slopd.shell.lanes import Hub
from slopd.transport.mcp.seat import Seat
from slopd.transport.mcp.server import build

ROOT = Path(__file__).resolve().parent.parent


async def _calls(client: Client, count: int, tag: str) -> tuple[list[float], list[float]]:
    sends, statuses = [], []
    for number in range(count):
        started = time.perf_counter()
        sent = await client.call_tool(
            "slop_send", {"type": "note", "to": "watcher", "body": f"note {tag} {number}"}
        )
        sends.append(time.perf_counter() - started)
        assert not sent.is_error, sent.content
        ident = (sent.structured_content or {})["id"]
        started = time.perf_counter()
        status = await client.call_tool("slop_status", {"id": ident})
        statuses.append(time.perf_counter() - started)
        assert not status.is_error, status.content
    return sends, statuses


async def in_process(hub: Path, state: Path, count: int) -> tuple[list[float], list[float]]:
    seat = Seat(Hub(hub), state, "bench", Config(names=("watcher",)))
    try:
        async with Client(build(lambda _context: seat, seat.guide)) as client:
            return await _calls(client, count, "memory")
    finally:
        seat.close()


async def stdio(hub: Path, state: Path, count: int) -> tuple[list[float], list[float]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = ["-m", "slopd", "mcp", "--hub", str(hub), "--state", str(state), "--seat", "bench"]
    async with Client(StdioServerParameters(command=sys.executable, args=args, env=env)) as client:
        await client.call_tool("slop_hub_info", {})  # the process is up and warm
        return await _calls(client, count, "stdio")


def cli(hub: Path, count: int) -> list[float]:
    times = []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for number in range(count):
        started = time.perf_counter()
        subprocess.run(
            [*SLOPD, "send", "--hub", str(hub), "--type", "note", "--from", "bench", "--to", "watcher", "-"],
            input=f"note cli {number}".encode(),
            env=env,
            check=True,
            capture_output=True,
        )
        times.append(time.perf_counter() - started)
    return times


def _row(name: str, times: list[float]) -> list[str]:
    figures = percentiles(times)
    return [name, str(len(times)), f"{figures['median'] * 1e3:.2f}", f"{figures['p99'] * 1e3:.2f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    memory_count, stdio_count, cli_count = (30, 20, 5) if args.quick else (300, 150, 20)
    hub, state, _config = make_hub()
    memory = anyio.run(in_process, hub, state, memory_count)
    piped = anyio.run(stdio, hub, state, stdio_count)
    spawned = cli(hub, cli_count)
    rows = []
    for name, sends, statuses in (("in-process", *memory), ("stdio", *piped)):
        for tool, times in (("slop_send", sends), ("slop_status", statuses)):
            rows.append(_row(f"{name} {tool}", times))
    rows.append(_row("cli slopd send", spawned))
    cli_figures = percentiles(spawned)
    print(machine_line(("mcp", "watchdog", "PyYAML")))
    print(render_table(["contender", "calls", "median ms", "p99 ms"], rows))
    print("\ngoals (MCP ≥ 10× faster per message than spawning the CLI):")
    for name, sends in (("in-process", memory[0]), ("stdio", piped[0])):
        ratio = cli_figures["median"] / percentiles(sends)["median"]
        verdict = "MET" if ratio >= 10 else "MISSED"
        print(f"  {name:10s} slop_send: {ratio:5.1f}× faster than slopd send  {verdict}")


if __name__ == "__main__":
    main()
