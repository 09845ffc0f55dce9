"""What the HTTP transport's tests share: a hub with seat tokens, its app in-process, or served.

- `with_tokens(hub, seats)` writes a tokens file (outside the hub) and a config naming it, and
  returns each seat's token.
- `in_process(hub)` opens the hub through the composition root, runs its daemon loop in a
  thread and yields `Live`: an httpx2 client on the Starlette app over the ASGI transport (no
  socket), the `Service` behind it and the open `App`.
- `served(hub)` is a real `slopd run --http 127.0.0.1:0` subprocess; it yields the daemon and
  the URL it logged (`http.listening`).
- `problem(response, status, kind)` checks an RFC 9457 answer; `files(hub, lane)` and
  `ledger(hub, sql)` read what was written. Waits are `tests.polling`'s `until_async`.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
from prometheus_client.parser import text_string_to_metric_families

from slopd import app
from slopd.transport import tokens as token_file
from slopd.transport.assembly import make_service
from slopd.transport.server.app import Service, build
from tests.conftest import HubDir, RunningDaemon, envelope_text


def with_tokens(hub: HubDir, seats: tuple[str, ...] = ("alice", "bob"), extra: str = "") -> dict[str, str]:
    """Tokens for `seats`, in `hub.config`'s `[http] tokens` file; `extra` adds config lines (the
    rate limit is lifted unless `extra` sets one: polling tests must not meet a 429)."""
    path = hub.config.parent / "tokens"
    text, issued = "", {}
    for number, seat in enumerate(seats):
        token = token_file.new_token(bytes([number + 1]) * 32)
        text = token_file.add(text, seat, token)
        issued[seat] = token
    path.write_text(text, encoding="utf-8")
    limit = "" if "rate_limit" in extra else "rate_limit = 1000000\n"
    hub.write_config(f'[http]\ntokens = "{path}"\n{limit}{extra}')
    return issued


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def markdown(id: str, sender: str = "alice", **fields: Any) -> bytes:
    """A valid envelope from `sender` with this id (a `query` unless `type` says otherwise)."""
    fields.setdefault("type", "query")
    fields.setdefault("to", "watcher")
    return envelope_text(id=id, from_=sender, **fields).encode()


def json_form(id: str, sender: str = "alice", body: str = "Body text.\n", **fields: Any) -> bytes:
    """The §3 JSON form of a valid envelope (a `query` to `watcher` unless told otherwise)."""
    document: dict[str, Any] = {
        "protocol": "slop.v1",
        "id": id,
        "type": "query",
        "from": sender,
        "to": "watcher",
        "in_reply_to": None,
        "created_at": "2026-07-04T07:15:53Z",
        "auth": "none",
        **fields,
        "body": body,
    }
    return json.dumps(document).encode()


@dataclass
class Live:
    client: httpx2.AsyncClient
    service: Service
    app: app.App

    async def post(
        self, token: str, data: bytes, media: str = "text/markdown", **headers: str
    ) -> httpx2.Response:
        sent = {"Content-Type": media, **bearer(token), **headers}
        return await self.client.post("/v1/envelopes", content=data, headers=sent)


@contextlib.asynccontextmanager
async def in_process(hub: HubDir, *, daemon: bool = True) -> AsyncIterator[Live]:
    """The app over the ASGI transport, with (by default) the daemon loop running in a thread."""
    stop = threading.Event()
    with app.start(hub.root, config_path=hub.config, state=hub.state, log_stream=None) as opened:
        service = make_service(opened)
        service.doorbell.open()  # the lifespan's job; the ASGI transport runs no lifespan
        loop = opened.daemon()
        thread = threading.Thread(target=lambda: loop.run(stop=stop), daemon=True)
        if daemon:
            thread.start()
        transport = httpx2.ASGITransport(app=build(service))
        try:
            async with httpx2.AsyncClient(transport=transport, base_url="http://slopd.test") as client:
                yield Live(client, service, opened)
        finally:
            service.doorbell.close()
            stop.set()
            loop.wakeup.set()
            if daemon:
                thread.join(timeout=30)
            service.receipts.close()


@contextlib.contextmanager
def served(hub: HubDir, *extra: str) -> Iterator[tuple[RunningDaemon, str]]:
    """A real `slopd run --http 127.0.0.1:0`; stopped (SIGTERM) after the block."""
    before = len(hub.events("http.listening"))
    with hub.running("--http", "127.0.0.1:0", *extra) as daemon:
        found = daemon.until(lambda: hub.events("http.listening")[before:])
        yield daemon, found[-1]["url"]


def problem(response: httpx2.Response, status: int, kind: str) -> dict[str, Any]:
    """Assert `response` is the RFC 9457 problem `kind` with `status`; its body."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/problem+json"), response.headers
    body: dict[str, Any] = response.json()
    assert body["type"] == f"https://slopd.dev/problems/{kind}", body
    assert body["status"] == status, body
    assert isinstance(body["title"], str), body
    assert body["title"], body
    assert isinstance(body["detail"], str), body
    return body


Samples = dict[str, list[tuple[dict[str, str], float]]]


def samples(text: str) -> Samples:
    """Every sample of a `/metrics` text by sample name: [(labels, value)], by prometheus-client's
    own parser."""
    found: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return found


def value(found: Samples, name: str, **labels: str) -> float | None:
    """The one sample of `name` with exactly `labels` (None: there is none)."""
    numbers = [number for seen, number in found.get(name, []) if seen == labels]
    assert len(numbers) <= 1, (name, labels, numbers)
    return numbers[0] if numbers else None


def files(hub: HubDir, lane: str) -> dict[str, bytes]:
    """Every file under `hub.root/lane` (recursively, dot files too) by relative path, with its bytes."""
    root = hub.root / lane
    return {
        path.relative_to(root).as_posix(): path.read_bytes() for path in root.rglob("*") if path.is_file()
    }


def ledger(hub: HubDir, sql: str, *parameters: Any) -> list[tuple[Any, ...]]:
    """The rows of `sql` on the hub's ledger, read on a connection of the test's own."""
    with contextlib.closing(sqlite3.connect(hub.state / "ledger.sqlite3", timeout=30)) as db:
        return [tuple(row) for row in db.execute(sql, parameters)]
