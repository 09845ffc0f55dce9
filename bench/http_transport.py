"""The HTTP transport (issue 15) side by side with its floor and with the folder, in one run.

    .venv/bin/python bench/http_transport.py          # every figure, 3 saturation rounds (~1 min)
    .venv/bin/python bench/http_transport.py --clients 8 --rounds 5
    .venv/bin/python bench/http_transport.py --quick  # smoke pass, small counts (< 20 s)

Contenders, each in its own process, all on this machine's loopback and scratch filesystem:
  slopd      a real `slopd run --http 127.0.0.1:0` on a fresh hub, the watcher running (every
             envelope posted is also routed, answered and archived by the same process), with
             `[http] rate_limit` raised out of the way
  floor      a bare Starlette app on the same uvicorn (same settings: asyncio loop, h11, no
             access log) whose one handler, POST /v1/envelopes, reads the body, takes the id
             with a regex and does the same atomic write in a worker thread as slopd's intake —
             temp file in the same folder, fsync, link to ID.md, unlink the temp, fsync the
             folder — then answers 202 with a small JSON (id, sha256, received_at); nothing
             else: no token, no parse, no ledger, no watcher
  file drop  that same atomic write done by this process straight into slopd's `inbox/`, as
             `slopd send` drops a file (latency only: there is no receipt to wait for)
  floor + receipt  (saturation only, for scale) the floor's handler at /receipted/v1/envelopes:
             the same drop, then the one thing SPEC §12 adds that the floor skips — a durable
             receipt, one INSERT committed with synchronous=FULL into a SQLite WAL file, writers
             queued on one Python lock (as slopd's are) — then 202. No goal is judged on it: it
             says how much of the gap to the floor is the durable receipt itself.

Figures:
  1. POST -> 202 receipt latency at a paced --rate/s per contender (the three take turns, the
     gaps jittered ±50 % so nothing keeps step with the daemon's own work, and share the same
     minutes), over one keep-alive connection each; then saturation:
     --clients threads, each with its own keep-alive `http.client` connection, posting as fast
     as they can for --seconds, slopd and the floor alternating for --rounds rounds. slopd's
     watcher drains its inbox between rounds, so no contender runs against another's work.
  2. drop -> reply latency: over HTTP (POST, then GET /v1/envelopes/ID/replies?wait=30 on the
     same connection until `terminal`) against over the folder (the atomic drop into inbox/,
     then outbox/ID.result.md seen by a bare inotify watch in this process), interleaved. Both
     name the file by a hard link, which slopd treats as written in place: it reads it once
     `settle` has passed. A third row renames the file in from outside the hub (bench/compare.py's
     drop), which slopd reads at once: the difference is what `settle` costs.
  3. the reply feed's long-poll wake-up: a client waits on GET /v1/replies?after=TAIL&wait=30,
     then an envelope is dropped into inbox/; figure = the client's wall-clock time when the
     answer is read, minus the reply's commit. The commit is stamped two ways, same clock:
     the `reply.written` line of STATE/slopd.log (logged once the reply file is durable and
     named, just before the ledger commit that rings the feed's bell), and the reply file's
     appearance in outbox/ (inotify, this process). Both come before the ledger commit, so
     both figures include it: they are upper bounds of the wake-up itself.

slopd runs with `settle = --settle` (default 0.05 s; slopd's own default is 0.3 s). Goals
(issue 15): throughput >= 0.8x the floor's, p99 receipt <= 2x the floor's, feed wake-up <= 5 ms
after the reply's commit (judged on the p99). Printed under `goals:`, never asserted. Raw
figures: --json FILE.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import hashlib
import http.client
import itertools
import json
import logging
import os
import random
import re
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from common import (
    SLOPD,
    ReplyWatcher,
    envelope,
    machine_line,
    percentiles,
    precompile,
    render_table,
    scratch,
    spread,
    tree_cpu_seconds,
    tree_cpu_times,
)

SEAT = "bench"
# slopd's default `settle` is 0.3 s. A hard link (how slopd's HTTP intake, `slopd send` and the
# file drop here name a file) lands as an inotify `created`, so slopd waits `settle` for it, as for
# a file written in place; a file renamed in from outside inbox/ is read at once.
SETTLE = 0.05
RATE_LIMIT = 1_000_000_000  # requests per seat per minute: out of the way
GOAL_THROUGHPUT, GOAL_P99, GOAL_WAKE_MS = 0.8, 2.0, 5.0
TEMP_PREFIX, TEMP_SUFFIX = ".slopd-tmp-", ".tmp"  # slopd's temp names (core.layout): ignored by its watcher
_ID = re.compile(rb"^id: *([A-Za-z0-9._-]+) *$", re.MULTILINE)
_CHILDREN: list[subprocess.Popen[bytes]] = []
_PR_SET_PDEATHSIG = 1


# -- the atomic drop, shared by the floor's handler and the file-drop contender ------------------


def atomic_drop(dir_fd: int, name: str, data: bytes) -> None:
    """Write `name` in the folder `dir_fd` as slopd's `fs.atomic_write(replace=False)` does."""
    temp = f"{TEMP_PREFIX}{os.urandom(6).hex()}-{name}{TEMP_SUFFIX}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, 0o644, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        os.unlink(temp, dir_fd=dir_fd)
    finally:
        os.close(fd)
    os.fsync(dir_fd)


def rename_drop(staging_fd: int, inbox_fd: int, name: str, data: bytes) -> None:
    """Write `name` outside the hub, fsync, rename it into inbox/, fsync inbox/ (bench/compare.py's drop)."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644, dir_fd=staging_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(name, name, src_dir_fd=staging_fd, dst_dir_fd=inbox_fd)
    os.fsync(inbox_fd)


def open_dir(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


# -- the floor server (this file, run with --serve-floor DIR, in its own process) ---------------


def serve_floor(directory: str) -> int:
    """A bare Starlette app on uvicorn: POST /v1/envelopes = the atomic drop, then 202."""
    import anyio.to_thread  # noqa: PLC0415  # only the floor's process needs the server stack
    import uvicorn  # noqa: PLC0415
    from starlette.applications import Starlette  # noqa: PLC0415
    from starlette.requests import Request  # noqa: PLC0415
    from starlette.responses import Response  # noqa: PLC0415
    from starlette.routing import Route  # noqa: PLC0415

    dir_fd = open_dir(Path(directory))
    receipts = Path(directory).parent / "floor-receipts.sqlite3"
    with contextlib.closing(sqlite3.connect(receipts)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE IF NOT EXISTS receipts (id TEXT PRIMARY KEY, sha256 TEXT, received_at TEXT)")
    local, writing = threading.local(), threading.Lock()

    def record(ident: str, sha: str, stamp: str) -> None:
        """The durable receipt of `floor + receipt`: one INSERT, synced, writers one at a time."""
        db = getattr(local, "db", None)
        if db is None:
            db = local.db = sqlite3.connect(receipts, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA synchronous=FULL")
        with writing:
            db.execute("INSERT INTO receipts VALUES (?, ?, ?)", (ident, sha, stamp))

    def handler(receipted: bool) -> Callable[[Request], Awaitable[Response]]:
        async def post(request: Request) -> Response:
            data = await request.body()
            found = _ID.search(data)
            if found is None:
                return Response(b'{"title":"no id"}', 400, media_type="application/json")
            ident = found.group(1).decode()
            now = datetime.now(UTC)
            body = {
                "id": ident,
                "sha256": hashlib.sha256(data).hexdigest(),
                "received_at": now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z",
            }

            def write() -> None:
                atomic_drop(dir_fd, f"{ident}.md", data)
                if receipted:
                    record(ident, body["sha256"], body["received_at"])

            await anyio.to_thread.run_sync(write)
            return Response(
                json.dumps(body, separators=(",", ":")).encode(), 202, media_type="application/json"
            )

        return post

    app = Starlette(
        routes=[
            Route("/v1/envelopes", handler(False), methods=["POST"]),
            Route("/receipted/v1/envelopes", handler(True), methods=["POST"]),
        ]
    )
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets that say so (slopd's uvicorn binds
    # its own, which do); without it every answer waits 40 ms for a delayed ACK.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(2048)  # connections made before uvicorn runs wait in the backlog
    config = uvicorn.Config(
        app,
        loop="asyncio",
        lifespan="on",
        log_config=None,
        log_level=logging.WARNING,
        access_log=False,
        server_header=False,
    )
    print(f"http://127.0.0.1:{listener.getsockname()[1]}", flush=True)
    uvicorn.Server(config).run(sockets=[listener])
    return 0


# -- processes ---------------------------------------------------------------------------------


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM it when this script dies, even by SIGKILL (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def spawn(command: list[str], **options: Any) -> subprocess.Popen[bytes]:
    child = subprocess.Popen(command, preexec_fn=_die_with_parent, **options)  # noqa: PLW1509
    _CHILDREN.append(child)
    return child


def kill_children() -> None:
    """SIGTERM each child this script started, then SIGKILL whichever is still there."""
    for child in _CHILDREN:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    for child in _CHILDREN:
        try:
            child.wait(timeout=15)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    _CHILDREN.clear()


@dataclass
class Slopd:
    hub: Path
    state: Path
    process: subprocess.Popen[bytes]
    url: str
    token: str
    start_s: float  # spawn -> http.listening


def start_slopd(settle: float = SETTLE) -> Slopd:
    base = scratch("slopd-http-")
    hub, state, config, tokens = base / "hub", base / "state", base / "config.toml", base / "tokens"
    subprocess.run([*SLOPD, "init", str(hub)], check=True, capture_output=True)
    made = subprocess.run(
        [*SLOPD, "token", "add", "--tokens", str(tokens), SEAT], check=True, capture_output=True, text=True
    )
    token = made.stdout.strip()
    config.write_text(
        f'settle = {settle}\n\n[http]\ntokens = "{tokens}"\nrate_limit = {RATE_LIMIT}\n', encoding="utf-8"
    )
    env = dict(os.environ, XDG_CONFIG_HOME=str(base / "xdg"))
    command = [*SLOPD, "run", "--hub", str(hub), "--state", str(state), "--config", str(config)]
    began = time.monotonic()
    process = spawn(
        [*command, "--http", "127.0.0.1:0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    log = state / "slopd.log"
    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            raise SystemExit(
                f"bench/http_transport.py: slopd exited with {process.returncode} before listening"
            )
        if time.monotonic() > deadline:
            raise SystemExit("bench: slopd did not log http.listening within 60 s")
        listening = [line for line in log_events(log) if line.get("event") == "http.listening"]
        if listening and any(line.get("event") == "watcher.started" for line in log_events(log)):
            return Slopd(hub, state, process, str(listening[-1]["url"]), token, time.monotonic() - began)
        time.sleep(0.02)


def start_floor() -> tuple[Path, subprocess.Popen[bytes], str]:
    inbox = scratch("floor-http-") / "inbox"
    inbox.mkdir()
    process = spawn(
        [sys.executable, str(Path(__file__).resolve()), "--serve-floor", str(inbox)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    url = process.stdout.readline().decode().strip()
    if not url.startswith("http://"):
        raise SystemExit(f"bench: the floor did not start (exit {process.poll()})")
    Client(url, "").get("/nothing")  # uvicorn serves once it answers: a 404 is fine
    return inbox, process, url


def log_events(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    events = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            events.append(json.loads(line))
    return events


def log_time(stamp: str) -> float:
    """The log's `timestamp` (ISO UTC, microseconds, `Z`) as seconds since the epoch."""
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).timestamp()


def inbox_empty(hub: Path) -> bool:
    return not any(not name.startswith(".") for name in os.listdir(hub / "inbox"))


def drain(hub: Path, timeout: float = 120.0) -> float:
    """Wait until slopd has answered and archived everything in `inbox/`; the seconds it took."""
    began = time.monotonic()
    while not inbox_empty(hub):
        if time.monotonic() - began > timeout:
            raise SystemExit(f"bench: slopd's inbox did not drain in {timeout:.0f} s")
        time.sleep(0.01)
    return time.monotonic() - began


# -- a keep-alive client -------------------------------------------------------------------------


class Client:
    """One persistent HTTP/1.1 connection (reopened after an error or a server close)."""

    def __init__(self, url: str, token: str, timeout: float = 60.0) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.timeout = parts.hostname or "127.0.0.1", parts.port or 80, timeout
        self.prefix = parts.path.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}"}
        self.connection: http.client.HTTPConnection | None = None

    def _open(self) -> http.client.HTTPConnection:
        if self.connection is None:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            connection.connect()
            assert connection.sock is not None
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.connection = connection
        return self.connection

    def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        headers = dict(self.headers)
        if body is not None:
            headers["Content-Type"] = "text/markdown"
        connection = self._open()
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise
        if response.will_close:
            self.close()
        return response.status, data

    def post(self, data: bytes) -> int:
        return self.request("POST", f"{self.prefix}/v1/envelopes", data)[0]

    def get(self, path: str) -> tuple[int, bytes]:
        return self.request("GET", path)

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


@dataclass
class Outcomes:
    """Per-contender latencies (s) and what went wrong, request by request."""

    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)

    def failures(self, ok: int) -> str:
        bad = {f"HTTP {status}": count for status, count in self.statuses.items() if status != ok}
        bad.update(self.errors)
        return ", ".join(f"{what} x{count}" for what, count in sorted(bad.items())) or "0"


def timed_post(client: Client, data: bytes, outcomes: Outcomes, ok: int = 202) -> bool:
    began = time.perf_counter()
    try:
        status = client.post(data)
    except (OSError, http.client.HTTPException) as error:
        outcomes.errors[type(error).__name__] += 1
        return False
    outcomes.latencies.append(time.perf_counter() - began)
    outcomes.statuses[status] += 1
    return status == ok


class Ids:
    """Envelopes with ids unique over the whole run (one hub, every phase): `nonce-NNNNNNN`."""

    def __init__(self) -> None:
        self._count = itertools.count()

    def next(self, nonce: str) -> tuple[str, bytes]:
        return envelope(next(self._count), kind="query", nonce=nonce)


# -- 1. receipts ---------------------------------------------------------------------------------


def paced_receipts(slopd: Slopd, floor_url: str, ids: Ids, count: int, rate: float) -> dict[str, Outcomes]:
    """Figure 1, paced: the three contenders in turn, each at `rate` a second on average."""
    contenders: dict[str, Outcomes] = {"slopd": Outcomes(), "floor": Outcomes(), "file drop": Outcomes()}
    to_slopd, to_floor = Client(slopd.url, slopd.token), Client(floor_url, slopd.token)
    inbox_fd = open_dir(slopd.hub / "inbox")
    rng = random.Random(15)  # jittered spacing (±50 %), so no request keeps step with the daemon's work
    gap = 1.0 / rate / len(contenders)
    try:
        for _ in range(5):  # warm-up: connections, worker threads, first imports
            to_slopd.post(ids.next("warm")[1])
            to_floor.post(ids.next("warm")[1])
        drain(slopd.hub)
        wake = time.monotonic()
        for _ in range(count):
            for name, outcomes in contenders.items():
                wake += gap * rng.uniform(0.5, 1.5)
                time.sleep(max(0.0, wake - time.monotonic()))
                if name == "slopd":
                    timed_post(to_slopd, ids.next("lat")[1], outcomes)
                elif name == "floor":
                    timed_post(to_floor, ids.next("flat")[1], outcomes)
                else:
                    ident, data = ids.next("drop")
                    started = time.perf_counter()
                    atomic_drop(inbox_fd, f"{ident}.md", data)
                    outcomes.latencies.append(time.perf_counter() - started)
                    outcomes.statuses[202] += 1
    finally:
        to_slopd.close()
        to_floor.close()
        os.close(inbox_fd)
    drain(slopd.hub)
    return contenders


@dataclass
class Saturation:
    rate: float
    completed: int
    seconds: float
    cpu_ms_per_request: float
    drain_s: float
    outcomes: Outcomes
    user_ms_per_request: float = 0.0  # /proc/PID/stat: every thread, exited ones too
    system_ms_per_request: float = 0.0


def saturate(
    url: str, token: str, pid: int, ids: Ids, nonce: str, clients: int, seconds: float
) -> Saturation:
    """`clients` threads, each its own keep-alive connection, posting for `seconds`."""
    per_thread = [Outcomes() for _ in range(clients)]
    finished = [0.0] * clients
    barrier = threading.Barrier(clients + 1)
    window = {"end": 0.0}

    def worker(number: int) -> None:
        client, outcomes = Client(url, token), per_thread[number]
        try:
            client.post(ids.next(f"{nonce}-w")[1])  # connect and warm this connection up
        except (OSError, http.client.HTTPException) as error:
            outcomes.errors[type(error).__name__] += 1
        barrier.wait()
        while time.monotonic() < window["end"]:
            timed_post(client, ids.next(nonce)[1], outcomes)
        finished[number] = time.monotonic()
        client.close()

    threads = [threading.Thread(target=worker, args=(number,), daemon=True) for number in range(clients)]
    for thread in threads:
        thread.start()
    cpu, (user, system) = tree_cpu_seconds(pid), tree_cpu_times(pid)
    began = time.monotonic()
    window["end"] = began + seconds
    barrier.wait()
    for thread in threads:
        thread.join(timeout=seconds + 120)
        if thread.is_alive():
            raise SystemExit(f"bench: a client to {url} hung for 120 s after its window")
    elapsed = max(finished) - began
    cpu = tree_cpu_seconds(pid) - cpu
    user_after, system_after = tree_cpu_times(pid)
    outcomes = Outcomes()
    for one in per_thread:
        outcomes.latencies += one.latencies
        outcomes.statuses.update(one.statuses)
        outcomes.errors.update(one.errors)
    completed = outcomes.statuses[202]
    per = 1000 / max(completed, 1)
    return Saturation(
        completed / elapsed,
        completed,
        elapsed,
        cpu * per,
        0.0,
        outcomes,
        (user_after - user) * per,
        (system_after - system) * per,
    )


# -- 2. drop -> reply ----------------------------------------------------------------------------


def drop_to_reply(slopd: Slopd, ids: Ids, count: int) -> dict[str, list[float]]:
    """Figure 2: over HTTP and over the folder, alternating, one message at a time."""
    found: dict[str, list[float]] = {"over HTTP": [], "over the folder": [], "folder, renamed in": []}
    missing = Counter[str]()
    client = Client(slopd.url, slopd.token)
    watcher = ReplyWatcher(slopd.hub / "outbox")
    inbox_fd = open_dir(slopd.hub / "inbox")
    staging = slopd.hub.parent / "staging"
    staging.mkdir(exist_ok=True)
    staging_fd = open_dir(staging)

    def folder(what: str, nonce: str, drop: Callable[[str, bytes], None]) -> None:
        ident, data = ids.next(nonce)
        began = time.monotonic()
        drop(f"{ident}.md", data)
        name = f"{ident}.result.md"
        if watcher.wait_for([name], timeout=30):
            found[what].append(watcher.seen[name] - began)
        else:
            missing[what] += 1
        time.sleep(0.02)

    try:
        for _ in range(count):
            ident, data = ids.next("rt-http")
            began = time.monotonic()
            try:
                posted = client.post(data)
                status, body = client.get(f"/v1/envelopes/{ident}/replies?wait=30")
            except (OSError, http.client.HTTPException) as error:
                posted, status, body = 0, 0, type(error).__name__.encode()
            if posted == 202 and status == 200 and json.loads(body).get("terminal"):
                found["over HTTP"].append(time.monotonic() - began)
            else:
                missing[f"over HTTP (POST {posted}, GET {status}: {body[:200]!r})"] += 1
            time.sleep(0.02)
            folder("over the folder", "rt-file", lambda name, data: atomic_drop(inbox_fd, name, data))
            folder(
                "folder, renamed in",
                "rt-mv",
                lambda name, data: rename_drop(staging_fd, inbox_fd, name, data),
            )
    finally:
        client.close()
        watcher.close()
        os.close(inbox_fd)
        os.close(staging_fd)
    drain(slopd.hub)
    for what, number in missing.items():
        print(f"!! drop -> reply {what}: {number} of {count} got no terminal reply within 30 s")
    return found


# -- 3. the feed's long-poll wake-up ---------------------------------------------------------------


def feed_wakeups(slopd: Slopd, ids: Ids, count: int) -> dict[str, list[float]]:
    """Figure 3: a long-poll on the feed is waiting when an envelope is dropped into inbox/."""
    client = Client(slopd.url, slopd.token)
    watcher = ReplyWatcher(slopd.hub / "outbox")
    inbox_fd = open_dir(slopd.hub / "inbox")
    offset = time.time() - time.monotonic()  # the watcher stamps monotonic; the log, wall clock
    returned: list[tuple[str, float, list[str]]] = []
    problems = Counter[str]()
    try:
        status, body = client.get("/v1/replies?after=0&limit=1")
        if status != 200:
            raise SystemExit(f"bench: GET /v1/replies answered {status}: {body[:300]!r}")
        tail = int(json.loads(body)["tail_cursor"])
        for _ in range(count):
            ident, data = ids.next("feed")
            answer: dict[str, Any] = {}

            def wait(after: int = tail, answer: dict[str, Any] = answer) -> None:
                try:
                    answer["status"], answer["body"] = client.get(f"/v1/replies?after={after}&wait=30")
                except (OSError, http.client.HTTPException) as error:
                    answer["error"] = type(error).__name__
                answer["at"] = time.time()

            waiter = threading.Thread(target=wait, daemon=True)
            waiter.start()
            time.sleep(0.05)  # the GET is on the server's loop, waiting on the bell, by now
            atomic_drop(inbox_fd, f"{ident}.md", data)
            waiter.join(timeout=40)
            if "at" not in answer:
                problems["a long-poll did not return within 40 s (the rest skipped)"] += 1
                break
            if answer.get("status") != 200:
                problems[f"{answer.get('error') or answer.get('status')}"] += 1
                continue
            page = json.loads(answer["body"])
            replies = [str(reply["id"]) for reply in page["replies"]]
            tail = int(page["next_cursor"])
            returned.append((f"{ident}.result", answer["at"], replies))
            watcher.wait_for([f"{ident}.result.md"], timeout=30)
            time.sleep(0.02)
    finally:
        client.close()
        watcher.close()
        os.close(inbox_fd)
    drain(slopd.hub)
    written = {
        str(line["reply"]): log_time(str(line["timestamp"]))
        for line in log_events(slopd.state / "slopd.log")
        if line.get("event") == "reply.written"
    }
    figures: dict[str, list[float]] = {"from reply.written (log)": [], "from outbox file (inotify)": []}
    for reply, at, replies in returned:
        if replies != [reply]:
            problems[f"the long-poll returned {replies}, not [{reply}]"] += 1
            continue
        if reply in written:
            figures["from reply.written (log)"].append(at - written[reply])
        seen = watcher.seen.get(f"{reply}.md")
        if seen is not None:
            figures["from outbox file (inotify)"].append(at - (seen + offset))
    for what, number in problems.items():
        print(f"!! feed long-poll: {what} ({number} of {count})")
    return figures


# -- the report ----------------------------------------------------------------------------------


def ms(value: float) -> str:
    return f"{value * 1000:.2f}"


def latency_row(label: str, values: list[float], extra: list[str]) -> list[str]:
    figures = percentiles(values)
    return [label, str(len(values)), *(ms(figures[key]) for key in ("median", "p90", "p99", "max")), *extra]


@contextlib.contextmanager
def cleanup() -> Iterator[None]:
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        yield
    finally:
        kill_children()
        signal.signal(signal.SIGTERM, previous)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="a smoke pass: small counts, one round")
    parser.add_argument("--rate", type=float, default=20.0, help="paced receipts per second per contender")
    parser.add_argument("--count", type=int, help="paced receipts per contender (default 200; --quick 30)")
    parser.add_argument("--clients", type=int, default=4, help="saturation: keep-alive connections")
    parser.add_argument("--seconds", type=float, help="saturation: seconds per round (default 3; --quick 1)")
    parser.add_argument("--rounds", type=int, help="saturation rounds (default 3; --quick 1)")
    parser.add_argument("--replies", type=int, help="drop -> reply messages each way (default 30; --quick 5)")
    parser.add_argument("--wakeups", type=int, help="feed long-poll wake-ups (default 30; --quick 5)")
    parser.add_argument(
        "--settle",
        type=float,
        default=SETTLE,
        help=f"slopd's `settle` (default {SETTLE:g}; slopd's own: 0.3)",
    )
    parser.add_argument("--json", help="write the raw figures here")
    parser.add_argument("--serve-floor", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_floor:
        return serve_floor(args.serve_floor)
    quick = args.quick
    count = args.count or (30 if quick else 200)
    seconds = args.seconds or (1.0 if quick else 3.0)
    rounds = args.rounds or (1 if quick else 3)
    replies = args.replies or (5 if quick else 30)
    wakeups = args.wakeups or (5 if quick else 30)

    from compare import source_state  # noqa: PLC0415

    precompile()
    print(f"# machine: {machine_line(('uvicorn', 'starlette', 'h11', 'watchdog', 'PyYAML'))}")
    print(
        f"# started {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; receipts: {count} per contender at "
        f"{args.rate:g}/s; saturation: {args.clients} keep-alive connections x {seconds:g} s x {rounds} "
        f"rounds; drop -> reply: {replies} each way; feed wake-ups: {wakeups}"
    )
    print(
        f"# slopd config: settle = {args.settle:g} s (slopd's default: 0.3 s; linked drops wait for it, "
        f"see 2.), [http] rate_limit = {RATE_LIMIT:,}/min; envelopes: type query, ~1.3 KB"
    )
    print(f"# slopd source: {source_state()}", flush=True)
    began = time.monotonic()
    raw: dict[str, Any] = {}
    ids = Ids()
    with cleanup():
        slopd = start_slopd(args.settle)
        _floor_inbox, floor, floor_url = start_floor()
        print(f"# slopd: spawn -> http.listening {slopd.start_s * 1000:.0f} ms; floor pid {floor.pid}")

        # 1. receipts, paced
        paced = paced_receipts(slopd, floor_url, ids, count, args.rate)
        print(f"\n== 1. POST -> 202 receipt, paced: {count} per contender at {args.rate:g}/s (ms)")
        rows = [
            latency_row(name, outcomes.latencies, [outcomes.failures(202)])
            for name, outcomes in paced.items()
        ]
        print(render_table(["contender", "n", "p50", "p90", "p99", "max", "errors"], rows), flush=True)

        # 1. receipts, saturated
        runs: dict[str, list[Saturation]] = {"slopd": [], "floor": [], "floor + receipt": []}
        targets = {
            "slopd": (slopd.url, slopd.process.pid, "sat"),
            "floor": (floor_url, floor.pid, "fsat"),
            "floor + receipt": (f"{floor_url}/receipted", floor.pid, "rsat"),
        }
        for round_number in range(rounds):
            names = list(runs)
            order = names[round_number % 3 :] + names[: round_number % 3]
            for name in order:
                url, pid, nonce = targets[name]
                run = saturate(url, slopd.token, pid, ids, f"{nonce}{round_number}", args.clients, seconds)
                if name == "slopd":
                    run.drain_s = drain(slopd.hub)
                runs[name].append(run)
        print(
            f"\n== 1. saturation: {args.clients} keep-alive connections posting for {seconds:g} s, "
            f"{rounds} round(s), the contenders taking turns"
        )
        rows = []
        for name, done in runs.items():
            latencies = [value for run in done for value in run.outcomes.latencies]
            figures = percentiles(latencies)
            failures = Outcomes()
            for run in done:
                failures.statuses.update(run.outcomes.statuses)
                failures.errors.update(run.outcomes.errors)
            rows.append(
                [
                    name,
                    spread([run.rate for run in done], lambda value: f"{value:,.0f}"),
                    f"{sum(run.completed for run in done):,}",
                    ms(figures["median"]),
                    ms(figures["p99"]),
                    spread([run.cpu_ms_per_request for run in done], lambda value: f"{value:.2f}"),
                    spread([run.user_ms_per_request for run in done], lambda value: f"{value:.2f}"),
                    spread([run.system_ms_per_request for run in done], lambda value: f"{value:.2f}"),
                    spread([run.drain_s for run in done], lambda value: f"{value:.2f}")
                    if name == "slopd"
                    else "-",
                    failures.failures(202),
                ]
            )
        headers = ["server", "requests/s", "202s", "p50 ms", "p99 ms", "CPU ms/req", "user", "system"]
        headers += ["drain s", "errors"]
        print(render_table(headers, rows))
        print(
            "(CPU: the server's process over the window, its live threads (schedstat); user, system: "
            "the same from /proc/PID/stat, every thread, exited ones too; slopd's include its watcher "
            "answering the envelopes meanwhile. drain: the inbox left after the window. floor + "
            "receipt: the floor's drop plus a durable SQLite receipt, for scale, no goal.)",
            flush=True,
        )

        # 2. drop -> reply
        round_trips = drop_to_reply(slopd, ids, replies)
        print(f"\n== 2. drop -> reply, {replies} each way, alternating (ms)")
        rows = [latency_row(name, values, []) for name, values in round_trips.items()]
        print(render_table(["path", "n", "p50", "p90", "p99", "max"], rows))
        print(
            "(over HTTP: from before the POST to the long-poll's answer with `terminal`; over the folder: "
            "from before the drop to outbox/ID.result.md appearing. The POST and the folder drop name the "
            f"file by a hard link, which slopd reads once `settle` ({args.settle:g} s) has passed; renamed "
            "in: written outside the hub, then renamed into inbox/, read at once)",
            flush=True,
        )

        # 3. the feed's wake-up
        wakes = feed_wakeups(slopd, ids, wakeups)
        print(f"\n== 3. feed long-poll wake-up: GET /v1/replies?after=TAIL&wait=30, {wakeups} drops (ms)")
        rows = [latency_row(name, values, []) for name, values in wakes.items()]
        print(render_table(["reply committed", "n", "p50", "p90", "p99", "max"], rows))
        print(
            "(the client's wall clock when the answer is read, minus the stamp. reply.written is logged "
            "once the reply is durable, just before the ledger commit that rings the bell; the file "
            "appears at its rename, before slopd fsyncs outbox/ and logs. Both include the commit.)",
            flush=True,
        )
        if slopd.process.poll() is not None:
            print(f"!! slopd exited with {slopd.process.returncode} during the run")
        if floor.poll() is not None:
            print(f"!! the floor exited with {floor.returncode} during the run")

    # goals
    def per_round(mine: str, theirs: str) -> list[float]:
        """`mine`'s rate over `theirs`, round by round (they ran in the same minutes)."""
        return [a.rate / b.rate for a, b in zip(runs[mine], runs[theirs], strict=True)]

    ratios = per_round("slopd", "floor")
    throughput = statistics.median(ratios)
    p99_slopd = percentiles(paced["slopd"].latencies)["p99"]
    p99_floor = percentiles(paced["floor"].latencies)["p99"]
    p99_drop = percentiles(paced["file drop"].latencies)["p99"]
    wake = percentiles(wakes["from reply.written (log)"])
    http_rt = percentiles(round_trips["over HTTP"])["median"]
    file_rt = percentiles(round_trips["over the folder"])["median"]
    print("\ngoals:")
    print(
        f"  throughput slopd/floor: {spread(ratios, lambda value: f'{value:.2f}x')} "
        f"(goal >= {GOAL_THROUGHPUT}x): {'MET' if throughput >= GOAL_THROUGHPUT else 'MISSED'}"
    )
    print(
        f"  p99 receipt slopd/floor at {args.rate:g}/s: {p99_slopd / p99_floor:.2f}x "
        f"({ms(p99_slopd)} vs {ms(p99_floor)} ms; goal <= {GOAL_P99:g}x): "
        f"{'MET' if p99_slopd / p99_floor <= GOAL_P99 else 'MISSED'}"
    )
    print(
        f"  feed wake-up after the reply's commit (reply.written): p50 {ms(wake['median'])} ms, "
        f"p99 {ms(wake['p99'])} ms (goal <= {GOAL_WAKE_MS:g} ms, on the p99): "
        f"{'MET' if wake['p99'] * 1000 <= GOAL_WAKE_MS else 'MISSED'}"
    )
    print("for scale (no goal):")
    print(f"  p99 receipt slopd/file drop: {p99_slopd / p99_drop:.2f}x ({ms(p99_drop)} ms for the drop)")
    print(f"  median drop -> reply over HTTP / over the folder: {http_rt / file_rt:.2f}x")
    receipted, costed = per_round("slopd", "floor + receipt"), per_round("floor + receipt", "floor")
    print(
        f"  throughput floor + receipt/floor: {spread(costed, lambda value: f'{value:.2f}x')}"
        " (what the durable receipt costs by itself)"
    )
    print(f"  throughput slopd/(floor + receipt): {spread(receipted, lambda value: f'{value:.2f}x')}")
    print(f"# total {time.monotonic() - began:.1f} s", flush=True)

    if args.json:
        raw = {
            "settings": {
                "count": count,
                "rate": args.rate,
                "clients": args.clients,
                "seconds": seconds,
                "rounds": rounds,
                "replies": replies,
                "wakeups": wakeups,
                "settle": args.settle,
            },
            "machine": machine_line(),
            "paced": {
                name: {"latency": percentiles(outcomes.latencies), "failures": outcomes.failures(202)}
                for name, outcomes in paced.items()
            },
            "saturation": {
                name: [
                    {
                        "rate": run.rate,
                        "completed": run.completed,
                        "seconds": run.seconds,
                        "cpu_ms_per_request": run.cpu_ms_per_request,
                        "user_ms_per_request": run.user_ms_per_request,
                        "system_ms_per_request": run.system_ms_per_request,
                        "drain_s": run.drain_s,
                        "latency": percentiles(run.outcomes.latencies),
                        "failures": run.outcomes.failures(202),
                    }
                    for run in done
                ]
                for name, done in runs.items()
            },
            "drop_to_reply": {name: percentiles(values) for name, values in round_trips.items()},
            "wakeup": {name: percentiles(values) for name, values in wakes.items()},
            "ratios": {"throughput": ratios, "p99": p99_slopd / p99_floor},
        }
        Path(args.json).write_text(json.dumps(raw, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
