"""What the HTTP transport's tests share: a hub with seat tokens, its app in-process, or served.

- `with_tokens(hub, seats)` writes a tokens file (outside the hub) and a config naming it, and
  returns each seat's token.
- `in_process(hub)` opens the hub through the composition root, runs its daemon loop in a
  thread and yields `Live`: an httpx2 client on the Starlette app over the ASGI transport (no
  socket), the `Service` behind it and the open `App`.
- `served(hub)` is a real `slopd run --http 127.0.0.1:0` subprocess; it yields the daemon and
  the URL it logged (`http.listening`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx2

from slopd import app
from slopd.transport import tokens as token_file
from slopd.transport.server.app import Service, build
from slopd.transport.server.serve import make_service
from tests.conftest import HubDir, RunningDaemon, envelope_text


def with_tokens(hub: HubDir, seats: tuple[str, ...] = ("alice", "bob"), extra: str = "") -> dict[str, str]:
    """Tokens for `seats`, in `hub.config`'s `[http] tokens` file; `extra` adds config lines."""
    path = hub.config.parent / "tokens"
    text, issued = "", {}
    for number, seat in enumerate(seats):
        token = token_file.new_token(bytes([number + 1]) * 32)
        text = token_file.add(text, seat, token)
        issued[seat] = token
    path.write_text(text, encoding="utf-8")
    hub.write_config(f'[http]\ntokens = "{path}"\n{extra}')
    return issued


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def markdown(id: str, sender: str = "alice", **fields: Any) -> bytes:
    """A valid envelope from `sender` with this id (a `query` unless `type` says otherwise)."""
    fields.setdefault("type", "query")
    fields.setdefault("to", "watcher")
    return envelope_text(id=id, from_=sender, **fields).encode()


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
    with hub.running("--http", "127.0.0.1:0", *extra) as daemon:
        before = len(hub.events("http.listening"))
        found = daemon.until(lambda: hub.events("http.listening")[before:])
        yield daemon, found[-1]["url"]
