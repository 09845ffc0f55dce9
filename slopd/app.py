"""The composition root: the one place that builds slopd's configured pieces into a running whole.

`slopd run`, the tests, and the HTTP and MCP servers all start a hub the same way:

    with app.start(hub, config_path=…, state=…) as hub_app:
        hub_app.daemon().run(stop=…)

Rules:
1. A hub is a folder with `inbox/`; the config, the allowed-signers file and the state dir must
   resolve outside it (SPEC §1) — each refusal is a `SetupError` naming the path.
2. `start` takes the per-hub lock before anything is written (a second daemon exits 2, naming
   the holder), then configures the log, opens the hub and the ledger; `close` undoes it all.
3. The config is read once here and again, by the same code, on every reload; the
   allowed-signers file and the tokens file are re-read whenever they change (SPEC §14).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from slopd.core.admission import Admit, unheard
from slopd.core.errors import UsageError
from slopd.core.layout import BELL_FILE, LEDGER_FILE, LOG_FILE
from slopd.core.orders import Trust
from slopd.daemon.batch import GroupCommit
from slopd.daemon.gate import Trusted, trusted, warn_skipped
from slopd.daemon.loop import Daemon
from slopd.daemon.notices import Notices
from slopd.daemon.parts import Clock, Parts
from slopd.shell import config as config_module
from slopd.shell import defaults, executor, lock, log, push
from slopd.shell.archive import Archive
from slopd.shell.bell import Bell, Mark
from slopd.shell.config import Config
from slopd.shell.lanes import Hub, require_hub
from slopd.shell.ledger import Ledger
from slopd.shell.notifier import Notifier, Sink
from slopd.shell.reloading import Reloading


def load_config(hub: Path, path: Path | None) -> Config:
    """The config at `path` (or the default path, or the embedded defaults), checked outside `hub`."""
    config = config_module.load(path)
    chosen = path or defaults.default_config_path()
    if chosen.exists():
        config_module.ensure_outside(hub, chosen, "the config")
    if config.auth.allowed_signers is not None:
        config_module.ensure_outside(hub, config.auth.allowed_signers, "the allowed-signers file")
    if config.http.tokens is not None:
        config_module.ensure_outside(hub, config.http.tokens, "the tokens file")
    if config.ntfy is not None and config.ntfy.token_file is not None:
        config_module.ensure_outside(hub, config.ntfy.token_file, "the ntfy token file")
    if config.webhook is not None:
        config_module.ensure_outside(hub, config.webhook.secret_file, "the webhook secret file")
    return config


def push_sinks(config: Config, logger: log.Logger, base: Callable[[], str | None]) -> list[Sink]:
    """The ntfy and webhook destinations of `config` (SPEC §16), their secrets read now: an
    unreadable token or secret file is a `SetupError` naming it, at start and at a reload."""
    sinks: list[Sink] = []
    if config.ntfy is not None:
        path = config.ntfy.token_file
        token = push.read_secret(path, "ntfy token") if path is not None else None
        sinks.append(push.ntfy(config.ntfy.url, token, logger, base=base))
    if config.webhook is not None:
        secret = push.read_secret(config.webhook.secret_file, "webhook secret")
        sinks.append(push.webhook(config.webhook.url, secret, logger, base=base))
    return sinks


@dataclass(eq=False)
class App:
    """One hub's configured pieces, open and locked."""

    root: Path
    state: Path
    config_path: Path | None
    config: Config
    trusted: Trusted  # the allowed signers, re-read when the file changes
    hub: Hub
    ledger: Ledger
    log: log.Logger
    runner: executor.Runner
    clock: Callable[[], datetime]
    lock_fd: int
    bell: Bell = field(default_factory=Bell)  # rung after each ledger commit (the reply feed waits on it)
    arrived: Callable[[str, str], None] = lambda _lane, _name: None  # the running daemon's `Arrivals.arrived`
    admit: Admit = unheard  # its `Arrivals.admit`: the HTTP and MCP intake's admissions (admission rule 7)
    notices: Notices = field(default_factory=Notices)  # the console's replies, for the daemon's loop
    watched: list[Reloading[Any]] = field(default_factory=list)  # other trusted files (tokens): re-read

    @property
    def trust(self) -> Trust | None:
        """The allowed signers as they are now."""
        return self.trusted.value if self.trusted is not None else None

    mark: Mark = field(init=False)  # STATE/ledger.bell, written at each ring for other processes' waits

    def __post_init__(self) -> None:
        self.mark = Mark(self.state / BELL_FILE)
        self.bell.listen(self.mark)

    def reload_config(self) -> Config:
        return load_config(self.root, self.config_path)

    def sinks_for(self, config: Config, notifier: Notifier) -> list[Sink]:
        return push_sinks(config, self.log, lambda: notifier.link_base)

    def daemon(self) -> Daemon:
        """The daemon over these pieces (build one per run)."""
        config, hub, logger = self.config, self.hub, self.log
        archive = Archive(hub)
        notifier = Notifier(config.notify, self.runner, executor.child_environment({}), logger)
        notifier.configure(config.notify, self.sinks_for(config, notifier))
        parts = Parts(
            hub=hub,
            archive=archive,
            ledger=self.ledger,
            config=config,
            log=logger,
            clock=Clock(self.clock),
            notifier=notifier,
            commits=GroupCommit(hub, archive, self.ledger, logger, self.bell),
            runner=self.runner,
            state_dir=self.state,
            watched=tuple(self.watched),  # the HTTP server, made first, has added its tokens file
            sinks_for=lambda new: self.sinks_for(new, notifier),
        )
        daemon = Daemon(parts, trusted=self.trusted, reload=self.reload_config, notices=self.notices)
        self.arrived = daemon.arrivals.arrived  # in-process writers (HTTP) say a file is complete
        self.admit = daemon.arrivals.admit
        return daemon

    def close(self) -> None:
        self.mark.close()
        self.ledger.close()
        self.hub.close()
        log.reset()
        os.close(self.lock_fd)


@contextmanager
def start(
    root: str | Path,
    *,
    config_path: Path | None = None,
    state: str | Path | None = None,
    log_file: Path | None = None,
    log_level: str = "info",
    log_stream: TextIO | None = sys.stderr,
    runner: executor.Runner = executor.run,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> Iterator[App]:
    """Open a hub for serving (rules 1-2); closed again when the block ends."""
    root = require_hub(root).absolute()  # commands get absolute paths (SLOP_HUB, SLOP_OUT_DIR)
    config = load_config(root, config_path)
    trust = trusted(config, log.get())
    state_path = defaults.state_dir(root, state).absolute()
    config_module.ensure_outside(root, state_path, "the state dir")
    state_path.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        lock_fd = lock.acquire(state_path, root)
    except lock.LockHeld as held:
        raise UsageError(f"another slopd holds this hub: {held}") from None
    try:
        log.configure(log_file=log_file or state_path / LOG_FILE, level=log_level, stream=log_stream)
        hub = Hub(root)
        ledger = Ledger(state_path / LEDGER_FILE)
    except BaseException:
        os.close(lock_fd)
        raise
    opened = App(root, state_path, config_path, config, trust, hub, ledger, log.get(), runner, clock, lock_fd)
    warn_skipped(opened.log, config, opened.trust)
    try:
        yield opened
    finally:
        opened.close()
