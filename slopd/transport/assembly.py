"""The HTTP transport assembled: `/v1`, `/mcp` and the console on one Starlette app over an open hub.

Rules:
1. This module sits above the transport's parts (`server`, `mcp`, `console`; import-linter's
   transport contract): each of them may import `server`, none imports another's assembly — so
   the server never imports what is mounted on it.
2. `/mcp` and the console are mounted only when their extras are installed; without one, the
   server logs `mcp.unavailable` or `console.unavailable` and serves the rest.
3. The daemon is built after the server (the HTTP intake's hints are looked up when called):
   `app.arrived` and `app.admit` are the running daemon's once `App.daemon()` has run.
4. The tokens file is one of the trusted files the daemon looks at once a second (`app.watched`).
"""

from __future__ import annotations

from slopd.app import App
from slopd.baton import summarizer
from slopd.baton.store import Store
from slopd.core.layout import LEDGER_FILE
from slopd.shell.ledger.receipts import Receipts
from slopd.shell.log import Logger
from slopd.transport.ratelimit import Limiter
from slopd.transport.server.app import Service
from slopd.transport.server.auth import Seats
from slopd.transport.server.intake import Intake
from slopd.transport.server.metrics import Metrics
from slopd.transport.server.waiting import Doorbell


def make_service(app: App, host: str = "127.0.0.1") -> Service:
    """The HTTP transport's pieces over an open hub, /mcp and the console mounted (rules 2-4); the
    tests drive its app in-process, `slopd run --http` serves it (`server.serve.HttpServer`)."""
    http = app.config.http
    log = app.log.bind(transport="http")
    receipts = Receipts(app.state / LEDGER_FILE)
    limit = min(http.max_body or app.config.max_envelope_bytes, app.config.max_envelope_bytes)
    doorbell = Doorbell(app.bell)
    metrics = Metrics(receipts, app.hub, lambda: doorbell.parked)
    arrived = lambda lane, name: app.arrived(lane, name)  # noqa: E731, PLW0108  # late: the daemon is built after the server
    admit = lambda lane, name, examined: app.admit(lane, name, examined)  # noqa: E731, PLW0108  # late, as `arrived`
    service = Service(
        hub=app.hub,
        receipts=receipts,
        intake=Intake(app.hub, receipts, limit, app.clock, arrived, metrics.received, admit),
        seats=Seats(http.tokens, log),
        limiter=Limiter(http.rate_limit),
        doorbell=doorbell,
        metrics=metrics,
        log=log,
        batons=Store(app.state),
        watcher=app.config.watcher,
        summarize=summarizer.configured(app.config),
    )
    app.bell.listen(lambda: service.metrics.replies_committed(receipts))
    _mount_console(app, service, log)
    if service.seats.watched is not None:
        app.watched.append(service.seats.watched)  # the daemon looks at it once a second, and at SIGHUP
    try:
        from slopd.transport.mcp import mount  # noqa: PLC0415  # /mcp only with the MCP extra
    except ImportError:
        log.info(
            "mcp.unavailable", reason="the MCP extra is not installed: no /mcp (pip install 'slopd[mcp]')"
        )
        return service
    mounted, lifespan, _desks = mount.routes(app, service, host)
    service.mounted += mounted
    service.lifespans.append(lifespan)
    return service


def _mount_console(app: App, service: Service, log: Logger) -> None:
    """The console at `/` (SPEC §15), when its extra is installed."""
    try:
        from slopd.transport.console import mount as console  # noqa: PLC0415  # Jinja2, fido2: the console extra
    except ImportError:
        log.info(
            "console.unavailable",
            reason="the console extra is not installed: no /  (pip install 'slopd[console]')",
        )
        return
    mounted, desk = console.routes(app)
    service.mounted += mounted
    service.console = desk
