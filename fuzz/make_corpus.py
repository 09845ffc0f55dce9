#!/usr/bin/env python3
"""Build the seed corpora under fuzz/corpus/ from the sample hub and crafted cases.

    python fuzz/make_corpus.py          # rewrites fuzz/corpus/{envelope,sshsig,allowed_signers,handoff_lint}

Deterministic: the same files, byte for byte, on every run (the keys come from `common.KEY_SEED`,
Ed25519 signing is deterministic and the software security key of `tests/authenticator.py` signs
ECDSA with RFC 6979 nonces). Each file name says what the seed is.
"""

from __future__ import annotations

import base64
import shutil
import struct
import sys
from collections.abc import Callable

from common import CORPUS_DIR, KEY_SEED, MESSAGE, PRINCIPAL, REPO_DIR
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from slopd.core import keyfiles, passkeys, sshkeys, sshsig, webauthn
from slopd.core.sshkeys import SK_ECDSA, SK_ED25519, PublicKey
from slopd.core.wire import Reader, mpint, string

sys.path.insert(0, str(REPO_DIR))  # the software security key lives with the tests
from tests.authenticator import USER_PRESENT, USER_VERIFIED, Authenticator

SAMPLE_HUB = REPO_DIR / "sample-hub"
SAMPLE_CONFIG = REPO_DIR / "sample-config"
OPENSSH_VECTORS = REPO_DIR / "tests" / "fixtures" / "openssh-sshsig"
HANDOFF_FIXTURES = REPO_DIR / "tests" / "fixtures" / "handoff"
SEED = KEY_SEED.hex()
WEBAUTHN = b"webauthn-sk-ecdsa-sha2-nistp256@openssh.com"


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
    seeds.update(quorum_seeds())
    return seeds


def quorum_seeds() -> dict[str, bytes]:
    """Orders naming several sidecars (`auth: signed:A,B`): valid lists and broken ones."""
    head = MESSAGE.decode().split("---\n")[1].replace("auth: signed:fuzz-order.md.sig\n", "")

    def order(auth: str) -> bytes:
        return front(head + f"auth: {auth}\n", "Run the hello action; two humans signed.\n")

    return {
        "quorum-two.md": order("signed:a.md.sig,a.md.bob.sig"),
        "quorum-three-spaced.md": order("signed:a.md.sig, a.md.bob.sig , a.md.carol.sig"),
        "quorum-quoted.md": order('"signed:a.md.sig,a.md.bob.sig"'),
        "quorum-duplicate.md": order("signed:a.md.sig,a.md.sig"),
        "quorum-case-duplicate.md": order("signed:a.md.sig,A.md.sig"),
        "quorum-upper-suffix.md": order("signed:a.md.sig,a.md.bob.SIG"),
        "quorum-other-orders-sidecar.md": order("signed:a.md.sig,b.md.sig"),
        "quorum-empty-item.md": order("signed:a.md.sig,,a.md.bob.sig"),
        "quorum-trailing-comma.md": order("signed:a.md.sig,"),
        "quorum-only-comma.md": order("signed:,"),
        "quorum-dotdot.md": order("signed:a.md.sig,.."),
        "quorum-dotdot-path.md": order("signed:a.md.sig,../a.md.bob.sig"),
        "quorum-slash.md": order("signed:a.md.sig,sub/a.md.bob.sig"),
        "quorum-hidden.md": order("signed:a.md.sig,.a.md.bob.sig"),
        "quorum.json": (
            b'{"protocol": "slop.v1", "id": "20260704t080000z-quorum", "type": "instigate",'
            b' "from": "alice@example.com", "to": "watcher", "in_reply_to": null,'
            b' "created_at": "2026-07-04T08:00:00Z", "auth": "signed:a.json.sig,a.json.bob.sig",'
            b' "action": "hello", "body": "Run it."}'
        ),
    }


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
    seeds.update(security_key_seeds())
    for name in ("ed25519_sk.sig", "ecdsa_sk.sig", "ecdsa_sk_webauthn.sig", "rsa.sig"):
        seeds[f"openssh-{name}"] = (OPENSSH_VECTORS / name).read_bytes()
    seeds["private-key"] = keyfiles.private_key_bytes(key, PRINCIPAL)
    seeds["public-key-blob.txt"] = (
        sshkeys.ed25519(key.public_key().public_bytes_raw()).line().split()[1].encode()
    )
    seeds["sample-alice-test-key"] = (SAMPLE_CONFIG / "alice-test-key").read_bytes()
    return seeds


def resealed(token: Authenticator, signed: tuple[int, int], claimed: tuple[int, int]) -> bytes:
    """A token's signature over (flags, counter) = `signed` in a blob that claims `claimed`."""
    raw = token.raw_signature(token.signed(MESSAGE, flags=signed[0], counter=signed[1]))
    blob = token.signature_blob(MESSAGE, flags=claimed[0], counter=claimed[1], raw=raw)
    return sshsig.assemble(token.public_key, "slop", "sha512", blob)


def ecdsa_inner(token: Authenticator, change: Callable[[bytes, bytes], bytes]) -> bytes:
    """An sk-ecdsa signature whose `mpint r ‖ mpint s` is rewritten by `change(r, s)` (raw bytes)."""
    inner = Reader(token.raw_signature(token.signed(MESSAGE)), "signature")
    r, s = inner.string("r"), inner.string("s")
    blob = token.signature_blob(MESSAGE, raw=change(r, s))
    return sshsig.assemble(token.public_key, "slop", "sha512", blob)


def with_key_blob(token: Authenticator, blob: bytes) -> bytes:
    """The token's good signature in a file that carries `blob` as its public key."""
    key = PublicKey(token.key_type, blob, token.point, token.application)
    return sshsig.assemble(key, "slop", "sha512", token.signature_blob(MESSAGE))


def passkey_seeds() -> dict[str, Callable[[], bytes]]:
    """Passkey (webauthn) signatures over `MESSAGE` as the console writes them, good and forged."""
    passkey = Authenticator.ecdsa(SEED, application="localhost")
    origin = "http://localhost:8787"
    challenge = passkeys.challenge(MESSAGE)
    cross = (
        f'{{"type":"webauthn.get","challenge":"{webauthn.b64url(challenge)}","origin":"{origin}",'
        '"crossOrigin":true}'
    ).encode()
    return {
        "passkey-touch.sig": lambda: passkey.passkey_sign(MESSAGE, origin=origin),
        "passkey-verified-extensions.sig": lambda: passkey.passkey_sign(
            MESSAGE, origin=origin, flags=0x85, counter=9, extensions=b"\xa0"
        ),
        "passkey-other-message.sig": lambda: passkey.passkey_sign(MESSAGE + b"!", origin=origin),
        "passkey-other-site.sig": lambda: passkey.passkey_sign(MESSAGE, origin="https://evil.example"),
        "passkey-cross-origin.sig": lambda: passkey.passkey_sign(MESSAGE, origin=origin, client_data=cross),
        "passkey-no-touch.sig": lambda: passkey.passkey_sign(MESSAGE, origin=origin, flags=0x00, counter=3),
    }


def security_key_seeds() -> dict[str, bytes]:
    """sk-ed25519 and sk-ecdsa signatures over `MESSAGE`: good ones and damaged ones."""
    ed = Authenticator.ed25519(SEED)
    ec = Authenticator.ecdsa(SEED)
    other_app = Authenticator.ed25519(SEED, application="ssh:slopd")
    present_verified = USER_PRESENT | USER_VERIFIED
    crafted: dict[str, Callable[[], bytes]] = {
        "sk-ed25519-touch.sig": lambda: ed.sign(MESSAGE),
        "sk-ed25519-verified-sha256.sig": lambda: ed.sign(
            MESSAGE, flags=present_verified, counter=7, hash_algorithm="sha256"
        ),
        "sk-ed25519-no-touch.sig": lambda: ed.sign(MESSAGE, flags=0, counter=2),
        "sk-ed25519-application.sig": lambda: other_app.sign(MESSAGE),
        "sk-ecdsa-touch.sig": lambda: ec.sign(MESSAGE),
        "sk-ecdsa-verified.sig": lambda: ec.sign(MESSAGE, flags=present_verified, counter=2**32 - 1),
        "sk-ecdsa-raw-blob.bin": lambda: base64.b64decode(b"".join(ec.sign(MESSAGE).splitlines()[1:-1])),
        "sk-ed25519-flags-changed.sig": lambda: resealed(ed, (USER_PRESENT, 1), (present_verified, 1)),
        "sk-ecdsa-counter-changed.sig": lambda: resealed(ec, (USER_PRESENT, 1), (USER_PRESENT, 2)),
        "sk-ecdsa-signed-for-other-application.sig": lambda: ec.sign(MESSAGE, application="ssh:other"),
        "sk-ecdsa-r-leading-zero.sig": lambda: ecdsa_inner(ec, lambda r, s: string(b"\0" + r) + string(s)),
        "sk-ecdsa-s-negative.sig": lambda: ecdsa_inner(ec, lambda r, s: string(r) + string(b"\x80" + s)),
        "sk-ecdsa-s-zero.sig": lambda: ecdsa_inner(ec, lambda r, s: string(r) + string(b"")),
        "sk-ecdsa-third-mpint.sig": lambda: ecdsa_inner(ec, lambda r, s: string(r) + string(s) + mpint(1)),
        "sk-ecdsa-off-curve.sig": lambda: ec.sign(
            MESSAGE, public_key=sshkeys.security_key(SK_ECDSA, ec.point[:-1] + bytes([ec.point[-1] ^ 1]))
        ),
        "sk-ecdsa-nistp384.sig": lambda: with_key_blob(
            ec, string(SK_ECDSA.encode()) + string(b"nistp384") + string(ec.point) + string(b"ssh:")
        ),
        "sk-ecdsa-compressed-point.sig": lambda: with_key_blob(
            ec,
            string(SK_ECDSA.encode())
            + string(b"nistp256")
            + string(b"\x02" + ec.point[1:33])
            + string(b"ssh:"),
        ),
        "sk-ed25519-no-application.sig": lambda: with_key_blob(
            ed, string(SK_ED25519.encode()) + string(ed.point)
        ),
        "sk-ed25519-no-counter.sig": lambda: sshsig.assemble(
            ed.public_key, "slop", "sha512", ed.signature_blob(MESSAGE)[:-4]
        ),
        **passkey_seeds(),
        "sk-ecdsa-webauthn.sig": lambda: sshsig.assemble(
            ec.public_key,
            "slop",
            "sha512",
            string(WEBAUTHN)
            + ec.signature_blob(MESSAGE)[4 + len(SK_ECDSA) :]
            + string(b"https://example.com")
            + string(b'{"type":"webauthn.get"}')
            + string(b""),
        ),
    }
    return {name: make() for name, make in crafted.items()}


def allowed_signers_seeds() -> dict[str, bytes]:
    key = Ed25519PrivateKey.from_private_bytes(KEY_SEED)
    line = sshkeys.ed25519(key.public_key().public_bytes_raw()).line()
    sk_ed25519 = Authenticator.ed25519(SEED).public_key.line()
    sk_ecdsa = Authenticator.ecdsa(SEED).public_key.line()
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
        "security-keys": f"{PRINCIPAL} {sk_ed25519}\n{PRINCIPAL} {sk_ecdsa} alice's token\n".encode(),
        "security-key-and-plain": f'{PRINCIPAL} namespaces="slop" {sk_ecdsa}\n{PRINCIPAL} {line}\n'.encode(),
        "rsa-beside": (
            f"{PRINCIPAL} ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQC7\n{PRINCIPAL} {sk_ed25519}\n".encode()
        ),
    }


HANDOFF_HEAD = "# Handoff Log\nSession handoffs, newest entry first.\n\n---\n\n"
HANDOFF_V1 = (
    "## 2026-04-03 \u2014 Hot Rod (main)\n\n### What happened\n- Built the merge driver\n\n"
    "### What's pending\n- [ ] **[Pierre]** Review the driver\n- [x] Wire CI\n- a plain bullet\n\n"
    "### Watch out for\n- The cache is stale\n"
)
HANDOFF_V2 = (
    "## 2026-04-13 \u2014 Skippy | Claude (Hot Rod) | code\n**Tag-in:** 14:30 ET | **Tag-out:** 16:45 ET\n\n"
    "### What happened\n- Mapped the sprint model\n\n### What's pending\n- [ ] **[Skippy]** Fork it\n"
)
HANDOFF_ACTIVE = (
    "## 2026-04-13 \u2014 Grok | Grok (X) | brainstorm\n**Tag-in:** 17:00 UTC | **Tag-out:** [active]\n\n"
    "### What happened\n- Tagged in\n\n### What's pending\n- [ ] **[Grok]** Tag out\n"
)


def handoff_log(*entries: str, head: str = HANDOFF_HEAD) -> bytes:
    return (head + "\n---\n\n".join(entries)).encode()


def handoff_lint_seeds() -> dict[str, bytes]:
    """MEP handoff logs: conformant ones (v1, v2, [active], CRLF, BOM, no final newline) and one
    per way to break a rule, plus fences, comments, standups and bytes that are not UTF-8."""
    seeds = {f"fixture-{path.name}": path.read_bytes() for path in sorted(HANDOFF_FIXTURES.glob("*.md"))}
    valid = handoff_log(HANDOFF_ACTIVE, HANDOFF_V2, HANDOFF_V1)
    seeds.update(
        {
            "valid.md": valid,
            "crlf.md": valid.replace(b"\n", b"\r\n"),
            "bom.md": b"\xef\xbb\xbf" + valid,
            "no-final-newline.md": valid.rstrip(b"\n"),
            "blank-line-separators.md": valid.replace(b"\n---\n\n", b"\n"),
            "header-only.md": HANDOFF_HEAD.encode(),
            "empty.md": b"",
            "hyphen-separators.md": handoff_log(
                HANDOFF_V1.replace("\u2014", "-"), HANDOFF_V1.replace("\u2014", "--")
            ),
            "mojibake-dash.md": handoff_log(HANDOFF_V1.replace("\u2014", "\u00e2\u20ac\u201d")),
            "en-dash.md": handoff_log(HANDOFF_V1.replace("\u2014", "\u2013")),
            "invalid-date.md": handoff_log(HANDOFF_V1.replace("2026-04-03", "2026-02-30")),
            "slashed-date.md": handoff_log(HANDOFF_V1.replace("2026-04-03", "2026/4/3")),
            "out-of-order.md": handoff_log(HANDOFF_V1, HANDOFF_V2),
            "same-day-untimed.md": handoff_log(HANDOFF_V1, HANDOFF_V1.replace("Hot Rod", "Mac")),
            "same-day-wrong-order.md": handoff_log(HANDOFF_V2, HANDOFF_ACTIVE),
            "zones.md": handoff_log(
                HANDOFF_V2.replace("16:45 ET", "~4:45 pm PT"), HANDOFF_V2.replace("16:45 ET", "18:00 +02:00")
            ),
            "malformed-tags.md": handoff_log(HANDOFF_V2.replace(" | **Tag-out:** 16:45 ET", "")),
            "plain-tags.md": handoff_log(HANDOFF_V2.replace("**", "")),
            "missing-tags.md": handoff_log(
                HANDOFF_V2.replace("**Tag-in:** 14:30 ET | **Tag-out:** 16:45 ET\n", "")
            ),
            "missing-pending.md": handoff_log(HANDOFF_V1.split("### What's pending", maxsplit=1)[0]),
            "empty-section.md": handoff_log(HANDOFF_V1.replace("- Built the merge driver\n", "")),
            "sections-out-of-order.md": handoff_log(
                "## 2026-04-03 \u2014 Mac\n\n### What's pending\n- [ ] a\n\n### What happened\n- b\n"
            ),
            "malformed-tasks.md": handoff_log(
                HANDOFF_V1.replace(
                    "- a plain bullet", "-[ ] a\n- [] b\n* [ ] c\n1. [ ] d\n- [ x] e\n- [link](url)"
                )
            ),
            "no-file-header.md": handoff_log(HANDOFF_V1, head="# Notes\n\n"),
            "fences-and-comments.md": handoff_log(
                HANDOFF_V1.replace(
                    "- The cache is stale", "- See:\n```\n## 2026-04-09 \u2014 fenced\n```\n<!--\n## x\n-->"
                ),
                head=HANDOFF_HEAD + "<!-- entries: ## YYYY-MM-DD \u2014 machine (branch) -->\n\n",
            ),
            "unclosed-fence.md": handoff_log(HANDOFF_V1 + "~~~\n", HANDOFF_V2),
            "standup.md": handoff_log(
                HANDOFF_ACTIVE,
                head="# Standing Standup \u2014 slopd\n\n## Scope\n\n- the daemon\n\n"
                "## Party line\n\n- Grok since 17:00\n\n" + HANDOFF_HEAD,
            ),
            "notes-block.md": handoff_log(HANDOFF_V2, HANDOFF_V1, "## Notes\n\n- archive monthly\n"),
            "invalid-utf8.md": valid.replace(b"Built the", b"Built \xff\xfe the"),
            "nul.md": valid.replace(b"Wire CI", b"Wire\0CI"),
            "surrogate-bytes.md": valid.replace(b"Wire CI", b"Wire \xed\xa0\x80 CI"),
            "line-separators.md": handoff_log(
                HANDOFF_V1.replace("- The cache", "- pasted\u2028## 2026-04-09 \u2014 x\x0c- The cache")
            ),
            "lone-cr.md": valid.replace(b"\n", b"\r"),
        }
    )
    return seeds


def main() -> None:
    for harness, seeds in (
        ("envelope", envelope_seeds()),
        ("sshsig", sshsig_seeds()),
        ("allowed_signers", allowed_signers_seeds()),
        ("handoff_lint", handoff_lint_seeds()),
    ):
        directory = CORPUS_DIR / harness
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
        for name, data in seeds.items():
            (directory / name).write_bytes(data)
        print(f"{directory.relative_to(REPO_DIR)}: {len(seeds)} seeds")


if __name__ == "__main__":
    main()
