"""Two-person approval, black-box (SPEC §6 "Quorum"): real keys, real signatures, the real daemon.

alice, bob and carol are trusted operators with keys made by `ssh-keygen -t ed25519`; dave's key
is in no allowed_signers line. An order lists every signature it needs in `auth:
signed:NAME.md.sig,NAME.md.bob.sig`; each co-signer signs the very same `NAME.md` bytes (with
`ssh-keygen -Y sign`, renamed, or `slopd sign --out`). The `deploy` action (tests.e2e.signing.test_orders'
journaling script) demands `quorum = 2` unless a test says otherwise, so every test can prove
what ran and how many times.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import SLOPD, HubDir, RunningDaemon, body_of
from tests.e2e.signing.test_orders import (
    ALICE,
    EVENT_DEADLINE,
    INTERRUPTED,
    Key,
    Keys,
    Lab,
    answers,
    ledger,
    order_fields,
    render,
    reply_exists,
    run,
    snapshot,
    ssh_keygen_key,
    status_json,
)
from tests.polling import until

BOB = "bob@example.com"
CAROL = "carol@example.com"
BODY = "Deploy build 42 to production.\n"
GRACE = 0.5  # seconds: sig_grace where a test waits it out


class Humans(Keys):
    """Three trusted humans (alice, bob, carol, each under their own principal); dave is unknown."""

    def allowed_signers(self) -> str:
        return "# the operators\n" + "".join(
            f"{key.principal} {key.public}\n" for key in (self.alice, self.bob, self.carol)
        )


@pytest.fixture(scope="module")
def humans(tmp_path_factory: pytest.TempPathFactory) -> Humans:
    directory = tmp_path_factory.mktemp("humans")
    return Humans(
        alice=ssh_keygen_key(directory, "alice", ALICE),
        bob=ssh_keygen_key(directory, "bob", BOB),
        carol=ssh_keygen_key(directory, "carol", CAROL),
        dave=ssh_keygen_key(directory, "dave", "dave@example.com"),
    )


@dataclass
class QuorumLab(Lab):
    """tests.e2e.signing.test_orders' Lab whose `deploy` action demands `quorum` distinct signers."""

    def configure(
        self,
        *,
        sig_grace: float = 2,
        max_age: float = 3600,
        allowed: Path | None = None,
        quorum: int = 2,
    ) -> None:
        super().configure(sig_grace=sig_grace, max_age=max_age, allowed=allowed)
        with self.hub.config.open("a", encoding="utf-8") as config:  # [actions.deploy] is the last table
            config.write(f"quorum = {quorum}\n")

    def cosign(self, name: str, data: bytes, key: Key, how: str = "ssh-keygen") -> bytes:
        """A signature of `data` (a file called `name`, outside the hub) by `key`: `ssh-keygen -Y
        sign` (its `NAME.sig`, to be renamed) or `slopd sign --out NAME.WHO.sig`."""
        if how == "ssh-keygen":
            return self.sign(name, data, key)
        path = self.stage_order(name, data)
        out = path.with_name(f"{name}.{key.path.name}.sig")
        signed = run(*SLOPD, "sign", "--key", str(key.path), "--out", str(out), str(path))
        assert signed.returncode == 0, signed.stderr
        assert not Path(f"{path}.sig").exists()  # --out, not the default NAME.sig
        return out.read_bytes()

    def drop_order(self, name: str, data: bytes, signatures: dict[str, bytes]) -> None:
        """The signatures (by sidecar name), then the order, into `authorized/`."""
        for sidecar, signature in signatures.items():
            self.hub.drop(sidecar, signature, lane="authorized")
        self.hub.drop(name, data, lane="authorized")


@pytest.fixture(name="lab")
def fixture_lab(hub: HubDir, tmp_path: Path, humans: Humans) -> Iterator[QuorumLab]:
    made = QuorumLab(hub, tmp_path, humans)
    made.configure()
    yield made
    made.kill_leftover_actions()


def two_person_order(ident: str, name: str = "o1.md", body: str = BODY, **overrides: str | None) -> bytes:
    """alice's order naming her signature and bob's."""
    return render(order_fields(ident, name, auth=f"signed:{name}.sig,{name}.bob.sig", **overrides), body)


def refusal(lab: Lab, ident: str) -> str:
    """The one reply to `ident`, which must be its error; its body."""
    assert list(answers(lab.hub, ident)) == [f"{ident}.error.md"]
    return body_of(lab.hub.reply(ident, "error"))


# -- runs -------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["ssh-keygen", "slopd-sign"])
def test_an_order_signed_by_two_of_three_humans_runs_once(lab: QuorumLab, how: str) -> None:
    """alice's order signed by alice and bob (quorum 2): ack, result, the action ran once, all archived."""
    ident, name = "20260704t120000z-two-of-three", "o1.md"
    data = two_person_order(ident, name)
    lab.drop_order(
        name,
        data,
        {f"{name}.sig": lab.sign(name, data), f"{name}.bob.sig": lab.cosign(name, data, lab.keys.bob, how)},
    )

    lab.hub.run_once()

    assert lab.runs() == [ident]
    assert lab.record(ident)["stdin"]["auth"] == f"signed:{name}.sig,{name}.bob.sig"
    assert sorted(answers(lab.hub, ident)) == [f"{ident}.ack.md", f"{ident}.result.md"]
    assert body_of(lab.hub.reply(ident, "result")) == f"deployed {ident}\n"
    assert lab.hub.lane("authorized") == []
    assert lab.hub.archived() == [name, f"{name}.bob.sig", f"{name}.sig"]
    (day,) = {path.parent.name for path in (lab.hub.root / "archive").glob("*/*")}  # together
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", day)
    (verified,) = lab.hub.events("order.verified", id=ident)
    assert verified["principal"] == ALICE
    assert ledger(lab.hub, "SELECT decision, status FROM inputs WHERE id = ?", ident) == [
        ("execute:action:deploy", "done")
    ]


def test_a_third_signature_by_an_unknown_key_does_not_spoil_a_met_quorum(lab: QuorumLab) -> None:
    """alice and bob signed, dave (unknown) too: the unknown signature is not counted, the order runs."""
    ident, name = "20260704t120500z-extra", "o1.md"
    data = render(order_fields(ident, name, auth=f"signed:{name}.sig,{name}.bob.sig,{name}.dave.sig"), BODY)
    lab.drop_order(
        name,
        data,
        {
            f"{name}.sig": lab.sign(name, data),
            f"{name}.bob.sig": lab.sign(name, data, lab.keys.bob),
            f"{name}.dave.sig": lab.sign(name, data, lab.keys.dave),
        },
    )

    lab.hub.run_once()

    assert lab.runs() == [ident]
    assert sorted(answers(lab.hub, ident)) == [f"{ident}.ack.md", f"{ident}.result.md"]
    assert lab.hub.archived() == [name, f"{name}.bob.sig", f"{name}.dave.sig", f"{name}.sig"]


# -- refusals ---------------------------------------------------------------------------------


def test_an_order_whose_cosignature_never_comes_is_refused_after_the_grace(lab: QuorumLab) -> None:
    """Only alice signed (bob's listed sidecar never comes, sig_grace 0.5): held, then refused naming alice
    and what is missing; nothing ran; the order and alice's signature are archived."""
    lab.configure(sig_grace=GRACE)
    ident, name = "20260704t121000z-alone", "o1.md"
    data = two_person_order(ident, name)
    lab.drop_order(name, data, {f"{name}.sig": lab.sign(name, data)})

    started = time.monotonic()
    lab.hub.run_once()

    assert time.monotonic() - started >= GRACE  # it waited out the grace for bob's signature
    text = refusal(lab, ident)
    assert (
        f"quorum not met: 1 of the 2 humans needed signed ({ALICE}); missing 1 more distinct signer" in text
    )
    assert f"not counted: {name}.bob.sig: never arrived" in text
    assert "nothing was run" in text
    assert lab.runs() == []
    events = [record["event"] for record in lab.hub.log_records() if record.get("id") == ident]
    assert events.index("envelope.held") < events.index("order.rejected")
    assert lab.hub.lane("authorized") == []
    assert lab.hub.archived() == [name, f"{name}.sig"]


def test_a_cosignature_arriving_after_the_refusal_revives_nothing(lab: QuorumLab) -> None:
    """bob's signature landing after the order was refused: archived quietly, no reply, nothing runs."""
    lab.configure(sig_grace=GRACE)
    ident, name = "20260704t121500z-too-late", "o1.md"
    data = two_person_order(ident, name)
    lab.drop_order(name, data, {f"{name}.sig": lab.sign(name, data)})
    lab.hub.run_once()
    before = lab.hub.outbox()
    assert list(before) == [f"{ident}.error.md"]

    lab.hub.drop(f"{name}.bob.sig", lab.sign(name, data, lab.keys.bob), lane="authorized")
    lab.hub.run_once()

    assert lab.hub.outbox() == before
    assert lab.runs() == []
    assert lab.hub.lane("authorized") == []
    assert lab.hub.archived() == [name, f"{name}.bob.sig", f"{name}.sig"]


def test_a_cosignature_over_other_bytes_is_not_counted(lab: QuorumLab) -> None:
    """bob signed a changed copy of the order: his signature is "bad signature", not counted; refused."""
    ident, name = "20260704t122000z-changed", "o1.md"
    data = two_person_order(ident, name)
    changed = data.replace(b"build 42", b"build 43")
    assert changed != data
    lab.drop_order(
        name,
        data,
        {f"{name}.sig": lab.sign(name, data), f"{name}.bob.sig": lab.sign(name, changed, lab.keys.bob)},
    )

    lab.hub.run_once()

    text = refusal(lab, ident)
    assert f"quorum not met: 1 of the 2 humans needed signed ({ALICE})" in text
    assert "not counted: " in text
    assert f"{name}.bob.sig: bad signature" in text.split("not counted: ", 1)[1]
    assert BOB not in text.split("not counted:")[0]  # bob is not named among the signers
    assert lab.runs() == []
    assert lab.hub.archived() == [name, f"{name}.bob.sig", f"{name}.sig"]


@pytest.mark.parametrize(
    ("quorum", "allowed", "signed", "reason"),
    [
        pytest.param(
            2,
            [(ALICE, "alice"), (BOB, "bob"), (BOB, "alice")],
            {"o1.md.sig": "alice", "o1.md.bob.sig": "alice"},
            "the same key as another signature",
            id="one-key-under-two-principals",
        ),
        pytest.param(
            3,
            [(ALICE, "alice"), (BOB, "bob"), (BOB, "carol")],
            {"o1.md.sig": "alice", "o1.md.bob.sig": "bob", "o1.md.bob2.sig": "carol"},
            f"{BOB} already signed: one human counts once",
            id="one-principal-with-two-keys",
        ),
    ],
)
def test_one_human_counts_once(
    lab: QuorumLab, quorum: int, allowed: list[tuple[str, str]], signed: dict[str, str], reason: str
) -> None:
    """A key listed under two principals, or a principal with two keys, is one human: refused."""
    lab.allowed.write_text("".join(f"{who} {getattr(lab.keys, key).public}\n" for who, key in allowed))
    lab.configure(quorum=quorum)
    ident, name = "20260704t123000z-one-human", "o1.md"
    data = render(order_fields(ident, name, auth="signed:" + ",".join(signed)), BODY)
    lab.drop_order(
        name, data, {sidecar: lab.sign(name, data, getattr(lab.keys, key)) for sidecar, key in signed.items()}
    )

    lab.hub.run_once()

    text = refusal(lab, ident)
    assert f"quorum not met: {quorum - 1} of the {quorum} humans needed signed" in text
    assert f"not counted: {list(signed)[-1]}: {reason}" in text
    assert lab.runs() == []
    assert lab.hub.archived() == sorted([name, *signed])


def test_an_order_naming_one_signature_for_a_two_person_action_is_refused(lab: QuorumLab) -> None:
    """`auth: signed:NAME.md.sig` alone, by alice, for a `quorum = 2` action: refused; nothing ran."""
    ident, name = "20260704t123500z-one-named", "o1.md"
    data = render(order_fields(ident, name), BODY)
    lab.drop_order(name, data, {f"{name}.sig": lab.sign(name, data)})

    lab.hub.run_once()

    text = refusal(lab, ident)
    assert (
        f"quorum not met: 1 of the 2 humans needed signed ({ALICE}); missing 1 more distinct signer" in text
    )
    assert lab.runs() == []
    assert lab.hub.archived() == [name, f"{name}.sig"]


def test_a_signature_by_an_unknown_key_never_counts(lab: QuorumLab) -> None:
    """alice and dave (in no allowed_signers line) signed: dave is not counted; refused; nothing ran."""
    ident, name = "20260704t124000z-unknown", "o1.md"
    data = render(order_fields(ident, name, auth=f"signed:{name}.sig,{name}.dave.sig"), BODY)
    lab.drop_order(
        name,
        data,
        {f"{name}.sig": lab.sign(name, data), f"{name}.dave.sig": lab.sign(name, data, lab.keys.dave)},
    )

    lab.hub.run_once()

    text = refusal(lab, ident)
    assert (
        f"quorum not met: 1 of the 2 humans needed signed ({ALICE}); missing 1 more distinct signer" in text
    )
    assert (
        f"not counted: {name}.dave.sig: signer {lab.keys.dave.fingerprint()}: key not in allowed_signers"
        in text
    )
    assert lab.runs() == []
    assert lab.hub.archived() == [name, f"{name}.dave.sig", f"{name}.sig"]


def test_the_orders_from_must_be_among_the_signers(lab: QuorumLab) -> None:
    """bob and carol sign alice's order (two distinct humans): refused, saying her signature is missing."""
    ident, name = "20260704t125000z-not-from", "o1.md"
    data = render(order_fields(ident, name, auth=f"signed:{name}.bob.sig,{name}.carol.sig"), BODY)
    lab.drop_order(
        name,
        data,
        {
            f"{name}.bob.sig": lab.sign(name, data, lab.keys.bob),
            f"{name}.carol.sig": lab.sign(name, data, lab.keys.carol),
        },
    )

    lab.hub.run_once()

    text = refusal(lab, ident)
    assert f"quorum not met: 2 of the 2 humans needed signed ({BOB}, {CAROL})" in text
    assert f"missing a signature by {ALICE} (the order's from)" in text
    assert lab.runs() == []
    assert lab.hub.archived() == [name, f"{name}.bob.sig", f"{name}.carol.sig"]


# -- sync order: the co-signature arriving later ------------------------------------------------


def test_an_order_is_held_for_its_cosignature_and_runs_once_it_lands(lab: QuorumLab) -> None:
    """Order and alice's signature first (sig_grace 30): held, listed by status, unanswered; bob's
    signature landing releases it: it runs once and all three files are archived."""
    lab.configure(sig_grace=30)
    ident, name = "20260704t126000z-held", "o1.md"
    data = two_person_order(ident, name)
    bob = lab.sign(name, data, lab.keys.bob)
    with lab.hub.running():
        lab.drop_order(name, data, {f"{name}.sig": lab.sign(name, data)})
        (held,) = until(lambda: lab.hub.events("envelope.held", id=ident), timeout=EVENT_DEADLINE)
        assert f"{name}.bob.sig" in held["reason"]
        assert answers(lab.hub, ident) == {}
        lanes = status_json(lab.hub)["lanes"]["authorized"]
        assert (lanes["held"], lanes["missing"]) == ([name], {name: [f"{name}.bob.sig"]})
        assert lab.runs() == []

        lab.hub.drop(f"{name}.bob.sig", bob, lane="authorized")
        # EVENT_DEADLINE is half the grace: the order is released by the signature, not the clock
        until(reply_exists(lab.hub, ident, "result"), timeout=EVENT_DEADLINE)
        until(lambda: lab.hub.lane("authorized") == [], timeout=EVENT_DEADLINE)
    assert lab.runs() == [ident]
    assert sorted(answers(lab.hub, ident)) == [f"{ident}.ack.md", f"{ident}.result.md"]
    assert lab.hub.archived() == [name, f"{name}.bob.sig", f"{name}.sig"]
    assert len(lab.hub.events("envelope.held", id=ident)) == 1


# -- at most once ------------------------------------------------------------------------------


def test_a_replayed_quorum_order_is_the_duplicate_no_op(lab: QuorumLab) -> None:
    """The same order and both signatures dropped again after it ran: no new reply, never run again."""
    ident, name = "20260704t127000z-replay", "o1.md"
    data = two_person_order(ident, name)
    signatures = {f"{name}.sig": lab.sign(name, data), f"{name}.bob.sig": lab.sign(name, data, lab.keys.bob)}
    lab.drop_order(name, data, signatures)
    lab.hub.run_once()
    assert lab.runs() == [ident]
    replies_before = lab.hub.outbox()

    lab.drop_order(name, data, signatures)
    lab.hub.run_once()

    assert lab.hub.outbox() == replies_before
    assert lab.runs() == [ident]
    assert lab.hub.lane("authorized") == []
    assert len(lab.hub.archived()) == 6  # the order and both signatures, twice
    assert ledger(lab.hub, "SELECT lane, file FROM duplicates WHERE id = ?", ident) == [("authorized", name)]


def test_kill_9_during_a_quorum_orders_action_is_answered_interrupted_and_never_rerun(
    lab: QuorumLab,
) -> None:
    """SIGKILL while the two-signature order's action runs: the restart answers "interrupted, not
    retried", the action ran once, and the order and both signatures are archived."""
    ident, name = "20260704t128000z-hang", "o1.md"
    data = two_person_order(ident, name, body="HANG until killed.\n")
    lab.drop_order(
        name,
        data,
        {f"{name}.sig": lab.sign(name, data), f"{name}.bob.sig": lab.sign(name, data, lab.keys.bob)},
    )
    with RunningDaemon(lab.hub) as daemon:
        daemon.up()
        daemon.until(lambda: lab.runs() == [ident], timeout=EVENT_DEADLINE)
        daemon.kill9()

    lab.hub.run_once()

    assert sorted(answers(lab.hub, ident)) == [f"{ident}.ack.md", f"{ident}.error.md"]
    assert INTERRUPTED in body_of(lab.hub.reply(ident, "error"))
    assert lab.runs() == [ident]
    assert lab.hub.lane("authorized") == []
    assert lab.hub.archived() == [name, f"{name}.bob.sig", f"{name}.sig"]

    before = snapshot(lab.hub)
    lab.hub.run_once()
    assert snapshot(lab.hub) == before
    assert lab.runs() == [ident]


# -- slopd verify --------------------------------------------------------------------------------


def test_slopd_verify_applies_the_actions_quorum_from_the_config(lab: QuorumLab) -> None:
    """`slopd verify --config`: 0 for alice's and bob's order, 1 with the quorum reason for alice's alone
    (which passes without --config, where the quorum is 1)."""
    folder = lab.tmp / "to-verify"
    folder.mkdir()
    good, lone = folder / "good.md", folder / "lone.md"
    good_data = two_person_order("20260704t129000z-good", good.name)
    lone_data = two_person_order("20260704t129000z-lone", lone.name)
    good.write_bytes(good_data)
    lone.write_bytes(lone_data)
    Path(f"{good}.sig").write_bytes(lab.sign(good.name, good_data))
    Path(f"{good}.bob.sig").write_bytes(lab.cosign(good.name, good_data, lab.keys.bob, "slopd-sign"))
    Path(f"{lone}.sig").write_bytes(lab.sign(lone.name, lone_data))

    def verify(path: Path, *config: str) -> tuple[int, str]:
        result = lab.hub.slopd("verify", "--allowed-signers", str(lab.allowed), *config, str(path))
        return result.returncode, result.stdout

    with_config = ("--config", str(lab.hub.config))
    code, out = verify(good, *with_config)
    assert code == 0, out
    assert f"good signature by {ALICE}" in out
    assert f"with {BOB} ({lab.keys.bob.fingerprint()})" in out

    code, out = verify(lone, *with_config)
    assert code == 1, out
    assert f"quorum not met: 1 of the 2 humans needed signed ({ALICE})" in out
    assert f"{lone.name}.bob.sig: never arrived" in out

    code, out = verify(lone)
    assert code == 0, out
    assert f"good signature by {ALICE}" in out
