"""WebAuthn signatures inside SSHSIG (`webauthn-sk-ecdsa-sha2-nistp256@openssh.com`). Pure.

A passkey cannot sign raw bytes: the browser signs its own clientDataJSON, which carries the
challenge. OpenSSH (PROTOCOL.u2f, `ssh-ecdsa-sk.c`) therefore stores the origin, the browser's
clientDataJSON and the authenticator's extensions beside the flags and counter, and checks that
the challenge is the SSHSIG signed data. Rules (SPEC §15), each refusal its own reason:
1. The origin holds no `"` (OpenSSH's rule).
2. The attested-data flag (0x40) is clear; the extensions flag (0x80) is set exactly when the
   extensions field is not empty (OpenSSH's rules).
3. clientDataJSON begins, byte for byte, `{"type":"webauthn.get","challenge":"` + the unpadded
   base64url of the SSHSIG signed data + `","origin":"` + the origin + `"` (OpenSSH's rule;
   the type, the challenge and the origin are told apart in the reasons).
Stricter than OpenSSH, never looser (a browser never makes what these refuse):
4. clientDataJSON is one UTF-8 JSON object without duplicate keys, whose parsed `challenge` and
   `origin` are the ones of rule 3 (no escapes hiding another value), and `crossOrigin` is not
   true (no page of another site framed the request).
5. The origin is `https://HOST[:PORT]`, or `http://localhost[:PORT]`, with HOST the key's
   application (its RP ID) or a name under it — what a browser itself enforces.
The ECDSA check is then over `SHA256(application) ‖ flags ‖ counter ‖ extensions ‖
SHA256(clientDataJSON)` (`sshsig.authenticator_data`): a signature made for another RP ID, or
with other flags, counter or clientDataJSON, is a bad signature. Presence and verification are
judged by the caller (`core.orders`), as for every security-key signature.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from typing import Any

SIGNATURE_TYPE = "webauthn-sk-ecdsa-sha2-nistp256@openssh.com"
ATTESTED_DATA = 0x40
EXTENSION_DATA = 0x80
_TYPE_PREFIX = b'{"type":"webauthn.get","challenge":"'
_ORIGIN = re.compile(r"(?:https://([a-z0-9.-]+)|http://(localhost))(?::[0-9]{1,5})?")


@dataclass(frozen=True, slots=True)
class Assertion:
    """What a webauthn signature carries beyond an sk-ecdsa one."""

    origin: str
    client_data: bytes  # the browser's clientDataJSON, byte for byte
    extensions: bytes  # the authenticator data after the counter (empty: none)


def b64url(data: bytes) -> str:
    """Unpadded base64url, as WebAuthn encodes a challenge."""
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def judge(assertion: Assertion, flags: int, signed_data: bytes, application: str) -> str | None:
    """Why this assertion cannot sign `signed_data` for a key of `application`, or None (rules 1-5)."""
    origin = assertion.origin
    if '"' in origin:
        return "webauthn: the origin contains a quote"
    if flags & ATTESTED_DATA:
        return "webauthn: the attested-data flag (0x40) is set; an assertion never carries it"
    if bool(flags & EXTENSION_DATA) != bool(assertion.extensions):
        state = (
            "set, but there are no extensions" if flags & EXTENSION_DATA else "clear, but extensions follow"
        )
        return f"webauthn: the extensions flag (0x80) is {state}"
    return _client_data(assertion, b64url(signed_data)) or _origin(origin, application)


def _client_data(assertion: Assertion, challenge: str) -> str | None:
    """Rule 3, then rule 4."""
    data, origin = assertion.client_data, assertion.origin
    if not data.startswith(_TYPE_PREFIX):
        return 'webauthn: clientDataJSON does not begin {"type":"webauthn.get", (not an assertion)'
    after = data[len(_TYPE_PREFIX) :]
    if not after.startswith(challenge.encode() + b'"'):
        return (
            "webauthn: the challenge is not this file's signed data "
            "(the passkey signed other bytes, another namespace or hash)"
        )
    if not after[len(challenge) :].startswith(b'","origin":"' + origin.encode() + b'"'):
        return f"webauthn: clientDataJSON does not name the signature's origin {origin!r} after the challenge"
    return _parsed(data, challenge, origin)


def _parsed(data: bytes, challenge: str, origin: str) -> str | None:
    """Rule 4."""
    parsed = _json_object(data)
    if parsed is None:
        return "webauthn: clientDataJSON is not one JSON object (UTF-8, no duplicate keys)"
    if parsed.get("challenge") != challenge or parsed.get("origin") != origin:
        return "webauthn: clientDataJSON, read as JSON, holds another challenge or origin"
    if parsed.get("crossOrigin") is True:
        return "webauthn: crossOrigin is true (a page of another site asked for the signature)"
    return None


def _json_object(data: bytes) -> dict[str, Any] | None:
    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        if len({key for key, _ in pairs}) != len(pairs):
            raise ValueError("duplicate key")
        return dict(pairs)

    try:
        parsed = json.loads(data.decode("utf-8"), object_pairs_hook=unique)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


def origin_fits(origin: str, rp_id: str) -> bool:
    """Rule 5: whether a page at `origin` may use passkeys of the relying party `rp_id`."""
    match = _ORIGIN.fullmatch(origin)
    if match is None or not rp_id:
        return False
    host = match.group(1) or match.group(2)
    return host == rp_id or host.endswith("." + rp_id)


def _origin(origin: str, application: str) -> str | None:
    if origin_fits(origin, application):
        return None
    return f"webauthn: the origin {origin!r} is not a page of the key's relying party {application!r}"
