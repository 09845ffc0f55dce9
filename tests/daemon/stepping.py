"""A real daemon in this process whose loop is turned by hand: what its modules remember between
two inputs is seen step by step, without a timed assertion."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from slopd import app
from slopd.daemon.loop import Daemon
from tests.conftest import HubDir


@contextmanager
def stepped(hub: HubDir, grace: float) -> Iterator[Daemon]:
    """The hub's daemon, settle 0 and `sig_grace` = `grace`, home decided and recovery done."""
    hub.write_config(f"settle = 0\n\n[auth]\nsig_grace = {grace}\n")
    with app.start(hub.root, config_path=hub.config, state=hub.state, log_stream=None) as opened:
        daemon = opened.daemon()
        daemon.homing.resolve()
        daemon.answering.recover()
        yield daemon


def step(daemon: Daemon) -> None:
    """One turn of the loop: a full scan, then every input that is due."""
    daemon.arrivals.scan(time.monotonic())
    daemon.answering.process_due(time.monotonic())
