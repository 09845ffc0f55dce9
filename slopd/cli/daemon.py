"""`slopd run`: the daemon on a hub, built by the composition root, stopped by signals."""

from __future__ import annotations

import argparse
import os
import signal
import threading
from pathlib import Path
from types import FrameType

from slopd import app


def run(args: argparse.Namespace) -> int:
    stop = threading.Event()
    config = Path(args.config) if args.config else None
    log_file = Path(args.log_file) if args.log_file else None
    with app.start(
        args.hub, config_path=config, state=args.state, log_file=log_file, log_level=args.log_level
    ) as hub:
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
        try:
            daemon.run(stop=stop, once=args.once, grace=args.grace, polling=args.polling)
        finally:
            hub.log.info("daemon.stopped")
    return 0
