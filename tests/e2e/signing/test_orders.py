"""The authorized lane, black-box (SPEC §6; research §9 cases 1-25): real keys, real signatures.

Keys are made by `ssh-keygen -t ed25519`, orders signed by `ssh-keygen -Y sign` (sha512 and
sha256) or `slopd sign`, and dropped into `authorized/` of a real hub. The configured action is a
real script that records what ran — its id in a journal, its stdin, argv, cwd and environment —
so every test can prove what ran, how many times, with what input. Keys, allowed_signers, the
journal and the records all live outside the hub.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import json
import os
import random
import signal
import sqlite3
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    SLOPD,
    HubDir,
    RunningDaemon,
    body_of,
    front_matter,
    hub_env,
    toml_argv,
    toml_string,
)
from tests.polling import until

SSH_KEYGEN = "/usr/bin/ssh-keygen"
ALICE = "alice@example.com"
WATCHER = "watcher:testhost"
EVENT_DEADLINE = 15.0
INTERRUPTED = "interrupted, not retried"

ACTION = r"""
import json, os, sys, time
from pathlib import Path

journal, records = sys.argv[1], sys.argv[2]
ident = os.environ["SLOP_ID"]
data = sys.stdin.buffer.read()
record = Path(records, ident)
record.mkdir(parents=True, exist_ok=True)
(record / "stdin.json").write_bytes(data)
(record / "argv.json").write_text(json.dumps(sys.orig_argv))
(record / "cwd").write_text(os.getcwd())
env = {k: v for k, v in os.environ.items() if k.startswith(("SLOP_", "DEPLOY_"))}
(record / "env.json").write_text(json.dumps(env))
(record / "pid").write_text(str(os.getpid()))
fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
os.write(fd, (ident + "\n").encode())
os.close(fd)
if "HANG" in json.loads(data)["body"]:
    time.sleep(600)  # an action that hangs until it is killed
sys.stdout.write("deployed " + ident + "\n")
"""


# -- keys, orders, hubs ---------------------------------------------------------------------


def now_stamp(offset: timedelta = timedelta()) -> str:
    return (datetime.now(UTC) + offset).strftime("%Y-%m-%dT%H:%M:%SZ")


def run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        list(args), input=stdin, capture_output=True, env={**os.environ, "TZ": "UTC"}, timeout=60, check=False
    )


@dataclass(frozen=True)
class Key:
    path: Path
    principal: str
    public: str  # `ssh-ed25519 AAAA…`

    def fingerprint(self) -> str:
        return run(SSH_KEYGEN, "-l", "-f", f"{self.path}.pub").stdout.decode().split()[1]


def ssh_keygen_key(directory: Path, name: str, principal: str) -> Key:
    path = directory / name
    made = run(SSH_KEYGEN, "-t", "ed25519", "-N", "", "-C", principal, "-f", str(path), "-q")
    assert made.returncode == 0, made.stderr
    keytype, blob = Path(f"{path}.pub").read_text().split()[:2]
    return Key(path, principal, f"{keytype} {blob}")


@dataclass(frozen=True)
class Keys:
    alice: Key  # allowed for any namespace
    bob: Key  # not in allowed_signers
    carol: Key  # allowed only with namespaces="other"
    dave: Key  # expired: valid-before in the past

    def allowed_signers(self) -> str:
        return (
            "# slopd test operators\n"
            f"{self.alice.principal} {self.alice.public}\n"
            f'{self.carol.principal} namespaces="other" {self.carol.public}\n'
            f'{self.dave.principal} valid-before="20200101Z" {self.dave.public}\n'
        )


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    directory = tmp_path_factory.mktemp("keys")
    return Keys(
        alice=ssh_keygen_key(directory, "alice", ALICE),
        bob=ssh_keygen_key(directory, "bob", "bob@example.com"),
        carol=ssh_keygen_key(directory, "carol", "carol@example.com"),
        dave=ssh_keygen_key(directory, "dave", "dave@example.com"),
    )


def order_fields(ident: str, name: str, **overrides: str | None) -> dict[str, str | None]:
    """The front matter of a valid signed order `name` (`from_` sets `from`; None drops a key)."""
    fields: dict[str, str | None] = {
        "protocol": "slop.v1",
        "id": ident,
        "type": "instigate",
        "from": ALICE,
        "to": "watcher",
        "in_reply_to": None,
        "created_at": now_stamp(),
        "auth": f"signed:{name}.sig",
        "action": "deploy",
    }
    if "from_" in overrides:
        overrides["from"] = overrides.pop("from_")
    fields.update(overrides)
    return fields


def render(fields: dict[str, str | None], body: str) -> bytes:
    lines = "".join(
        f"{key}: {'null' if value is None else value}\n"
        for key, value in fields.items()
        if value is not None or key == "in_reply_to"
    )
    return f"---\n{lines}---\n{body}".encode()


def new_hub(tmp: Path) -> HubDir:
    """A hub made by `slopd init`, as the `hub` fixture makes it (for module-scoped set-ups)."""
    made = HubDir(root=tmp / "hub", state=tmp / "state", config=tmp / "config.toml", env=hub_env(tmp))
    result = made.slopd("init", "--no-home", str(made.root))
    assert result.returncode == 0, result.stderr
    return made


@dataclass
class Lab:
    """A hub, an allowed_signers file, the `deploy` action and a staging dir, all but the hub outside it."""

    hub: HubDir
    tmp: Path
    keys: Keys
    allowed: Path = field(init=False)
    journal: Path = field(init=False)
    records: Path = field(init=False)
    workdir: Path = field(init=False)
    stage: Path = field(init=False)
    script: Path = field(init=False)

    def __post_init__(self) -> None:
        self.allowed = self.tmp / "trust" / "allowed_signers"
        self.allowed.parent.mkdir()
        self.allowed.write_text(self.keys.allowed_signers())
        self.journal = self.tmp / "journal"
        self.records = self.tmp / "records"
        self.workdir = self.tmp / "workdir"
        self.workdir.mkdir()
        self.stage = self.tmp / "stage"
        self.stage.mkdir()
        self.script = self.tmp / "tools" / "deploy.py"
        self.script.parent.mkdir()
        self.script.write_text(ACTION)

    def argv(self) -> list[str]:
        return [
            sys.executable,
            str(self.script),
            str(self.journal),
            str(self.records),
            "--target",
            "two words",
        ]

    def configure(self, *, sig_grace: float = 2, max_age: float = 3600, allowed: Path | None = None) -> None:
        self.hub.write_config(
            f'names = ["watcher", "{WATCHER}"]\n'
            "settle = 0.1\n"
            "rescan_interval = 0.5\n"
            "[auth]\n"
            f"allowed_signers = {toml_string(allowed or self.allowed)}\n"
            f"sig_grace = {sig_grace}\n"
            f"max_age = {max_age}\n"
            "[actions.deploy]\n"
            f"command = {toml_argv(self.argv())}\n"
            "timeout = 60\n"
            f"cwd = {toml_string(self.workdir)}\n"
            'env = { DEPLOY_TARGET = "staging", DEPLOY_NOTE = "two words; $(id)" }\n'
        )

    def stage_order(self, name: str, data: bytes) -> Path:
        directory = self.stage / f"{len(list(self.stage.iterdir()))}"
        directory.mkdir()
        path = directory / name
        path.write_bytes(data)
        return path

    def sign(
        self, name: str, data: bytes, key: Key | None = None, namespace: str = "slop", *options: str
    ) -> bytes:
        """`ssh-keygen -Y sign` of `data` (as a file called `name`), outside the hub."""
        path = self.stage_order(name, data)
        chosen = key or self.keys.alice
        signed = run(SSH_KEYGEN, "-Y", "sign", "-f", str(chosen.path), "-n", namespace, *options, str(path))
        assert signed.returncode == 0, signed.stderr
        return Path(f"{path}.sig").read_bytes()

    def slopd_sign(self, name: str, data: bytes) -> bytes:
        path = self.stage_order(name, data)
        signed = run(*SLOPD, "sign", "--key", str(self.keys.alice.path), str(path))
        assert signed.returncode == 0, signed.stderr
        return Path(f"{path}.sig").read_bytes()

    def drop(self, name: str, data: bytes | None, signature: bytes | None) -> None:
        if signature is not None:
            self.hub.drop(f"{name}.sig", signature, lane="authorized")
        if data is not None:
            self.hub.drop(name, data, lane="authorized")

    def runs(self) -> list[str]:
        return self.journal.read_text().split() if self.journal.exists() else []

    def record(self, ident: str) -> dict[str, Any]:
        directory = self.records / ident
        return {
            "stdin": json.loads((directory / "stdin.json").read_bytes()),
            "argv": json.loads((directory / "argv.json").read_text()),
            "cwd": (directory / "cwd").read_text(),
            "env": json.loads((directory / "env.json").read_text()),
        }

    def kill_leftover_actions(self) -> None:
        """Actions orphaned by a SIGKILLed daemon keep sleeping: end them, by their recorded pid."""
        for pid_file in self.records.glob("*/pid"):
            pid = int(pid_file.read_text())
            with contextlib.suppress(OSError):
                if str(self.script) in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                    os.kill(pid, signal.SIGKILL)


@pytest.fixture(name="lab")
def fixture_lab(hub: HubDir, tmp_path: Path, keys: Keys) -> Iterator[Lab]:
    made = Lab(hub, tmp_path, keys)
    made.configure()
    yield made
    made.kill_leftover_actions()


# -- observing ------------------------------------------------------------------------------


def answers(hub: HubDir, ident: str | None) -> dict[str, tuple[dict[str, Any], str]]:
    """Every reply to `ident`, by file name: (front matter, body)."""
    found = {}
    for name, text in hub.outbox().items():
        headers = front_matter(text)
        if headers.get("in_reply_to") == ident:
            found[name] = (headers, body_of(text))
    return found


def ledger(hub: HubDir, query: str, *params: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(hub.state / "ledger.sqlite3")) as db:
        return list(db.execute(query, params))


def status_json(hub: HubDir) -> dict[str, Any]:
    result = hub.slopd("status", "--hub", str(hub.root), "--state", str(hub.state), "--json")
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def snapshot(hub: HubDir) -> tuple[dict[str, bytes], list[str], list[str], list[str]]:
    outbox = hub.root / "outbox"
    files = {str(p.relative_to(outbox)): p.read_bytes() for p in sorted(outbox.rglob("*")) if p.is_file()}
    return files, hub.archived(), hub.lane("authorized"), hub.lane("inbox")


def reply_exists(hub: HubDir, ident: str, kind: str) -> Callable[[], bool]:
    return (hub.root / "outbox" / f"{ident}.{kind}.md").is_file


class Inotify:
    """Raw inotify on one directory: what was created, written or moved in, and what left."""

    IN_MODIFY = 0x2
    IN_CLOSE_WRITE = 0x8
    IN_MOVED_FROM = 0x40
    IN_MOVED_TO = 0x80
    IN_CREATE = 0x100
    IN_DELETE = 0x200
    IN_Q_OVERFLOW = 0x4000
    WRITES = IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE
    REMOVALS = IN_MOVED_FROM | IN_DELETE

    def __init__(self, directory: Path) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        mask = ctypes.c_uint32(self.WRITES | self.REMOVALS)
        if libc.inotify_add_watch(self.fd, os.fsencode(directory), mask) < 0:
            raise OSError(ctypes.get_errno(), "inotify_add_watch")

    def read(self) -> list[tuple[int, str]]:
        found: list[tuple[int, str]] = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return found
            at = 0
            while at < len(data):
                _wd, mask, _cookie, length = struct.unpack_from("iIII", data, at)
                name = data[at + 16 : at + 16 + length].rstrip(b"\0").decode(errors="surrogateescape")
                assert not mask & self.IN_Q_OVERFLOW, "inotify overflowed: the check would be blind"
                found.append((mask, name))
                at += 16 + length

    def close(self) -> None:
        os.close(self.fd)


# -- 1. a valid order runs its action once ----------------------------------------------------

BODY = "Deploy build 42 to staging.\n\n$(rm -rf ~); id --help\nÜnïcode stays exact.\n"


@pytest.mark.parametrize("signer", ["ssh-keygen-sha512", "ssh-keygen-sha256", "slopd-sign"])
def test_a_valid_order_runs_its_action_once_with_the_signed_envelope_on_stdin(lab: Lab, signer: str) -> None:
    """A verified order: silent ack, then a result with the action's stdout; the action ran once, as set."""
    ident, name = "20260704t080000z-deploy-42", "o1.md"
    fields = order_fields(ident, name, ticket="OPS-7")
    data = render(fields, BODY)
    if signer == "slopd-sign":
        signature = lab.slopd_sign(name, data)
    elif signer == "ssh-keygen-sha256":
        signature = lab.sign(name, data, None, "slop", "-O", "hashalg=sha256")
    else:
        signature = lab.sign(name, data)
    lab.drop(name, data, signature)

    lab.hub.run_once()

    if signer == "ssh-keygen-sha256":  # the signature really is over a SHA-256 digest
        blob = base64.b64decode(b"".join(signature.splitlines()[1:-1]))
        assert b"\x00\x00\x00\x06sha256" in blob
    assert lab.runs() == [ident]
    record = lab.record(ident)
    assert record["stdin"] == {**fields, "body": BODY}
    assert record["argv"] == lab.argv()
    assert record["cwd"] == str(lab.workdir)
    assert record["env"]["DEPLOY_TARGET"] == "staging"
    assert record["env"]["DEPLOY_NOTE"] == "two words; $(id)"
    assert record["env"]["SLOP_ID"] == ident
    assert record["env"]["SLOP_FROM"] == ALICE

    replies = answers(lab.hub, ident)
    assert sorted(replies) == [f"{ident}.ack.md", f"{ident}.result.md"]
    ack, _ = replies[f"{ident}.ack.md"]
    assert (ack["type"], ack["class"], ack["mode"]) == ("ack", "silent", "execute")
    result, text = replies[f"{ident}.result.md"]
    assert (result["type"], result["mode"], result["from"], result["to"]) == (
        "result",
        "execute",
        WATCHER,
        ALICE,
    )
    assert text == f"deployed {ident}\n"

    assert lab.hub.lane("authorized") == []
    assert lab.hub.archived() == [name, f"{name}.sig"]
    assert ledger(lab.hub, "SELECT decision, status FROM inputs WHERE id = ?", ident) == [
        ("execute:action:deploy", "done")
    ]
    (verified,) = lab.hub.events("order.verified")
    assert verified["principal"] == ALICE
    assert verified["key"] == lab.keys.alice.fingerprint()
    assert verified["line"] == 2


# -- 2. every rejection is loud and safe (one daemon run over all of them) ---------------------


@dataclass(frozen=True)
class Case:
    slug: str
    reason: str
    build: Callable[[Lab, str, str], None]
    sender: str = ALICE
    invalid: bool = False  # not a valid envelope: answered `ID.invalid-….md`
    signed: bool = True  # a `NAME.sig` was dropped beside it


def signed_order(
    key: str = "alice", namespace: str = "slop", age: timedelta | None = None, **overrides: str | None
) -> Callable[[Lab, str, str], None]:
    """`age`: created_at that far from now, reckoned when the order is built (not when this module
    is imported: a slow run's collection can be minutes before)."""

    def build(lab: Lab, ident: str, name: str) -> None:
        stamped = {"created_at": now_stamp(age)} if age is not None else {}
        data = render(order_fields(ident, name, **{**overrides, **stamped}), BODY)
        lab.drop(name, data, lab.sign(name, data, getattr(lab.keys, key), namespace))

    return build


def changed_after_signing(change: Callable[[bytes], bytes]) -> Callable[[Lab, str, str], None]:
    def build(lab: Lab, ident: str, name: str) -> None:
        data = render(order_fields(ident, name), BODY)
        signature = lab.sign(name, data)
        lab.drop(name, change(data), signature)

    return build


def signature_changed(change: Callable[[bytes], bytes]) -> Callable[[Lab, str, str], None]:
    def build(lab: Lab, ident: str, name: str) -> None:
        data = render(order_fields(ident, name), BODY)
        lab.drop(name, data, change(lab.sign(name, data)))

    return build


def renamed_signature(lab: Lab, ident: str, name: str) -> None:
    """A valid `a.md.sig` (for another order) renamed to `NAME.sig` beside a different `NAME`."""
    other = render(order_fields(f"{ident}-a", "a.md"), "The other order.\n")
    lab.drop(name, render(order_fields(ident, name), BODY), lab.sign("a.md", other))


def unsigned(lab: Lab, ident: str, name: str) -> None:
    lab.drop(name, render(order_fields(ident, name, auth="none"), BODY), None)


def invalid_sidecar(auth: str) -> Callable[[Lab, str, str], None]:
    def build(lab: Lab, ident: str, name: str) -> None:
        data = render(order_fields(ident, name, auth=auth), BODY)
        lab.drop(name, data, lab.sign(name, data))

    return build


REJECTIONS = [
    Case("namespace-git", "namespace is 'git', expected 'slop'", signed_order(namespace="git")),
    Case("unknown-key", "key not in allowed_signers", signed_order(key="bob")),
    Case(
        "other-namespace",
        "not permitted for namespace 'slop'",
        signed_order(key="carol", from_="carol@example.com"),
        sender="carol@example.com",
    ),
    Case(
        "expired-key",
        "key expired",
        signed_order(key="dave", from_="dave@example.com"),
        sender="dave@example.com",
    ),
    Case(
        "principal-mismatch",
        "key not allowed for principal 'mallory@example.com'",
        signed_order(from_="mallory@example.com"),
        sender="mallory@example.com",
    ),
    Case(
        "body-byte",
        "bad signature",
        changed_after_signing(lambda data: data.replace(b"build 42", b"build 43")),
    ),
    Case("crlf-order", "bad signature", changed_after_signing(lambda data: data.replace(b"\n", b"\r\n"))),
    Case("crlf-armor", "carriage return", signature_changed(lambda sig: sig.replace(b"\n", b"\r\n"))),
    Case("leading-blank", "missing header", signature_changed(lambda sig: b"\n" + sig)),
    Case(
        "garbage-100k",
        "over the 8192-byte limit",
        signature_changed(lambda _sig: random.Random(100).randbytes(100 * 1024)),
    ),
    Case("renamed-sig", "bad signature", renamed_signature),
    Case(
        "dotdot-sidecar",
        "auth: sidecar must be a plain file name",
        invalid_sidecar("signed:../x.sig"),
        invalid=True,
    ),
    Case(
        "hidden-sidecar",
        "auth: sidecar must be a plain file name",
        invalid_sidecar("signed:.hidden.sig"),
        invalid=True,
    ),
    Case("auth-none", "unsigned: the order says `auth: none`", unsigned, signed=False),
    Case("unconfigured-action", "action 'nuke' is not configured", signed_order(action="nuke")),
    Case("no-action", "a signed order must name its `action`", signed_order(action=None)),
    Case("handoff", "only signed `instigate` orders run", signed_order(type="handoff")),
    Case("too-old", "expired: created_at", signed_order(age=timedelta(hours=-2))),
    Case(
        "future",
        "more than 5 minutes in the future",
        signed_order(age=timedelta(minutes=10)),
    ),
    Case("to-human", "addressed to 'human'", signed_order(to="human")),
]
VALID = "20260704t090000z-valid"
ELSEWHERE = "20260704t090000z-elsewhere"


def ident_of(case: Case) -> str:
    return f"20260704t090000z-{case.slug}"


@dataclass
class Batch:
    lab: Lab
    writes: list[tuple[int, str]]
    removals: list[tuple[int, str]]


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory, keys: Keys) -> Iterator[Batch]:
    """One `--once` run over a valid order, every rejected one, and one for another watcher."""
    tmp = tmp_path_factory.mktemp("batch")
    lab = Lab(new_hub(tmp), tmp, keys)
    lab.configure(sig_grace=2, max_age=3600)
    signed_order()(lab, VALID, "valid.md")
    for case in REJECTIONS:
        case.build(lab, ident_of(case), f"{case.slug}.md")
    signed_order(to="watcher:otherhost")(lab, ELSEWHERE, "elsewhere.md")
    watch = Inotify(lab.hub.root / "authorized")
    try:
        lab.hub.run_once()
        observed = watch.read()
    finally:
        watch.close()
    yield Batch(
        lab,
        writes=[(mask, name) for mask, name in observed if mask & Inotify.WRITES],
        removals=[(mask, name) for mask, name in observed if mask & Inotify.REMOVALS],
    )
    lab.kill_leftover_actions()


@pytest.mark.parametrize("case", REJECTIONS, ids=[case.slug for case in REJECTIONS])
def test_a_rejected_order_is_answered_with_the_failed_check_and_runs_nothing(
    batch: Batch, case: Case
) -> None:
    """Each rejection: an `error` naming the failed check and the file; nothing ran; both files archived."""
    hub, ident, name = batch.lab.hub, ident_of(case), f"{case.slug}.md"
    replies = answers(hub, ident)
    assert len(replies) == 1, replies
    (reply_name, (headers, text)) = next(iter(replies.items()))
    if case.invalid:
        assert reply_name.startswith(f"{ident}.invalid-")
        assert headers["file"] == f"authorized/{name}"
    else:
        assert reply_name == f"{ident}.error.md"
        assert "nothing was run" in text
    assert headers["type"] == "error"
    assert headers["to"] == case.sender
    assert headers["from"] == WATCHER
    assert case.reason in text
    assert f"`authorized/{name}`" in text
    assert ident not in batch.lab.runs()
    assert not (batch.lab.records / ident).exists()
    assert name in hub.archived()
    assert name not in hub.lane("authorized")
    if case.signed:
        assert f"{name}.sig" in hub.archived()
        assert f"{name}.sig" not in hub.lane("authorized")
    decision = "invalid" if case.invalid else "reject"
    assert ledger(hub, "SELECT decision, status FROM inputs WHERE id = ?", ident) == [(decision, "done")]


def test_the_valid_order_beside_the_rejected_ones_is_the_only_one_that_ran(batch: Batch) -> None:
    """Among twenty rejected orders, exactly the one valid order ran, once, and was answered."""
    assert batch.lab.runs() == [VALID]
    assert sorted(answers(batch.lab.hub, VALID)) == [f"{VALID}.ack.md", f"{VALID}.result.md"]
    assert batch.lab.hub.events("order.verified", id=VALID)
    rejected = {record["id"] for record in batch.lab.hub.events("order.rejected")}
    assert VALID not in rejected
    assert ident_of(REJECTIONS[0]) in rejected


def test_an_order_for_another_watcher_is_left_in_place_unanswered(batch: Batch) -> None:
    """`to: watcher:otherhost`: left in authorized/ with its .sig, no reply, nothing run, nothing archived."""
    hub = batch.lab.hub
    assert hub.lane("authorized") == ["elsewhere.md", "elsewhere.md.sig"]
    assert answers(hub, ELSEWHERE) == {}
    assert ELSEWHERE not in batch.lab.runs()
    assert not any(name.startswith("elsewhere") for name in hub.archived())
    assert hub.events("envelope.left", id=ELSEWHERE)


def test_slopd_never_creates_or_writes_a_file_in_authorized(batch: Batch) -> None:
    """During a run over valid and invalid orders authorized/ only lost files: no create, write or move-in."""
    assert batch.writes == []
    removed = {name for _mask, name in batch.removals}
    assert {"valid.md", "valid.md.sig", "body-byte.md", "body-byte.md.sig"} <= removed


def test_an_order_naming_another_orders_signature_does_not_take_it_away(lab: Lab) -> None:
    """A forged order naming `o1.md.sig` is rejected, and `o1.md`, which that .sig signs, still runs once."""
    ident, name = "20260704t091000z-legit", "o1.md"
    forged_id = "20260704t091000z-forged"
    data = render(order_fields(ident, name), BODY)
    signature = lab.sign(name, data)
    forged = render(order_fields(forged_id, "forged.md", auth=f"signed:{name}.sig"), "Deploy my build.\n")
    path = lab.hub.drop("forged.md", forged, lane="authorized")
    older = path.stat().st_mtime - 5
    os.utime(path, (older, older))  # the forgery is seen first
    lab.drop(name, data, signature)

    lab.hub.run_once()

    assert "bad signature" in body_of(lab.hub.reply(forged_id, "error"))
    assert forged_id not in lab.runs()
    assert lab.runs() == [ident], answers(lab.hub, ident)
    assert sorted(answers(lab.hub, ident)) == [f"{ident}.ack.md", f"{ident}.result.md"]


# -- 3. discussion ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "body"),
    [
        pytest.param({"mode": "discuss"}, "Should we deploy build 42 today?\n", id="mode-discuss"),
        pytest.param({}, "Discuss only: should we deploy build 42 today?\n", id="discuss-only-body"),
    ],
)
def test_a_verified_order_asking_for_discussion_gets_a_discuss_result(
    lab: Lab, overrides: dict[str, str], body: str
) -> None:
    """A verified order with `mode: discuss` or "discuss only": a discuss `result`; nothing runs."""
    ident, name = "20260704t081000z-talk", "talk.md"
    data = render(order_fields(ident, name, **overrides), body)
    lab.drop(name, data, lab.sign(name, data))

    lab.hub.run_once()

    replies = answers(lab.hub, ident)
    assert list(replies) == [f"{ident}.result.md"]
    headers, _text = replies[f"{ident}.result.md"]
    assert (headers["type"], headers["mode"], headers["to"]) == ("result", "discuss", ALICE)
    assert lab.runs() == []
    assert lab.hub.events("order.verified", id=ident, principal=ALICE)
    assert lab.hub.archived() == [name, f"{name}.sig"]
    assert ledger(lab.hub, "SELECT decision FROM inputs WHERE id = ?", ident) == [("discuss",)]


# -- 4. replay ------------------------------------------------------------------------------


def test_a_replayed_signed_order_is_a_duplicate_that_runs_nothing(lab: Lab) -> None:
    """The archived order and .sig dropped again, then into inbox/: no new reply, never run again."""
    ident, name = "20260704t082000z-once", "o1.md"
    data = render(order_fields(ident, name), BODY)
    signature = lab.sign(name, data)
    lab.drop(name, data, signature)
    lab.hub.run_once()
    assert lab.runs() == [ident]
    replies_before = lab.hub.outbox()

    lab.drop(name, data, signature)
    lab.hub.run_once()
    assert lab.hub.outbox() == replies_before
    assert lab.runs() == [ident]
    assert lab.hub.lane("authorized") == []
    assert len(lab.hub.archived()) == 4
    assert ledger(lab.hub, "SELECT lane, file FROM duplicates WHERE id = ?", ident) == [("authorized", name)]

    lab.hub.drop(name, data)  # the same order in the inbox
    lab.hub.run_once()
    assert lab.hub.outbox() == replies_before
    assert lab.runs() == [ident]
    assert lab.hub.lane("inbox") == []
    assert len(ledger(lab.hub, "SELECT * FROM duplicates WHERE id = ?", ident)) == 2


def test_a_signed_order_dropped_into_the_inbox_never_runs_its_action(lab: Lab) -> None:
    """A valid signed order (with its .sig) in inbox/: an error saying actions run only from authorized/."""
    ident, name = "20260704t083000z-inbox", "o1.md"
    data = render(order_fields(ident, name), BODY)
    signature = lab.sign(name, data)
    lab.hub.drop(f"{name}.sig", signature)
    lab.hub.drop(name, data)

    lab.hub.run_once()

    replies = answers(lab.hub, ident)
    ((reply, (headers, body)),) = replies.items()
    assert reply.startswith(f"{ident}.invalid-")
    assert headers["type"] == "error"
    assert "- action is only read from authorized/ (signed orders)\n" in body
    assert lab.runs() == []
    assert not lab.hub.events("order.verified")
    assert lab.hub.lane("inbox") == [f"{name}.sig"]  # not an envelope: left in place


# -- 5. sync orders: the .md and its .sig arriving apart ---------------------------------------


def test_an_order_without_its_signature_is_held_then_answered_unsigned(lab: Lab) -> None:
    """`.md` without `.sig` (sig_grace 2): held, listed by status, no reply; after the grace, `unsigned`."""
    lab.configure(sig_grace=2)
    ident, name = "20260704t084000z-held", "o1.md"
    data = render(order_fields(ident, name), BODY)
    with lab.hub.running():
        lab.drop(name, data, None)
        until(lambda: lab.hub.events("envelope.held", id=ident), timeout=EVENT_DEADLINE)
        assert answers(lab.hub, ident) == {}
        assert status_json(lab.hub)["lanes"]["authorized"]["held"] == [name]
        until(reply_exists(lab.hub, ident, "error"), timeout=EVENT_DEADLINE)
        until(lambda: lab.hub.lane("authorized") == [])
    text = body_of(lab.hub.reply(ident, "error"))
    assert f"unsigned: its signature {name}.sig never arrived" in text
    assert list(answers(lab.hub, ident)) == [f"{ident}.error.md"]
    assert len(lab.hub.events("envelope.held", id=ident)) == 1
    assert lab.hub.archived() == [name]
    assert lab.runs() == []


def test_a_signature_arriving_within_the_grace_releases_the_order(lab: Lab) -> None:
    """The `.sig` landing while its order is held: the order runs, once, and both files are archived."""
    lab.configure(sig_grace=30)
    ident, name = "20260704t085000z-late-sig", "o1.md"
    data = render(order_fields(ident, name), BODY)
    signature = lab.sign(name, data)
    with lab.hub.running():
        lab.drop(name, data, None)
        until(lambda: lab.hub.events("envelope.held", id=ident), timeout=EVENT_DEADLINE)
        assert answers(lab.hub, ident) == {}
        lab.drop(name, None, signature)
        until(reply_exists(lab.hub, ident, "result"), timeout=EVENT_DEADLINE)
        until(lambda: len(lab.hub.archived()) == 2)
    assert lab.runs() == [ident]
    assert sorted(answers(lab.hub, ident)) == [f"{ident}.ack.md", f"{ident}.result.md"]
    assert lab.hub.archived() == [name, f"{name}.sig"]
    assert lab.hub.lane("authorized") == []


def test_a_signature_arriving_before_its_order_waits_for_it(lab: Lab) -> None:
    """The `.sig` first: nothing is answered while it waits; the `.md` landing runs once, no orphan error."""
    lab.configure(sig_grace=30)
    ident, name = "20260704t086000z-sig-first", "o1.md"
    marker = "20260704t086000z-marker"
    data = render(order_fields(ident, name), BODY)
    signature = lab.sign(name, data)
    with lab.hub.running():
        lab.drop(name, None, signature)
        handshake = render(order_fields(marker, "m.md", type="handshake", auth="none", action=None), "Hi.\n")
        lab.hub.drop(f"{marker}.md", handshake)
        until(reply_exists(lab.hub, marker, "ack"), timeout=EVENT_DEADLINE)
        assert lab.hub.lane("authorized") == [f"{name}.sig"]
        assert list(lab.hub.outbox()) == [f"{marker}.ack.md"]
        lab.drop(name, data, None)
        until(reply_exists(lab.hub, ident, "result"), timeout=EVENT_DEADLINE)
        until(lambda: lab.hub.lane("authorized") == [])
    assert lab.runs() == [ident]
    assert sorted(lab.hub.outbox()) == sorted([f"{ident}.ack.md", f"{ident}.result.md", f"{marker}.ack.md"])
    assert sorted(lab.hub.archived()) == [f"{marker}.md", name, f"{name}.sig"]


def test_a_signature_whose_order_never_comes_is_answered_after_the_grace(lab: Lab) -> None:
    """An orphan `.sig` (sig_grace 2): after the grace, an error naming the file, and it is archived."""
    lab.configure(sig_grace=2)
    ident, name = "20260704t087000z-orphan", "o1.md"
    lab.drop(name, None, lab.sign(name, render(order_fields(ident, name), BODY)))

    lab.hub.run_once(timeout=30)

    outbox = lab.hub.outbox()
    assert len(outbox) == 1, outbox
    ((reply_name, text),) = outbox.items()
    assert reply_name.startswith("input.invalid-")
    headers = front_matter(text)
    assert (headers["type"], headers["in_reply_to"], headers["to"]) == ("error", None, "human")
    assert headers["file"] == f"authorized/{name}.sig"
    assert f"{name} did not arrive within 2 s" in body_of(text)
    assert lab.hub.archived() == [f"{name}.sig"]
    assert lab.hub.lane("authorized") == []
    assert lab.runs() == []


# -- 6. at most once, through kill -9 ----------------------------------------------------------


def test_an_action_cut_by_kill_9_is_answered_interrupted_and_never_rerun(lab: Lab) -> None:
    """SIGKILL while the action runs: the restart answers "interrupted, not retried"; the action ran once."""
    ident, name = "20260704t088000z-hang", "o1.md"
    data = render(order_fields(ident, name), "HANG until killed.\n")
    lab.drop(name, data, lab.sign(name, data))
    with RunningDaemon(lab.hub) as daemon:
        daemon.up()
        daemon.until(lambda: lab.runs() == [ident], timeout=EVENT_DEADLINE)
        daemon.kill9()

    lab.hub.run_once()

    assert sorted(answers(lab.hub, ident)) == [f"{ident}.ack.md", f"{ident}.error.md"]
    assert INTERRUPTED in body_of(lab.hub.reply(ident, "error"))
    assert lab.runs() == [ident]
    assert lab.hub.lane("authorized") == []
    assert sorted(lab.hub.archived()) == [name, f"{name}.sig"]

    before = snapshot(lab.hub)
    lab.hub.run_once()
    assert snapshot(lab.hub) == before
    assert lab.runs() == [ident]


# -- 7. start-up refusals ----------------------------------------------------------------------


def bad_line(template: str) -> Callable[[Lab, Path], Path]:
    """An allowed_signers file whose line 3 is `template` ({key}: Alice's public key)."""

    def make(lab: Lab, tmp: Path) -> Path:
        path = tmp / "bad_allowed_signers"
        line = template.format(key=lab.keys.alice.public)
        path.write_text(f"# operators\n{ALICE} {lab.keys.alice.public}\n{line}\n")
        return path

    return make


def missing(_lab: Lab, tmp: Path) -> Path:
    return tmp / "no_such_allowed_signers"


def inside_hub(lab: Lab, _tmp: Path) -> Path:
    path = lab.hub.root / "notes" / "allowed_signers"
    path.write_text(lab.keys.allowed_signers())
    return path


def symlink_into_hub(lab: Lab, tmp: Path) -> Path:
    link = tmp / "linked_allowed_signers"
    link.symlink_to(inside_hub(lab, tmp))
    return link


def no_signer(_lab: Lab, tmp: Path) -> Path:
    path = tmp / "empty_allowed_signers"
    path.write_text("# nobody yet\n")
    return path


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        pytest.param(
            bad_line(ALICE + ' bogus-option="x" {key}'), "line 3: unknown option", id="unknown-option"
        ),
        pytest.param(bad_line("%%% garbage, not a signer %%%"), "line 3", id="garbage"),
        pytest.param(missing, "cannot read", id="missing"),
        pytest.param(inside_hub, "inside the hub", id="inside-hub"),
        pytest.param(symlink_into_hub, "inside the hub", id="symlink-into-hub"),
        pytest.param(no_signer, "lists no signer", id="no-signer"),
    ],
)
def test_a_bad_allowed_signers_file_stops_start_up(
    lab: Lab, tmp_path: Path, make: Callable[[Lab, Path], Path], expected: str
) -> None:
    """A bad, missing or in-hub allowed_signers: `slopd run` exits 2 naming the file (and line)."""
    path = make(lab, tmp_path)
    lab.configure(allowed=path)
    ident, name = "20260704t089000z-waiting", "o1.md"
    data = render(order_fields(ident, name), BODY)
    lab.drop(name, data, lab.sign(name, data))

    result = lab.hub.slopd(
        "run",
        "--hub",
        str(lab.hub.root),
        "--state",
        str(lab.hub.state),
        "--config",
        str(lab.hub.config),
        "--once",
    )

    assert result.returncode == 2, result.stderr
    assert str(path) in result.stderr
    assert expected in result.stderr
    assert lab.hub.lane("authorized") == [name, f"{name}.sig"]
    assert lab.hub.outbox() == {}
    assert lab.runs() == []


# -- 8. slopd sign never writes into authorized/ ------------------------------------------------


def test_slopd_sign_refuses_to_write_into_authorized_but_signs_a_copy_outside(
    lab: Lab, tmp_path: Path
) -> None:
    """`slopd sign` of an order in authorized/ (even via a symlinked dir) exits 2; a copy outside works."""
    ident, name = "20260704t089500z-sign-here", "o1.md"
    data = render(order_fields(ident, name), BODY)
    in_lane = lab.hub.drop(name, data, lane="authorized")
    linked = tmp_path / "lane-link"
    linked.symlink_to(lab.hub.root / "authorized")
    key = str(lab.keys.alice.path)

    for target in (in_lane, linked / name):
        refused = lab.hub.slopd("sign", "--key", key, str(target))
        assert refused.returncode == 2, refused.stdout
        assert "authorized" in refused.stderr
    assert lab.hub.lane("authorized") == [name]

    copy = tmp_path / "outside" / name
    copy.parent.mkdir()
    copy.write_bytes(data)
    signed = lab.hub.slopd("sign", "--key", key, str(copy))
    assert signed.returncode == 0, signed.stderr
    verified = lab.hub.slopd("verify", "--allowed-signers", str(lab.allowed), str(copy))
    assert verified.returncode == 0, verified.stdout
    assert f"good signature by {ALICE}" in verified.stdout
    assert lab.hub.lane("authorized") == [name]
