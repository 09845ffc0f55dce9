"""The operator's configuration: TOML with exactly the keys of SPEC §8, strictly checked.

Rules:
1. An unknown key or a wrong type is a `ConfigError` naming the key (`executor.timeout`). Every
   mistake of a file is reported at once, each naming its key; an unknown key close to a key
   valid at its level says which (`executr: unknown key — did you mean `executor`?`).
2. No config file at the default path means the safe embedded defaults: ack, discuss and
   index; execute requests are answered with an error.
3. The config, the allowed-signers file and the state dir never live inside the hub: trusted
   inputs must not be writable by the agents that write the hub.
4. Defaults that come from the environment (names, paths) are `shell.defaults`'.
5. The schema is what `parse` takes: each key is read by `_Table.take` with its check (whose
   docstring says the type it accepts) and its default. `record` lists them as they are taken,
   and the config reference is made from that list (`docgen/config.py`), so it cannot drift.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from slopd.core import allowed_signers, origins
from slopd.core.envelope import ACTION_PATTERN, PARTY_PATTERN
from slopd.core.errors import SetupError
from slopd.core.orders import REQUIREMENTS, Trust
from slopd.core.orders import Policy as SigningPolicy
from slopd.core.routing import Policy
from slopd.core.vocabulary import MAX_ENVELOPE_BYTES
from slopd.shell.defaults import default_config_path, default_names

T = TypeVar("T")


class ConfigError(SetupError):
    """The configuration or the set-up around it is unusable; the message names the key or path.

    `reasons` holds every mistake found (rule 1), `where` the file they are in."""

    def __init__(self, *reasons: str, where: str | None = None) -> None:
        self.reasons, self.where = reasons, where
        head = f"{where}: " if where else ""
        if len(reasons) == 1:
            text = head + reasons[0]
        else:
            text = f"{head}{len(reasons)} mistakes:" + "".join(f"\n  - {reason}" for reason in reasons)
        super().__init__(text)


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
        raise ConfigError(*error.reasons, where=str(path)) from None
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
        console=table.take("console", _console, Console()),
    )
    table.finish()
    return config


@dataclass(frozen=True, slots=True)
class Key:
    """A key `parse` takes (rule 5): its dotted name, its check and its default."""

    name: str
    check: Callable[[object, str], object]
    default: object


@dataclass
class Taken:
    """What one `record`ed read took: the keys, the tables it opened, the error it stopped at."""

    keys: list[Key] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    error: ConfigError | None = None


_TAKING: ContextVar[Taken | None] = ContextVar("slopd_config_taking", default=None)


def record(read: Callable[[], object]) -> Taken:
    """Every key and table `read` (a `parse`, or one check) takes, in order (rule 5)."""
    taken = Taken()
    token = _TAKING.set(taken)
    try:
        read()
    except ConfigError as error:
        taken.error = error
    finally:
        _TAKING.reset(token)
    return taken


class _Table:
    """A TOML table being read: every key taken is checked; `finish` rejects the leftovers.

    A check that fails is noted and its default taken, so that the rest is checked too;
    `finish` raises one `ConfigError` with every mistake of the table and of the tables in it."""

    def __init__(self, value: object, where: str) -> None:
        if (taking := _TAKING.get()) is not None:
            taking.tables.append(where)
        if not isinstance(value, dict):
            raise ConfigError(f"{where or 'the config'}: must be a table")
        self.values: dict[str, Any] = dict(value)
        self.where = where
        self.known: list[str] = []  # the keys valid here: every name taken
        self.failed: set[str] = set()
        self.errors: list[str] = []

    def key(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def take(self, name: str, check: Callable[[object, str], T], default: T) -> T:
        self.known.append(name)
        if (taking := _TAKING.get()) is not None:
            taking.keys.append(Key(self.key(name), check, default))
        if name not in self.values:
            return default
        try:
            return check(self.values.pop(name), self.key(name))
        except ConfigError as error:
            self.failed.add(name)
            self.errors.extend(error.reasons)
            return default

    def error(self, reason: str) -> None:
        """A mistake found after the keys were taken (a missing key, two keys that disagree)."""
        self.errors.append(reason)

    def finish(self) -> None:
        for name in self.values:
            self.errors.append(f"{self.key(name)}: unknown key{_suggestion(name, self.known)}")
        if self.errors:
            raise ConfigError(*self.errors)


def _suggestion(name: str, known: list[str]) -> str:
    import difflib  # noqa: PLC0415  # only for a mistake

    close = difflib.get_close_matches(name, known, n=1)
    return f" — did you mean `{close[0]}`?" if close else ""


def _each(items: Iterable[tuple[str, object]], check: Callable[[str, object], T]) -> list[T]:
    """`check` on every item, every failure reported together (rule 1)."""
    checked: list[T] = []
    errors: list[str] = []
    for name, item in items:
        try:
            checked.append(check(name, item))
        except ConfigError as error:
            errors.extend(error.reasons)
    if errors:
        raise ConfigError(*errors)
    return checked


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
    """seconds, more than 0"""
    number = _number(value, key)
    if number <= 0:
        raise ConfigError(f"{key}: must be greater than 0")
    return number


def _non_negative(value: object, key: str) -> float:
    """seconds, 0 or more"""
    number = _number(value, key)
    if number < 0:
        raise ConfigError(f"{key}: must not be negative")
    return number


def _positive_int(value: object, key: str) -> int:
    """an integer, 1 or more"""
    if isinstance(value, bool) or not isinstance(value, int):
        raise _type_error(key, "an integer", value)
    if value < 1:
        raise ConfigError(f"{key}: must be at least 1")
    return value


def _string(value: object, key: str) -> str:
    """a non-empty string"""
    if not isinstance(value, str) or not value:
        raise _type_error(key, "a non-empty string", value)
    return value


def _argv(value: object, key: str) -> tuple[str, ...]:
    """an argv: a non-empty list of strings, run without a shell"""
    if not isinstance(value, list) or not value:
        raise _type_error(key, "a non-empty list of strings (an argv)", value)
    return tuple(_string(item, f"{key}[{index}]") for index, item in enumerate(value))


def _names(value: object, key: str) -> tuple[str, ...]:
    """a non-empty list of recipient names"""
    names = _argv(value, key)
    bad = [
        f"{key}: {name!r} is not a valid recipient name"
        for name in names
        if not PARTY_PATTERN.fullmatch(name)
    ]
    if bad:
        raise ConfigError(*bad)
    return names


def _env(value: object, key: str) -> dict[str, str]:
    """a table of strings"""
    table = _Table(value, key)
    values = _each(table.values.items(), lambda name, item: (name, _string(item, table.key(name))))
    return dict(values)


def _command(value: object, key: str, *, timeout: float, extra: bool) -> Command:
    table = _Table(value, key)
    argv: tuple[str, ...] = table.take("command", _argv, tuple[str, ...]())
    if not argv and "command" not in table.failed:
        table.error(f"{key}.command: missing")
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
    """`"touch"` or `"verified"`"""
    text = _string(value, key)
    if text not in REQUIREMENTS:
        raise ConfigError(f"{key}: must be one of {', '.join(map(repr, REQUIREMENTS))}, got {text!r}")
    return text


def _bool(value: object, key: str) -> bool:
    """true or false"""
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
    if not argv and "command" not in table.failed:
        table.error(f"{key}.command: missing")
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
    """an http(s) URL"""
    text = _string(value, key)
    try:
        parts = urllib.parse.urlsplit(text)
        parts.port  # noqa: B018  # raises for a port out of range or not a number
    except ValueError as error:
        raise ConfigError(f"{key}: {text!r} is not a URL: {error}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{key}: expected an http:// or https:// URL with a host, got {text!r}")
    return text


def _ntfy(value: object, key: str) -> Ntfy:
    """`[notify.ntfy]`: a topic URL, and a token file outside the hub (optional)"""
    table = _Table(value, key)
    url = table.take("url", _url, None)
    token_file = table.take("token_file", _path, None)
    table.finish()
    if url is None:
        raise ConfigError(f"{key}.url: missing (the topic's URL, e.g. https://ntfy.sh/TOPIC)")
    return Ntfy(url=url, token_file=token_file)


def _webhook(value: object, key: str) -> Webhook:
    """`[notify.webhook]`: a URL and the HMAC secret's file (outside the hub)"""
    table = _Table(value, key)
    url = table.take("url", _url, None)
    secret = table.take("secret_file", _path, None)
    table.finish()
    if url is None:
        raise ConfigError(f"{key}.url: missing")
    if secret is None:
        raise ConfigError(f"{key}.secret_file: missing (the posts are signed: a file holding the secret)")
    return Webhook(url=url, secret_file=secret)


def _named(
    pattern: re.Pattern[str], check: Callable[[object, str], Command]
) -> Callable[[object, str], dict[str, Command]]:
    def named(value: object, key: str) -> dict[str, Command]:
        table = _Table(value, key)

        def one(name: str, item: object) -> tuple[str, Command]:
            if not pattern.fullmatch(name):
                raise ConfigError(f"{table.key(name)}: not a valid name")
            return name, check(item, table.key(name))

        return dict(_each(table.values.items(), one))

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
    """a path, relative to the config file's folder"""
    return Path(_string(value, key))


def _baton(value: object, key: str) -> tuple[str, ...] | None:
    table = _Table(value, key)
    summarizer = table.take("summarizer", _command_only, None)
    table.finish()
    return summarizer


def _origins(value: object, key: str) -> tuple[origins.Origin, ...]:
    """a list of origins (`https://host[:port]`)"""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _type_error(key, 'a list of origins such as "https://console.example:8443"', value)
    found, errors = [], []
    for index, item in enumerate(value):
        try:
            found.append(origins.parse(item))
        except origins.OriginError as error:
            errors.append(f"{key}[{index}]: {error}")
    if errors:
        raise ConfigError("; ".join(errors))
    return tuple(found)


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
        allowed_origins=table.take("allowed_origins", _origins, ()),
    )
    if (http.tls_cert is None) != (http.tls_key is None) and not {"tls_cert", "tls_key"} & table.failed:
        table.error(f"{key}.tls_cert and {key}.tls_key: give both or neither")
    table.finish()
    return http


_HOST_NAME = re.compile(
    r"(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*"
)
_PUBLIC_URL = re.compile(r"(https?)://([^/:?#]+)(:[0-9]{1,5})?/?")


def _is_host_name(text: str) -> bool:
    return bool(_HOST_NAME.fullmatch(text)) and not text.replace(".", "").isdigit()


def _console(value: object, key: str) -> Console:
    """`[console]`: an RP ID that is a host name (WebAuthn refuses addresses), a public URL at the
    root of https on a name (or http on localhost), on which that RP ID works."""
    table = _Table(value, key)
    console = Console(
        rp_id=table.take("rp_id", _string, None),
        session_ttl=table.take("session_ttl", _positive, 43200.0),
        public_url=table.take("public_url", _string, None),
    )
    table.finish()
    rp_id, url = console.rp_id, console.public_url
    if rp_id is not None and not _is_host_name(rp_id):
        raise ConfigError(
            f"{key}.rp_id: {rp_id!r} is not a lower-case host name (WebAuthn refuses IP addresses, "
            "ports and schemes: give the bare name, such as slopd.example.ts.net or localhost)"
        )
    if url is None:
        return console
    match = _PUBLIC_URL.fullmatch(url)
    if match is None:
        raise ConfigError(
            f"{key}.public_url: {url!r} is not SCHEME://HOST[:PORT] (the console is served at the root "
            "of its host, without a path)"
        )
    scheme, host = match.group(1), match.group(2)
    if not _is_host_name(host):
        raise ConfigError(
            f"{key}.public_url: {url!r}: the host must be a lower-case name (passkeys refuse addresses)"
        )
    if scheme == "http" and host != "localhost":
        raise ConfigError(
            f"{key}.public_url: {url!r}: browsers allow passkeys only on https (or http://localhost)"
        )
    if rp_id is not None and host != rp_id and not host.endswith("." + rp_id):
        raise ConfigError(
            f"{key}.rp_id: {rp_id!r} cannot be used from {url!r}: it must be the URL's host or a parent"
        )
    return replace(console, public_url=url.rstrip("/"))


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


def load_trust(config: Config, *, empty: bool = False) -> Trust | None:
    """The allowed signers (outside the hub), or None when none are configured. A file that
    lists no signer is an error, unless `empty` (a reload: the operator revoked every key)."""
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
    if not signers.entries and not empty:
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
