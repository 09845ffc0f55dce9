"""In-process cost of verifying one signed order, by key type, beside the floor (cryptography's bare verify).

    .venv/bin/python bench/verify.py                  # 2,000 timed calls per figure, 5 rounds (~35 s)
    .venv/bin/python bench/verify.py --calls 500 --rounds 3
    .venv/bin/python bench/verify.py --quick          # smoke pass (tests/e2e/tools/test_bench_smoke.py)

What is timed is `slopd.core.orders.check(envelope, message, signatures, trust, now)` for one order:
dearmoring and parsing each SSHSIG sidecar, hashing the order, the signature check itself, the
allowed_signers lookup, the flags and quorum rules and the replay window. The envelope is parsed once
beforehand (parsing is not verification; bench/compare.py's e-verify times the whole daemon).
The keys are made in-process: Ed25519 by `cryptography`, security keys by the software token of
tests/authenticator.py. allowed_signers lists the four keys (alice plain, alice sk-ed25519, alice
sk-ecdsa, bob sk-ed25519) and one RSA line, which is skipped, as in a file kept for git signing.

Figures (µs per call; each one's Valid verdict is checked once before timing):
  plain          an order signed by alice's plain Ed25519 key (one sidecar)
  sk-ed25519     the same order signed by alice's sk-ssh-ed25519 token (flags 0x01)
  sk-ecdsa       the same order signed by alice's sk-ecdsa-sha2-nistp256 token (flags 0x01)
  quorum 2-of-3  an action with `quorum = 2`; the order lists three sidecars, two came (alice plain,
                 bob sk-ed25519), the third never did
  floor          the least any verifier does for the same signatures: cryptography's
                 `Ed25519PublicKey.verify` / `EllipticCurvePublicKey.verify(ECDSA(SHA256))` with
                 the key already loaded, over the exact bytes slopd verifies (for the quorum, the
                 two verifies back to back)
  key load       what loading the key from its bytes costs (`from_public_bytes`,
                 `from_encoded_point`, which checks the point is on the curve): slopd loads the key
                 of every signature it meets, the floor has it loaded once
Each round times every figure --calls times, the figures interleaved (the order rotated each round)
so the machine's noise hits them alike; the garbage collector is off inside a timed batch. Printed:
the median, p90 and min over all calls, the spread of the per-round medians, and the ratio of each
median to its floor's and to plain's. Nothing is asserted about time. Raw figures: --json FILE.
"""

from __future__ import annotations

import argparse
import base64
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from common import machine_line, percentiles, render_table, spread
from compare import ratio, source_state

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests.authenticator, the software security key

from cryptography.hazmat.primitives import hashes  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec, rsa  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: E402
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from slopd.core import allowed_signers, sshkeys, sshsig  # noqa: E402
from slopd.core.envelope import Envelope  # noqa: E402
from slopd.core.orders import Policy, Trust, check  # noqa: E402
from slopd.core.validation import parse  # noqa: E402
from slopd.core.verdicts import Valid  # noqa: E402
from slopd.core.wire import mpint, string  # noqa: E402
from tests.authenticator import Authenticator  # noqa: E402

ALICE = "alice@example.com"
BOB = "bob@example.com"
NOW = datetime(2026, 7, 4, 8, 0, tzinfo=UTC)
BODY = "Deploy build 42 to staging, then run the smoke suite and report.\n" * 4


@dataclass
class Figure:
    label: str
    call: Callable[[], object]
    floor: str  # the label of the figure it is compared with ("" for a floor itself)
    samples: list[float] = field(default_factory=list)  # µs per call, every round
    rounds: list[float] = field(default_factory=list)  # the median of each round


def order(auth: str, action: str) -> bytes:
    return (
        f"---\nprotocol: slop.v1\nid: 20260704t080000z-bench-verify\ntype: instigate\nfrom: {ALICE}\n"
        f"to: watcher\nin_reply_to: null\ncreated_at: 2026-07-04T07:59:00Z\nauth: {auth}\n"
        f"action: {action}\n---\n{BODY}"
    ).encode()


def rsa_line() -> str:
    """An RSA public key's allowed_signers line (`string "ssh-rsa", mpint e, mpint n`), to be skipped."""
    numbers = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key().public_numbers()
    blob = string(b"ssh-rsa") + mpint(numbers.e) + mpint(numbers.n)
    return f"{ALICE} ssh-rsa {base64.b64encode(blob).decode()}"


def figures() -> list[Figure]:
    plain = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    plain_key = sshkeys.ed25519(plain.public_key().public_bytes_raw())
    sk_ed = Authenticator.ed25519("bench alice")
    sk_ec = Authenticator.ecdsa("bench alice")
    bob = Authenticator.ed25519("bench bob")
    text = "\n".join(
        [
            f"{ALICE} {plain_key.line()}",
            rsa_line(),
            sk_ed.allowed_signers_line(ALICE),
            sk_ec.allowed_signers_line(ALICE),
            bob.allowed_signers_line(BOB),
        ]
    )
    signers = allowed_signers.read(text + "\n", local_zone=UTC)
    assert len(signers.skipped) == 1, signers.skipped
    trust = Trust(
        signers=signers.entries,
        namespace="slop",
        max_age=timedelta(hours=24),
        names=frozenset({"watcher"}),
        policies={"deploy": Policy(), "release": Policy(quorum=2)},
        skipped=signers.skipped,
    )
    single = order("signed:o.md.sig", "deploy")
    envelope = parse(single, name="o.md")
    quorum = order("signed:q.md.sig,q.md.bob.sig,q.md.carol.sig", "release")
    quorum_envelope = parse(quorum, name="q.md")
    plain_sig = sshsig.sign(single, plain)
    sk_ed_sig = sk_ed.sign(single)
    sk_ec_sig = sk_ec.sign(single)
    quorum_sigs: dict[str, bytes | None] = {
        "q.md.sig": sshsig.sign(quorum, plain),
        "q.md.bob.sig": bob.sign(quorum),
        "q.md.carol.sig": None,
    }

    def order_check(env: Envelope, message: bytes, sigs: dict[str, bytes | None]) -> Callable[[], object]:
        verdict = check(env, message, sigs, trust, NOW)
        if not isinstance(verdict, Valid):
            raise SystemExit(f"bench/verify.py: the order does not verify: {verdict}")
        return lambda: check(env, message, sigs, trust, NOW)

    # The floor: the same primitive over the same bytes slopd hands it, the key already loaded.
    data = sshsig.signed_data(single, "slop", "sha512")
    plain_public = plain.public_key()
    plain_raw = sshsig.parse(plain_sig).signature
    assert isinstance(sk_ed.private, Ed25519PrivateKey)
    assert isinstance(bob.private, Ed25519PrivateKey)
    assert isinstance(sk_ec.private, ec.EllipticCurvePrivateKey)
    ed_public = sk_ed.private.public_key()
    ed_data = sk_ed.signed(single)
    ed_raw = sshsig.parse(sk_ed_sig).signature
    curve = ec.SECP256R1()
    ec_public = ec.EllipticCurvePublicKey.from_encoded_point(curve, sk_ec.point)
    ec_data = sk_ec.signed(single)
    ec_der = sshsig.parse(sk_ec_sig).signature
    ecdsa = ec.ECDSA(hashes.SHA256())
    q_data = sshsig.signed_data(quorum, "slop", "sha512")
    q_plain_raw = sshsig.parse(quorum_sigs["q.md.sig"] or b"").signature
    bob_public = bob.private.public_key()
    q_bob_data = bob.signed(quorum)
    q_bob_raw = sshsig.parse(quorum_sigs["q.md.bob.sig"] or b"").signature

    def two_verifies() -> None:
        plain_public.verify(q_plain_raw, q_data)
        bob_public.verify(q_bob_raw, q_bob_data)

    return [
        Figure("floor ed25519", lambda: plain_public.verify(plain_raw, data), ""),
        Figure("floor sk-ed25519", lambda: ed_public.verify(ed_raw, ed_data), ""),
        Figure("floor sk-ecdsa", lambda: ec_public.verify(ec_der, ec_data, ecdsa), ""),
        Figure("floor 2 x ed25519", two_verifies, ""),
        Figure("key load ed25519", lambda: Ed25519PublicKey.from_public_bytes(sk_ed.point), ""),
        Figure("key load p256", lambda: ec.EllipticCurvePublicKey.from_encoded_point(curve, sk_ec.point), ""),
        Figure("plain", order_check(envelope, single, {"o.md.sig": plain_sig}), "floor ed25519"),
        Figure("sk-ed25519", order_check(envelope, single, {"o.md.sig": sk_ed_sig}), "floor sk-ed25519"),
        Figure("sk-ecdsa", order_check(envelope, single, {"o.md.sig": sk_ec_sig}), "floor sk-ecdsa"),
        Figure("quorum 2-of-3", order_check(quorum_envelope, quorum, quorum_sigs), "floor 2 x ed25519"),
    ]


def time_batch(figure: Figure, calls: int) -> list[float]:
    """µs per call for `calls` calls, the garbage collector off."""
    call, clock = figure.call, time.perf_counter_ns
    samples = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(calls):
            began = clock()
            call()
            samples.append((clock() - began) / 1000)
    finally:
        gc.enable()
    return samples


def us(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def report(measured: list[Figure]) -> list[str]:
    by_label = {figure.label: figure for figure in measured}
    plain = statistics.median(by_label["plain"].samples)
    rows = []
    for figure in measured:
        values = percentiles(figure.samples)
        floor = by_label.get(figure.floor)
        to_floor = ratio(values["median"] / statistics.median(floor.samples)) if floor else ""
        to_plain = "" if not figure.floor else ratio(values["median"] / plain)
        rows.append(
            [
                figure.label,
                us(values["median"]),
                us(values["p90"]),
                us(values["min"]),
                spread(figure.rounds, us),
                figure.floor or "-",
                to_floor,
                to_plain,
            ]
        )
    headers = ["figure", "median µs", "p90 µs", "min µs", "round medians", "floor", "/floor", "/plain"]
    lines = [render_table(headers, rows), ""]
    for figure in measured:
        if figure.floor:
            floor = by_label[figure.floor]
            per_round = [top / bottom for top, bottom in zip(figure.rounds, floor.rounds, strict=True)]
            lines.append(f"ratio {figure.label} slopd/floor: median per call {spread(per_round, ratio)}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--calls", type=int, help="timed calls per figure per round (default 2000; --quick: 50)"
    )
    parser.add_argument("--rounds", type=int, help="rounds (default 5; --quick: 1)")
    parser.add_argument("--quick", action="store_true", help="a smoke pass: few calls, one round")
    parser.add_argument("--json", help="write the raw figures here")
    args = parser.parse_args()
    calls = args.calls if args.calls is not None else (50 if args.quick else 2000)
    rounds = args.rounds if args.rounds is not None else (1 if args.quick else 5)
    if calls < 1 or rounds < 1:
        parser.error("--calls and --rounds must be at least 1")

    print(f"# machine: {machine_line()}")
    print(f"# started {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; calls={calls} rounds={rounds}; in-process")
    print(f"# slopd source: {source_state()}", flush=True)
    began = time.monotonic()
    measured = figures()
    for figure in measured:  # warm-up: first-use imports, caches
        time_batch(figure, min(calls, 20))
    for index in range(rounds):
        shift = index % len(measured)
        for figure in measured[shift:] + measured[:shift]:
            samples = time_batch(figure, calls)
            figure.samples += samples
            figure.rounds.append(statistics.median(samples))
    print()
    print("\n".join(report(measured)))
    print(f"# total {time.monotonic() - began:.1f} s", flush=True)
    if args.json:
        raw: dict[str, Any] = {
            "settings": {"calls": calls, "rounds": rounds},
            "machine": machine_line(),
            "figures": {
                figure.label: {
                    "floor": figure.floor,
                    "median_us": statistics.median(figure.samples),
                    "round_medians_us": figure.rounds,
                }
                for figure in measured
            },
        }
        Path(args.json).write_text(json.dumps(raw, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
