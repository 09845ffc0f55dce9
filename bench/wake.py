"""Waking agents (issue 27): from a reply's commit to each waiter's wake-up, side by side, one run.

    .venv/bin/python bench/wake.py           # 30 rounds (~1 min)
    .venv/bin/python bench/wake.py --quick   # a smoke pass (5 rounds)

One real `slopd run --http 127.0.0.1:0` on a fresh hub (seat `bench`, its token), whose executor
is a gate: an `instigate` is acked at once and answered only when this script opens its gate. Each
round drops an instigate from `bench` (renamed into inbox/: read at once), waits for its ack, then
sets every waiter on its terminal reply and opens the gate. Waiters, all at once:
  feed long-poll      GET /v1/replies?after=TAIL&wait=30 (the HTTP feed; bench/http_transport.py's
                      figure 3) — the yardstick
  envelope long-poll  GET /v1/envelopes/ID/replies?wait=30
  notify /mcp         a Streamable HTTP session subscribed to slop://replies (resources/subscribe),
                      woken by the daemon's bell: the notification's arrival in the SDK client
  notify stdio        the same over `slopd mcp --hub` (its own process), woken by the filesystem
                      (outbox/ and the ledger's WAL)
  slop_wait /mcp      slop_wait(ids=[ID]) over /mcp: the tool's result back in the client
  slop_wait stdio     the same over `slopd mcp --hub`
  slopd wait          `slopd wait --hub --seat bench --id ID` (a process already started and
                      watching): its exit, seen by this script
Figure = the waiter's wall-clock time minus the `reply.written` line of STATE/slopd.log for the
result (logged once the reply file is durable and named, just before the ledger commit that rings
the bell), so every figure includes that commit. Printed: n, p50, p90, p99, max in ms, and each
p50/p99 against the feed long-poll's. Nothing is asserted; --json FILE keeps the raw figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
from common import SLOPD, machine_line, percentiles, precompile, render_table, scratch
from http_transport import Client, log_events, log_time
from mcp import Client as McpClient
from mcp import StdioServerParameters, types
from mcp.client.session import IncomingMessage
from mcp.client.streamable_http import streamable_http_client

SEAT = "bench"
GATE = (  # the executor: answers an instigate once its gate file exists
    "import os, pathlib, sys, time\n"
    "gate = pathlib.Path(sys.argv[1]) / os.environ['SLOP_ID']\n"
    "while not gate.exists():\n"
    "    time.sleep(0.001)\n"
    "print('done')\n"
)
WAITERS = (
    "feed long-poll",
    "envelope long-poll",
    "notify /mcp",
    "notify stdio",
    "slop_wait /mcp",
    "slop_wait stdio",
    "slopd wait",
)


class Daemon:
    def __init__(self) -> None:
        base = scratch("slopd-wake-")
        self.hub, self.state, self.gates = base / "hub", base / "state", base / "gates"
        self.gates.mkdir()
        config, tokens, gate = base / "config.toml", base / "tokens", base / "gate.py"
        gate.write_text(GATE)
        subprocess.run([*SLOPD, "init", str(self.hub)], check=True, capture_output=True)
        added = subprocess.run(
            [*SLOPD, "token", "add", "--tokens", str(tokens), SEAT],
            check=True,
            capture_output=True,
            text=True,
        )
        self.token = added.stdout.strip()
        argv = json.dumps([sys.executable, str(gate), str(self.gates)])
        config.write_text(
            f'settle = 0.05\n[executor]\ncommand = {argv}\nmax_parallel = 4\n[http]\ntokens = "{tokens}"\n'
            "rate_limit = 1000000\n",
            encoding="utf-8",
        )
        self.env = dict(os.environ, XDG_CONFIG_HOME=str(base / "xdg"))
        command = [*SLOPD, "run", "--hub", str(self.hub), "--state", str(self.state), "--config", str(config)]
        self.process = subprocess.Popen(
            [*command, "--http", "127.0.0.1:0"],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not (found := self._listening()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("bench/wake.py: slopd did not start")
            time.sleep(0.02)
        self.url = found

    def _listening(self) -> str | None:
        events = log_events(self.state / "slopd.log")
        urls = [str(line["url"]) for line in events if line.get("event") == "http.listening"]
        ready = any(line.get("event") == "watcher.started" for line in events)
        return urls[-1] if urls and ready else None

    def drop(self, ident: str) -> None:
        text = (
            f"---\nprotocol: slop.v1\nid: {ident}\ntype: instigate\nfrom: {SEAT}\nto: watcher\n"
            f"in_reply_to: null\ncreated_at: 2026-12-01T09:00:00Z\nauth: none\n---\nWake me.\n"
        )
        staged = self.hub.parent / f"{ident}.md"
        staged.write_text(text)
        os.rename(staged, self.hub / "inbox" / f"{ident}.md")

    def written(self, reply: str) -> float | None:
        for line in log_events(self.state / "slopd.log"):
            if line.get("event") == "reply.written" and line.get("reply") == reply:
                return log_time(str(line["timestamp"]))
        return None

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)


def watching(pid: int) -> bool:
    """Whether `pid` holds an inotify instance: its wait is armed (Linux)."""
    try:
        return any(os.readlink(fd) == "anon_inode:inotify" for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False


class Heard:
    """When each `notifications/resources/updated` arrived (wall clock), for the round under way."""

    def __init__(self) -> None:
        self.at: list[float] = []

    async def __call__(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.at.append(time.time())


async def subscribe(client: McpClient) -> None:
    request = types.SubscribeRequest(params=types.SubscribeRequestParams(uri="slop://replies"))
    await client.session.send_request(request, types.EmptyResult)


@dataclass
class Sessions:
    """The four MCP sessions of a run, subscribed and waiting, over /mcp and over stdio, and what the
    subscribed ones heard."""

    notified_http: McpClient
    waits_http: McpClient
    notified_stdio: McpClient
    waits_stdio: McpClient
    heard_http: Heard
    heard_stdio: Heard


async def rounds(daemon: Daemon, count: int) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {name: [] for name in WAITERS}
    headers = {"Authorization": f"Bearer {daemon.token}"}
    stdio = StdioServerParameters(
        command=sys.executable,
        args=["-m", "slopd", "mcp", "--hub", str(daemon.hub), "--state", str(daemon.state), "--seat", SEAT],
        env=daemon.env,
    )
    heard_http, heard_stdio = Heard(), Heard()
    endpoint = daemon.url + "/mcp"
    async with (
        httpx2.AsyncClient(headers=headers, timeout=90) as http_a,
        httpx2.AsyncClient(headers=headers, timeout=90) as http_b,
        McpClient(
            streamable_http_client(endpoint, http_client=http_a), message_handler=heard_http, mode="legacy"
        ) as notified_http,
        McpClient(streamable_http_client(endpoint, http_client=http_b), mode="legacy") as waits_http,
        McpClient(stdio, message_handler=heard_stdio, mode="legacy") as notified_stdio,
        McpClient(stdio, mode="legacy") as waits_stdio,
    ):
        sessions = Sessions(notified_http, waits_http, notified_stdio, waits_stdio, heard_http, heard_stdio)
        await subscribe(notified_http)
        await subscribe(notified_stdio)
        for number in range(count):
            woke, committed = await one_round(
                daemon, sessions, f"20261201t090000z-wake-{os.getpid()}-{number:04d}"
            )
            if committed is None:
                print(f"!! round {number}: no reply.written for its result")
                continue
            for name in WAITERS:
                if name in woke:
                    figures[name].append(woke[name] - committed)
                else:
                    print(f"!! round {number}: {name} did not wake")
    return figures


async def one_round(daemon: Daemon, sessions: Sessions, ident: str) -> tuple[dict[str, float], float | None]:
    """Drop an instigate, wait for its ack, set every waiter on its result, open its gate: when each woke."""
    daemon.drop(ident)
    while daemon.written(f"{ident}.ack") is None:
        await anyio.sleep(0.005)
    await anyio.sleep(0.05)  # the ack's notifications are in; what follows is the result's
    client = Client(daemon.url, daemon.token)
    tail = int(json.loads(client.get("/v1/replies?after=0&limit=1")[1])["tail_cursor"])
    client.close()
    sessions.heard_http.at.clear()
    sessions.heard_stdio.at.clear()
    woke: dict[str, float] = {}
    command = ["wait", "--hub", str(daemon.hub), "--state", str(daemon.state), "--seat", SEAT, "--id", ident]
    process = subprocess.Popen(
        [*SLOPD, *command, "--timeout", "60"],
        env=daemon.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def exited() -> None:
        process.wait()
        woke["slopd wait"] = time.time()

    def poll(name: str, path: str) -> None:
        Client(daemon.url, daemon.token).get(path)
        woke[name] = time.time()

    threads = [
        threading.Thread(target=exited),
        threading.Thread(target=poll, args=("feed long-poll", f"/v1/replies?after={tail}&wait=30")),
        threading.Thread(target=poll, args=("envelope long-poll", f"/v1/envelopes/{ident}/replies?wait=30")),
    ]
    for thread in threads:
        thread.start()

    async def tool(name: str, session: McpClient) -> None:
        await session.call_tool("slop_wait", {"ids": [ident], "timeout_s": 50})
        woke[name] = time.time()

    async with anyio.create_task_group() as group:
        group.start_soon(tool, "slop_wait /mcp", sessions.waits_http)
        group.start_soon(tool, "slop_wait stdio", sessions.waits_stdio)
        deadline = time.monotonic() + 30
        while not watching(process.pid) and time.monotonic() < deadline:
            await anyio.sleep(0.005)
        await anyio.sleep(0.2)  # the tool calls and long-polls are waiting server-side by now
        (daemon.gates / ident).touch()
    for thread in threads:
        await anyio.to_thread.run_sync(thread.join)
    await anyio.sleep(0.05)
    if sessions.heard_http.at:
        woke["notify /mcp"] = sessions.heard_http.at[0]
    if sessions.heard_stdio.at:
        woke["notify stdio"] = sessions.heard_stdio.at[0]
    return woke, daemon.written(f"{ident}.result")


def report(figures: dict[str, list[float]]) -> None:
    base = percentiles(figures["feed long-poll"])
    rows = []
    for name in WAITERS:
        values = figures[name]
        if not values:
            rows.append([name, "0", "-", "-", "-", "-", "-", "-"])
            continue
        found = percentiles(values)
        rows.append([
            name, str(len(values)),
            *(f"{found[key] * 1000:.2f}" for key in ("median", "p90", "p99", "max")),
            f"{found['median'] / base['median']:.2f}x", f"{found['p99'] / base['p99']:.2f}x",
        ])  # fmt: skip
    print(machine_line(("mcp", "watchdog", "uvicorn")))
    print("\n== reply commit (reply.written) -> waiter awake (ms)")
    print(render_table(["waiter", "n", "p50", "p90", "p99", "max", "p50 vs feed", "p99 vs feed"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 rounds: a smoke pass")
    parser.add_argument("--rounds", type=int, help="rounds (default 30)")
    parser.add_argument("--json", metavar="FILE", help="write the raw figures (seconds) here")
    args = parser.parse_args()
    count = args.rounds or (5 if args.quick else 30)
    precompile()
    daemon = Daemon()
    try:
        figures = anyio.run(rounds, daemon, count)
    finally:
        daemon.stop()
    report(figures)
    if args.json:
        Path(args.json).write_text(json.dumps({"rounds": count, "figures": figures}, indent=1))


if __name__ == "__main__":
    main()
