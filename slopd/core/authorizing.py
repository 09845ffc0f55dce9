"""Whom allowed_signers lets sign: a key, as a principal, in a namespace, at a time. Pure.

The entries are those `core.allowed_signers` reads; the checks are `ssh-keygen -Y verify`'s and
`-Y find-principals`'.

Rules (SPEC §6; research §1.5; OpenSSH `sshsig.c`):
1. `authorize` is total: a key is authorized when any entry has it, its principals match, its
   namespaces (if any) match and `valid_after <= now <= valid_before`; otherwise `Refused`
   gives the reason of the entry that came closest. Principals and namespaces are OpenSSH
   pattern lists (`core.sshpatterns`).
2. `first_literal` names a key's signer where no principal was claimed (a co-signer's `.sig`, a
   passkey enrolled in the console): the first principal written without `!`, `*` or `?` that
   its own entry's list matches, in the first entry allowing the key now.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from slopd.core.allowed_signers import Entry
from slopd.core.sshkeys import PublicKey
from slopd.core.sshpatterns import match_pattern_list
from slopd.core.wire import show


@dataclass(frozen=True, slots=True)
class Authorized:
    line: int


@dataclass(frozen=True, slots=True)
class Refused:
    reason: str


def _check(entry: Entry, principal: str, namespace: str, now: datetime) -> Authorized | tuple[int, str]:
    """`Authorized`, or how far the entry got (1 principal, 2 namespace, 3 time) and why it stopped."""
    if not match_pattern_list(principal, entry.principals):
        return 1, f"key not allowed for principal {show(principal)}"
    return _usable(entry, namespace, now) or Authorized(entry.line)


def _usable(entry: Entry, namespace: str, now: datetime) -> tuple[int, str] | None:
    """Why the entry does not allow its key in `namespace` at `now` (2 namespace, 3 time), if so."""
    if entry.namespaces is not None and not match_pattern_list(namespace, entry.namespaces):
        return 2, f"key not permitted for namespace {show(namespace)}"
    if entry.valid_after is not None and now < entry.valid_after:
        return 3, f"key not yet valid (valid-after {entry.valid_after.isoformat()})"
    if entry.valid_before is not None and now > entry.valid_before:
        return 3, f"key expired (valid-before {entry.valid_before.isoformat()})"
    return None


def authorize(
    entries: Sequence[Entry], *, public_key: PublicKey, principal: str, namespace: str, now: datetime
) -> Authorized | Refused:
    """Whether any entry allows `public_key` to sign as `principal` in `namespace` at `now` (aware)."""
    closest: tuple[int, str] | None = None
    for entry in entries:
        if entry.public_key != public_key:
            continue
        outcome = _check(entry, principal, namespace, now)
        if isinstance(outcome, Authorized):
            return outcome
        if closest is None or outcome[0] > closest[0]:
            closest = outcome
    return Refused(closest[1] if closest is not None else "key not in allowed_signers")


def find_principals(
    entries: Sequence[Entry], *, public_key: PublicKey, namespace: str, now: datetime
) -> list[tuple[str, int]]:
    """The principals (as written) and line of every entry allowing `public_key` in `namespace`
    at `now`, whatever the principal — `ssh-keygen -Y find-principals`."""
    return [
        (entry.principals, entry.line)
        for entry in entries
        if entry.public_key == public_key and _usable(entry, namespace, now) is None
    ]


def first_literal(
    entries: Sequence[Entry], *, public_key: PublicKey, namespace: str, now: datetime
) -> tuple[str, Authorized] | None:
    """Rule 2: the first literal principal allowing `public_key` in `namespace` at `now`, and its entry."""
    for principals, line in find_principals(entries, public_key=public_key, namespace=namespace, now=now):
        for principal in principals.split(","):
            literal = (
                principal and not principal.startswith("!") and not any(mark in principal for mark in "*?")
            )
            if literal and match_pattern_list(principal, principals):
                return principal, Authorized(line)
    return None
