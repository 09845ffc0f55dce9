"""The WebAuthn ceremonies, by Yubico's `fido2` (its `Fido2Server`): enrol, sign in, approve.

Rules (SPEC §15; `docs/console.md` says why `fido2`):
1. Only ES256 (P-256) credentials are enrolled: a passkey becomes an
   `sk-ecdsa-sha2-nistp256@openssh.com` key, the only key type with an OpenSSH webauthn
   signature. The RP is the site's RP ID; the only origin accepted is the site's origin.
2. Registration: the library checks the type, challenge, origin, RP ID hash and presence; this
   module takes the credential's point (`04 ‖ X ‖ Y`) from its COSE key.
3. Sign-in: the library checks the assertion against each candidate key (the allowed_signers
   keys for this RP ID) under the credential id the browser returned; the first that verifies
   is the one signed in with. A key whose signature does not verify never signs in.
4. An approval's assertion is not judged here: it is wrapped into SSHSIG (`core.passkeys`) and
   judged by slopd's verifier, as the daemon will judge it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec
from fido2.cose import ES256
from fido2.server import Fido2Server
from fido2.webauthn import (
    Aaguid,
    AttestedCredentialData,
    AuthenticationResponse,
    PublicKeyCredentialDescriptor,
    PublicKeyCredentialParameters,
    PublicKeyCredentialRpEntity,
    PublicKeyCredentialType,
    PublicKeyCredentialUserEntity,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from slopd.core.sshkeys import PublicKey


class CeremonyError(ValueError):
    """A browser's answer that does not pass; the message says why."""


@dataclass(frozen=True, slots=True)
class Assertion:
    credential_id: bytes
    authenticator_data: bytes
    client_data: bytes
    signature: bytes


class Ceremonies:
    def __init__(self, rp_id: str, origin: str) -> None:
        """Rule 1."""
        self.server = Fido2Server(
            PublicKeyCredentialRpEntity(name="slopd", id=rp_id), verify_origin=lambda seen: seen == origin
        )
        self.server.allowed_algorithms = [
            PublicKeyCredentialParameters(type=PublicKeyCredentialType.PUBLIC_KEY, alg=ES256.ALGORITHM)
        ]

    def registration(self, principal: str, user_id: bytes) -> tuple[dict[str, Any], Any]:
        options, state = self.server.register_begin(
            PublicKeyCredentialUserEntity(name=principal, id=user_id, display_name=principal),
            resident_key_requirement=ResidentKeyRequirement.PREFERRED,
            user_verification=UserVerificationRequirement.PREFERRED,
        )
        return dict(options), state

    def registered(self, state: Any, response: Mapping[str, Any]) -> tuple[bytes, bytes]:
        """Rule 2: the new credential's id and its P-256 point."""
        try:
            data = self.server.register_complete(state, response)
        except (ValueError, KeyError, TypeError) as error:
            raise CeremonyError(f"the passkey was not created: {error}") from None
        credential = data.credential_data
        if credential is None:
            raise CeremonyError("the passkey was not created: no credential in the answer")
        key = credential.public_key
        if not isinstance(key, ES256):
            raise CeremonyError("the passkey is not ES256 (P-256): OpenSSH signs only with those")
        return bytes(credential.credential_id), b"\x04" + bytes(key[-2]) + bytes(key[-3])

    def authentication(
        self, allow: Sequence[bytes], *, challenge: bytes | None = None, verified: bool = False
    ) -> tuple[dict[str, Any], Any]:
        requirement = (
            UserVerificationRequirement.REQUIRED if verified else UserVerificationRequirement.PREFERRED
        )
        descriptors = [
            PublicKeyCredentialDescriptor(type=PublicKeyCredentialType.PUBLIC_KEY, id=i) for i in allow
        ]
        options, state = self.server.authenticate_begin(
            descriptors or None, user_verification=requirement, challenge=challenge
        )
        return dict(options), state

    def signed_in(
        self, state: Any, response: Mapping[str, Any], candidates: Sequence[PublicKey]
    ) -> PublicKey:
        """Rule 3: the candidate key whose signature this is."""
        assertion = parse_assertion(response)
        for key in candidates:
            public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), key.point)
            credential = AttestedCredentialData.create(
                Aaguid.NONE,
                assertion.credential_id,
                ES256.from_cryptography_key(public),  # type: ignore[no-untyped-call]  # fido2 leaves it untyped
            )
            try:
                self.server.authenticate_complete(state, [credential], response)
            except ValueError:
                continue
            return key
        raise CeremonyError(
            "this passkey is not one of allowed_signers' keys for this console "
            "(enrol it with `slopd console enroll`, and answer yes at the terminal)"
        )


def parse_assertion(response: Mapping[str, Any]) -> Assertion:
    """The browser's assertion, byte for byte."""
    try:
        parsed = AuthenticationResponse.from_dict(response)
    except (ValueError, KeyError, TypeError) as error:
        raise CeremonyError(f"not a WebAuthn assertion: {error}") from None
    answer = parsed.response
    return Assertion(
        bytes(parsed.raw_id),
        bytes(answer.authenticator_data),
        bytes(answer.client_data),
        bytes(answer.signature),
    )
