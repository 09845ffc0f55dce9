#!/usr/bin/env python3
"""Build the seed corpora under fuzz/corpus/ from the sample hub and crafted cases.

    python fuzz/make_corpus.py          # rewrites fuzz/corpus/{envelope,sshsig,allowed_signers}

Deterministic: the same files, byte for byte, on every run (Ed25519 signing is deterministic
and the key comes from `common.KEY_SEED`). Each file name says what the seed is.
"""

from __future__ import annotations

import base64
import shutil
import struct
from collections.abc import Callable

from common import CORPUS_DIR, KEY_SEED, MESSAGE, PRINCIPAL, REPO_DIR
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from slopd.core import sshsig

SAMPLE_HUB = REPO_DIR / "sample-hub"
SAMPLE_CONFIG = REPO_DIR / "sample-config"


def front(text: str, body: str = "Body.\n") -> bytes:
    return f"---\n{text}---\n{body}".encode()


VALID_HEAD = (
    "protocol: slop.v1\nid: 20260704t071553z-seed\ntype: handoff\nfrom: claude-code\nto: watcher\n"
    "in_reply_to: null\ncreated_at: 2026-07-04T07:15:53Z\nauth: none\n"
)


def laughs() -> str:
    lines = ['a: &a ["lol","lol","lol"]']
    for level in range(1, 5):
        previous, name = chr(ord("a") + level - 1), chr(ord("a") + level)
        lines.append(f"{name}: &{name} [{','.join(['*' + previous] * 3)}]")
    return "\n".join(lines) + "\n"


def envelope_seeds() -> dict[str, bytes]:
    seeds: dict[str, bytes] = {}
    for lane in ("inbox", "authorized"):
        for path in sorted((SAMPLE_HUB / lane).iterdir()):
            if path.suffix in (".md", ".json"):
                seeds[f"sample-{lane}-{path.name}"] = path.read_bytes()
    valid = front(VALID_HEAD)
    seeds.update(
        {
            "valid.md": valid,
            "bom.md": b"\xef\xbb\xbf" + valid,
            "two-boms.md": b"\xef\xbb\xbf\xef\xbb\xbf" + valid,
            "crlf.md": valid.replace(b"\n", b"\r\n"),
            "no-body-newline.md": valid.rstrip(b"\n").removesuffix(b"Body."),
            "extras.md": front(VALID_HEAD + "flag: on\nperm: 0755\nwhen: 12:30\nlist: [a, {b: c}]\n"),
            "block-scalars.md": front(VALID_HEAD + "text: |\n  line one\n  line two\nfold: >\n  a\n  b\n"),
            "quoted.md": front(VALID_HEAD + "q: \"tab\\t nel\\x85 \\u2028 \\U0001F600\"\ns: 'it''s'\n"),
            "explicit-key.md": front(VALID_HEAD + "? long key\n: value\n"),
            "ack-reply.md": front(VALID_HEAD.replace("handoff", "ack").replace("null", "20260704t000000z-x")),
            "error-with-file.md": front(VALID_HEAD.replace("handoff", "error") + "file: inbox/x.md\n"),
            "signed-order.md": MESSAGE,
            "discuss-only.md": front(VALID_HEAD.replace("handoff", "instigate"), "Discuss only, please.\n"),
            "multi-doc.md": front(VALID_HEAD + "---\nid: second\n"),
            "no-closing-fence.md": b"---\n" + VALID_HEAD.encode(),
            "list-front.md": front("- protocol: slop.v1\n- id: a\n"),
            "scalar-front.md": front("just a string\n"),
            "empty-front.md": front(""),
            "empty-file.md": b"",
            "json-looking.md": b'{"protocol": "slop.v1"}\n',
            "laughs.md": front(laughs()),
            "python-tag.md": front("x: !!python/object/apply:os.system ['true']\n"),
            "anchor.md": front("a: &x 1\nb: *x\n"),
            "depth-32.md": front(VALID_HEAD + "deep: " + "[" * 31 + "x" + "]" * 31 + "\n"),
            "depth-33.md": front(VALID_HEAD + "deep: " + "[" * 32 + "x" + "]" * 32 + "\n"),
            "deep-unclosed.md": front("x: " + "[" * 2000 + "\n"),
            "duplicate-key.md": front(VALID_HEAD + "id: again\n"),
            "body-key.md": front(VALID_HEAD + "body: smuggled\n"),
            "directive.md": front("%YAML 1.1\n" + VALID_HEAD),
            "tab-indent.md": front("a:\n\t- b\n"),
            "invalid-utf8.md": front(VALID_HEAD).replace(b"claude-code", b"claude\xff\xfecode"),
            "nul.md": front(VALID_HEAD, "a\0b\n"),
            "bidi-id.md": front(VALID_HEAD.replace("-seed", "-se\u202eed")),
            "long-id.md": front(VALID_HEAD.replace("-seed", "-" + "s" * 130)),
            "bad-created.md": front(VALID_HEAD.replace("07:15:53Z", "25:61:61Z")),
            "valid.json": (
                b'{"protocol": "slop.v1", "id": "j1", "type": "note", "from": "a", "to": "watcher",'
                b' "in_reply_to": null, "created_at": "2026-07-04T07:15:53Z", "auth": "none",'
                b' "body": "hi", "extra": {"x": [1, 2.5, true, null]}}'
            ),
            "duplicate-key.json": b'{"id": "a", "id": "b"}',
            "nan.json": b'{"id": "a", "x": NaN}',
            "huge-number.json": b'{"id": "a", "x": 1e999}',
            "surrogate.json": b'{"id": "a", "x": "\\ud800"}',
            "nul.json": b'{"id": "a", "x": "\\u0000"}',
            "deep.json": b'{"x": ' + b"[" * 40 + b"]" * 40 + b"}",
            "array.json": b"[1, 2]",
            "body-number.json": b'{"body": 5}',
        }
    )
    return seeds


def signature_blob(
    message: bytes,
    key: Ed25519PrivateKey,
    *,
    magic: bytes = b"SSHSIG",
    version: int = 1,
    key_type: bytes = b"ssh-ed25519",
    namespace: bytes = b"slop",
    hash_algorithm: bytes = b"sha512",
    reserved: bytes = b"",
    trailing: bytes = b"",
) -> bytes:
    """An SSHSIG blob with any field replaced (the signature is over what the fields say)."""

    def string(data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + data

    algorithm = hash_algorithm.decode("latin-1")
    digest = sshsig._HASHES.get(algorithm, sshsig._HASHES["sha512"])(message).digest()
    signed = b"SSHSIG" + string(namespace) + string(b"") + string(hash_algorithm) + string(digest)
    public = key.public_key().public_bytes_raw()
    return (
        magic
        + struct.pack(">I", version)
        + string(string(key_type) + string(public))
        + string(namespace)
        + string(reserved)
        + string(hash_algorithm)
        + string(string(key_type) + string(key.sign(signed)))
        + trailing
    )


def armor(blob: bytes) -> bytes:
    encoded = base64.b64encode(blob)
    lines = [encoded[at : at + 70] for at in range(0, len(encoded), 70)]
    return b"\n".join([b"-----BEGIN SSH SIGNATURE-----", *lines, b"-----END SSH SIGNATURE-----"]) + b"\n"


def noncanonical_padding(armored: bytes) -> bytes:
    """The same armor with non-zero padding bits in the last base64 character before `=`."""
    alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    at = armored.index(b"=")
    before = armored[at - 1]
    changed = alphabet[alphabet.index(before) ^ 1]
    return armored[: at - 1] + bytes([changed]) + armored[at:]


def sshsig_seeds() -> dict[str, bytes]:
    key = Ed25519PrivateKey.from_private_bytes(KEY_SEED)
    good = sshsig.sign(MESSAGE, key)
    assert sshsig.verify(MESSAGE, good).__class__ is sshsig.Verified
    seeds = {f"sample-{path.name}": path.read_bytes() for path in sorted(SAMPLE_HUB.glob("authorized/*.sig"))}
    crafted: dict[str, Callable[[], bytes]] = {
        "good-sha512.sig": lambda: good,
        "good-sha256.sig": lambda: sshsig.sign(MESSAGE, key, hash_algorithm="sha256"),
        "namespace-git.sig": lambda: sshsig.sign(MESSAGE, key, namespace="git"),
        "other-message.sig": lambda: sshsig.sign(MESSAGE + b"!", key),
        "good-raw-blob.bin": lambda: signature_blob(MESSAGE, key),
        "trailing-bytes.sig": lambda: armor(signature_blob(MESSAGE, key, trailing=b"\0")),
        "md5.sig": lambda: armor(signature_blob(MESSAGE, key, hash_algorithm=b"md5")),
        "sha1.sig": lambda: armor(signature_blob(MESSAGE, key, hash_algorithm=b"sha1")),
        "upper-sha512.sig": lambda: armor(signature_blob(MESSAGE, key, hash_algorithm=b"SHA512")),
        "version-2.sig": lambda: armor(signature_blob(MESSAGE, key, version=2)),
        "magic-sshsih.sig": lambda: armor(signature_blob(MESSAGE, key, magic=b"SSHSIH")),
        "empty-namespace.sig": lambda: armor(signature_blob(MESSAGE, key, namespace=b"")),
        "rsa-type.sig": lambda: armor(signature_blob(MESSAGE, key, key_type=b"rsa-sha2-512")),
        "sk-type.sig": lambda: armor(signature_blob(MESSAGE, key, key_type=b"sk-ssh-ed25519@openssh.com")),
        "crlf-armor.sig": lambda: good.replace(b"\n", b"\r\n"),
        "leading-blank.sig": lambda: b"\n" + good,
        "text-before.sig": lambda: b"Signed by alice\n" + good,
        "text-after.sig": lambda: good + b"extra\n",
        "no-final-newline.sig": lambda: good.rstrip(b"\n"),
        "truncated.sig": lambda: good[: len(good) // 2],
        "bad-base64.sig": lambda: good.replace(b"A", b"!", 1),
        "reserved-field.sig": lambda: armor(signature_blob(MESSAGE, key, reserved=b"r")),
        "padding-bits.sig": lambda: noncanonical_padding(armor(signature_blob(MESSAGE, key, reserved=b"r"))),
    }
    seeds.update({name: make() for name, make in crafted.items()})
    seeds["private-key"] = sshsig.private_key_bytes(key, PRINCIPAL)
    seeds["public-key-blob.txt"] = (
        sshsig.public_key_line(key.public_key().public_bytes_raw()).split()[1].encode()
    )
    seeds["sample-alice-test-key"] = (SAMPLE_CONFIG / "alice-test-key").read_bytes()
    return seeds


def allowed_signers_seeds() -> dict[str, bytes]:
    key = Ed25519PrivateKey.from_private_bytes(KEY_SEED)
    line = sshsig.public_key_line(key.public_key().public_bytes_raw())
    sample = (SAMPLE_CONFIG / "allowed_signers").read_bytes()
    utc_window = 'valid-after="20200101Z",valid-before="20300101120000Z"'
    local_window = 'valid-after="202001010000",valid-before="20300101"'
    return {
        "sample-allowed_signers": sample,
        "plain": f"{PRINCIPAL} {line}\n".encode(),
        "comment-and-blank": f"# operators\n\n   \n{PRINCIPAL} {line} alice's laptop\n".encode(),
        "several-principals": f"alice@example.com,*@ops.example.com,!mallory@* {line}\n".encode(),
        "quoted-principals": f'"alice@example.com,bob@example.com" {line}\n'.encode(),
        "namespaces": f'{PRINCIPAL} namespaces="slop,git" {line}\n'.encode(),
        "valid-window-utc": f"{PRINCIPAL} {utc_window} {line}\n".encode(),
        "valid-window-local": f"{PRINCIPAL} {local_window} {line}\n".encode(),
        "valid-before-utc-word": f'{PRINCIPAL} Valid-Before="20300101UTC" {line}\n'.encode(),
        "escaped-quote": f'{PRINCIPAL} namespaces="sl\\"op" {line}\n'.encode(),
        "tabs": f"{PRINCIPAL}\t{line.replace(' ', chr(9))}\n".encode(),
        "crlf": f"{PRINCIPAL} {line}\r\n# x\r\n".encode(),
        "cert-authority": f"*@example.com cert-authority {line}\n".encode(),
        "unknown-option": f'{PRINCIPAL} bogus="x" {line}\n'.encode(),
        "ecdsa": f"{PRINCIPAL} ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAA=\n".encode(),
        "missing-key": f"{PRINCIPAL}\n".encode(),
        "key-first": f"{line}\n".encode(),
        "unterminated-quote": f'"{PRINCIPAL} {line}\n'.encode(),
        "bad-time": f'{PRINCIPAL} valid-before="20301340Z" {line}\n'.encode(),
        "before-after": f'{PRINCIPAL} valid-after="20300101Z",valid-before="20200101Z" {line}\n'.encode(),
        "garbage": b"%%% not a signer %%%\n\xff\xfe\n",
    }


def main() -> None:
    for harness, seeds in (
        ("envelope", envelope_seeds()),
        ("sshsig", sshsig_seeds()),
        ("allowed_signers", allowed_signers_seeds()),
    ):
        directory = CORPUS_DIR / harness
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
        for name, data in seeds.items():
            (directory / name).write_bytes(data)
        print(f"{directory.relative_to(REPO_DIR)}: {len(seeds)} seeds")


if __name__ == "__main__":
    main()
