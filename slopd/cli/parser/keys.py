"""The commands about signing keys and signatures: keygen, sign, verify.

Rules:
1. Their handler is `slopd.cli.keys`.
2. The namespace defaults to slopd's own (`core.vocabulary.NAMESPACE`); `verify` takes the
   config's first.
"""

from __future__ import annotations

from slopd.cli.parser.options import Commands, command
from slopd.core.vocabulary import NAMESPACE


def add(commands: Commands) -> None:
    text = "write an OpenSSH Ed25519 key pair; print its allowed_signers line"
    sub = command(commands, "keygen", "slopd.cli.keys:keygen", text)
    sub.add_argument("path", metavar="PATH", help="the private key; the public key goes to PATH.pub")
    sub.add_argument("--principal", required=True, help="who signs with it: the `from` of their orders")
    sub.add_argument("--namespace", default=NAMESPACE, help="the namespace its allowed_signers line allows")

    sub = command(commands, "sign", "slopd.cli.keys:sign", "sign FILE (SSHSIG, namespace slop) into FILE.sig")
    sub.add_argument("--key", required=True, help="an OpenSSH Ed25519 private key")
    sub.add_argument("--namespace", default=NAMESPACE, help="the signature namespace")
    sub.add_argument("--out", metavar="SIG", help="write here, e.g. NAME.md.bob.sig for a second signer")
    sub.add_argument("--force", action="store_true", help="replace an existing signature file")
    sub.add_argument("file", metavar="FILE", help="the file to sign (an order, outside the hub)")

    text = "check FILE.sig over any file as ssh-keygen -Y verify does; for an order, every order check too"
    sub = command(commands, "verify", "slopd.cli.keys:verify", text)
    sub.add_argument(
        "--allowed-signers", help="the trusted keys (default: [auth] allowed_signers of --config)"
    )
    sub.add_argument("--config", help="take [auth] and the actions' quorum and require from this config")
    sub.add_argument("--namespace", help=f"the signature namespace (default: the config's, else {NAMESPACE})")
    sub.add_argument("--signature", metavar="SIG", help="the signature of a plain file (default FILE.sig)")
    sub.add_argument("file", metavar="FILE", help="an order, or any signed file")
