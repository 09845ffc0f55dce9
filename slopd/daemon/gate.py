"""The gate's memory: when each held thing was first seen, which signatures wake which order, and
the allowed signers (`core.holds` says what is held and what the verdict is).

Rules:
1. A first sight is kept from the first hold until the handler forgets it (`core.plans.Hold`,
   `Forget`): an order or a lone signature by name, an envelope waiting for assets by
   (lane, name). The memory lives as long as the daemon: a restart waits the grace again.
2. A signature arriving releases the order waiting for it at once (`arrived`: it is due now).
3. A lone signature a scan finds is first seen then (`orphan_until`): after the grace it is
   answered as a signature without an order.
4. The allowed-signers file is looked at (one stat) each time an order is about to be judged,
   and re-read when it changed (`shell.reloading`, SPEC §14): an order checked after an edit
   uses the new file, with no signal. A file that cannot be read or parsed fails closed —
   no signer is trusted until it is mended, and each order says why — and one that lists no
   signer any more is taken as it is: every key was revoked.
"""

from __future__ import annotations

from collections.abc import Hashable
from datetime import timedelta

from slopd.core import orders
from slopd.shell import reloading
from slopd.shell.config import Config, load_trust
from slopd.shell.log import Logger
from slopd.shell.reloading import Reloading

LANE = "authorized"

Trusted = Reloading[orders.Trust | None] | None  # None: no allowed-signers file is configured


def trusted(config: Config, log: Logger) -> Trusted:
    """Rule 4: the configured allowed signers, loaded now (a `ConfigError` if they cannot be)."""
    path = config.auth.allowed_signers
    if path is None:
        return None
    seen = reloading.version(path)  # before the read: an edit during it is seen next time
    return Reloading(
        path,
        lambda: load_trust(config, empty=True),
        load_trust(config),
        seen,
        log,
        "trust",
        facts=lambda trust: {
            "signers": len(trust.signers) if trust is not None else 0,
            "skipped": len(trust.skipped) if trust is not None else 0,
        },
        closed=lambda reason: nobody(config, reason),
    )


def nobody(config: Config, reason: str) -> orders.Trust:
    """The trust of a file that cannot be used (rule 4): no signer, and why."""
    return orders.Trust(
        signers=(),
        namespace=config.auth.namespace,
        max_age=timedelta(seconds=config.auth.max_age),
        names=frozenset(config.names),
        unusable=reason,
    )


class Gate:
    def __init__(self, trusted: Trusted, grace: float) -> None:
        self.trusted, self.grace = trusted, grace
        self._first_seen: dict[Hashable, float] = {}
        self._waiting: dict[str, Hashable] = {}  # signature -> the order waiting for it

    def reconfigure(self, trusted: Trusted, grace: float) -> None:
        """A reload: the allowed signers and the grace of the new config (first sights are kept)."""
        self.trusted, self.grace = trusted, grace

    @property
    def trust(self) -> orders.Trust | None:
        """The allowed signers as last read."""
        return self.trusted.value if self.trusted is not None else None

    def check(self) -> orders.Trust | None:
        """Rule 4: the allowed signers now (re-read if the file changed)."""
        return self.trusted.check() if self.trusted is not None else None

    def since(self, key: Hashable) -> float | None:
        """Rule 1: when `key` was first seen held (None: it is not)."""
        return self._first_seen.get(key)

    def hold(self, key: Hashable, since: float, waiting: tuple[str, ...] = ()) -> None:
        """Rule 1: `key` is held since `since` (unless it was already), woken by `waiting`."""
        self._first_seen.setdefault(key, since)
        self._waiting.update(dict.fromkeys(waiting, key))

    def forget(self, key: Hashable) -> None:
        self._first_seen.pop(key, None)
        for sidecar in [sidecar for sidecar, order in self._waiting.items() if order == key]:
            del self._waiting[sidecar]

    def arrived(self, sidecar: str) -> str | None:
        """Rule 2: a signature appeared: the order that waited for it, if any."""
        order = self._waiting.pop(sidecar, None)
        return order if isinstance(order, str) else None

    def orphan_until(self, sidecar: str, now: float) -> float:
        """Rule 3: when a signature whose order has not arrived stops waiting for it."""
        return self._first_seen.setdefault(sidecar, now) + self.grace


def warn_skipped(logger: Logger, config: Config, trust: orders.Trust | None) -> None:
    """An allowed_signers line slopd leaves out (another key type) is a warning, not a refusal."""
    for skipped in trust.skipped if trust is not None else ():
        path = str(config.auth.allowed_signers)
        logger.warning("allowed_signers.skipped", path=path, line=skipped.line, reason=skipped.reason)
