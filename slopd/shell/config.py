"""The operator's configuration: TOML with exactly the keys of SPEC §8, strictly checked.

Rules:
1. An unknown key or a wrong type is a `ConfigError` naming the key (`executor.timeout`).
2. No config file at the default path means the safe embedded defaults: ack, discuss and
   index; execute requests are answered with an error.
3. The config, the allowed-signers file and the state dir never live inside the hub: trusted
   inputs must not be writable by the agents that write the hub.
4. Defaults that come from the environment (names, paths) are `shell.defaults`'.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from slopd.core import allowed_signers
from slopd.core.envelope import ACTION_PATTERN, PARTY_PATTERN
from slopd.core.errors import SetupError
from slopd.core.orders import REQUIREMENTS, Trust
from slopd.core.orders import Policy as SigningPolicy
from slopd.core.routing import Policy
from slopd.core.vocabulary import MAX_ENVELOPE_BYTES
from slopd.shell.defaults import default_config_path, default_names

T = TypeVar("T")


class ConfigError(SetupError):
    """The configuration or the set-up around it is unusable; the message names the key or path."""


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
class _Notify:
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


def load(path: Path | None) -> Config:
    """Read the config at `path`, or the default path; a missing default file means defaults."""
    if path is None:
        path = default_config_path()
        if not path.exists():
            return Config(names=default_names())
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read the config: {error}") from None
    try:
        config = parse(text)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None
    # Relative paths are relative to the config file, not to wherever the daemon happens to start,
    # and commands get them absolute.
    base = path.absolute().parent
    signers = config.auth.allowed_signers
    if signers is not None and not signers.is_absolute():
        config = replace(config, auth=replace(config.auth, allowed_signers=base / signers))
    actions = {
        name: replace(action, cwd=str(base / action.cwd))
        if action.cwd and not Path(action.cwd).is_absolute()
        else action
        for name, action in config.actions.items()
    }
    http = config.http
    paths = {
        key: base / value
        for key in ("tokens", "tls_cert", "tls_key")
        if (value := getattr(http, key)) is not None and not value.is_absolute()
    }
    ntfy, webhook = config.ntfy, config.webhook
    if ntfy is not None and ntfy.token_file is not None and not ntfy.token_file.is_absolute():
        ntfy = replace(ntfy, token_file=base / ntfy.token_file)
    if webhook is not None and not webhook.secret_file.is_absolute():
        webhook = replace(webhook, secret_file=base / webhook.secret_file)
    return replace(config, actions=actions, http=replace(http, **paths), ntfy=ntfy, webhook=webhook)


def parse(text: str) -> Config:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"not valid TOML: {error}") from None
    table = _Table(document, "")
    notify = table.take("notify", _notify, _Notify())
    config = Config(
        names=table.take("names", _names, default_names()),
        max_envelope_bytes=table.take("max_envelope_bytes", _positive_int, MAX_ENVELOPE_BYTES),
        settle=table.take("settle", _non_negative, 0.3),
        rescan_interval=table.take("rescan_interval", _positive, 30.0),
        executor=table.take("executor", _executor, None),
        seats=table.take("seats", _named(PARTY_PATTERN, _seat), {}),
        actions=table.take("actions", _named(ACTION_PATTERN, _action), {}),
        auth=table.take("auth", _auth, Auth()),
        notify=notify.command,
        ntfy=notify.ntfy,
        webhook=notify.webhook,
        summarizer=table.take("summarizer", _command_only, None),
        home=table.take("home", _bool, None),
        http=table.take("http", _http, Http()),
        baton_summarizer=table.take("baton", _baton, None),
    )
    table.finish()
    return config


class _Table:
    """A TOML table being read: every key taken is checked; `finish` rejects the leftovers."""

    def __init__(self, value: object, where: str) -> None:
        if not isinstance(value, dict):
            raise ConfigError(f"{where or 'the config'}: must be a table")
        self.values: dict[str, Any] = dict(value)
        self.where = where

    def key(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def take(self, name: str, check: Callable[[object, str], T], default: T) -> T:
        if name not in self.values:
            return default
        return check(self.values.pop(name), self.key(name))

    def finish(self) -> None:
        for name in self.values:
            raise ConfigError(f"{self.key(name)}: unknown key")


def _type_error(key: str, expected: str, value: object) -> ConfigError:
    return ConfigError(f"{key}: expected {expected}, got {type(value).__name__} {value!r}")


MAX_SECONDS = 1e9  # about 31 years: any longer duration is a mistake, and overflows date arithmetic


def _number(value: object, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _type_error(key, "a number", value)
    if not math.isfinite(value) or abs(value) > MAX_SECONDS:
        raise ConfigError(f"{key}: must be a finite number of seconds up to {MAX_SECONDS:g}, got {value!r}")
    return float(value)


def _positive(value: object, key: str) -> float:
    number = _number(value, key)
    if number <= 0:
        raise ConfigError(f"{key}: must be greater than 0")
    return number


def _non_negative(value: object, key: str) -> float:
    number = _number(value, key)
    if number < 0:
        raise ConfigError(f"{key}: must not be negative")
    return number


def _positive_int(value: object, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _type_error(key, "an integer", value)
    if value < 1:
        raise ConfigError(f"{key}: must be at least 1")
    return value


def _string(value: object, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise _type_error(key, "a non-empty string", value)
    return value


def _argv(value: object, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise _type_error(key, "a non-empty list of strings (an argv)", value)
    return tuple(_string(item, f"{key}[{index}]") for index, item in enumerate(value))


def _names(value: object, key: str) -> tuple[str, ...]:
    names = _argv(value, key)
    for name in names:
        if not PARTY_PATTERN.fullmatch(name):
            raise ConfigError(f"{key}: {name!r} is not a valid recipient name")
    return names


def _env(value: object, key: str) -> dict[str, str]:
    table = _Table(value, key)
    return {name: _string(item, table.key(name)) for name, item in table.values.items()}


def _command(value: object, key: str, *, timeout: float, extra: bool) -> Command:
    table = _Table(value, key)
    argv: tuple[str, ...] = table.take("command", _argv, tuple[str, ...]())
    if not argv:
        raise ConfigError(f"{key}.command: missing")
    command = Command(
        argv=argv,
        timeout=table.take("timeout", _positive, timeout),
        max_parallel=table.take("max_parallel", _positive_int, 1) if key == "executor" else 1,
        cwd=table.take("cwd", _string, None) if extra else None,
        env=table.take("env", _env, {}) if extra else {},
        quorum=table.take("quorum", _positive_int, 1) if extra else 1,
        require=table.take("require", _requirement, None) if extra else None,
    )
    table.finish()
    return command


def _requirement(value: object, key: str) -> str:
    text = _string(value, key)
    if text not in REQUIREMENTS:
        raise ConfigError(f"{key}: must be one of {', '.join(map(repr, REQUIREMENTS))}, got {text!r}")
    return text


def _bool(value: object, key: str) -> bool:
    if not isinstance(value, bool):
        raise _type_error(key, "true or false", value)
    return value


def _executor(value: object, key: str) -> Command:
    return _command(value, key, timeout=1800.0, extra=False)


def _seat(value: object, key: str) -> Command:
    return _command(value, key, timeout=1800.0, extra=False)


def _action(value: object, key: str) -> Command:
    return _command(value, key, timeout=600.0, extra=True)


def _command_only(value: object, key: str) -> tuple[str, ...]:
    table = _Table(value, key)
    argv: tuple[str, ...] = table.take("command", _argv, tuple[str, ...]())
    if not argv:
        raise ConfigError(f"{key}.command: missing")
    table.finish()
    return argv


def _notify(value: object, key: str) -> _Notify:
    """`[notify]`: a command, an ntfy topic, a webhook — at least one."""
    table = _Table(value, key)
    notify = _Notify(
        command=table.take("command", _argv, None),
        ntfy=table.take("ntfy", _ntfy, None),
        webhook=table.take("webhook", _webhook, None),
    )
    table.finish()
    if notify == _Notify():
        raise ConfigError(f"{key}.command: missing (or give [{key}.ntfy] or [{key}.webhook])")
    return notify


def _url(value: object, key: str) -> str:
    text = _string(value, key)
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{key}: expected an http:// or https:// URL with a host, got {text!r}")
    return text


def _ntfy(value: object, key: str) -> Ntfy:
    table = _Table(value, key)
    url = table.take("url", _url, "")
    ntfy = Ntfy(url=url, token_file=table.take("token_file", _path, None))
    table.finish()
    if not url:
        raise ConfigError(f"{key}.url: missing (the topic's URL, e.g. https://ntfy.sh/TOPIC)")
    return ntfy


def _webhook(value: object, key: str) -> Webhook:
    table = _Table(value, key)
    url = table.take("url", _url, "")
    secret = table.take("secret_file", _path, None)
    table.finish()
    if not url:
        raise ConfigError(f"{key}.url: missing")
    if secret is None:
        raise ConfigError(f"{key}.secret_file: missing (the posts are signed: a file holding the secret)")
    return Webhook(url=url, secret_file=secret)


def _named(
    pattern: re.Pattern[str], check: Callable[[object, str], Command]
) -> Callable[[object, str], dict[str, Command]]:
    def named(value: object, key: str) -> dict[str, Command]:
        table = _Table(value, key)
        for name in table.values:
            if not pattern.fullmatch(name):
                raise ConfigError(f"{table.key(name)}: not a valid name")
        return {name: check(item, table.key(name)) for name, item in table.values.items()}

    return named


def _auth(value: object, key: str) -> Auth:
    table = _Table(value, key)
    auth = Auth(
        allowed_signers=table.take("allowed_signers", _path, None),
        namespace=table.take("namespace", _string, "slop"),
        max_age=table.take("max_age", _positive, 86400.0),
        sig_grace=table.take("sig_grace", _non_negative, 60.0),
        allow_no_touch=table.take("allow_no_touch", _bool, False),
    )
    table.finish()
    return auth


def _path(value: object, key: str) -> Path:
    return Path(_string(value, key))


def _baton(value: object, key: str) -> tuple[str, ...] | None:
    table = _Table(value, key)
    summarizer = table.take("summarizer", _command_only, None)
    table.finish()
    return summarizer


def _http(value: object, key: str) -> Http:
    table = _Table(value, key)
    http = Http(
        listen=table.take("listen", _string, None),
        tokens=table.take("tokens", _path, None),
        max_body=table.take("max_body", _positive_int, None),
        rate_limit=table.take("rate_limit", _positive_int, 120),
        tls_cert=table.take("tls_cert", _path, None),
        tls_key=table.take("tls_key", _path, None),
        allow_plaintext=table.take("allow_plaintext", _bool, False),
    )
    table.finish()
    if (http.tls_cert is None) != (http.tls_key is None):
        raise ConfigError(f"{key}.tls_cert and {key}.tls_key: give both or neither")
    return http


def ensure_outside(hub: Path, path: Path, what: str) -> None:
    """Refuse a trusted `path` that resolves inside the hub, by real path or by inode ancestry."""
    real_hub = os.path.realpath(hub)
    real = os.path.realpath(path)
    if real == real_hub or real.startswith(real_hub.rstrip("/") + "/"):
        raise ConfigError(f"{what} {path} is inside the hub {hub}: agents could rewrite it")
    try:
        hub_stat = os.stat(real_hub)
    except OSError:
        return
    probe = Path(real)
    while True:
        try:
            status = os.stat(probe)
        except OSError:
            status = None
        if status is not None and (status.st_dev, status.st_ino) == (hub_stat.st_dev, hub_stat.st_ino):
            raise ConfigError(f"{what} {path} is inside the hub {hub} (same directory by inode)")
        if probe.parent == probe:
            return
        probe = probe.parent


def load_trust(config: Config) -> Trust | None:
    """The allowed signers (outside the hub), or None when none are configured."""
    path = config.auth.allowed_signers
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read the allowed-signers file: {error}") from None
    try:
        signers = allowed_signers.read(text, local_zone=datetime.now().astimezone().tzinfo or UTC)
    except allowed_signers.AllowedSignersError as error:
        raise ConfigError(f"{path}: {error}") from None
    if not signers.entries:
        skipped = (
            f" ({len(signers.skipped)} line(s) skipped: {signers.skipped[0].reason})"
            if signers.skipped
            else ""
        )
        raise ConfigError(f"{path}: the allowed-signers file lists no signer slopd accepts{skipped}")
    return Trust(
        signers=signers.entries,
        namespace=config.auth.namespace,
        max_age=timedelta(seconds=config.auth.max_age),
        names=frozenset(config.names),
        allow_no_touch=config.auth.allow_no_touch,
        policies={
            name: SigningPolicy(action.quorum, action.require) for name, action in config.actions.items()
        },
        skipped=signers.skipped,
    )
