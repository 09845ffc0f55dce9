"""The console's pages (issue 26, Performance) under load, each beside its floor, in one run.

    .venv/bin/python bench/console.py            # 1,000 pending, 10,000 archived, 200 renders (~75 s)
    .venv/bin/python bench/console.py --renders 500 --archived 20000 --profile
    .venv/bin/python bench/console.py --quick    # smoke pass: 60 pending, 300 archived, 10 renders

The hub is made the way the daemon makes one:
  archived  --archived envelopes from six seats — handoffs, notes, queries, handshakes, discuss
            instigates, a few invalid files, and signed orders in authorized/ that run `true` —
            dropped as a backlog, then `slopd run --once` answers and archives them all: the
            ledger's input and reply rows, outbox/, archive/ are the daemon's own.
  pending   --pending approvals: drafts in outbox/drafts/ written by the function behind
            `slop_request_approval` (`transport.mcp.approval.draft`), for actions of quorum 1
            and 2; and orders in authorized/ waiting for a quorum (2-of-2 and 3-of-3, the first
            signature there, a real Ed25519 SSHSIG), one in --orders-share of the pending.
Then a real `slopd run --http 127.0.0.1:0` (the console extra installed) serves the hub and a
software passkey signs in through the console's own WebAuthn ceremony (the same assertion a
browser makes). A real server rather than the ASGI app in process: the figure a human sees
includes uvicorn, the worker-thread hop and the daemon sharing the process; the floor is then on
the same stack.

Figures, per page (Approvals, Activity, one draft's approval page, one held order's):
  slopd  GET over one keep-alive connection, from the request to the last byte, N renders
  floor  a bare Starlette route on the same uvicorn (asyncio loop, h11, no access log, another
         process) answering the very bytes slopd served for that page, held in memory
The two alternate request by request (slopd, floor, floor, slopd, …), so they share the same
moments of a noisy machine. Printed: median, p90, p99, the medians of each tenth of the run (the
noise), the server's CPU per render, slopd/floor (the ratio of the two medians in each tenth), and
slopd's first render (nothing kept parsed yet).

Then the folder path on that same daemon: --folder-count handoffs renamed into inbox/ at once,
with nobody on the console, with a second signed-in connection reloading /approvals every second,
and with one reloading it back to back (a refresh held down), the three taking turns for
--folder-rounds rounds: throughput, the process's CPU per message, renders per second. (The
daemon with and without the console served is bench/compare.py --contenders slopd,slopd+http.)

Last, the Approvals view and template in this process, with and without the shelf that keeps
unchanged files parsed (`--profile`: and a cProfile of it). No goal is asserted. Raw figures:
--json FILE.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import http.client
import inspect
import io
import json
import logging
import os
import pstats
import random
import shutil
import signal
import socket
import sqlite3
import statistics
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from common import (
    SLOPD,
    ReplyWatcher,
    envelope,
    machine_line,
    percentiles,
    precompile,
    render_table,
    reply_name,
    scratch,
    spread,
    tree_cpu_seconds,
)

SEATS = ("claude-code", "codex", "gemini", "aider", "cursor", "reviewer")
OPERATOR = "operator@example.com"  # signs orders with an Ed25519 key
HUMAN = "human@example.com"  # signs in to the console with a passkey
WATCHER = "watcher:bench"
TRUE = shutil.which("true") or "/bin/true"
# What six agents and a human leave in a hub over weeks, per 100 archived envelopes.
MIX = (
    ("handoff", 46),
    ("note", 18),
    ("query", 14),
    ("handshake", 6),
    ("discuss", 10),
    ("invalid", 3),
    ("order", 3),
)
WORDS = ("parser", "tokenizer", "recovery", "docs", "tests", "cache", "index", "ledger", "archive", "notes")
_CHILDREN: list[subprocess.Popen[bytes]] = []
# slopd's own config and state only; and `python -m slopd` run in a checkout imports its ./slopd
# first: with PYTHONSAFEPATH an older slopd on PYTHONPATH is the one that runs.
ENV = dict(os.environ, XDG_CONFIG_HOME="/nonexistent", XDG_STATE_HOME="/nonexistent", PYTHONSAFEPATH="1")


# -- the hub --------------------------------------------------------------------------------------


@dataclass
class Lab:
    base: Path
    hub: Path
    state: Path
    config: Path
    operator: Any  # Ed25519PrivateKey
    passkey: Any  # ec.EllipticCurvePrivateKey (P-256)
    drafts: list[str] = field(default_factory=list)
    orders: list[str] = field(default_factory=list)
    made: dict[str, float] = field(default_factory=dict)


def new_lab() -> Lab:
    from cryptography.hazmat.primitives.asymmetric import ec  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: PLC0415

    from slopd.core import passkeys, sshkeys  # noqa: PLC0415

    base = scratch("console-")
    hub, state, config = base / "hub", base / "state", base / "config.toml"
    subprocess.run([*SLOPD, "init", "--home", WATCHER, str(hub)], check=True, capture_output=True, env=ENV)
    operator, passkey = Ed25519PrivateKey.generate(), ec.generate_private_key(ec.SECP256R1())
    allowed = base / "allowed_signers"
    allowed.write_text(
        f"{OPERATOR} {sshkeys.ed25519(operator.public_key().public_bytes_raw()).line()}\n"
        f"{passkeys.key_line(HUMAN, point(passkey), 'localhost')}\n",
        encoding="utf-8",
    )
    config.write_text(
        f'names = ["watcher", "{WATCHER}"]\nsettle = 0.05\n\n'
        f'[auth]\nallowed_signers = "{allowed}"\nsig_grace = 86400\n\n'
        f'[actions.deploy]\ncommand = ["{TRUE}"]\n\n'
        f'[actions.restart]\ncommand = ["{TRUE}"]\n\n'
        f'[actions.release]\ncommand = ["{TRUE}"]\nquorum = 2\n\n'
        f'[actions.rotate-keys]\ncommand = ["{TRUE}"]\nquorum = 3\n',
        encoding="utf-8",
    )
    return Lab(base, hub, state, config, operator, passkey)


def point(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415

    return bytes(
        key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
    )


def body(rng: random.Random, index: int) -> str:
    topic = " ".join(rng.sample(WORDS, 3))
    return (
        f"# Work item {index}: {topic}\n\n"
        "The refactor is half done: the tokenizer is split out and its tests pass. What is left is "
        "the error recovery in the statement parser and the docs.\n\n"
        "- port the error-recovery tests\n- update docs/parser.md\n- remove the old entry point\n"
    )


def order(ident: str, action: str, quorum: int, text: str, now: datetime) -> bytes:
    """An order from the operator for `action`, naming `quorum` signatures."""
    from slopd.core.envelope import Envelope, render  # noqa: PLC0415
    from slopd.core.ids import timestamp  # noqa: PLC0415
    from slopd.core.vocabulary import PROTOCOL  # noqa: PLC0415

    name = f"{ident}.md"
    sidecars = [f"{name}.sig", *(f"{name}.{n}.sig" for n in range(2, quorum + 1))]
    return render(
        Envelope(
            protocol=PROTOCOL,
            id=ident,
            type="instigate",
            sender=OPERATOR,
            to=WATCHER,
            created_at=timestamp(now),
            auth="signed:" + ",".join(sidecars),
            mode="execute",
            action=action,
            body=text,
        )
    )


def archived_backlog(lab: Lab, count: int, rng: random.Random) -> dict[str, int]:
    """`count` envelopes of the mix waiting in inbox/ and authorized/, a minute old; made how many of each."""
    from slopd import submit  # noqa: PLC0415
    from slopd.core import sshsig  # noqa: PLC0415
    from slopd.core.envelope import render  # noqa: PLC0415

    kinds = [kind for kind, weight in MIX for _ in range(weight)]
    made: dict[str, int] = {}
    start = datetime.now(UTC) - timedelta(minutes=count / 50)
    for index in range(count):
        kind = kinds[index % len(kinds)]
        made[kind] = made.get(kind, 0) + 1
        now = start + timedelta(seconds=index * 0.8)
        seat = rng.choice(SEATS)
        text = body(rng, index)
        if kind == "order":
            ident = submit.compose(
                type="instigate", sender=OPERATOR, to="x", body="", slug="run deploy", now=now
            ).id
            data = order(ident, "deploy", 1, text, datetime.now(UTC))
            (lab.hub / "authorized" / f"{ident}.md.sig").write_bytes(sshsig.sign(data, lab.operator))
            (lab.hub / "authorized" / f"{ident}.md").write_bytes(data)
            continue
        if kind == "invalid":
            ident = f"{now:%Y%m%dt%H%M%Sz}-broken-{index:06d}"
            data = f"---\nprotocol: slop.v1\nid: {ident}\ntype: handoff\nfrom: {seat}\n---\n{text}".encode()
        else:
            envelope = submit.compose(
                type="instigate" if kind == "discuss" else kind,
                sender=seat,
                to="watcher",
                body=text,
                mode="discuss" if kind == "discuss" else None,
                slug=text.split(":")[1][:40],
                now=now,
            )
            ident, data = envelope.id, render(envelope)
        (lab.hub / "inbox" / f"{ident}.md").write_bytes(data)
    old = time.time() - 60  # a minute old: nothing left to settle
    for lane in ("inbox", "authorized"):
        for entry in os.scandir(lab.hub / lane):
            os.utime(entry.path, (old, old))
    return made


def pending_approvals(lab: Lab, count: int, orders_share: float, rng: random.Random) -> None:
    """Drafts as `slop_request_approval` writes them; orders held for a quorum, first signer in."""
    from slopd import submit  # noqa: PLC0415
    from slopd.core import sshsig  # noqa: PLC0415
    from slopd.shell import config as config_module  # noqa: PLC0415
    from slopd.shell.lanes import Hub  # noqa: PLC0415
    from slopd.transport.mcp import approval  # noqa: PLC0415

    config = config_module.load(lab.config)
    trust = config_module.load_trust(config)
    hub = Hub(lab.hub)
    orders = round(count * orders_share)
    for index in range(count - orders):
        action = rng.choice(("deploy", "deploy", "restart", "release"))
        made = approval.draft(
            hub,
            config,
            trust,
            seat=rng.choice(SEATS),
            action=action,
            body=body(rng, index),
            reason=f"the release checklist item {index} needs it",
            now=datetime.now(UTC),
        )
        lab.drafts.append(made["path"].rsplit("/", 1)[1])
    for index in range(orders):
        quorum = 2 if index % 4 else 3
        action = "release" if quorum == 2 else "rotate-keys"
        now = datetime.now(UTC)
        ident = submit.compose(
            type="instigate", sender=OPERATOR, to="x", body="", slug=f"run {action}", now=now
        ).id
        data = order(ident, action, quorum, body(rng, index), now)
        (lab.hub / "authorized" / f"{ident}.md.sig").write_bytes(sshsig.sign(data, lab.operator))
        (lab.hub / "authorized" / f"{ident}.md").write_bytes(data)
        lab.orders.append(f"{ident}.md")
    hub.close()


def build(archived: int, pending: int, orders_share: float) -> Lab:
    """The hub of the docstring: the archive made by `slopd run --once`, then the approvals pending."""
    rng = random.Random(26)
    lab = new_lab()
    began = time.monotonic()
    mix = archived_backlog(lab, archived, rng)
    env = ENV
    command = [*SLOPD, "run", "--hub", str(lab.hub), "--state", str(lab.state), "--config", str(lab.config)]
    subprocess.run([*command, "--once"], env=env, check=True, capture_output=True, timeout=1800)
    lab.made["archived_s"] = time.monotonic() - began
    with contextlib.closing(sqlite3.connect(f"file:{lab.state / 'ledger.sqlite3'}?mode=ro", uri=True)) as db:
        rows = db.execute("SELECT count(*), sum(status = 'done') FROM inputs").fetchone()
        replies = db.execute("SELECT count(*) FROM replies").fetchone()[0]
    lab.made.update(inputs=rows[0], done=rows[1] or 0, replies=replies)
    print(
        f"# archived: {mix}; ledger: {rows[0]:,} inputs ({rows[1]:,} done), {replies:,} replies; "
        f"made in {lab.made['archived_s']:.1f} s",
        flush=True,
    )
    began = time.monotonic()
    pending_approvals(lab, pending, orders_share, rng)
    lab.made["pending_s"] = time.monotonic() - began
    print(
        f"# pending: {len(lab.drafts)} drafts, {len(lab.orders)} orders held for a quorum; "
        f"made in {lab.made['pending_s']:.1f} s",
        flush=True,
    )
    return lab


# -- processes --------------------------------------------------------------------------------------


def spawn(command: list[str], **options: Any) -> subprocess.Popen[bytes]:
    child = subprocess.Popen(command, start_new_session=True, **options)
    _CHILDREN.append(child)
    return child


@contextlib.contextmanager
def children() -> Iterator[None]:
    """SIGTERM every child at the end (exit code kept), SIGKILL one that does not stop."""
    try:
        yield
    finally:
        for child in _CHILDREN:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in _CHILDREN:
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def log_events(path: Path, event: str) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return []
    found = []
    for line in lines:
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if isinstance(record, dict) and record.get("event") == event:
                found.append(record)
    return found


def serve(lab: Lab) -> tuple[subprocess.Popen[bytes], str, float]:
    """`slopd run --http 127.0.0.1:0` on the lab; (process, console URL, spawn -> serving seconds)."""
    env = ENV
    command = [*SLOPD, "run", "--hub", str(lab.hub), "--state", str(lab.state), "--config", str(lab.config)]
    began = time.monotonic()
    process = spawn(
        [*command, "--http", "127.0.0.1:0"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    log = lab.state / "slopd.log"
    deadline = began + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"bench/console.py: slopd exited with {process.returncode}; see {log}")
        serving = log_events(log, "console.serving")
        if serving and log_events(log, "watcher.started"):
            if serving[-1].get("problem"):
                raise SystemExit(f"bench/console.py: the console cannot sign in: {serving[-1]['problem']}")
            return process, str(serving[-1]["url"]), time.monotonic() - began
        time.sleep(0.05)
    raise SystemExit("bench/console.py: slopd did not log console.serving within 120 s")


def settled(pid: int, timeout: float = 300.0) -> float:
    """Wait until the process tree is idle (under 20 ms of CPU in half a second); the seconds it took."""
    began = time.monotonic()
    before = tree_cpu_seconds(pid)
    while time.monotonic() - began < timeout:
        time.sleep(0.5)
        now = tree_cpu_seconds(pid)
        if now - before < 0.02:
            return time.monotonic() - began
        before = now
    raise SystemExit(f"bench/console.py: pid {pid} still busy after {timeout:.0f} s")


def serve_floor(directory: str) -> int:
    """A bare Starlette app on uvicorn (the settings slopd's server uses): GET /page/NAME answers
    the bytes of DIRECTORY/NAME, read once at start; prints its URL."""
    import uvicorn  # noqa: PLC0415  # only the floor's process needs the server stack
    from starlette.applications import Starlette  # noqa: PLC0415
    from starlette.requests import Request  # noqa: PLC0415
    from starlette.responses import Response  # noqa: PLC0415
    from starlette.routing import Route  # noqa: PLC0415

    pages = {entry.name: Path(entry.path).read_bytes() for entry in os.scandir(directory)}

    async def page(request: Request) -> Response:
        return Response(pages[request.path_params["name"]], media_type="text/html; charset=utf-8")

    app = Starlette(routes=[Route("/page/{name}", page, methods=["GET"])])
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets that say so (slopd's uvicorn binds
    # its own, which do); without it an answer can wait 40 ms for a delayed ACK.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    config = uvicorn.Config(
        app,
        loop="asyncio",
        lifespan="on",
        log_config=None,
        log_level=logging.WARNING,
        access_log=False,
        server_header=False,
        timeout_keep_alive=600,  # idle while slopd renders a slow page: keep its connection
    )
    print(f"http://127.0.0.1:{listener.getsockname()[1]}", flush=True)
    uvicorn.Server(config).run(sockets=[listener])
    return 0


def start_floor(pages: dict[str, bytes]) -> tuple[subprocess.Popen[bytes], int]:
    folder = scratch("console-floor-")
    for name, data in pages.items():
        (folder / name).write_bytes(data)
    process = spawn(
        [sys.executable, str(Path(__file__).resolve()), "--serve-floor", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    url = process.stdout.readline().decode().strip()
    if not url.startswith("http://"):
        raise SystemExit(f"bench/console.py: the floor did not start (exit {process.poll()})")
    return process, int(url.rsplit(":", 1)[1])


# -- a signed-in browser ----------------------------------------------------------------------------


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Browser:
    """One keep-alive connection to 127.0.0.1:PORT, sending what a browser at `origin` sends."""

    def __init__(self, port: int, origin: str) -> None:
        self.port, self.origin = port, origin
        self.host = origin.split("://", 1)[1]
        self.cookie = ""
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.reconnects = 0  # the server closed an idle keep-alive connection (uvicorn: after 5 s)

    def request(
        self, method: str, path: str, body: bytes | None = None
    ) -> tuple[int, bytes, http.client.HTTPResponse]:
        headers = {"Host": self.host, "Accept": "text/html"}
        if self.cookie:
            headers["Cookie"] = self.cookie
        if body is not None:
            headers.update({"Content-Type": "application/json", "Origin": self.origin})
        try:
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            self.reconnects += 1
            self.connection.close()
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
        return response.status, response.read(), response

    def sign_in(self, passkey: Any) -> None:
        """The console's WebAuthn sign-in with a software passkey: the assertion a browser returns."""
        from cryptography.hazmat.primitives import hashes  # noqa: PLC0415
        from cryptography.hazmat.primitives.asymmetric import ec  # noqa: PLC0415

        status, data, _ = self.request("POST", "/signin/options", b"{}")
        if status != 200:
            raise SystemExit(f"bench/console.py: /signin/options answered {status}: {data[:300]!r}")
        begun = json.loads(data)
        challenge = begun["options"]["publicKey"]["challenge"]
        client = json.dumps(
            {"type": "webauthn.get", "challenge": challenge, "origin": self.origin, "crossOrigin": False},
            separators=(",", ":"),
        ).encode()
        authenticator = hashlib.sha256(b"localhost").digest() + struct.pack(">BI", 0x05, 1)  # UP | UV
        signature = passkey.sign(authenticator + hashlib.sha256(client).digest(), ec.ECDSA(hashes.SHA256()))
        ident = b64url(hashlib.sha256(point(passkey)).digest())
        credential = {
            "id": ident,
            "rawId": ident,
            "type": "public-key",
            "clientExtensionResults": {},
            "response": {
                "clientDataJSON": b64url(client),
                "authenticatorData": b64url(authenticator),
                "signature": b64url(signature),
            },
        }
        body = json.dumps({"ceremony": begun["ceremony"], "credential": credential}).encode()
        status, data, response = self.request("POST", "/signin/finish", body)
        if status != 200:
            raise SystemExit(f"bench/console.py: sign-in refused ({status}): {data[:300]!r}")
        self.cookie = response.getheader("set-cookie", "").split(";", 1)[0]


# -- the measurement --------------------------------------------------------------------------------


@dataclass
class Page:
    label: str
    path: str  # on slopd
    marker: bytes  # in every answer slopd gives: the page is the one meant, not a refusal
    size: int = 0
    slopd: list[float] = field(default_factory=list)  # ms
    floor: list[float] = field(default_factory=list)
    cpu_ms: float = float("nan")  # slopd's process, per render
    floor_cpu_ms: float = float("nan")
    first_ms: float = float("nan")  # slopd's first render: nothing kept parsed yet

    @property
    def file(self) -> str:
        return self.label.replace(": ", "-") + ".html"


def pages(lab: Lab) -> list[Page]:
    from urllib.parse import quote  # noqa: PLC0415

    draft, held = lab.drafts[len(lab.drafts) // 2], lab.orders[len(lab.orders) // 2]
    return [
        Page("approvals", "/approvals", b"Drafts agents asked you to sign"),
        Page("activity", "/activity", b"Replies, and the notifications they made"),
        Page("approval: draft", f"/approvals/drafts/{quote(draft)}", draft.encode()),
        Page("approval: order", f"/approvals/authorized/{quote(held)}", held.encode()),
    ]


def timed(browser: Browser, path: str, marker: bytes) -> tuple[float, bytes]:
    began = time.perf_counter()
    status, data, _ = browser.request("GET", path)
    took = (time.perf_counter() - began) * 1000
    if status != 200 or marker not in data:
        raise SystemExit(f"bench/console.py: GET {path} answered {status}: {data[:300]!r}")
    return took, data


def measure(page: Page, slopd: Browser, slopd_pid: int, floor: Browser, floor_pid: int, renders: int) -> None:
    """`renders` of the page on each, alternating request by request, after two to warm up."""
    floor_path = f"/page/{page.file}"
    for _ in range(2):
        timed(slopd, page.path, page.marker)
        timed(floor, floor_path, b"")
    cpu = {"slopd": 0.0, "floor": 0.0}
    for index in range(renders):
        for who in ("slopd", "floor") if index % 2 == 0 else ("floor", "slopd"):
            browser, pid, path, marker, into = (
                (slopd, slopd_pid, page.path, page.marker, page.slopd)
                if who == "slopd"
                else (floor, floor_pid, floor_path, b"", page.floor)
            )
            before = tree_cpu_seconds(pid)
            into.append(timed(browser, path, marker)[0])
            cpu[who] += tree_cpu_seconds(pid) - before
    page.cpu_ms, page.floor_cpu_ms = cpu["slopd"] * 1000 / renders, cpu["floor"] * 1000 / renders


def tenths(values: list[float]) -> list[float]:
    """The median of each tenth of the run, in order: how much the machine moved meanwhile."""
    size = max(len(values) // 10, 1)
    return [statistics.median(values[at : at + size]) for at in range(0, len(values) - size + 1, size)]


def ms(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def report(measured: list[Page]) -> list[str]:
    headers = [
        "page",
        "bytes",
        "slopd p50",
        "p90",
        "p99",
        "floor p50",
        "p99",
        "slopd/floor",
        "CPU ms/render",
        "slopd p50 by tenth",
        "first",
    ]
    rows = []
    for page in measured:
        mine, floor = percentiles(page.slopd), percentiles(page.floor)
        by_tenth = [a / b for a, b in zip(tenths(page.slopd), tenths(page.floor), strict=True)]
        rows.append(
            [
                page.label,
                f"{page.size:,}",
                ms(mine["median"]),
                ms(mine["p90"]),
                ms(mine["p99"]),
                ms(floor["median"]),
                ms(floor["p99"]),
                spread(by_tenth, lambda value: f"{value:.1f}x"),
                f"{page.cpu_ms:.1f} ({page.floor_cpu_ms:.2f})",
                spread(tenths(page.slopd), ms),
                ms(page.first_ms),
            ]
        )
    return [render_table(headers, rows)]


# -- the folder path while a human looks -----------------------------------------------------------


MODES = {"alone": None, "viewed 1/s": 1.0, "viewed flat out": 0.0}  # the viewer's pause between renders


def folder_path(
    lab: Lab, pid: int, cookie: str, url: str, rounds: int, count: int, tag: str = ""
) -> dict[str, Any]:
    """`count` handoffs renamed into inbox/ at once, on the daemon serving the console: throughput
    with nobody on the console, with a viewer reloading /approvals every second, and with one
    reloading it back to back (a refresh held down: the worst a human can do), the three taking
    turns for `rounds` rounds (`tag`: in the handoffs' ids, for one lab measured again)."""
    watcher = ReplyWatcher(lab.hub / "outbox")
    staging = lab.base / "staging"
    staging.mkdir(exist_ok=True)
    figures: dict[str, dict[str, list[float]]] = {
        mode: {"throughput": [], "cpu_per_msg_ms": [], "renders_per_s": []} for mode in MODES
    }
    try:
        for round_no in range(rounds):
            turn = round_no % len(MODES)
            for mode in [*MODES][turn:] + [*MODES][:turn]:
                batch = [
                    envelope(index, nonce=f"{tag}m{[*MODES].index(mode)}r{round_no}")
                    for index in range(count)
                ]
                for ident, data in batch:
                    (staging / f"{ident}.md").write_bytes(data)
                os.sync()
                stop, renders = threading.Event(), [0]
                pause = MODES[mode]
                viewer = threading.Thread(target=view, args=(url, cookie, pause, stop, renders), daemon=True)
                if pause is not None:
                    viewer.start()
                    time.sleep(1.2)  # the viewer under way
                before, rendered, first = tree_cpu_seconds(pid), renders[0], time.monotonic()
                for ident, _ in batch:
                    os.rename(staging / f"{ident}.md", lab.hub / "inbox" / f"{ident}.md")
                names = [reply_name(ident) for ident, _ in batch]
                if not watcher.wait_for(names, timeout=120 + count * 0.5):
                    raise SystemExit(f"bench/console.py: not every handoff was answered ({mode})")
                last = max(watcher.seen[name] for name in names)
                figures[mode]["cpu_per_msg_ms"].append((tree_cpu_seconds(pid) - before) * 1000 / count)
                figures[mode]["renders_per_s"].append((renders[0] - rendered) / (time.monotonic() - first))
                stop.set()
                if pause is not None:
                    viewer.join()
                figures[mode]["throughput"].append(count / (last - first))
    finally:
        watcher.close()
    return figures


def view(url: str, cookie: str, pause: float, stop: threading.Event, renders: list[int]) -> None:
    """GET /approvals over its own keep-alive connection, `pause` seconds apart, until `stop`."""
    browser = Browser(int(url.rsplit(":", 1)[1]), url)
    browser.cookie = cookie
    while not stop.is_set():
        timed(browser, "/approvals", b"Drafts agents asked you to sign")
        renders[0] += 1
        stop.wait(pause)


def folder_report(figures: dict[str, dict[str, list[float]]], count: int) -> list[str]:
    rows = [
        [
            mode,
            spread(found["throughput"], lambda value: f"{value:,.0f}/s"),
            spread(found["cpu_per_msg_ms"], lambda value: f"{value:.2f} ms"),
            spread(found["renders_per_s"], lambda value: f"{value:.1f}/s")
            if MODES[mode] is not None
            else "-",
        ]
        for mode, found in figures.items()
    ]
    alone = figures["alone"]["throughput"]
    lines = [
        f"== the folder path on this daemon: {count:,} handoffs renamed into inbox/ at once, "
        f"{len(alone)} rounds, the three taking turns",
        render_table(["console", "throughput", "CPU/msg (the process)", "Approvals renders"], rows),
    ]
    for mode in [*MODES][1:]:
        ratios = [a / b for a, b in zip(figures[mode]["throughput"], alone, strict=True)]
        lines.append(f"ratio {mode}/alone: throughput {spread(ratios, lambda value: f'{value:.2f}x')}")
    lines.append(
        "(viewed: a second signed-in connection reloads /approvals while the daemon answers, every second "
        "or back to back; CPU/msg is the whole process's, the renders included)"
    )
    return lines


# -- the Approvals page in this process: what the shelf saves, and a profile ----------------------


def _cprofile() -> Any:
    """The standard library's cProfile (bench/profile.py shadows its `profile` module here)."""
    here = str(Path(__file__).resolve().parent)
    saved = list(sys.path)
    sys.path[:] = [entry for entry in sys.path if os.path.realpath(entry or ".") != here]
    try:
        sys.modules.pop("profile", None)
        import cProfile  # noqa: PLC0415

        return cProfile
    finally:
        sys.path[:] = saved


def in_process(lab: Lab, builds: int, profile: bool) -> tuple[list[str], dict[str, Any]]:
    """The Approvals view and its template as the server builds them, `builds` times each way:
    with the server's shelf (files unchanged since the last render: none read or parsed) and
    without one (every file read and parsed, as at the first render after a change)."""
    from jinja2 import Environment, PackageLoader, select_autoescape  # noqa: PLC0415

    from slopd.shell import config as config_module  # noqa: PLC0415
    from slopd.shell.lanes import Hub  # noqa: PLC0415
    from slopd.transport.console import views  # noqa: PLC0415

    if "shelf" not in inspect.signature(views.approvals_page).parameters:  # an older slopd on PYTHONPATH
        return ["== the Approvals view in this process: this slopd has no shelf, not measured"], {}
    from slopd.transport.console.shelf import Shelf  # noqa: PLC0415

    config, hub, shelf = config_module.load(lab.config), Hub(lab.hub), Shelf()
    templates = Environment(  # as guard.Desk.open makes it
        loader=PackageLoader("slopd.transport.console", "templates"),
        autoescape=select_autoescape(default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    template = templates.get_template("approvals.html")

    def once(kept: Shelf | None) -> None:
        context = views.approvals_page(hub, config, kept)
        template.render(title="Approvals", done=None, signed_in=None, csrf="", site=None, path="/", **context)

    once(shelf)
    timings: dict[str, list[float]] = {"with the shelf": [], "without": []}
    for _ in range(builds):
        for label, kept in (("with the shelf", shelf), ("without", None)):
            began = time.perf_counter()
            once(kept)
            timings[label].append((time.perf_counter() - began) * 1000)
    lines = [f"== the Approvals view + template in this process, {builds} builds each way, alternating (ms)"]
    rows = [
        [
            label,
            f"{len(shelf) if label == 'with the shelf' else 0:,}",
            ms(percentiles(values)["median"]),
            ms(percentiles(values)["p90"]),
            spread(tenths(values), ms),
        ]
        for label, values in timings.items()
    ]
    lines.append(render_table(["", "files kept", "p50", "p90", "p50 by tenth"], rows))
    if profile:
        profiler = _cprofile().Profile()
        profiler.runcall(lambda: [once(shelf) for _ in range(builds)])
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats("cumulative").print_stats(25)
        lines += ["", f"== cProfile of {builds} builds with the shelf", out.getvalue()]
    hub.close()
    return lines, {label: percentiles(values) for label, values in timings.items()}


# -- main -------------------------------------------------------------------------------------------


def source_state() -> str:
    """The commit slopd runs from and its uncommitted files, or the tree it is imported from when
    that is not this checkout (an older slopd on PYTHONPATH)."""
    import slopd  # noqa: PLC0415

    checkout = Path(__file__).resolve().parent.parent
    imported = Path(slopd.__file__).resolve().parent.parent
    if imported != checkout:
        return f"imported from {imported} (PYTHONPATH), not this checkout"

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(checkout), *args], capture_output=True, text=True, check=False
        ).stdout

    changed = [line[3:] for line in git("status", "--porcelain", "--", "slopd").splitlines() if line.strip()]
    head = git("rev-parse", "--short", "HEAD").strip() or "not a git checkout"
    return head + (f" + uncommitted changes to {', '.join(changed)}" if changed else "")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--archived", type=int, help="envelopes answered and archived first (default 10000)")
    parser.add_argument(
        "--pending", type=int, help="approvals waiting: drafts and held orders (default 1000)"
    )
    parser.add_argument(
        "--orders-share", type=float, default=0.3, help="of the pending, held orders (default 0.3)"
    )
    parser.add_argument("--renders", type=int, help="renders of each page per contender (default 200)")
    parser.add_argument("--quick", action="store_true", help="a smoke pass: small hub, 10 renders")
    parser.add_argument("--profile", action="store_true", help="also profile the Approvals view in process")
    parser.add_argument(
        "--folder-rounds", type=int, help="rounds of the folder path alone and viewed (default 3; 0: none)"
    )
    parser.add_argument("--folder-count", type=int, help="handoffs per folder-path run (default 2000)")
    parser.add_argument("--json", help="write the raw figures here")
    parser.add_argument("--serve-floor", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_floor:
        return serve_floor(args.serve_floor)
    archived = args.archived if args.archived is not None else 300 if args.quick else 10_000
    pending = args.pending if args.pending is not None else 60 if args.quick else 1_000
    renders = args.renders if args.renders is not None else 10 if args.quick else 200
    folder_rounds = args.folder_rounds if args.folder_rounds is not None else 1 if args.quick else 3
    folder_count = args.folder_count if args.folder_count is not None else 100 if args.quick else 2000
    if pending < 2 or renders < 1 or not 0 < args.orders_share < 1:
        parser.error("--pending must be at least 2, --renders at least 1, --orders-share between 0 and 1")

    precompile()
    print(f"# machine: {machine_line(('starlette', 'uvicorn', 'jinja2', 'fido2'))}")
    print(
        f"# started {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; archived={archived} pending={pending} "
        f"orders_share={args.orders_share} renders={renders}"
    )
    print(f"# slopd source: {source_state()}", flush=True)
    began = time.monotonic()
    lab = build(archived, pending, args.orders_share)
    measured = pages(lab)
    with children():
        process, url, start_s = serve(lab)
        busy_s = settled(process.pid)
        print(
            f"# slopd: spawn -> console.serving {start_s * 1000:.0f} ms, then busy {busy_s:.1f} s "
            f"(announcing the drafts, holding the orders); console at {url}",
            flush=True,
        )
        port = int(url.rsplit(":", 1)[1])
        browser = Browser(port, url)
        browser.sign_in(lab.passkey)
        captured = {}
        for page in measured:  # the first render of each: nothing kept parsed yet
            page.first_ms, captured[page.file] = timed(browser, page.path, page.marker)
            page.size = len(captured[page.file])
        floor_process, floor_port = start_floor(captured)
        floor = Browser(floor_port, f"http://127.0.0.1:{floor_port}")
        for page in measured:
            print(f"  [{page.label}] {renders} renders each …", file=sys.stderr, flush=True)
            measure(page, browser, process.pid, floor, floor_process.pid, renders)
        folder = (
            folder_path(lab, process.pid, browser.cookie, url, folder_rounds, folder_count)
            if folder_rounds
            else None
        )
        if process.poll() is not None:
            print(f"!! slopd exited with {process.returncode} during the run")
        if browser.reconnects or floor.reconnects:
            print(f"# reconnected after an idle close: slopd {browser.reconnects}, floor {floor.reconnects}")
    print(
        f"\n== console pages: {pending:,} approvals pending ({len(lab.drafts)} drafts, {len(lab.orders)} "
        f"held orders), {lab.made['inputs']:,} envelopes archived with {lab.made['replies']:,} replies; "
        f"{renders} renders each, slopd and the floor alternating (ms)"
    )
    print("\n".join(report(measured)))
    print(
        "(slopd: `slopd run --http` signed in, from the request to the last byte over a keep-alive "
        "connection; floor: the same bytes from a bare Starlette route on the same uvicorn. "
        "slopd/floor: the ratio of the medians of each tenth of the run, median [min-max]. CPU: the "
        "server process per render, the floor's in parentheses. The tenths' medians show the noise. "
        "first: slopd's first render of the page, before the shelf kept anything.)"
    )
    if folder is not None:
        print("\n" + "\n".join(folder_report(folder, folder_count)))
    lines, inside = in_process(lab, max(renders // 4, 5), args.profile)
    print("\n" + "\n".join(lines))
    print(f"# total {time.monotonic() - began:.0f} s", flush=True)
    if args.json:
        raw = {
            "settings": {
                "archived": archived,
                "pending": pending,
                "orders_share": args.orders_share,
                "renders": renders,
            },
            "machine": machine_line(),
            "hub": {**lab.made, "drafts": len(lab.drafts), "orders": len(lab.orders)},
            "pages": {
                page.label: {
                    "bytes": page.size,
                    "slopd": percentiles(page.slopd),
                    "floor": percentiles(page.floor),
                    "slopd_tenths": tenths(page.slopd),
                    "floor_tenths": tenths(page.floor),
                    "cpu_ms": page.cpu_ms,
                    "floor_cpu_ms": page.floor_cpu_ms,
                    "first_ms": page.first_ms,
                }
                for page in measured
            },
            "in_process": inside,
            "folder_path": folder,
        }
        Path(args.json).write_text(json.dumps(raw, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
