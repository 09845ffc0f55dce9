"""Drop → reply over MCP against HTTP, in one run (issue 24, point 8).

    .venv/bin/python bench/mcp_drop.py           # 30 rounds
    .venv/bin/python bench/mcp_drop.py --quick   # 5 rounds, a smoke pass

One real `slopd run --http 127.0.0.1:0` with the default `settle` (0.3 s), and per round, in turn:
  HTTP           POST /v1/envelopes, then GET …/replies?wait=30 until the terminal reply
  /mcp           the SDK's Streamable HTTP client: slop_send, then slop_status(wait_s=30)
  stdio          a kept `slopd mcp --hub --state` process: slop_send, then slop_status(wait_s=30)
  link drop      an envelope named by link() into inbox/, as slopd's own drops were before this
                 change: the watcher sees a file created in place and waits out `settle`
Each figure runs from the send to the client holding the terminal reply (a `query` is answered by
a `result`). A drop the daemon reads at once answers in tens of ms; one that waits out `settle`
takes ≥ 300 ms. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import anyio
import httpx2
from common import ReplyWatcher, machine_line, percentiles, render_table
from http_transport import SEAT, Client, Ids, atomic_drop, kill_children, open_dir, start_slopd
from mcp import Client as McpClient
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parent.parent


async def mcp_round(client: McpClient, number: int, tag: str) -> float:
    began = time.perf_counter()
    sent = await client.call_tool("slop_send", {"type": "query", "to": "watcher", "body": f"{tag} {number}?"})
    assert not sent.is_error, sent.content
    ident = (sent.structured_content or {})["id"]
    status = await client.call_tool("slop_status", {"id": ident, "wait_s": 30})
    assert not status.is_error, status.content
    assert (status.structured_content or {}).get("terminal"), status.structured_content
    return time.perf_counter() - began


def http_round(client: Client, ids: Ids) -> float:
    ident, data = ids.next("mcp-bench-http")
    began = time.perf_counter()
    assert client.post(data) == 202
    status, body = client.get(f"/v1/envelopes/{ident}/replies?wait=30")
    assert status == 200, body
    return time.perf_counter() - began


def link_round(inbox_fd: int, watcher: ReplyWatcher, ids: Ids) -> float:
    ident, data = ids.next("mcp-bench-link")
    began = time.monotonic()
    atomic_drop(inbox_fd, f"{ident}.md", data)
    name = f"{ident}.result.md"
    assert watcher.wait_for([name], timeout=30)
    return watcher.seen[name] - began


async def run(rounds: int) -> dict[str, list[float]]:
    slopd = start_slopd(settle=0.3)
    found: dict[str, list[float]] = {"HTTP": [], "/mcp": [], "stdio": [], "link drop (settle)": []}
    client, ids = Client(slopd.url, slopd.token), Ids()
    inbox_fd, watcher = open_dir(slopd.hub / "inbox"), ReplyWatcher(slopd.hub / "outbox")
    stdio_args = ["-m", "slopd", "mcp", "--hub", str(slopd.hub), "--state", str(slopd.state), "--seat", SEAT]
    parameters = StdioServerParameters(
        command=sys.executable, args=stdio_args, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    try:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {slopd.token}"}, timeout=60) as http,
            McpClient(streamable_http_client(f"{slopd.url}/mcp", http_client=http)) as over_http,
            McpClient(stdio_client(parameters, errlog=open(os.devnull, "w"))) as over_stdio,
        ):
            await over_stdio.call_tool("slop_hub_info", {})
            for number in range(rounds):
                found["HTTP"].append(await anyio.to_thread.run_sync(lambda: http_round(client, ids)))
                found["/mcp"].append(await mcp_round(over_http, number, "over /mcp"))
                found["stdio"].append(await mcp_round(over_stdio, number, "over stdio"))
                found["link drop (settle)"].append(
                    await anyio.to_thread.run_sync(lambda: link_round(inbox_fd, watcher, ids))
                )
    finally:
        client.close()
        watcher.close()
        os.close(inbox_fd)
        kill_children()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 rounds")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    rounds = 5 if args.quick else args.rounds
    found = anyio.run(run, rounds)
    print(machine_line())
    print(f"drop -> terminal reply, {rounds} rounds each, interleaved; settle = 0.3 s")
    http = percentiles(found["HTTP"])["median"]
    rows = []
    for name, times in found.items():
        figures = percentiles(times)
        median, p99 = figures["median"], figures["p99"]
        rows.append([name, f"{median * 1000:.1f}", f"{p99 * 1000:.1f}", f"{median / http:.2f}x"])
    print(render_table(["contender", "p50 ms", "p99 ms", "p50 / HTTP"], rows))


if __name__ == "__main__":
    main()
