"""FIDO security keys (SPEC §6, "The keys humans already have"): sk-ed25519 and sk-ecdsa signatures.

The keys are software tokens (`tests.authenticator`), proved right against the real `ssh-keygen
-Y verify` and against OpenSSH's own test vectors (tests/fixtures/openssh-sshsig/). Then, black-box,
the daemon: the touch flag, `allow_no_touch`, `require = "touch" | "verified"`, and an
allowed_signers file that also holds an RSA key.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

import pytest

from slopd.core import allowed_signers, passkeys, sshkeys, sshsig
from slopd.core.sshkeys import SK_ECDSA, SK_ED25519, PublicKey
from slopd.core.sshsig import Rejected, Verified
from slopd.core.wire import Reader, mpint, string
from tests import ROOT
from tests.authenticator import USER_PRESENT, USER_VERIFIED, Authenticator
from tests.conftest import SLOPD, HubDir, toml_argv, toml_string
from tests.e2e.signing.test_orders import (
    ACTION,
    ALICE,
    BODY,
    SSH_KEYGEN,
    WATCHER,
    answers,
    new_hub,
    order_fields,
    render,
    run,
    ssh_keygen_key,
)

FIXTURES = ROOT / "tests" / "fixtures" / "openssh-sshsig"
MESSAGE = b"---\nprotocol: slop.v1\nid: o1\n---\nDeploy build 42.\n"
NAMESPACE = "slop"
TOKENS = {SK_ED25519: Authenticator.ed25519(), SK_ECDSA: Authenticator.ecdsa()}
TYPES = pytest.mark.parametrize("key_type", [SK_ED25519, SK_ECDSA], ids=["sk-ed25519", "sk-ecdsa"])
# The order of P-256's base point: an ECDSA `s` equal to it is out of range.
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def keygen(*args: str, cwd: Path, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """Run the real ssh-keygen in `cwd` with stdin bytes; never raises on a non-zero exit."""
    return subprocess.run(
        [SSH_KEYGEN, *args], input=stdin, capture_output=True, cwd=cwd, timeout=30, check=False
    )


def resealed(token: Authenticator, *, signed: tuple[int, int], claimed: tuple[int, int]) -> bytes:
    """A signature over (flags, counter) = `signed` whose blob claims `claimed` instead."""
    data = token.signed(MESSAGE, flags=signed[0], counter=signed[1])
    blob = token.signature_blob(MESSAGE, flags=claimed[0], counter=claimed[1], raw=token.raw_signature(data))
    return sshsig.assemble(token.public_key, NAMESPACE, "sha512", blob)


def other_application_key(token: Authenticator) -> PublicKey:
    return sshkeys.security_key(token.key_type, token.point, "ssh:other")


# Each: (the message to check, the signature file) for a signature that is not over that message.
CHANGES: dict[str, Callable[[Authenticator], tuple[bytes, bytes]]] = {
    "message": lambda token: (MESSAGE + b"x", token.sign(MESSAGE)),
    "flags": lambda token: (MESSAGE, resealed(token, signed=(0x01, 7), claimed=(0x05, 7))),
    "flags-no-touch": lambda token: (MESSAGE, resealed(token, signed=(0x00, 7), claimed=(0x01, 7))),
    "counter": lambda token: (MESSAGE, resealed(token, signed=(0x01, 7), claimed=(0x01, 8))),
    "signed-for-another-application": lambda token: (MESSAGE, token.sign(MESSAGE, application="ssh:other")),
    "key-of-another-application": lambda token: (
        MESSAGE,
        token.sign(MESSAGE, public_key=other_application_key(token)),
    ),
}


def key_field(key: Path) -> str:
    """`TYPE BASE64` of the key's `.pub` file (its comment left off)."""
    return " ".join(Path(f"{key}.pub").read_text().split()[:2])


def key_in(armored: bytes) -> PublicKey:
    return sshsig.parse(armored).public_key


# -- the software token, in slopd ------------------------------------------------------------


@TYPES
@pytest.mark.parametrize(("flags", "counter"), [(0x01, 7), (0x05, 0), (0x00, 2**32 - 1), (0xFF, 1)])
def test_a_security_key_signature_verifies_and_reports_its_flags_and_counter(
    key_type: str, flags: int, counter: int
) -> None:
    """Both sk types verify, with the key, flags and counter the signature carries (sha512 and sha256)."""
    token = TOKENS[key_type]
    for algorithm in ("sha512", "sha256"):
        signature = token.sign(MESSAGE, flags=flags, counter=counter, hash_algorithm=algorithm)
        assert sshsig.verify(MESSAGE, signature) == Verified(token.public_key, flags, counter)
        assert token.public_key.security_key
        assert token.public_key.application == "ssh:"


@TYPES
@pytest.mark.parametrize("change", list(CHANGES))
def test_a_changed_message_flags_counter_or_application_is_a_bad_signature(
    key_type: str, change: str
) -> None:
    """A signature over other data, flags, counter or application than the file claims is "bad signature"."""
    message, signature = CHANGES[change](TOKENS[key_type])
    assert sshsig.verify(message, signature) == Rejected("bad signature")


def ecdsa_with(r: bytes, s: bytes, tail: bytes = b"") -> bytes:
    """An sk-ecdsa signature file whose inner signature is `string(r) ‖ string(s) ‖ tail` as given."""
    token = TOKENS[SK_ECDSA]
    blob = token.signature_blob(MESSAGE, raw=string(r) + string(s) + tail)
    return sshsig.assemble(token.public_key, NAMESPACE, "sha512", blob)


def real_rs() -> tuple[int, int]:
    token = TOKENS[SK_ECDSA]
    raw = token.raw_signature(token.signed(MESSAGE))
    inner = Reader(raw, "signature")
    return inner.mpint("r"), inner.mpint("s")


def canonical(value: int) -> bytes:
    return mpint(value)[4:]


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        pytest.param(lambda r, s: ecdsa_with(canonical(r), canonical(s)), None, id="the-real-one-verifies"),
        pytest.param(
            lambda r, s: ecdsa_with(b"\0" + canonical(r), canonical(s)),
            "malformed signature: r has a needless leading zero",
            id="r-leading-zero",
        ),
        pytest.param(
            lambda r, s: ecdsa_with(canonical(r), b"\0" + canonical(s)),
            "malformed signature: s has a needless leading zero",
            id="s-leading-zero",
        ),
        pytest.param(
            lambda r, s: ecdsa_with(b"\x80" + canonical(r), canonical(s)),
            "malformed signature: negative r",
            id="r-negative",
        ),
        pytest.param(
            lambda r, s: ecdsa_with(canonical(r), canonical(s), tail=mpint(1)),
            "malformed signature: trailing data in ECDSA signature",
            id="a-third-mpint",
        ),
        pytest.param(lambda r, s: ecdsa_with(canonical(r), b""), "bad signature", id="s-zero"),
        pytest.param(
            lambda r, s: ecdsa_with(canonical(r), canonical(s + P256_ORDER)),
            "bad signature",
            id="s-plus-the-order",
        ),
        pytest.param(
            lambda r, s: ecdsa_with(canonical(r), canonical(P256_ORDER)), "bad signature", id="s-the-order"
        ),
    ],
)
def test_an_sk_ecdsa_signature_with_a_bad_integer_is_rejected_without_raising(
    make: Callable[[int, int], bytes], reason: str | None
) -> None:
    """`r` and `s` must be canonical mpints (no needless zero, not negative, nothing after) and in range."""
    verdict = sshsig.verify(MESSAGE, make(*real_rs()))
    if reason is None:
        assert isinstance(verdict, Verified)
    else:
        assert verdict == Rejected(reason)


@pytest.mark.parametrize(
    "point",
    [
        pytest.param(lambda good: good[:-1] + bytes([good[-1] ^ 1]), id="y-off-by-one-bit"),
        pytest.param(lambda good: b"\x04" + bytes(64), id="all-zero"),
        pytest.param(lambda good: b"\x04" + b"\xff" * 64, id="coordinates-beyond-the-field"),
    ],
)
def test_an_sk_ecdsa_key_whose_point_is_not_on_the_curve_is_rejected_without_raising(
    point: Callable[[bytes], bytes],
) -> None:
    """A well-formed sk-ecdsa key with a point off P-256 parses, and its signature is "bad signature"."""
    token = TOKENS[SK_ECDSA]
    off_curve = sshkeys.security_key(SK_ECDSA, point(token.point))
    signature = token.sign(MESSAGE, public_key=off_curve)
    assert key_in(signature) == off_curve
    assert sshsig.verify(MESSAGE, signature) == Rejected("bad signature")


# -- the software token, in ssh-keygen (the fixture is right) ----------------------------------

DETAILS = re.compile(r"signature details: counter = (\d+), flags = 0x([0-9a-f]{2})")


def keygen_verify_vv(
    directory: Path, signature: bytes, key: PublicKey, message: bytes = MESSAGE
) -> tuple[int, str]:
    """`ssh-keygen -Y verify -vv -f allowed_signers -I alice -n slop -s FILE.sig < FILE`: exit and stderr."""
    (directory / "allowed_signers").write_text(f"{ALICE} {key.line()}\n")
    (directory / "FILE").write_bytes(message)
    (directory / "FILE.sig").write_bytes(signature)
    result = keygen(
        "-Y", "verify", "-vv", "-f", "allowed_signers", "-I", ALICE, "-n", NAMESPACE, "-s", "FILE.sig",
        cwd=directory, stdin=message,
    )  # fmt: skip
    assert result.returncode in (0, 255), result.stderr
    return result.returncode, result.stderr.decode()


@TYPES
@pytest.mark.parametrize(("flags", "counter"), [(0x01, 7), (0x05, 123456), (0x00, 0)])
def test_ssh_keygen_accepts_the_tokens_signature_and_reads_the_same_flags_and_counter(
    key_type: str, flags: int, counter: int, tmp_path: Path
) -> None:
    """`ssh-keygen -Y verify -vv` accepts it and prints the counter and flags slopd's `Verified` reports."""
    token = TOKENS[key_type]
    signature = token.sign(MESSAGE, flags=flags, counter=counter)
    code, stderr = keygen_verify_vv(tmp_path, signature, token.public_key)
    assert code == 0, stderr
    verdict = sshsig.verify(MESSAGE, signature)
    assert isinstance(verdict, Verified)
    assert DETAILS.findall(stderr) == [(str(verdict.counter), f"{verdict.flags:02x}")]
    assert (verdict.flags, verdict.counter) == (flags, counter)


@TYPES
@pytest.mark.parametrize("change", list(CHANGES))
def test_ssh_keygen_refuses_the_tokens_signature_once_data_flags_counter_or_application_change(
    key_type: str, change: str, tmp_path: Path
) -> None:
    """Every change slopd calls a bad signature, ssh-keygen refuses too (exit 255, no signature details)."""
    message, signature = CHANGES[change](TOKENS[key_type])
    code, stderr = keygen_verify_vv(tmp_path, signature, key_in(signature), message)
    assert code == 255, stderr
    assert not DETAILS.search(stderr)


# -- OpenSSH's own vectors (regress/unittests/sshsig/testdata) ---------------------------------

VECTOR_MESSAGE = (FIXTURES / "signed-data").read_bytes()
VECTOR_NAMESPACE = (FIXTURES / "namespace").read_text().strip()
VECTORS = ("ed25519", "ed25519_sk", "ecdsa_sk", "ecdsa_sk_webauthn")
FOREIGN = {"rsa": "ssh-rsa", "ecdsa": "ecdsa-sha2-nistp256"}


def vector_key(name: str) -> PublicKey:
    key_type, encoded = (FIXTURES / f"{name}.pub").read_text().split()[:2]
    return sshkeys.from_fields(key_type, encoded)


@pytest.mark.parametrize("name", VECTORS)
def test_slopd_verifies_openssh_own_signature_vectors(name: str, tmp_path: Path) -> None:
    """The ed25519, ed25519_sk, ecdsa_sk and webauthn vectors verify, by the key in X.pub, with
    ssh-keygen's flags (the webauthn one with its origin)."""
    signature = (FIXTURES / f"{name}.sig").read_bytes()
    verdict = sshsig.verify(VECTOR_MESSAGE, signature, namespace=VECTOR_NAMESPACE)
    assert isinstance(verdict, Verified), verdict
    assert verdict.public_key == vector_key(name)
    assert verdict.origin == ("https://www.mindrot.org" if name == "ecdsa_sk_webauthn" else None)
    changed = sshsig.verify(VECTOR_MESSAGE + b"\n", signature, namespace=VECTOR_NAMESPACE)
    assert isinstance(changed, Rejected)
    assert changed.reason.startswith(
        "webauthn: the challenge is not" if name == "ecdsa_sk_webauthn" else "bad signature"
    )
    (tmp_path / "allowed_signers").write_text(f"{ALICE} {vector_key(name).line()}\n")
    result = keygen(
        "-Y", "verify", "-vv", "-f", "allowed_signers", "-I", ALICE, "-n", VECTOR_NAMESPACE,
        "-s", str(FIXTURES / f"{name}.sig"), cwd=tmp_path, stdin=VECTOR_MESSAGE,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    details = DETAILS.findall(result.stderr.decode())
    if verdict.public_key.security_key:
        assert details == [(str(verdict.counter), f"{verdict.flags:02x}")]
    else:
        assert (details, verdict.flags, verdict.counter) == ([], None, None)


@pytest.mark.parametrize("name", list(FOREIGN))
def test_slopd_rejects_openssh_rsa_and_ecdsa_vectors_as_not_accepted_for_orders(name: str) -> None:
    """OpenSSH's rsa and ecdsa vectors are well formed, but of a key type slopd does not take."""
    signature = (FIXTURES / f"{name}.sig").read_bytes()
    verdict = sshsig.verify(VECTOR_MESSAGE, signature, namespace=VECTOR_NAMESPACE)
    assert verdict == Rejected(f"key type '{FOREIGN[name]}' is not accepted for orders")


@pytest.fixture(scope="module")
def vector_signers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An allowed_signers file with every vector's key, one principal each, the RSA and ECDSA ones too."""
    lines = [f"{name}@unittest {key_field(FIXTURES / name)}" for name in (*VECTORS, *FOREIGN)]
    path = tmp_path_factory.mktemp("vectors") / "allowed_signers"
    path.write_text("\n".join(lines) + "\n")
    return path


def slopd_verify(allowed: Path, name: str) -> subprocess.CompletedProcess[str]:
    """`slopd verify --allowed-signers F --namespace unittest --signature NAME.sig signed-data`."""
    return subprocess.run(
        [*SLOPD, "verify", "--allowed-signers", str(allowed), "--namespace", VECTOR_NAMESPACE,
         "--signature", f"{name}.sig", "signed-data"],
        cwd=FIXTURES, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


VECTOR_DETAILS = {
    "ed25519": "",
    "ed25519_sk": ", flags 0x01 (user present), counter 305419896",
    "ecdsa_sk": ", flags 0x01 (user present), counter 305419896",
    "ecdsa_sk_webauthn": ", flags 0x01 (user present), counter 799, passkey at https://www.mindrot.org",
}


@pytest.mark.parametrize("name", VECTORS)
def test_slopd_verify_accepts_openssh_vectors_and_prints_flags_and_counter(
    vector_signers: Path, name: str
) -> None:
    """`slopd verify` exits 0 for each vector, naming its principal, key, line and a security key's flags."""
    result = slopd_verify(vector_signers, name)
    assert result.returncode == 0, result.stdout + result.stderr
    key = vector_key(name)
    fingerprint = run(SSH_KEYGEN, "-l", "-f", str(FIXTURES / f"{name}.pub")).stdout.decode().split()[1]
    assert fingerprint == key.fingerprint
    line = VECTORS.index(name) + 1
    where = f"{key.type} {fingerprint}, allowed_signers line {line}{VECTOR_DETAILS[name]}"
    assert result.stdout == f"signed-data: good signature by {name}@unittest ({where})\n"


def test_slopd_verify_refuses_openssh_rsa_vector(vector_signers: Path) -> None:
    """`slopd verify` exits 1 for the RSA vector, though its key is listed: the type is not accepted."""
    result = slopd_verify(vector_signers, "rsa")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout == (
        "signed-data: not verified: signature rsa.sig: key type 'ssh-rsa' is not accepted for orders\n"
    )


# -- the daemon, black-box ---------------------------------------------------------------------


@dataclass(frozen=True)
class Signers:
    """Alice's keys: a plain file key and an RSA key (both by ssh-keygen), and two software tokens."""

    plain: Path
    rsa: Path
    sk_ed25519: Authenticator
    sk_ecdsa: Authenticator
    passkey: Authenticator

    def allowed_signers(self) -> str:
        """Line 2 the plain key, 3 the RSA key (skipped), 4 and 5 the tokens, 6 the passkey."""
        lines = [
            "# alice's keys, as kept for git signing too",
            f"{ALICE} {key_field(self.plain)}",
            f"{ALICE} {key_field(self.rsa)}",
            self.sk_ed25519.allowed_signers_line(ALICE),
            self.sk_ecdsa.allowed_signers_line(ALICE),
            passkeys.key_line(ALICE, self.passkey.point, "localhost"),
        ]
        return "\n".join(lines) + "\n"


LINES = {"plain": 2, "sk_ed25519": 4, "sk_ecdsa": 5, "passkey": 6}


@pytest.fixture(scope="module")
def signers(tmp_path_factory: pytest.TempPathFactory) -> Signers:
    directory = tmp_path_factory.mktemp("signers")
    rsa = directory / "rsa"
    made = run(SSH_KEYGEN, "-t", "rsa", "-b", "2048", "-N", "", "-C", ALICE, "-f", str(rsa), "-q")
    assert made.returncode == 0, made.stderr
    return Signers(
        plain=ssh_keygen_key(directory, "plain", ALICE).path,
        rsa=rsa,
        sk_ed25519=Authenticator.ed25519("alice's token"),
        sk_ecdsa=Authenticator.ecdsa("alice's other token"),
        passkey=Authenticator.ecdsa("alice's passkey", application="localhost"),
    )


@dataclass(frozen=True)
class Order:
    """One order of a batch: who signs it (a token with `flags`, or an ssh-keygen key), for which action."""

    slug: str
    signer: str  # "sk_ed25519", "sk_ecdsa", "passkey", "plain" or "rsa"
    action: str = "deploy"
    flags: int = USER_PRESENT
    refused: str | None = None  # the reason in the error reply, or None: it runs

    @property
    def ident(self) -> str:
        return f"20260704t100000z-{self.slug}"


def sign(order: Order, signers: Signers, data: bytes, stage: Path) -> bytes:
    token = getattr(signers, order.signer)
    if order.signer == "passkey":
        origin = "http://localhost:8787"
        return signers.passkey.passkey_sign(data, origin=origin, flags=order.flags, counter=42)
    if isinstance(token, Authenticator):
        return token.sign(data, flags=order.flags, counter=42)
    path = stage / f"{order.slug}.md"
    path.write_bytes(data)
    signed = run(SSH_KEYGEN, "-Y", "sign", "-f", str(token), "-n", NAMESPACE, str(path))
    assert signed.returncode == 0, signed.stderr
    return Path(f"{path}.sig").read_bytes()


@dataclass
class Batch:
    """A hub whose actions record what ran, after one `slopd run --once` over `orders`."""

    hub: HubDir
    journal: Path
    orders: tuple[Order, ...]

    def runs(self) -> list[str]:
        return self.journal.read_text().split() if self.journal.exists() else []


def run_batch(tmp: Path, signers: Signers, orders: tuple[Order, ...], *, allow_no_touch: bool) -> Batch:
    """`deploy` (no requirement), `guarded` (require touch), `vault` (require verified), one run."""
    hub = new_hub(tmp)
    allowed = tmp / "trust" / "allowed_signers"
    allowed.parent.mkdir()
    allowed.write_text(signers.allowed_signers())
    script, journal, stage = tmp / "action.py", tmp / "journal", tmp / "stage"
    script.write_text(ACTION)
    stage.mkdir()
    command = toml_argv([sys.executable, str(script), str(journal), str(tmp / "records")])
    requirements = {"deploy": "", "guarded": 'require = "touch"\n', "vault": 'require = "verified"\n'}
    hub.write_config(
        f'names = ["watcher", "{WATCHER}"]\nsettle = 0.1\n'
        f"[auth]\nallowed_signers = {toml_string(allowed)}\n"
        + ("allow_no_touch = true\n" if allow_no_touch else "")
        + "".join(f"[actions.{name}]\ncommand = {command}\n{extra}" for name, extra in requirements.items())
    )
    for order in orders:
        name = f"{order.slug}.md"
        data = render(order_fields(order.ident, name, action=order.action), BODY)
        hub.drop(f"{name}.sig", sign(order, signers, data, stage), lane="authorized")
        hub.drop(name, data, lane="authorized")
    hub.run_once()
    return Batch(hub, journal, orders)


NO_TOUCH = "a security-key signature made without a touch (user presence)"
NEEDS_SK = "signed with a key file; action 'guarded' requires a security key (require = 'touch')"
NEEDS_UV = "the security key did not verify its user (PIN or biometric); action 'vault' requires it"
STRICT = (
    Order("sk-ed25519-touched", "sk_ed25519"),
    Order("sk-ecdsa-touched", "sk_ecdsa"),
    Order("sk-ed25519-untouched", "sk_ed25519", flags=0x00, refused=NO_TOUCH),
    Order("sk-ecdsa-verified-untouched", "sk_ecdsa", flags=USER_VERIFIED, refused=NO_TOUCH),
    Order("plain-beside-an-rsa-line", "plain"),
    Order("rsa", "rsa", refused="key type 'ssh-rsa' is not accepted for orders"),
    Order("guarded-plain", "plain", action="guarded", refused=NEEDS_SK),
    Order("guarded-sk", "sk_ed25519", action="guarded"),
    Order("vault-present-only", "sk_ecdsa", action="vault", refused=NEEDS_UV),
    Order("vault-verified", "sk_ecdsa", action="vault", flags=USER_PRESENT | USER_VERIFIED),
    Order("vault-verified-ed25519", "sk_ed25519", action="vault", flags=USER_PRESENT | USER_VERIFIED),
    Order("passkey-touched", "passkey"),
    Order("passkey-untouched", "passkey", flags=0x00, refused=NO_TOUCH),
    Order("passkey-guarded", "passkey", action="guarded"),
    Order("passkey-vault-present-only", "passkey", action="vault", refused=NEEDS_UV),
    Order("passkey-vault-verified", "passkey", action="vault", flags=USER_PRESENT | USER_VERIFIED),
)
LENIENT = (
    Order("lenient-sk-ed25519-untouched", "sk_ed25519", flags=0x00),
    Order("lenient-sk-ecdsa-untouched", "sk_ecdsa", flags=0x00),
    Order("lenient-plain", "plain"),
    Order("lenient-rsa", "rsa", refused="key type 'ssh-rsa' is not accepted for orders"),
)


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory, signers: Signers) -> Batch:
    return run_batch(tmp_path_factory.mktemp("strict"), signers, STRICT, allow_no_touch=False)


@pytest.fixture(scope="module")
def lenient(tmp_path_factory: pytest.TempPathFactory, signers: Signers) -> Batch:
    return run_batch(tmp_path_factory.mktemp("lenient"), signers, LENIENT, allow_no_touch=True)


def check_outcome(batch: Batch, order: Order, signers: Signers) -> None:
    replies = answers(batch.hub, order.ident)
    if order.refused is None:
        assert sorted(replies) == [f"{order.ident}.ack.md", f"{order.ident}.result.md"], replies
        assert batch.runs().count(order.ident) == 1
        (verified,) = batch.hub.events("order.verified", id=order.ident)
        token = getattr(signers, order.signer)
        if isinstance(token, Authenticator):
            assert verified["key"] == token.public_key.fingerprint
            assert verified["flags"] == order.flags
        if order.signer == "passkey":
            assert verified["origin"] == "http://localhost:8787"
        assert (verified["principal"], verified["line"]) == (ALICE, LINES[order.signer])
        return
    assert list(replies) == [f"{order.ident}.error.md"], replies
    headers, text = replies[f"{order.ident}.error.md"]
    assert (headers["type"], headers["to"]) == ("error", ALICE)
    assert order.refused in text, text
    assert "nothing was run" in text
    assert order.ident not in batch.runs()
    assert not batch.hub.events("order.verified", id=order.ident)


@pytest.mark.parametrize("order", STRICT, ids=[order.slug for order in STRICT])
def test_the_daemon_runs_or_refuses_each_security_key_order_by_its_flags_and_action(
    strict: Batch, signers: Signers, order: Order
) -> None:
    """Touched sk orders run; untouched ones, key files for `require`d actions, UP only for `verified`
    and RSA are refused with an error naming why, and run nothing."""
    check_outcome(strict, order, signers)


@pytest.mark.parametrize("order", LENIENT, ids=[order.slug for order in LENIENT])
def test_with_allow_no_touch_an_untouched_security_key_order_runs(
    lenient: Batch, signers: Signers, order: Order
) -> None:
    """`[auth] allow_no_touch = true`: sk signatures without the touch flag count; RSA still does not."""
    check_outcome(lenient, order, signers)


def test_an_rsa_line_in_allowed_signers_is_skipped_with_a_warning_not_a_refusal(strict: Batch) -> None:
    """The daemon started with the RSA line, logged `allowed_signers.skipped` for line 3, and ran orders."""
    (skipped,) = strict.hub.events("allowed_signers.skipped")
    assert skipped["line"] == 3
    assert skipped["level"] == "warning"
    assert "key type 'ssh-rsa' is not accepted for orders" in skipped["reason"]
    assert "20260704t100000z-plain-beside-an-rsa-line" in strict.runs()
    assert sorted(strict.runs()) == sorted(order.ident for order in STRICT if order.refused is None)


# -- found on the way: a principal that merely starts like a key type (fixed in c2e03d0) ---------


@pytest.mark.parametrize("principal", ["ssh-deploy@example.com", "sk-team@example.com"])
def test_ssh_keygen_takes_a_principal_that_starts_like_a_key_type(principal: str, tmp_path: Path) -> None:
    """`ssh-deploy@example.com KEY` is an ordinary allowed_signers line to ssh-keygen: it verifies."""
    token = TOKENS[SK_ED25519]
    (tmp_path / "allowed_signers").write_text(token.allowed_signers_line(principal) + "\n")
    (tmp_path / "FILE.sig").write_bytes(token.sign(MESSAGE))
    result = keygen(
        "-Y", "verify", "-f", "allowed_signers", "-I", principal, "-n", NAMESPACE, "-s", "FILE.sig",
        cwd=tmp_path, stdin=MESSAGE,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"signature for {principal} with ED25519-SK key" in result.stdout.decode()


@pytest.mark.parametrize("principal", ["ssh-deploy@example.com", "sk-team@example.com"])
def test_slopd_takes_a_principal_that_starts_like_a_key_type(principal: str) -> None:
    """The same line is that principal's entry for slopd too, as ssh-keygen reads it."""
    token = TOKENS[SK_ED25519]
    entries = allowed_signers.parse(token.allowed_signers_line(principal) + "\n", local_zone=UTC)
    assert [(entry.principals, entry.public_key) for entry in entries] == [(principal, token.public_key)]


# -- a console-made (passkey) signature, checked by hand -----------------------------------------


def test_slopd_verify_names_the_principal_and_flags_of_a_passkey_signed_order(tmp_path: Path) -> None:
    """`slopd verify ORDER.md` on an order and the `.sig` the console writes names the principal, the
    key, its line, the flags in words, the counter and the page it was approved at."""
    passkey = Authenticator.ecdsa("bob's phone", application="localhost")
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(passkeys.key_line(ALICE, passkey.point, "localhost") + "\n")
    data = render(order_fields("20260704t100000z-phone", "phone.md"), BODY)
    (tmp_path / "phone.md").write_bytes(data)
    (tmp_path / "phone.md.sig").write_bytes(
        passkey.passkey_sign(
            data, origin="http://localhost:8787", flags=USER_PRESENT | USER_VERIFIED, counter=0
        )
    )
    result = subprocess.run(
        [*SLOPD, "verify", "--allowed-signers", str(allowed), "phone.md"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == (
        f"phone.md: good signature by {ALICE} ({passkey.public_key.fingerprint}, allowed_signers line 1, "
        "flags 0x05 (user present, user verified), counter 0, passkey at http://localhost:8787)\n"
    )
    (tmp_path / "phone.md").write_bytes(data.replace(b"42", b"43"))
    tampered = subprocess.run(
        [*SLOPD, "verify", "--allowed-signers", str(allowed), "phone.md"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert tampered.returncode == 1
    assert "not verified: signature phone.md.sig: webauthn: the challenge is not this file's signed data" in (
        tampered.stdout
    )
