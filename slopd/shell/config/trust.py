"""The trusted files the config names: kept outside the hub, and the allowed signers read as `Trust`.

Rules:
1. The config, the files it names (allowed signers, tokens, push secrets) and the state dir never
   live inside the hub, by real path or by inode ancestry: trusted inputs must not be writable by
   the agents that write the hub.
2. An allowed-signers file that lists no signer slopd accepts is a mistake at start-up (it would
   trust nobody, silently); on a reload it is the operator revoking every key.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from slopd.core import allowed_signers
from slopd.core.orders import Policy as SigningPolicy
from slopd.core.orders import Trust
from slopd.shell.config.schema import Config
from slopd.shell.config.table import ConfigError


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
