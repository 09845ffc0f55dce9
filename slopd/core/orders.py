"""The deterministic verifier for signed orders in `authorized/` (SPEC §6). Pure: time comes in.

Rules, checked in this order; the first that fails names the verdict:
1. The order names its signatures (`auth: signed:NAME.md.sig[,NAME.md.bob.sig…]`); with one
   named, that file was found beside it.
2. Each signature is a well-formed OpenSSH SSHSIG over exactly the bytes that were read and
   will be parsed and executed, made in the configured namespace, by a key type accepted for
   orders (`core.sshkeys`).
3. Its key is in allowed_signers for its principal, for that namespace, and valid now. The
   principal of a signature is the order's `from` when the key may sign as `from`; for a
   quorum, otherwise the first literal principal of the first entry allowing the key.
4. A security-key signature has the user-presence flag (a touch) unless `allow_no_touch`; an
   action with `require = "touch"` counts only security-key signatures with a touch (whatever
   `allow_no_touch` says), `"verified"` only those with the user-verified flag too.
5. `from` signed, and the action's `quorum` M (default 1) of distinct humans signed: M
   signatures that count, by M distinct keys and M distinct principals. A key listed under two
   principals is one human; a principal with two keys is one human; a signature over other
   bytes, by an unknown key or one that never came never counts.
6. The order is addressed to this watcher (`to` is one of its names).
7. `created_at` is present, at most `max_age` old and at most five minutes in the future.
A signature is never an exception: `check` returns `Valid` or `Invalid`, whatever the bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from slopd.core import allowed_signers, authorizing, sshsig
from slopd.core.envelope import Envelope
from slopd.core.sshkeys import PublicKey
from slopd.core.verdicts import Invalid, Valid, Verification

FUTURE_SKEW = timedelta(minutes=5)
REQUIREMENTS = ("touch", "verified")


@dataclass(frozen=True, slots=True)
class Policy:
    """What an action demands of its signatures (`[actions.NAME] quorum`, `require`)."""

    quorum: int = 1
    require: str | None = None  # None, "touch" or "verified"


@dataclass(frozen=True, slots=True)
class Trust:
    """What the operator trusts: the keys, the namespace, the age limit, this watcher's names."""

    signers: tuple[allowed_signers.Entry, ...]
    namespace: str
    max_age: timedelta
    names: frozenset[str]
    allow_no_touch: bool = False
    policies: Mapping[str, Policy] = field(default_factory=dict)
    skipped: tuple[allowed_signers.Skipped, ...] = ()  # lines left out, for warnings
    unusable: str | None = None  # why the file cannot be used now (a failed reload): trust nobody

    def policy(self, action: str | None) -> Policy:
        return self.policies.get(action or "", Policy())


@dataclass(frozen=True, slots=True)
class _Signer:
    principal: str
    key: PublicKey
    line: int
    verified: sshsig.Verified


def check(
    envelope: Envelope,
    message: bytes,
    signatures: Mapping[str, bytes | None],
    trust: Trust | None,
    now: datetime,
) -> Verification:
    """Verify one order read as `message`, with its sidecars' bytes by name (None: never came)."""
    sidecars = envelope.sidecars
    if not sidecars:
        return Invalid("unsigned: the order says `auth: none`; orders need `auth: signed:NAME.md.sig`")
    if len(sidecars) == 1 and signatures.get(sidecars[0]) is None:
        return Invalid(f"unsigned: its signature {sidecars[0]} never arrived")
    if trust is None:
        return Invalid("no allowed_signers file is configured, so no signed order can run")
    if trust.unusable is not None:
        return Invalid(f"the allowed_signers file cannot be used ({trust.unusable}): no signer is trusted")
    policy = trust.policy(envelope.action)
    counted, refused = _count(envelope, message, signatures, trust, policy, now)
    verdict = _quorum(envelope, sidecars, counted, refused, policy) or _replay(envelope, trust, now)
    if verdict is not None:
        return verdict
    sender = next(signer for signer in counted if signer.principal == envelope.sender)
    others = tuple(
        f"{signer.principal} ({signer.key.fingerprint})" for signer in counted if signer is not sender
    )
    how = sender.verified
    return Valid(
        envelope.sender, sender.key.fingerprint, sender.line, others, how.flags, how.counter, how.origin
    )


def _count(
    envelope: Envelope,
    message: bytes,
    signatures: Mapping[str, bytes | None],
    trust: Trust,
    policy: Policy,
    now: datetime,
) -> tuple[list[_Signer], list[str]]:
    """Rules 2-5 over every listed signature: the signers that count, and why the others do not."""
    sidecars = envelope.sidecars
    counted: list[_Signer] = []
    refused: list[str] = []
    for sidecar in sidecars:
        data = signatures.get(sidecar)
        judged = (
            "never arrived" if data is None else _judge(sidecar, envelope, message, data, trust, policy, now)
        )
        if isinstance(judged, _Signer):
            judged = _duplicate(judged, counted) or judged
        if isinstance(judged, _Signer):
            counted.append(judged)
        elif len(sidecars) == 1 or judged.startswith(f"signature {sidecar}:"):
            refused.append(judged)
        else:
            refused.append(f"{sidecar}: {judged}")
    return counted, refused


def _replay(envelope: Envelope, trust: Trust, now: datetime) -> Invalid | None:
    """Rules 6 and 7."""
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
    return None


def _judge(
    sidecar: str, envelope: Envelope, message: bytes, data: bytes, trust: Trust, policy: Policy, now: datetime
) -> _Signer | str:
    """Rules 2-4 for one signature: who made it, or why it does not count."""
    verdict = sshsig.verify(message, data, namespace=trust.namespace)
    if isinstance(verdict, sshsig.Rejected):
        return f"signature {sidecar}: {verdict.reason}"
    key = verdict.public_key
    authorized = authorizing.authorize(
        trust.signers, public_key=key, principal=envelope.sender, namespace=trust.namespace, now=now
    )
    principal = envelope.sender
    if isinstance(authorized, authorizing.Refused) and policy.quorum > 1:
        other = authorizing.first_literal(trust.signers, public_key=key, namespace=trust.namespace, now=now)
        if other is not None:
            principal, authorized = other
    if isinstance(authorized, authorizing.Refused):
        return f"signer {key.fingerprint}: {authorized.reason}"
    flags = verdict.flags or 0
    no_touch_allowed = trust.allow_no_touch and policy.require is None
    if key.security_key and not flags & sshsig.USER_PRESENT and not no_touch_allowed:
        return f"signer {key.fingerprint}: a security-key signature made without a touch (user presence)"
    if policy.require is not None and not key.security_key:
        return (
            f"signer {key.fingerprint}: signed with a key file; action {envelope.action!r} "
            f"requires a security key (require = {policy.require!r})"
        )
    if policy.require == "verified" and not flags & sshsig.USER_VERIFIED:
        return (
            f"signer {key.fingerprint}: the security key did not verify its user (PIN or biometric); "
            f"action {envelope.action!r} requires it (require = 'verified')"
        )
    return _Signer(principal, key, authorized.line, verdict)


def _duplicate(signer: _Signer, counted: list[_Signer]) -> str | None:
    """Rule 5: why a signer already counted does not count again."""
    for other in counted:
        if other.key == signer.key:
            return f"the same key as another signature ({signer.key.fingerprint}): one human counts once"
        if other.principal == signer.principal:
            return f"{signer.principal} already signed: one human counts once"
    return None


def _quorum(
    envelope: Envelope, sidecars: tuple[str, ...], counted: list[_Signer], refused: list[str], policy: Policy
) -> Invalid | None:
    """Rule 5: enough distinct humans, `from` among them; else who signed and who is missing."""
    principals = [signer.principal for signer in counted]
    if envelope.sender in principals and len(counted) >= policy.quorum:
        return None
    if policy.quorum == 1 and len(sidecars) == 1:
        return Invalid(refused[0])
    missing = []
    if envelope.sender not in principals:
        missing.append(f"a signature by {envelope.sender} (the order's from)")
    if len(counted) < policy.quorum:
        short = policy.quorum - len(counted)
        missing.append(f"{short} more distinct signer{'s' if short > 1 else ''}")
    reason = (
        f"quorum not met: {len(counted)} of the {policy.quorum} humans needed signed"
        f" ({', '.join(principals) or 'nobody'}); missing {' and '.join(missing)}"
    )
    return Invalid(reason + (f"; not counted: {'; '.join(refused)}" if refused else ""))
