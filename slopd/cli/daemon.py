"""`slopd run`: the daemon on a hub, built by the composition root, stopped by signals."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import threading
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from slopd import app
from slopd.core.errors import UsageError

if TYPE_CHECKING:
    from slopd.transport.server.serve import HttpServer

_HTTP_EXTRA = "slopd run --http needs the HTTP extra: pip install 'slopd[http]'"


def _http_server(hub: app.App, address: str) -> HttpServer:
    try:
        from slopd.transport.server import serve  # noqa: PLC0415  # starlette, uvicorn: only with --http
    except ImportError as missing:
        raise UsageError(f"{_HTTP_EXTRA} ({missing.name} is not installed)") from None
    return serve.HttpServer(hub, serve.parse_address(address))


def run(args: argparse.Namespace) -> int:
    stop = threading.Event()
    config = Path(args.config) if args.config else None
    log_file = Path(args.log_file) if args.log_file else None
    with (
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

        def on_stop(_signum: int, _frame: FrameType | None) -> None:
            stop.set()
            daemon.wakeup.set()

        def on_reload(_signum: int, _frame: FrameType | None) -> None:
            daemon.request_reload()

        signal.signal(signal.SIGTERM, on_stop)
        signal.signal(signal.SIGINT, on_stop)
        signal.signal(signal.SIGHUP, on_reload)
        hub.log.bind(hub=str(hub.root), state=str(hub.state), pid=os.getpid()).info(
            "daemon.started", once=args.once
        )
        if http is not None:
            serving.callback(http.close)
            # Notifications link to the console's pages on this server (SPEC §16); a configured
            # public URL (`[console] public_url`, when it lands) is to take precedence.
            daemon.parts.notifier.link_base = http.start()
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
