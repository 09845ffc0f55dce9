"""Commands for the human's keys and signatures: `keygen`, `sign`, `verify` (SPEC §6).

Rules:
1. slopd never writes into a hub's `authorized/`: a key or signature aimed there is refused.
2. `verify` checks a signature over any file as `ssh-keygen -Y verify` does (exit 0, naming the
   principals allowed_signers lists for the key); when the file is an envelope it is an order,
   and every order check applies (with `--config`, the actions' quorum and `require` too).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from slopd.core import authorizing, keyfiles, orders, sshkeys, sshsig
from slopd.core.envelope import EnvelopeError
from slopd.core.errors import UsageError
from slopd.core.validation import PARTY_PATTERN, parse
from slopd.core.verdicts import Invalid, Valid
from slopd.core.vocabulary import MAX_ENVELOPE_BYTES
from slopd.core.wire import SignatureError
from slopd.shell import config as config_module
from slopd.shell.defaults import default_names
from slopd.shell.fs import write_file
from slopd.shell.reads import Unreadable, read_once

_FLAGS = ((sshsig.USER_PRESENT, "user present"), (sshsig.USER_VERIFIED, "user verified"))


def _inside_authorized(path: Path) -> bool:
    """Whether `path` sits in a hub's `authorized/` lane (slopd never writes there)."""
    parent = path.resolve().parent
    return parent.name == "authorized" and (parent.parent / "inbox").is_dir()


def keygen(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not PARTY_PATTERN.fullmatch(args.principal):
        raise UsageError(
            f"principal {args.principal!r}: must be a valid `from` (1-128 of A-Z a-z 0-9 . _ : @ -)"
        )
    if _inside_authorized(path):
        raise UsageError(f"{path}: slopd never writes into authorized/ (and a key must not live in a hub)")
    for existing in (path, Path(f"{path}.pub")):
        if existing.exists() or existing.is_symlink():
            raise UsageError(f"{existing}: already exists; not overwriting a key")
    key = Ed25519PrivateKey.generate()
    public = sshkeys.ed25519(key.public_key().public_bytes_raw()).line(args.principal)
    try:
        write_file(path, keyfiles.private_key_bytes(key, args.principal), mode=0o600)
    except FileExistsError:
        raise UsageError(f"{path}: already exists; not overwriting a key") from None
    pub = Path(f"{path}.pub")
    try:
        write_file(pub, (public + "\n").encode())
    except FileExistsError:
        raise UsageError(f"{pub}: already exists; not overwriting a key") from None
    namespace = args.namespace
    print(f'{args.principal} namespaces="{namespace}" {public.rsplit(" ", 1)[0]}')
    print(f"# the line above is this key's allowed_signers entry; keep {path} private", file=sys.stderr)
    return 0


def sign(args: argparse.Namespace) -> int:
    target = Path(args.file)
    signature_path = Path(args.out or f"{target}.sig")
    if _inside_authorized(target) or _inside_authorized(signature_path):
        raise UsageError(
            f"{target}: slopd never writes into authorized/; sign the order elsewhere, "
            "then move it and its .sig into the lane"
        )
    try:
        key = keyfiles.load_private_key(Path(args.key).read_bytes())
        message = target.read_bytes()
    except OSError as error:
        raise UsageError(f"{error.filename}: {error.strerror}") from None
    except SignatureError as error:
        raise UsageError(f"{args.key}: {error.reason}") from None
    armored = sshsig.sign(message, key, namespace=args.namespace)
    try:
        write_file(signature_path, armored, replace=args.force)
    except FileExistsError:
        raise UsageError(f"{signature_path}: already exists; use --force to replace it") from None
    print(f"wrote {signature_path}")
    return 0


def verify(args: argparse.Namespace) -> int:
    """Rule: as `ssh-keygen -Y verify` for any file; for an envelope, the order checks too."""
    target = Path(args.file)
    trust = _trust(args)
    message = read_once(target, MAX_ENVELOPE_BYTES)
    if isinstance(message, Unreadable):
        print(f"{target}: not verified: the file {message.reason}")
        return 1
    try:
        envelope = parse(message.data, name=target.name)
    except EnvelopeError:
        return _verify_file(target, message.data, trust, Path(args.signature or f"{target}.sig"))
    signatures: dict[str, bytes | None] = {}
    for sidecar in envelope.sidecars or (f"{target.name}.sig",):
        signature = read_once(target.parent / sidecar, sshsig.MAX_SIGNATURE_BYTES)
        if isinstance(signature, Unreadable) and signature.stat is not None:
            print(f"{target}: not verified: its signature {sidecar} {signature.reason}")
            return 1
        signatures[sidecar] = None if isinstance(signature, Unreadable) else signature.data
    if not envelope.sidecars:
        envelope = replace(envelope, auth=f"signed:{target.name}.sig")  # checked as if it named it
    verdict = orders.check(
        envelope, message.data, signatures, replace(trust, names=frozenset({envelope.to})), datetime.now(UTC)
    )
    if isinstance(verdict, Invalid):
        print(f"{target}: not verified: {verdict.reason}")
        return 1
    where = f"{verdict.fingerprint}, allowed_signers line {verdict.line}{_details(verdict)}"
    also = f"; with {', '.join(verdict.cosigners)}" if verdict.cosigners else ""
    print(f"{target}: good signature by {verdict.principal} ({where}){also}")
    return 0


def _trust(args: argparse.Namespace) -> orders.Trust:
    config = (
        config_module.load(Path(args.config)) if args.config else config_module.Config(names=default_names())
    )
    auth = config.auth
    if args.allowed_signers:
        auth = replace(auth, allowed_signers=Path(args.allowed_signers))
    if args.namespace:
        auth = replace(auth, namespace=args.namespace)
    if auth.allowed_signers is None:
        raise UsageError(
            "no allowed_signers: pass --allowed-signers FILE, or --config with [auth] allowed_signers"
        )
    trust = config_module.load_trust(replace(config, auth=auth))
    assert trust is not None
    return trust


def _verify_file(target: Path, message: bytes, trust: orders.Trust, signature_path: Path) -> int:
    """Any file: the signature, its key and the principals allowed_signers lists for that key."""
    signature = read_once(signature_path, sshsig.MAX_SIGNATURE_BYTES)
    if isinstance(signature, Unreadable):
        print(f"{target}: not verified: its signature {signature_path} {signature.reason}")
        return 1
    verdict = sshsig.verify(message, signature.data, namespace=trust.namespace)
    if isinstance(verdict, sshsig.Rejected):
        print(f"{target}: not verified: signature {signature_path.name}: {verdict.reason}")
        return 1
    key = verdict.public_key
    found = authorizing.find_principals(
        trust.signers, public_key=key, namespace=trust.namespace, now=datetime.now(UTC)
    )
    if not found:
        reason = "key not in allowed_signers for this namespace now"
        print(f"{target}: not verified: signer {key.fingerprint}: {reason}")
        return 1
    principals, line = found[0]
    where = f"{key.type} {key.fingerprint}, allowed_signers line {line}{_details(verdict)}"
    print(f"{target}: good signature by {principals} ({where})")
    return 0


def _details(verdict: sshsig.Verified | Valid) -> str:
    """A security key's flags and counter, and a passkey's origin, for the verdict line."""
    if verdict.flags is None:
        return ""
    named = [name for bit, name in _FLAGS if verdict.flags & bit]
    flags = f", flags 0x{verdict.flags:02x} ({', '.join(named) or 'no touch'}), counter {verdict.counter}"
    return flags + (f", passkey at {verdict.origin}" if verdict.origin else "")
