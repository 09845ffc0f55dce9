"""The operator's configuration: TOML with exactly the keys of SPEC §8, strictly checked.

`reading` loads and parses the file into `schema`'s frozen values; `sections` reads each table,
`checks` each value, both through `table`, which collects every mistake; `trust` keeps the
trusted files out of the hub and reads the allowed signers. Callers import from here.

Rules:
1. An unknown key or a wrong type is a `ConfigError` naming the key (`executor.timeout`). Every
   mistake of a file is reported at once, each naming its key; an unknown key close to a key
   valid at its level says which (`executr: unknown key — did you mean `executor`?`).
2. No config file at the default path means the safe embedded defaults: ack, discuss and
   index; execute requests are answered with an error.
3. The config, the allowed-signers file and the state dir never live inside the hub: trusted
   inputs must not be writable by the agents that write the hub.
4. Defaults that come from the environment (names, paths) are `shell.defaults`'.
5. The schema is what `parse` takes: each key is read by `Table.take` with its check (whose
   docstring says the type it accepts) and its default. `record` lists them as they are taken,
   and the config reference is made from that list (`docgen/config.py`), so it cannot drift.
"""

from __future__ import annotations

from slopd.shell.config.checks import MAX_SECONDS
from slopd.shell.config.reading import load, parse
from slopd.shell.config.schema import Auth, Command, Config, Console, Http, Ntfy, Webhook
from slopd.shell.config.table import ConfigError, Key, Taken, record
from slopd.shell.config.trust import ensure_outside, load_trust

__all__ = [
    "MAX_SECONDS",
    "Auth",
    "Command",
    "Config",
    "ConfigError",
    "Console",
    "Http",
    "Key",
    "Ntfy",
    "Taken",
    "Webhook",
    "ensure_outside",
    "load",
    "load_trust",
    "parse",
    "record",
]
