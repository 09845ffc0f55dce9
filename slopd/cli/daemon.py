"""`slopd run`: the daemon on a hub, built by the composition root, stopped by signals."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from slopd import app
from slopd.core.errors import UsageError
from slopd.ops import homes
from slopd.shell import stdlog

if TYPE_CHECKING:
    from slopd.transport.server.serve import HttpServer

_HTTP_EXTRA = "slopd run --http needs the HTTP extra: pip install 'slopd[http]'"


def _http_server(hub: app.App, address: str) -> HttpServer:
    try:
        from slopd.transport import assembly  # noqa: PLC0415  # starlette, uvicorn: only with --http
        from slopd.transport.server import serve  # noqa: PLC0415
    except ImportError as missing:
        raise UsageError(f"{_HTTP_EXTRA} ({missing.name} is not installed)") from None
    where = serve.parse_address(address)
    serve.check_exposure(where, hub.config.http)  # before anything is built for it
    return serve.HttpServer(hub, where, assembly.make_service(hub, where.host))


def _say_the_trap(hub: app.App) -> None:
    """SPEC §14: a watcher that will answer nothing generic says so on the terminal, in a plain
    paragraph set apart from the JSON lines — only when stderr is a terminal: a service's stderr
    (journald) and a pipe get JSON only, and the daemon logs it as `hub.home_unseen` anyway."""
    trap = homes.unseen(hub.root, hub.config)
    if trap is None or not sys.stderr.isatty():
        return
    text, fix = trap
    then = f"then reload this slopd (kill -HUP {os.getpid()}) or restart it"
    print(f"\nslopd run: {text}.\n  Fix: {fix}\n  {then}.\n", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _woken_by_signals(wakeup: threading.Event) -> Iterator[None]:
    """Wake the loop whichever thread a signal lands on.

    The kernel may deliver SIGTERM to any thread (uvicorn's, watchdog's), and Python runs the
    handler only when the main thread next runs: asleep in the loop's wait, it would sleep on
    (up to `rescan_interval`, 30 s seen). The C-level handler writes a byte to the wakeup fd
    wherever it runs; a thread reading it sets `wakeup`, and the woken main thread runs the handler.
    """
    read, write = os.pipe()
    os.set_blocking(write, False)
    previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)

    def relay() -> None:
        while os.read(read, 512):  # b"" once `write` is closed
            wakeup.set()

    thread = threading.Thread(target=relay, name="slopd-signals", daemon=True)
    thread.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous)
        os.close(write)
        thread.join(timeout=5)
        os.close(read)


def run(args: argparse.Namespace) -> int:
    stop = threading.Event()
    config = Path(args.config) if args.config else None
    log_file = Path(args.log_file) if args.log_file else None
    with (
        stdlog.routed(args.log_level),  # uvicorn's, the MCP SDK's, watchdog's lines: JSON too (SPEC §14)
        app.start(
            args.hub, config_path=config, state=args.state, log_file=log_file, log_level=args.log_level
        ) as hub,
        contextlib.ExitStack() as serving,
    ):
        address = args.http or hub.config.http.listen
        if address and args.once:
            raise UsageError("--http serves until stopped; it cannot be used with --once")
        http = _http_server(hub, address) if address else None
        daemon = hub.daemon()
        _say_the_trap(hub)

        def on_stop(_signum: int, _frame: FrameType | None) -> None:
            stop.set()
            daemon.wakeup.set()

        def on_reload(_signum: int, _frame: FrameType | None) -> None:
            daemon.request_reload()

        signal.signal(signal.SIGTERM, on_stop)
        signal.signal(signal.SIGINT, on_stop)
        signal.signal(signal.SIGHUP, on_reload)
        serving.enter_context(_woken_by_signals(daemon.wakeup))
        hub.log.bind(hub=str(hub.root), state=str(hub.state), pid=os.getpid()).info(
            "daemon.started", once=args.once
        )
        if http is not None:
            serving.callback(http.close)
            # Notifications link to the console's pages (SPEC §16), at the URL the human reaches it
            # and signs in on (its site: `[console] public_url`, else `localhost` for a loopback
            # bind — the origin its cookie belongs to), else this server's own URL.
            url = http.start()
            console = http.service.console
            site = console.site if console is not None else None
            daemon.parts.notifier.link(site.public_url if site is not None else url)
        try:
            daemon.run(
                stop=stop,
                once=args.once,
                grace=args.grace,
                polling=args.polling,
                stopping=http.drain if http is not None else None,
            )
        finally:
            hub.log.info("daemon.stopped")
    return 0
