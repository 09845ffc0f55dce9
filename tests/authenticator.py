"""A FIDO security key played in software: sk-ed25519 and sk-ecdsa keys that sign SSHSIG files.

Rules (OpenSSH PROTOCOL.u2f, PROTOCOL.sshsig):
1. A token signs `sshsig.authenticator_data(application, flags, counter, signed data)`, where the
   signed data is `sshsig.signed_data(message, namespace, hash)`: Ed25519 as is, ECDSA P-256 with
   SHA-256. The primitives are `cryptography`'s; there is no curve arithmetic here.
2. Its signature blob is `string(type) ‖ string(raw) ‖ byte flags ‖ uint32 counter`, where raw is
   the 64-byte Ed25519 signature or `mpint r ‖ mpint s`; `sshsig.assemble` armors it.
3. Flags, counter, application, namespace and hash are the caller's to choose, so a test can make
   what a real token never would (no touch, another application's signature, a stale counter).
4. Deterministic: keys come from a seed, Ed25519 signatures are deterministic and ECDSA ones use
   RFC 6979 nonces (cryptography >= 44), so the same call gives the same bytes on every run (the
   fuzz corpus relies on it). A real token picks a random nonce; a verifier cannot tell.
5. An sk-ecdsa key whose application is an RP ID is also a passkey: `assertion` returns what a
   browser's `navigator.credentials.get` would (authenticatorData, clientDataJSON as Chromium
   writes it, the DER signature over both), and `passkey_sign` wraps it (`core.passkeys.wrap`)
   into the SSHSIG file the console writes.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from slopd.core import passkeys, sshkeys, sshsig, webauthn
from slopd.core.sshkeys import SK_ECDSA, SK_ED25519, PublicKey
from slopd.core.vocabulary import NAMESPACE
from slopd.core.wire import mpint, string

USER_PRESENT = sshsig.USER_PRESENT
USER_VERIFIED = sshsig.USER_VERIFIED
# The order of P-256's base point (FIPS 186-4 D.1.2.3): a private scalar is in [1, n - 1].
_P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


@dataclass(frozen=True)
class Authenticator:
    """One security key: its type, its private key and the FIDO application it was made for."""

    key_type: str
    private: Ed25519PrivateKey | ec.EllipticCurvePrivateKey
    application: str = "ssh:"

    @classmethod
    def ed25519(cls, seed: str = "alice", application: str = "ssh:") -> Authenticator:
        """An sk-ssh-ed25519@openssh.com key derived from `seed`."""
        raw = hashlib.sha256(f"sk-ed25519 {seed}".encode()).digest()
        return cls(SK_ED25519, Ed25519PrivateKey.from_private_bytes(raw), application)

    @classmethod
    def ecdsa(cls, seed: str = "alice", application: str = "ssh:") -> Authenticator:
        """An sk-ecdsa-sha2-nistp256@openssh.com key derived from `seed`."""
        digest = int.from_bytes(hashlib.sha256(f"sk-ecdsa {seed}".encode()).digest(), "big")
        return cls(
            SK_ECDSA, ec.derive_private_key(digest % (_P256_ORDER - 1) + 1, ec.SECP256R1()), application
        )

    @property
    def point(self) -> bytes:
        """The public key material: 32 Ed25519 bytes, or the 65-byte uncompressed P-256 point."""
        if isinstance(self.private, Ed25519PrivateKey):
            return self.private.public_key().public_bytes_raw()
        return self.private.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )

    @property
    def public_key(self) -> PublicKey:
        return sshkeys.security_key(self.key_type, self.point, self.application)

    def allowed_signers_line(self, principal: str, options: str = "") -> str:
        """`principal [options] TYPE BASE64`, one allowed_signers line (no newline)."""
        return " ".join(part for part in (principal, options, self.public_key.line()) if part)

    def raw_signature(self, data: bytes) -> bytes:
        """What the token returns over `data`: Ed25519's 64 bytes, or `mpint r ‖ mpint s`."""
        if isinstance(self.private, Ed25519PrivateKey):
            return self.private.sign(data)
        r, s = decode_dss_signature(
            self.private.sign(data, ec.ECDSA(hashes.SHA256(), deterministic_signing=True))
        )
        return mpint(r) + mpint(s)

    def signed(
        self,
        message: bytes,
        *,
        namespace: str = NAMESPACE,
        hash_algorithm: str = "sha512",
        flags: int = USER_PRESENT,
        counter: int = 1,
        application: str | None = None,
    ) -> bytes:
        """The authenticator data the token signs for `message` (rule 1)."""
        data = sshsig.signed_data(message, namespace, hash_algorithm)
        chosen = self.application if application is None else application
        return sshsig.authenticator_data(chosen, flags, counter, data)

    def signature_blob(
        self,
        message: bytes,
        *,
        namespace: str = NAMESPACE,
        hash_algorithm: str = "sha512",
        flags: int = USER_PRESENT,
        counter: int = 1,
        application: str | None = None,
        raw: bytes | None = None,
    ) -> bytes:
        """The SSHSIG signature blob (rule 2); `raw` replaces the token's signature when given."""
        if raw is None:
            raw = self.raw_signature(
                self.signed(
                    message,
                    namespace=namespace,
                    hash_algorithm=hash_algorithm,
                    flags=flags,
                    counter=counter,
                    application=application,
                )
            )
        return string(self.key_type.encode()) + string(raw) + struct.pack(">BI", flags, counter)

    def sign(
        self,
        message: bytes,
        *,
        namespace: str = NAMESPACE,
        hash_algorithm: str = "sha512",
        flags: int = USER_PRESENT,
        counter: int = 1,
        application: str | None = None,
        public_key: PublicKey | None = None,
    ) -> bytes:
        """An armored SSHSIG of `message`, as `ssh-keygen -Y sign` with this token would write it.

        `application` signs as if for another application than the key's; `public_key` puts
        another key in the file than the one that signed."""
        blob = self.signature_blob(
            message,
            namespace=namespace,
            hash_algorithm=hash_algorithm,
            flags=flags,
            counter=counter,
            application=application,
        )
        return sshsig.assemble(public_key or self.public_key, namespace, hash_algorithm, blob)

    def assertion(
        self,
        challenge: bytes,
        *,
        origin: str,
        flags: int = USER_PRESENT,
        counter: int = 1,
        extensions: bytes = b"",
        client_data: bytes | None = None,
        rp_id: str | None = None,
    ) -> tuple[bytes, bytes, bytes]:
        """What a browser returns for a passkey asked to sign `challenge` at `origin` (rule 5):
        (authenticatorData, clientDataJSON, DER signature); each part may be overridden."""
        assert isinstance(self.private, ec.EllipticCurvePrivateKey), "only sk-ecdsa keys are passkeys"
        if client_data is None:
            fields = {"type": "webauthn.get", "challenge": webauthn.b64url(challenge), "origin": origin}
            client_data = json.dumps({**fields, "crossOrigin": False}, separators=(",", ":")).encode()
        relying_party = self.application if rp_id is None else rp_id
        data = (
            hashlib.sha256(relying_party.encode()).digest() + struct.pack(">BI", flags, counter) + extensions
        )
        signed = data + hashlib.sha256(client_data).digest()
        signature = self.private.sign(signed, ec.ECDSA(hashes.SHA256(), deterministic_signing=True))
        return data, client_data, signature

    def passkey_sign(
        self, message: bytes, *, origin: str, namespace: str = NAMESPACE, **overrides: Any
    ) -> bytes:
        """The SSHSIG file the console makes of this passkey's approval of `message` (rule 5)."""
        challenge = passkeys.challenge(message, namespace)
        return passkeys.wrap(
            self.public_key, *self.assertion(challenge, origin=origin, **overrides), namespace=namespace
        )
