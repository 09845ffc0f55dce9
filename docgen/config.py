"""The config reference: every key `slopd.shell.config.parse` takes, its type and its default.

The keys are not listed here: `config.record` runs the parser on `PROBE` — a document that opens
every table — and notes each key as the parser takes it, with the check that reads it (whose
docstring is the type shown) and its default. Rules:
1. A key the parser takes in a table `PROBE` does not open is still noted (a missing key is
   taken too); a *table* `PROBE` lacks would hide its keys, so it stops the generator, naming it.
2. A check without a docstring stops the generator, naming it: the docstring is the type.
3. `WHAT` says what each key is for; a key without a line there shows none, and a line for a
   key the parser no longer takes stops the generator.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from functools import partial

from docgen.markdown import cell, code, table, value
from slopd.shell import config
from slopd.shell.defaults import default_names

PROBE = """
[executor]
command = ["x"]
[seats.NAME]
command = ["x"]
[actions.NAME]
command = ["x"]
[notify]
command = ["x"]
[notify.ntfy]
url = "https://ntfy.example/topic"
[notify.webhook]
url = "https://hooks.example/slopd"
secret_file = "x"
[summarizer]
command = ["x"]
[auth]
[http]
[baton.summarizer]
command = ["x"]
[console]
"""
# Defaults that depend on the machine, shown as what they are made of (shell.defaults' rule 1).
_MACHINE = {value(default_names()): '`["watcher", "watcher:HOSTNAME"]`, HOSTNAME this machine\'s short name'}
WHAT = {
    "names": "the names this watcher answers to; replies are sent from the first `watcher:NAME`",
    "max_envelope_bytes": "the largest envelope read; larger files are refused",
    "settle": "how long a file written in place must be unchanged before it is read",
    "rescan_interval": "seconds between full scans of the lanes (events are the fast path)",
    "home": "override the hub file's home watcher: `true` this watcher is home, `false` it is not",
    "executor.command": "runs inbox instigates: the body on stdin, `SLOP_*` in the environment",
    "executor.timeout": "seconds before the command's process group is killed",
    "executor.max_parallel": "how many executions run at once",
    "seats.NAME.command": "runs instigates addressed `to: NAME`",
    "seats.NAME.timeout": "seconds before the command's process group is killed",
    "actions.NAME.command": "an irreversible action: runs only for a verified order in `authorized/`; "
    "the envelope arrives as JSON on stdin",
    "actions.NAME.timeout": "seconds before the command's process group is killed",
    "actions.NAME.cwd": "the working directory (a relative one is taken from the config file's folder)",
    "actions.NAME.env": "extra environment variables",
    "actions.NAME.quorum": "how many distinct humans must sign",
    "actions.NAME.require": "accept only security-key signatures: `touch`, or `verified` (touch and PIN)",
    "notify.command": "tells the human: the text on stdin (at most 5 a minute, the rest coalesced)",
    "notify.ntfy.url": "an ntfy topic to push each notification to: a title, a priority, a console link",
    "notify.ntfy.token_file": "the ntfy access token's file, outside the hub",
    "notify.webhook.url": "where to POST each notification as signed JSON `{event, id, class, text, link}`",
    "notify.webhook.secret_file": "the HMAC-SHA256 secret's file (`X-Slopd-Signature`), outside the hub",
    "summarizer.command": "summarizes a discussed envelope: the body on stdin, the summary on stdout",
    "auth.allowed_signers": "the trusted humans' keys, OpenSSH's allowed_signers format, outside the hub",
    "auth.namespace": "the SSHSIG namespace orders are signed in",
    "auth.max_age": "how old a signed order's `created_at` may be",
    "auth.sig_grace": "how long an order waits for its signatures and assets (and a `.sig` for its order)",
    "auth.allow_no_touch": "accept security-key signatures made without a touch (never for `require`)",
    "http.listen": "`HOST:PORT` to serve the HTTP transport on without `--http`",
    "http.tokens": "the seats' token hashes (`slopd token add`), outside the hub",
    "http.max_body": "the largest POST body, in bytes (unset: `max_envelope_bytes`)",
    "http.rate_limit": "requests per seat per minute",
    "http.tls_cert": "the TLS certificate (with `tls_key`: HTTPS); needed off loopback",
    "http.tls_key": "the TLS private key",
    "http.allow_plaintext": "serve a non-loopback address without TLS (behind your own TLS proxy)",
    "http.allowed_origins": "browser origins `/mcp` accepts besides its own (`https://host[:port]`)",
    "baton.summarizer.command": "writes AUTOBIOGRAPHY.md: the generations as JSON on stdin",
    "console.rp_id": "the passkeys' relying party: a host name, baked into every enrolled key "
    "(unset: the host the console is served on; `localhost` on loopback)",
    "console.session_ttl": "seconds a console sign-in lasts",
    "console.public_url": "where the human reaches the console (`https://NAME`, or `http://localhost:PORT`); "
    "notifications link into it",
}


class SchemaError(Exception):
    """The config reference cannot be made truthfully; the message says what to fix."""


def _find(document: object, dotted: str) -> bool:
    for part in dotted.split("."):
        if not isinstance(document, dict) or part not in document:
            return False
        document = document[part]
    return True


def _type(check: Callable[[object, str], object], key: str) -> str:
    doc = (check.__doc__ or "").strip()
    if not doc:
        raise SchemaError(
            f"config key {key}: its check {check.__qualname__} has no docstring; "
            "write the type it accepts there (slopd/shell/config/checks.py, rule 2)"
        )
    return doc.splitlines()[0]


def keys(probe: str = PROBE) -> list[config.Key]:
    """Every key, in the order the parser takes them, reading `probe` (rule 1)."""
    taken = config.record(lambda: config.parse(probe))
    if taken.error is not None:
        raise SchemaError(f"docgen/config.py's PROBE is not a valid config: {taken.error}")
    for key in taken.keys:
        if not _find(tomllib.loads(probe), key.name):
            probed = config.record(partial(key.check, {}, key.name))
            if probed.keys:
                hidden = ", ".join(k.name for k in probed.keys)
                raise SchemaError(
                    f"config table [{key.name}] is not in docgen/config.py's PROBE, so its keys "
                    f"({hidden}) would be missing: add it, with its required keys"
                )
    tables = set(taken.tables)
    return [key for key in taken.keys if key.name not in tables]


def reference() -> str:
    """One table per TOML table, top-level keys first."""
    found = keys()
    stale = sorted(set(WHAT) - {key.name for key in found})
    if stale:
        raise SchemaError(
            f"docgen/config.py WHAT describes keys the parser does not take: {', '.join(stale)}"
        )
    sections: dict[str, list[tuple[str, str, str, str]]] = {}
    for key in found:
        table_name, _, name = key.name.rpartition(".")
        default = value(key.default) if key.default not in (None, (), {}) else ""
        shown = _MACHINE.get(default) or (code(default) if default else "—")
        sections.setdefault(table_name, []).append(
            (code(name), cell(_type(key.check, key.name)), shown, cell(WHAT.get(key.name, "")))
        )
    parts = []
    for table_name, rows in sections.items():
        parts.append(f"### `[{table_name}]`\n" if table_name else "### Top level\n")
        parts.append(table(("key", "type", "default", "what it is"), rows))
    return "\n".join(parts)
