"""The HTTP server inside `slopd run`: uvicorn in a thread of the daemon's process (SPEC §12).

Rules:
1. `--http HOST:PORT` (or `[http] listen`) binds loopback unless told otherwise; any other
   address needs `[http] tls_cert`/`tls_key` or `allow_plaintext = true`, and a tokens file —
   else slopd refuses to start (exit 2), naming the key.
2. Before the first request is answered, receipts a crash left `writing` are settled
   (`Intake.recover`); then uvicorn serves in its own thread and event loop, never touching
   the daemon's signals (uvicorn installs handlers only on the main thread).
3. `drain` (SIGTERM, before the daemon's own shutdown): new requests get 503, long-polls (and
   `/mcp`'s streams and waiting tools) return what they have, requests in progress finish (up to
   `timeout`), then uvicorn stops.
4. The port bound (with `:0`, the one the kernel chose) is logged as `http.listening`.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

import uvicorn

from slopd.app import App
from slopd.core.errors import UsageError
from slopd.core.origins import is_loopback
from slopd.shell.config import Http
from slopd.transport.server.app import Service, build

_START_TIMEOUT = 15.0


@dataclass(frozen=True, slots=True)
class Address:
    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def parse_address(text: str) -> Address:
    host, colon, port = text.rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--http {text!r}: give HOST:PORT, such as 127.0.0.1:8787")
    return Address(host, int(port))


def check_exposure(address: Address, http: Http) -> None:
    """Rule 1."""
    if is_loopback(address.host):
        return
    if http.tls_cert is None and not http.allow_plaintext:
        raise UsageError(
            f"--http {address.url} is not a loopback address: set [http] tls_cert and tls_key, or "
            "[http] allow_plaintext = true (tokens would cross the network in clear)"
        )
    if http.tokens is None:
        raise UsageError(f"--http {address.url} is not a loopback address: set [http] tokens first")


class HttpServer:
    def __init__(self, app: App, address: Address, service: Service) -> None:
        """Serve `service` (`transport.assembly.make_service`) at `address` (rule 1 checked)."""
        http = app.config.http
        check_exposure(address, http)
        self.app, self.address = app, address
        self.service = service
        self.log, self.intake, self.receipts = self.service.log, self.service.intake, self.service.receipts
        config = uvicorn.Config(
            build(self.service),
            host=address.host,
            port=address.port,
            loop="asyncio",
            lifespan="on",
            log_config=None,
            log_level=logging.WARNING,
            access_log=False,
            server_header=False,
            ssl_certfile=str(http.tls_cert) if http.tls_cert else None,
            ssl_keyfile=str(http.tls_key) if http.tls_key else None,
        )
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._serve, name="slopd-http", daemon=True)
        self._failure: BaseException | None = None

    def _serve(self) -> None:
        try:
            self.server.run()
        except BaseException as error:  # uvicorn exits with SystemExit when it cannot bind
            self._failure = error

    def start(self) -> str:
        """Rules 2 and 4: settle receipts, serve; the URL it listens on."""
        for receipt, present in self.intake.recover():
            self.log.warning("receipt.recovered", id=receipt.id, written=present)
        if self.service.seats.path is None:
            self.log.warning("http.no_tokens", reason="no [http] tokens file: every /v1 request gets 401")
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT
        while not self.server.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)  # start-up only: uvicorn sets `started` once its sockets listen
        if not self.server.started:
            self.server.should_exit = True
            reason = f"{self._failure!r}" if self._failure is not None else "it did not start in time"
            raise UsageError(f"cannot serve HTTP on {self.address.url}: {reason}")
        sockets = [sock for server in self.server.servers for sock in server.sockets]
        port = sockets[0].getsockname()[1] if sockets else self.address.port
        scheme = "https" if self.app.config.http.tls_cert else "http"
        url = f"{scheme}://{Address(self.address.host, port).url}"
        self.log.info("http.listening", url=url)
        if self.service.console is not None:
            self.service.console.serve_at(url)
        return url

    def drain(self, timeout: float = 10.0) -> None:
        """Rule 3."""
        service = self.service
        service.stopping = True
        service.doorbell.close()
        for stop in service.draining:  # /mcp: its streams end, its tools' waits return
            stop()
        deadline = time.monotonic() + timeout
        while service.in_flight and time.monotonic() < deadline:
            time.sleep(0.01)
        self.log.info("http.drained", unfinished=service.in_flight)
        self.close()

    def close(self) -> None:
        self.server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=10.0)
        self.receipts.close()
