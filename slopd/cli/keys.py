"""Commands for the human's keys and signatures: `keygen`, `sign`, `verify` (SPEC §6).

slopd never writes into a hub's `authorized/`: a key or signature aimed there is refused.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from slopd.core import orders, sshsig
from slopd.core.envelope import PARTY_PATTERN, EnvelopeError, parse
from slopd.core.errors import UsageError
from slopd.core.verdicts import Invalid
from slopd.core.vocabulary import MAX_ENVELOPE_BYTES
from slopd.shell import config as config_module
from slopd.shell.defaults import default_names
from slopd.shell.fs import Unreadable, read_once, write_file


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
    public = sshsig.public_key_line(key.public_key().public_bytes_raw(), args.principal)
    try:
        write_file(path, sshsig.private_key_bytes(key, args.principal), mode=0o600)
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
    signature_path = Path(f"{target}.sig")
    if _inside_authorized(target):
        raise UsageError(
            f"{target}: slopd never writes into authorized/; sign the order elsewhere, "
            "then move it and its .sig into the lane"
        )
    try:
        key = sshsig.load_private_key(Path(args.key).read_bytes())
        message = target.read_bytes()
    except OSError as error:
        raise UsageError(f"{error.filename}: {error.strerror}") from None
    except sshsig.SignatureError as error:
        raise UsageError(f"{args.key}: {error.reason}") from None
    armored = sshsig.sign(message, key, namespace=args.namespace)
    try:
        write_file(signature_path, armored, replace=args.force)
    except FileExistsError:
        raise UsageError(f"{signature_path}: already exists; use --force to replace it") from None
    print(f"wrote {signature_path}")
    return 0


def verify(args: argparse.Namespace) -> int:
    target = Path(args.file)
    config = config_module.Config(
        names=default_names(),
        auth=config_module.Auth(allowed_signers=Path(args.allowed_signers), namespace=args.namespace),
    )
    trust = config_module.load_trust(config)
    message = read_once(target, MAX_ENVELOPE_BYTES)
    if isinstance(message, Unreadable):
        print(f"{target}: not verified: the file {message.reason}")
        return 1
    try:
        envelope = parse(message.data, name=target.name)
    except EnvelopeError as error:
        print(f"{target}: not verified: not a valid envelope: {'; '.join(error.reasons)}")
        return 1
    sidecar = envelope.sidecar or f"{target.name}.sig"
    signature = read_once(target.parent / sidecar, sshsig.MAX_SIGNATURE_BYTES)
    if isinstance(signature, Unreadable):
        print(f"{target}: not verified: its signature {sidecar} {signature.reason}")
        return 1
    assert trust is not None
    verdict = orders.check(
        envelope,
        message.data,
        signature.data,
        replace(trust, names=frozenset({envelope.to})),
        datetime.now(UTC),
    )
    if isinstance(verdict, Invalid):
        print(f"{target}: not verified: {verdict.reason}")
        return 1
    where = f"{verdict.fingerprint}, allowed_signers line {verdict.line}"
    print(f"{target}: good signature by {verdict.principal} ({where})")
    return 0
