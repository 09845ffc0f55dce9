"""A reverse proxy for clients that cannot send a bearer token (the MCP conformance suite).

`Relay()` listens on 127.0.0.1 (its port known before it serves, so a config can name its
origin) and forwards every request to `target` with `Authorization: Bearer TOKEN` (its `token`) added — the
request's own `Host`, `Origin` and body untouched — streaming the answer back as it comes (SSE).
It is the test's stand-in for a configured MCP client or a proxy in front of slopd: slopd sees
the requests a browser or the suite sent, with a seat's token.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

import anyio
import httpx2
import uvicorn
from starlette.types import Receive, Scope, Send

from tests.polling import until

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "authorization"}


class Relay:
    def __init__(self) -> None:
        self.token = ""  # the seat's, set before the first request
        self.target = ""  # the upstream's base URL, set before the first request
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.port: int = self.socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = [
            (key.decode("latin-1"), value.decode("latin-1"))
            for key, value in scope["headers"]
            if key.decode("latin-1").lower() not in HOP_BY_HOP
        ]
        headers.append(("Authorization", f"Bearer {self.token}"))
        async with anyio.create_task_group() as group:

            async def hang_up() -> None:  # the client went away: so does the upstream request
                while (await receive())["type"] != "http.disconnect":
                    pass
                group.cancel_scope.cancel()

            group.start_soon(hang_up)
            await self._forward(scope, headers, body, send)
            group.cancel_scope.cancel()

    async def _forward(self, scope: Scope, headers: list[tuple[str, str]], body: bytes, send: Send) -> None:
        query = f"?{scope['query_string'].decode()}" if scope["query_string"] else ""
        async with (
            httpx2.AsyncClient(timeout=None) as client,
            client.stream(
                scope["method"], self.target + scope["path"] + query, headers=headers, content=body
            ) as answer,
        ):
            sent = [
                (key.encode("latin-1"), value.encode("latin-1"))
                for key, value in answer.headers.multi_items()
                if key.lower() not in HOP_BY_HOP
            ]
            await send({"type": "http.response.start", "status": answer.status_code, "headers": sent})
            async for chunk in answer.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})

    @contextlib.contextmanager
    def serving(self, target: str) -> Iterator[str]:
        """Forward to `target` for the block; the relay's URL."""
        self.target = target
        server = uvicorn.Server(
            uvicorn.Config(
                self,
                log_config=None,
                log_level="warning",
                lifespan="off",
                access_log=False,
                server_header=False,
                date_header=False,
            )
        )
        thread = threading.Thread(target=server.run, kwargs={"sockets": [self.socket]}, daemon=True)
        thread.start()
        until(lambda: server.started or not thread.is_alive(), timeout=15, interval=0.01)
        assert server.started, "the relay did not start"
        try:
            yield self.url
        finally:
            server.should_exit = True
            thread.join(timeout=10)
            self.socket.close()
