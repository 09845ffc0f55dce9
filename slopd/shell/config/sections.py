"""The config's tables, each read by one function: commands, notify, auth, http, baton, console.

Rules:
1. Each function reads one table (`table.Table`): it takes every key the table may hold, with
   its check (`checks`) and default (`schema`), then `finish`es it, so a stray key is a mistake.
2. A command table needs `command`; the executor alone takes `max_parallel`, actions alone take
   `cwd`, `env`, `quorum` and `require`. A seat's or an action's name must be a valid name.
3. Keys that must agree are checked together once read: `[notify]` needs a command, an ntfy
   topic or a webhook; `[http]` takes both `tls_cert` and `tls_key` or neither; `[console]`'s
   RP ID is a host name, and its public URL is at the root of https (or http://localhost) on a
   host the RP ID works for.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from slopd.shell.config.checks import (
    argv,
    boolean,
    http_url,
    non_negative,
    origin_list,
    path,
    positive,
    positive_int,
    requirement,
    string,
)
from slopd.shell.config.checks import env as environment
from slopd.shell.config.schema import Auth, Command, Console, Http, Notify, Ntfy, Webhook
from slopd.shell.config.table import ConfigError, Table, each


def _command(value: object, key: str, *, timeout: float, extra: bool) -> Command:
    table = Table(value, key)
    found: tuple[str, ...] = table.take("command", argv, tuple[str, ...]())
    if not found and "command" not in table.failed:
        table.error(f"{key}.command: missing")
    command = Command(
        argv=found,
        timeout=table.take("timeout", positive, timeout),
        max_parallel=table.take("max_parallel", positive_int, 1) if key == "executor" else 1,
        cwd=table.take("cwd", string, None) if extra else None,
        env=table.take("env", environment, {}) if extra else {},
        quorum=table.take("quorum", positive_int, 1) if extra else 1,
        require=table.take("require", requirement, None) if extra else None,
    )
    table.finish()
    return command


def executor(value: object, key: str) -> Command:
    return _command(value, key, timeout=1800.0, extra=False)


def seat(value: object, key: str) -> Command:
    return _command(value, key, timeout=1800.0, extra=False)


def action(value: object, key: str) -> Command:
    return _command(value, key, timeout=600.0, extra=True)


def command_only(value: object, key: str) -> tuple[str, ...]:
    table = Table(value, key)
    found: tuple[str, ...] = table.take("command", argv, tuple[str, ...]())
    if not found and "command" not in table.failed:
        table.error(f"{key}.command: missing")
    table.finish()
    return found


def named(
    pattern: re.Pattern[str], check: Callable[[object, str], Command]
) -> Callable[[object, str], dict[str, Command]]:
    def named(value: object, key: str) -> dict[str, Command]:
        table = Table(value, key)

        def one(name: str, item: object) -> tuple[str, Command]:
            if not pattern.fullmatch(name):
                raise ConfigError(f"{table.key(name)}: not a valid name")
            return name, check(item, table.key(name))

        return dict(each(table.values.items(), one))

    return named


def notify(value: object, key: str) -> Notify:
    """`[notify]`: a command, an ntfy topic, a webhook — at least one."""
    table = Table(value, key)
    found = Notify(
        command=table.take("command", argv, None),
        ntfy=table.take("ntfy", _ntfy, None),
        webhook=table.take("webhook", _webhook, None),
    )
    table.finish()
    if found == Notify():
        raise ConfigError(f"{key}.command: missing (or give [{key}.ntfy] or [{key}.webhook])")
    return found


def _ntfy(value: object, key: str) -> Ntfy:
    """`[notify.ntfy]`: a topic URL, and a token file outside the hub (optional)"""
    table = Table(value, key)
    url = table.take("url", http_url, None)
    token_file = table.take("token_file", path, None)
    table.finish()
    if url is None:
        raise ConfigError(f"{key}.url: missing (the topic's URL, e.g. https://ntfy.sh/TOPIC)")
    return Ntfy(url=url, token_file=token_file)


def _webhook(value: object, key: str) -> Webhook:
    """`[notify.webhook]`: a URL and the HMAC secret's file (outside the hub)"""
    table = Table(value, key)
    url = table.take("url", http_url, None)
    secret = table.take("secret_file", path, None)
    table.finish()
    if url is None:
        raise ConfigError(f"{key}.url: missing")
    if secret is None:
        raise ConfigError(f"{key}.secret_file: missing (the posts are signed: a file holding the secret)")
    return Webhook(url=url, secret_file=secret)


def auth(value: object, key: str) -> Auth:
    table = Table(value, key)
    found = Auth(
        allowed_signers=table.take("allowed_signers", path, None),
        namespace=table.take("namespace", string, "slop"),
        max_age=table.take("max_age", positive, 86400.0),
        sig_grace=table.take("sig_grace", non_negative, 60.0),
        allow_no_touch=table.take("allow_no_touch", boolean, False),
    )
    table.finish()
    return found


def baton(value: object, key: str) -> tuple[str, ...] | None:
    table = Table(value, key)
    summarizer = table.take("summarizer", command_only, None)
    table.finish()
    return summarizer


def http(value: object, key: str) -> Http:
    table = Table(value, key)
    found = Http(
        listen=table.take("listen", string, None),
        tokens=table.take("tokens", path, None),
        max_body=table.take("max_body", positive_int, None),
        rate_limit=table.take("rate_limit", positive_int, 120),
        tls_cert=table.take("tls_cert", path, None),
        tls_key=table.take("tls_key", path, None),
        allow_plaintext=table.take("allow_plaintext", boolean, False),
        allowed_origins=table.take("allowed_origins", origin_list, ()),
    )
    if (found.tls_cert is None) != (found.tls_key is None) and not {"tls_cert", "tls_key"} & table.failed:
        table.error(f"{key}.tls_cert and {key}.tls_key: give both or neither")
    table.finish()
    return found


_HOST_NAME = re.compile(
    r"(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*"
)
_PUBLIC_URL = re.compile(r"(https?)://([^/:?#]+)(:[0-9]{1,5})?/?")


def _is_host_name(text: str) -> bool:
    return bool(_HOST_NAME.fullmatch(text)) and not text.replace(".", "").isdigit()


def console(value: object, key: str) -> Console:
    """`[console]`: an RP ID that is a host name (WebAuthn refuses addresses), a public URL at the
    root of https on a name (or http on localhost), on which that RP ID works."""
    table = Table(value, key)
    found = Console(
        rp_id=table.take("rp_id", string, None),
        session_ttl=table.take("session_ttl", positive, 43200.0),
        public_url=table.take("public_url", string, None),
    )
    table.finish()
    rp_id, url = found.rp_id, found.public_url
    if rp_id is not None and not _is_host_name(rp_id):
        raise ConfigError(
            f"{key}.rp_id: {rp_id!r} is not a lower-case host name (WebAuthn refuses IP addresses, "
            "ports and schemes: give the bare name, such as slopd.example.ts.net or localhost)"
        )
    if url is None:
        return found
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
    return replace(found, public_url=url.rstrip("/"))
