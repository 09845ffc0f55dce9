"""The deterministic verifier for signed orders in `authorized/` (SPEC §6). Pure: time comes in.

Rules, checked in this order; the first that fails names the verdict:
1. The order names its signature (`auth: signed:NAME.sig`) and that file was found beside it.
2. The signature is a well-formed OpenSSH SSHSIG over exactly the bytes that were read and will
   be parsed and executed, made in the configured namespace.
3. The signing key is in allowed_signers for a principal equal to the envelope's `from`, for
   that namespace, and is valid now.
4. The order is addressed to this watcher (`to` is one of its names).
5. `created_at` is at most `max_age` old and at most five minutes in the future.
A signature is never an exception: `check` returns `Valid` or `Invalid`, whatever the bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from slopd.core import allowed_signers, sshsig
from slopd.core.envelope import Envelope
from slopd.core.verdicts import Invalid, Valid, Verification

FUTURE_SKEW = timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class Trust:
    """What the operator trusts: the keys, the namespace, the age limit, this watcher's names."""

    signers: tuple[allowed_signers.Entry, ...]
    namespace: str
    max_age: timedelta
    names: frozenset[str]


def check(  # noqa: PLR0911  # one early verdict per rule, in the order of the module docstring
    envelope: Envelope, message: bytes, signature: bytes | None, trust: Trust | None, now: datetime
) -> Verification:
    """Verify one order read as `message`, with its sidecar's bytes (None if it never came)."""
    sidecar = envelope.sidecar
    if sidecar is None:
        return Invalid("unsigned: the order says `auth: none`; orders need `auth: signed:NAME.md.sig`")
    if signature is None:
        return Invalid(f"unsigned: its signature {sidecar} never arrived")
    if trust is None:
        return Invalid("no allowed_signers file is configured, so no signed order can run")
    verdict = sshsig.verify(message, signature, namespace=trust.namespace)
    if isinstance(verdict, sshsig.Rejected):
        return Invalid(f"signature {sidecar}: {verdict.reason}")
    authorized = allowed_signers.authorize(
        trust.signers,
        public_key=verdict.public_key,
        principal=envelope.sender,
        namespace=trust.namespace,
        now=now,
    )
    if isinstance(authorized, allowed_signers.Refused):
        return Invalid(f"signer {sshsig.fingerprint(verdict.public_key)}: {authorized.reason}")
    if envelope.to not in trust.names:
        return Invalid(
            f"addressed to {envelope.to!r}, not to this watcher ({', '.join(sorted(trust.names))})"
        )
    if envelope.created_at is None:
        return Invalid("created_at: missing; an order needs it (the replay window of SPEC §6)")
    created = datetime.fromisoformat(envelope.created_at)
    if created < now - trust.max_age:
        return Invalid(f"expired: created_at {envelope.created_at} is older than {trust.max_age}")
    if created > now + FUTURE_SKEW:
        return Invalid(f"created_at {envelope.created_at} is more than 5 minutes in the future")
    return Valid(envelope.sender, sshsig.fingerprint(verdict.public_key), authorized.line)
