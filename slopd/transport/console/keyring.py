"""The passkeys the console knows: the keys of allowed_signers it may sign in or approve with.

Rules (SPEC §15):
1. Sign-in keys are exactly the `sk-ecdsa-sha2-nistp256@openssh.com` keys of allowed_signers
   (re-read at each sign-in) whose application is the console's RP ID; the principal is the
   first literal principal of the first entry allowing that key in the namespace now.
2. For a named principal (an approval), a key counts when that principal is its first literal
   principal, or when allowed_signers lets the principal sign with it now.
3. allowed_signers that the daemon cannot use is a 503, never an empty list: an empty list
   would read as "you have no passkey".
4. The browser is offered only the credential ids recorded at enrolment (`enrolments`) for the
   keys found, so it asks for the right passkey.
"""

from __future__ import annotations

from datetime import UTC, datetime

from slopd.core import authorizing
from slopd.core.orders import Trust
from slopd.core.sshkeys import SK_ECDSA, PublicKey
from slopd.transport.console import enrolments
from slopd.transport.console.guard import Desk, RefusedError


def passkeys(desk: Desk, principal: str | None = None) -> list[tuple[PublicKey, str]]:
    """Rules 1 to 3: (key, principal) for every passkey of this console in allowed_signers now."""
    app, site = desk.app, desk.site
    trust = app.trusted.check() if app.trusted is not None else None  # the daemon's, as it is now
    if trust is not None and trust.unusable is not None:
        raise RefusedError(503, f"allowed_signers cannot be used: {trust.unusable}")
    if trust is None or site is None:
        return []
    now, found, seen = datetime.now(UTC), [], set()
    for entry in trust.signers:
        key = entry.public_key
        if key.type != SK_ECDSA or key.application != site.rp_id or key in seen:
            continue
        seen.add(key)
        first = authorizing.first_literal(trust.signers, public_key=key, namespace=trust.namespace, now=now)
        who = first[0] if first else None
        if who is not None and (principal is None or who == principal or _allows(trust, key, principal, now)):
            found.append((key, who if principal is None else principal))
    return found


def credentials(desk: Desk, keys: list[PublicKey]) -> list[bytes]:
    """Rule 4: the credential ids enrolled for `keys`, for the browser's allow list."""
    hints = enrolments.credentials(desk.app.state)
    lines = {line.split()[-1]: bytes.fromhex(credential) for credential, line in hints.items()}
    return [lines[key.line().split()[1]] for key in keys if key.line().split()[1] in lines]


def _allows(trust: Trust, key: PublicKey, principal: str, now: datetime) -> bool:
    """Rule 2: allowed_signers lets `principal` sign with `key` now."""
    verdict = authorizing.authorize(
        trust.signers, public_key=key, principal=principal, namespace=trust.namespace, now=now
    )
    return isinstance(verdict, authorizing.Authorized)
