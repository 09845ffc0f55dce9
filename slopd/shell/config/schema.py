"""What a config is once read: frozen values, one per table of SPEC §8, with their defaults.

Rules:
1. The defaults here are the embedded defaults (`reading` rule 2): what slopd runs on when the
   file does not set a key, or when there is no file at all.
2. Values only: nothing here reads a file or checks a key (`sections` and `checks` do).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from slopd.core import origins
from slopd.core.routing import Policy
from slopd.core.vocabulary import MAX_ENVELOPE_BYTES


@dataclass(frozen=True, slots=True)
class Command:
    argv: tuple[str, ...]
    timeout: float
    max_parallel: int = 1
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    quorum: int = 1  # an action: how many distinct humans must sign (SPEC §6)
    require: str | None = None  # an action: "touch" or "verified" demands a security key


@dataclass(frozen=True, slots=True)
class Auth:
    allowed_signers: Path | None = None
    namespace: str = "slop"
    max_age: float = 86400.0
    sig_grace: float = 60.0
    allow_no_touch: bool = False


@dataclass(frozen=True, slots=True)
class Http:
    """`[http]` (SPEC §12): where the HTTP transport listens and who may use it."""

    listen: str | None = None  # HOST:PORT; `slopd run --http` overrides it
    tokens: Path | None = None
    max_body: int | None = None  # bytes; None: max_envelope_bytes
    rate_limit: int = 120  # requests per seat per minute
    tls_cert: Path | None = None
    tls_key: Path | None = None
    allow_plaintext: bool = False  # serve a non-loopback address without TLS
    allowed_origins: tuple[origins.Origin, ...] = ()  # browser origins /mcp accepts besides its own


@dataclass(frozen=True, slots=True)
class Console:
    """`[console]` (SPEC §15): how the human's console is reached; None: derived from `listen`."""

    rp_id: str | None = None  # the passkeys' relying party: a host name, baked into every key
    session_ttl: float = 43200.0  # seconds a sign-in lasts
    public_url: str | None = None  # the URL the human opens (behind a proxy): https://NAME[:PORT]


@dataclass(frozen=True, slots=True)
class Ntfy:
    """`[notify.ntfy]` (SPEC §16): an ntfy topic to post notifications to."""

    url: str
    token_file: Path | None = None  # a file holding an ntfy access token (Bearer)


@dataclass(frozen=True, slots=True)
class Webhook:
    """`[notify.webhook]` (SPEC §16): a URL that gets each notification as signed JSON."""

    url: str
    secret_file: Path  # a file holding the HMAC-SHA256 key


@dataclass(frozen=True, slots=True)
class Notify:
    """`[notify]` as read; `Config` holds its three parts side by side."""

    command: tuple[str, ...] | None = None
    ntfy: Ntfy | None = None
    webhook: Webhook | None = None


@dataclass(frozen=True, slots=True)
class Config:
    names: tuple[str, ...]
    max_envelope_bytes: int = MAX_ENVELOPE_BYTES
    settle: float = 0.3
    rescan_interval: float = 30.0
    executor: Command | None = None
    seats: Mapping[str, Command] = field(default_factory=dict)
    actions: Mapping[str, Command] = field(default_factory=dict)
    auth: Auth = field(default_factory=Auth)
    notify: tuple[str, ...] | None = None
    ntfy: Ntfy | None = None
    webhook: Webhook | None = None
    summarizer: tuple[str, ...] | None = None
    home: bool | None = None  # overrides the hub file's home watcher (SPEC §7)
    http: Http = field(default_factory=Http)
    baton_summarizer: tuple[str, ...] | None = None  # [baton.summarizer]: writes AUTOBIOGRAPHY.md
    console: Console = field(default_factory=Console)

    @property
    def watcher(self) -> str:
        """The name replies are sent `from`: the first `watcher:NAME`, else the first name."""
        return next((name for name in self.names if name.startswith("watcher:")), self.names[0])

    def policy(self) -> Policy:
        return Policy(
            names=frozenset(self.names),
            executor=self.executor is not None,
            seats=frozenset(self.seats),
            actions=frozenset(self.actions),
        )
