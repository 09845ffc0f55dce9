"""Reading the operator's config file: TOML in, a checked `Config` out.

Rules:
1. `parse` is the schema: it reads the top-level table, each key with its check (`checks`) or
   its table's reader (`sections`), and its default. Every mistake of the file is reported at
   once, each naming its key, and the file's path heads them.
2. No config file at the default path means the safe embedded defaults: ack, discuss and
   index; execute requests are answered with an error. A file given but missing is a mistake.
3. Relative paths in the file are relative to the file's folder, not to wherever the daemon
   happens to start, and commands get them absolute.
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

from slopd.core.validation import ACTION_PATTERN, PARTY_PATTERN
from slopd.core.vocabulary import MAX_ENVELOPE_BYTES
from slopd.shell.config import sections
from slopd.shell.config.checks import boolean, names, non_negative, positive, positive_int
from slopd.shell.config.schema import Auth, Config, Console, Http, Notify
from slopd.shell.config.table import ConfigError, Table
from slopd.shell.defaults import default_config_path, default_names


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
    table = Table(document, "")
    notify = table.take("notify", sections.notify, Notify())
    config = Config(
        names=table.take("names", names, default_names()),
        max_envelope_bytes=table.take("max_envelope_bytes", positive_int, MAX_ENVELOPE_BYTES),
        settle=table.take("settle", non_negative, 0.3),
        rescan_interval=table.take("rescan_interval", positive, 30.0),
        executor=table.take("executor", sections.executor, None),
        seats=table.take("seats", sections.named(PARTY_PATTERN, sections.seat), {}),
        actions=table.take("actions", sections.named(ACTION_PATTERN, sections.action), {}),
        auth=table.take("auth", sections.auth, Auth()),
        notify=notify.command,
        ntfy=notify.ntfy,
        webhook=notify.webhook,
        summarizer=table.take("summarizer", sections.command_only, None),
        home=table.take("home", boolean, None),
        http=table.take("http", sections.http, Http()),
        baton_summarizer=table.take("baton", sections.baton, None),
        console=table.take("console", sections.console, Console()),
    )
    table.finish()
    return config
