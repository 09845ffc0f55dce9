"""A full adversarial run (issue 6 point 4; research §8–§9): every hostile case that applies to files in a
hub, dropped together into ONE running daemon that has an executor and a signed-order action.

The daemon must stay up (it still answers a final handshake), answer each input exactly once with the
right reply type, run nothing it should not (the executor's and the action's journals, outside the hub,
hold exactly the legitimate ids, once each), and touch nothing outside the hub (a snapshot of names,
sizes, mtimes and content hashes around the hub, and the secrets' access times, are unchanged).

Cases by research §9 number: 1-16 and 18-22, 25 (signed orders, with real `ssh-keygen` keys), 17 and 39
(replay and temp names renamed, in a second wave), 27-30 and 32, 34-48, 58, 59, 64, plus §8's
symlinked and hardlinked signatures and an injection string in every header.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import socket
import sqlite3
import stat
import struct
import subprocess
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import load_ssh_private_key

from slopd.core.admission import ACTION_OUTSIDE
from tests.conftest import HubDir, RunningDaemon, body_of, front_matter, toml_argv, toml_string
from tests.polling import DeadlineError, until

SSH_KEYGEN = "/usr/bin/ssh-keygen"
ALICE = "alice@example.com"
WATCHER = "watcher:testhost"
OLD = 1_600_000_000  # mtimes and atimes set on the secrets, to see any read or write
SIG_GRACE = 5
DEADLINE = 60.0
POLL = 0.2  # a look every 0.2 s: the hub holds hundreds of files

AGENT = r"""
import hashlib, json, os, sys
kind, journal, records = sys.argv[1], sys.argv[2], sys.argv[3]
ident = os.environ["SLOP_ID"]
data = sys.stdin.buffer.read()
record = {
    "argv": sys.orig_argv,
    "cwd": os.getcwd(),
    "stdin_sha256": hashlib.sha256(data).hexdigest(),
    "stdin_len": len(data),
    "stdin_head": data[:8192].decode("utf-8", "replace"),
    "env": {k: v for k, v in os.environ.items() if k.startswith(("SLOP_", "NOTIFY", "WATCHDOG"))},
}
path = os.path.join(records, "%s-%s-%d.json" % (kind, ident, os.getpid()))
with open(path, "w") as handle:
    json.dump(record, handle)
fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
os.write(fd, (ident + "\n").encode())
os.close(fd)
sys.stdout.write("%s done %s\n" % (kind, ident))
"""


# -- keys and signatures (real ssh-keygen keys; crafted blobs signed with the same private key) ---------


def run(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        list(args), capture_output=True, env={**os.environ, "TZ": "UTC"}, timeout=60, check=False
    )


@dataclass(frozen=True)
class Key:
    path: Path
    principal: str

    @property
    def public(self) -> str:
        return " ".join(Path(f"{self.path}.pub").read_text().split()[:2])


def make_key(directory: Path, name: str, principal: str, kind: str = "ed25519") -> Key:
    path = directory / name
    made = run(SSH_KEYGEN, "-t", kind, "-N", "", "-C", principal, "-f", str(path), "-q")
    assert made.returncode == 0, made.stderr
    return Key(path, principal)


def ssh_sign(key: Key, data: bytes, stage: Path, namespace: str = "slop") -> bytes:
    """`ssh-keygen -Y sign` of `data`, staged in a fresh directory outside the hub."""
    directory = stage / str(len(list(stage.iterdir())))
    directory.mkdir()
    path = directory / "order.md"
    path.write_bytes(data)
    signed = run(SSH_KEYGEN, "-Y", "sign", "-f", str(key.path), "-n", namespace, str(path))
    assert signed.returncode == 0, signed.stderr
    return Path(f"{path}.sig").read_bytes()


def wire(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def crafted_signature(
    data: bytes,
    key: Ed25519PrivateKey,
    *,
    magic: bytes = b"SSHSIG",
    version: int = 1,
    namespace: bytes = b"slop",
    hash_algorithm: bytes = b"sha512",
    trailing: bytes = b"",
) -> bytes:
    """An armored SSHSIG with any field replaced; the Ed25519 signature is real, over what it claims."""
    digests = {b"md5": hashlib.md5, b"sha1": hashlib.sha1, b"sha256": hashlib.sha256}
    digest = digests.get(hash_algorithm, hashlib.sha512)(data).digest()
    signed = b"SSHSIG" + wire(namespace) + wire(b"") + wire(hash_algorithm) + wire(digest)
    public = wire(b"ssh-ed25519") + wire(key.public_key().public_bytes_raw())
    blob = (
        magic
        + struct.pack(">I", version)
        + wire(public)
        + wire(namespace)
        + wire(b"")
        + wire(hash_algorithm)
        + wire(wire(b"ssh-ed25519") + wire(key.sign(signed)))
        + trailing
    )
    encoded = base64.b64encode(blob)
    lines = [encoded[at : at + 70] for at in range(0, len(encoded), 70)]
    return b"\n".join([b"-----BEGIN SSH SIGNATURE-----", *lines, b"-----END SSH SIGNATURE-----"]) + b"\n"


def stamp(offset: timedelta = timedelta()) -> str:
    return (datetime.now(UTC) + offset).strftime("%Y-%m-%dT%H:%M:%SZ")


def render(fields: dict[str, str | None], body: str) -> bytes:
    """Front matter written verbatim (`None` → `null`), then the body."""
    lines = "".join(f"{key}: {'null' if value is None else value}\n" for key, value in fields.items())
    return f"---\n{lines}---\n{body}".encode()


def order(ident: str, name: str, body: str = "Deploy build 42.\n", **overrides: str | None) -> bytes:
    """A signed-order envelope `name` in authorized/ (`from_` sets `from`; a value of ... drops a key)."""
    fields: dict[str, str | None] = {
        "protocol": "slop.v1",
        "id": ident,
        "type": "instigate",
        "from": ALICE,
        "to": "watcher",
        "in_reply_to": None,
        "created_at": stamp(),
        "auth": f"signed:{name}.sig",
        "action": "deploy",
    }
    if "from_" in overrides:
        overrides["from"] = overrides.pop("from_")
    fields.update(overrides)
    return render({key: value for key, value in fields.items() if value != "DROP"}, body)


def envelope(ident: str, kind: str = "handshake", body: str = "Hello.\n", **overrides: str | None) -> bytes:
    """An inbox envelope; values are YAML text written verbatim (`from_` sets `from`)."""
    fields: dict[str, str | None] = {
        "protocol": "slop.v1",
        "id": ident,
        "type": kind,
        "from": "claude-code",
        "to": "watcher",
        "in_reply_to": None,
        "created_at": "2026-07-04T07:15:53Z",
        "auth": "none",
    }
    if "from_" in overrides:
        overrides["from"] = overrides.pop("from_")
    fields.update(overrides)
    return render({key: value for key, value in fields.items() if value != "DROP"}, body)


# -- the hub, seen from outside -----------------------------------------------------------------------


def snapshot(root: Path, skip: set[str]) -> dict[str, tuple[Any, ...]]:
    """Type, size, mtime and content hash (or link target) of everything under `root`, but `skip`."""
    found: dict[str, tuple[Any, ...]] = {}
    for directory, names, files in os.walk(root):
        here = Path(directory)
        if here == root:
            names[:] = [name for name in names if name not in skip]
        for name in names + [name for name in files if here != root or name not in skip]:
            path = here / name
            status = path.lstat()
            if stat.S_ISREG(status.st_mode):
                content = hashlib.sha256(path.read_bytes()).hexdigest()
            elif stat.S_ISLNK(status.st_mode):
                content = os.readlink(path)
            else:
                content = ""
            found[str(path.relative_to(root))] = (
                stat.S_IFMT(status.st_mode),
                status.st_size,
                status.st_mtime_ns,
                content,
            )
    return found


def shown(name: str | bytes) -> str:
    """A lane entry's name as slopd writes it in `file:`: escaped ASCII unless it is a sane name."""
    text = os.fsdecode(name) if isinstance(name, bytes) else name
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return ascii(text)[1:-1]
    unsafe = re.search("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]", text)
    return ascii(text)[1:-1] if unsafe else text


def age(path: Path | bytes) -> None:
    os.utime(path, (OLD, OLD), follow_symlinks=False)


def place(lane_dir: Path, name: str | bytes, make: Callable[[bytes], None], *, aged: bool = True) -> None:
    """Make an entry under a dot name (ignored by slopd), age it, then rename it into place at once.

    A hard link is not aged: its mtime is the outside file's, which must not change.
    """
    final = os.fsencode(lane_dir) + b"/" + os.fsencode(name)
    temp = (
        os.fsencode(lane_dir) + b"/.adversarial-" + hashlib.sha256(final).hexdigest()[:12].encode() + b".tmp"
    )
    make(temp)
    if aged:
        age(temp)
    os.rename(temp, final)


def write_bytes(data: bytes) -> Callable[[bytes], None]:
    def make(path: bytes) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)

    return make


def sparse(size: int, head: bytes = b"---\n") -> Callable[[bytes], None]:
    def make(path: bytes) -> None:
        with open(path, "wb") as handle:
            handle.write(head)
            handle.truncate(size)

    return make


def symlink_to(target: str | Path) -> Callable[[bytes], None]:
    return lambda path: os.symlink(target, path)


def hardlink_to(target: Path) -> Callable[[bytes], None]:
    return lambda path: os.link(target, path)


def fifo(path: bytes) -> None:
    os.mkfifo(path)


def directory_with(inner: bytes) -> Callable[[bytes], None]:
    def make(path: bytes) -> None:
        os.mkdir(path)
        with open(path + b"/inner.md", "wb") as handle:
            handle.write(inner)

    return make


def unix_socket(path: bytes) -> None:
    """Bind a Unix socket at `path` through /proc, so the length of the path never matters."""
    parent, _, name = path.rpartition(b"/")
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
            server.bind(f"/proc/self/fd/{fd}/{os.fsdecode(name)}")
    finally:
        os.close(fd)


# -- what each input must get ---------------------------------------------------------------------------

# kinds: invalid (an `*.invalid-*` error naming the file), error (`ID.error.md` naming the file),
# ack, discuss (`ID.result.md`, mode discuss), run (`ID.ack.md` then `ID.result.md`, and the id in
# the journal of `runner`), record (no reply, archived), left and ignored (no reply, left in place).
ANSWERED = ("invalid", "error", "ack", "discuss", "run", "record")


@dataclass
class Input:
    lane: str
    name: str | bytes
    kind: str
    ident: str | None = None
    reason: str = ""  # a regex the reply body must match
    runner: str = ""  # "executor" or "action" for kind "run"

    @property
    def file(self) -> str:
        return f"{self.lane}/{shown(self.name)}"


@dataclass
class Scenario:
    """Every input prepared beforehand, placed in the lanes only once the daemon runs (`place_all`)."""

    hub: HubDir
    inputs: list[Input] = field(default_factory=list)
    pending: list[tuple[str, str | bytes, Callable[[bytes], None], bool]] = field(default_factory=list)
    late: list[tuple[str, str | bytes, Callable[[bytes], None], bool]] = field(default_factory=list)

    def add(
        self,
        lane: str,
        name: str | bytes,
        make: Callable[[bytes], None],
        kind: str,
        *,
        ident: str | None = None,
        reason: str = "",
        runner: str = "",
        aged: bool = True,
        late: bool = False,
    ) -> None:
        (self.late if late else self.pending).append((lane, name, make, aged))
        self.inputs.append(Input(lane, name, kind, ident, reason, runner))

    def drop(
        self,
        lane: str,
        name: str | bytes,
        data: bytes,
        kind: str,
        *,
        ident: str | None = None,
        reason: str = "",
        runner: str = "",
        late: bool = False,
    ) -> None:
        self.add(lane, name, write_bytes(data), kind, ident=ident, reason=reason, runner=runner, late=late)

    def place_all(self) -> None:
        for lane, name, make, aged in [*self.pending, *self.late]:
            place(self.hub.root / lane, name, make, aged=aged)


# -- the daemon -----------------------------------------------------------------------------------------


def journal(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


# -- the scenario ---------------------------------------------------------------------------------------


@dataclass
class Lab:
    tmp: Path
    hub: HubDir
    outside: Path
    secret: Path
    canary: Path
    executor_journal: Path
    action_journal: Path
    records: Path
    executor_argv: list[str]
    action_argv: list[str]
    alice: Key


def build_lab(hub: HubDir, tmp: Path) -> Lab:
    outside = tmp / "outside"
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text("ssh-ed25519 AAAA the-secret-key\n", encoding="utf-8")
    journals = tmp / "journals"
    records = journals / "records"
    records.mkdir(parents=True)
    tools = tmp / "tools"
    tools.mkdir()
    (tools / "agent.py").write_text(AGENT, encoding="utf-8")
    workdir = tmp / "workdir"
    workdir.mkdir()
    keys = tmp / "keys"
    keys.mkdir()
    alice = make_key(keys, "alice", ALICE)
    executor_journal, action_journal = journals / "executor.log", journals / "action.log"
    agent = [sys.executable, str(tools / "agent.py")]
    executor_argv = [*agent, "executor", str(executor_journal), str(records)]
    action_argv = [*agent, "action", str(action_journal), str(records)]
    return Lab(
        tmp=tmp,
        hub=hub,
        outside=outside,
        secret=secret,
        canary=outside / "pwned",
        executor_journal=executor_journal,
        action_journal=action_journal,
        records=records,
        executor_argv=executor_argv,
        action_argv=action_argv,
        alice=alice,
    )


def configure(lab: Lab, allowed: Path) -> None:
    lab.hub.write_config(
        f'names = ["watcher", "{WATCHER}"]\n'
        "settle = 0.2\n"
        "rescan_interval = 0.5\n"
        "[executor]\n"
        f"command = {toml_argv(lab.executor_argv)}\n"
        "timeout = 60\n"
        "max_parallel = 2\n"
        "[auth]\n"
        f"allowed_signers = {toml_string(allowed)}\n"
        f"sig_grace = {SIG_GRACE}\n"
        "max_age = 3600\n"
        "[actions.deploy]\n"
        f"command = {toml_argv(lab.action_argv)}\n"
        "timeout = 60\n"
        f"cwd = {toml_string(lab.tmp / 'workdir')}\n"
    )


def signed_orders(scenario: Scenario, lab: Lab) -> dict[str, bytes]:
    """Research §9 cases 1-16, 18-22, 25 and §8's linked signatures, into authorized/; returns files
    needed later (the valid order and its signature, for the replay)."""
    keys = lab.alice.path.parent
    bob = make_key(keys, "bob", "bob@example.com")
    carol = make_key(keys, "carol", "carol@example.com")
    dave = make_key(keys, "dave", "dave@example.com")
    erin = make_key(keys, "erin", "erin@example.com", kind="ecdsa")
    allowed = lab.tmp / "trust" / "allowed_signers"
    allowed.parent.mkdir()
    allowed.write_text(
        "# operators\n"
        f"{ALICE} {lab.alice.public}\n"
        f'{carol.principal} namespaces="other" {carol.public}\n'
        f'{dave.principal} valid-before="20200101Z" {dave.public}\n',
        encoding="utf-8",
    )
    configure(lab, allowed)
    raw_key = load_ssh_private_key(lab.alice.path.read_bytes(), password=None)
    assert isinstance(raw_key, Ed25519PrivateKey)
    stage = lab.tmp / "stage"
    stage.mkdir()

    def sign(data: bytes, key: Key = lab.alice, namespace: str = "slop") -> bytes:
        return ssh_sign(key, data, stage, namespace)

    lane = "authorized"

    def signed(
        name: str, data: bytes, signature: bytes, kind: str, ident: str, reason: str = "", runner: str = ""
    ) -> None:
        scenario.drop(lane, f"{name}.sig", signature, "sidecar")
        scenario.drop(lane, name, data, kind, ident=ident, reason=reason, runner=runner)

    def rejected(slug: str, reason: str, data: bytes, signature: bytes) -> None:
        signed(f"{slug}.md", data, signature, "error", ident=f"o-{slug}", reason=reason)

    # 1, 45: a valid order, with YAML 1.1 traps in extra keys; 38: one with a BOM, signed with it.
    valid = order("o-valid", "valid.md", flag="on", perm="0755", when="12:30")
    valid_sig = sign(valid)
    signed("valid.md", valid, valid_sig, "run", ident="o-valid", runner="action")
    bom = b"\xef\xbb\xbf" + order("o-bom", "bom.md")
    signed("bom.md", bom, sign(bom), "run", ident="o-bom", runner="action")
    # 22: the signature arrives first; its order is dropped last of all.
    first = order("o-sig-first", "sig-first.md")
    scenario.drop(lane, "sig-first.md.sig", sign(first), "sidecar")
    scenario.drop(lane, "sig-first.md", first, "run", ident="o-sig-first", runner="action", late=True)
    # A verified order asking for discussion: a discuss result, nothing runs.
    talk = order("o-talk", "talk.md", mode="discuss")
    signed("talk.md", talk, sign(talk), "discuss", ident="o-talk")

    # 2-8: namespace, unknown key, namespace-restricted key, expired key, principal, body byte, CRLF.
    data = order("o-ns-git", "ns-git.md")
    rejected("ns-git", "namespace is 'git'", data, sign(data, namespace="git"))
    data = order("o-ns-file", "ns-file.md")
    rejected("ns-file", "namespace is 'file'", data, sign(data, namespace="file"))
    data = order("o-bob", "bob.md", from_=bob.principal)
    rejected("bob", "key not in allowed_signers", data, sign(data, key=bob))
    data = order("o-carol", "carol.md", from_=carol.principal)
    rejected("carol", "not permitted for namespace", data, sign(data, key=carol))
    data = order("o-dave", "dave.md", from_=dave.principal)
    rejected("dave", "key expired", data, sign(data, key=dave))
    data = order("o-mallory", "mallory.md", from_="mallory@example.com")
    rejected("mallory", "not allowed for principal", data, sign(data))
    data = order("o-byte", "byte.md")
    rejected("byte", "bad signature", data.replace(b"build 42", b"build 43"), sign(data))
    data = order("o-crlf", "crlf.md")
    rejected("crlf", "bad signature", data.replace(b"\n", b"\r\n"), sign(data))
    # 9-14: malformed armor and crafted blobs, a foreign key type, oversized, bad base64, truncated.
    changes: tuple[tuple[str, str, Callable[[bytes], bytes]], ...] = (
        ("crlf-armor", "carriage return", lambda sig: sig.replace(b"\n", b"\r\n")),
        ("blank-armor", "missing header", lambda sig: b"\n" + sig),
        ("text-armor", "missing header", lambda sig: b"Signature follows\n" + sig),
        ("bad-base64", "invalid base64", lambda sig: sig.replace(sig.splitlines()[1][:4], b"!!!!", 1)),
        ("truncated", "malformed signature", lambda sig: sig[: len(sig) // 2]),
        ("ten-mb", "over the 8192-byte limit", lambda sig: sig + b"A" * (10 * 1024 * 1024)),
    )
    for slug, reason, change in changes:
        data = order(f"o-{slug}", f"{slug}.md")
        rejected(slug, reason, data, change(sign(data)))
    for slug, reason, fields in (
        ("trailing", "trailing data", {"trailing": b"\0\0\0\0"}),
        ("md5", "unsupported hash algorithm 'md5'", {"hash_algorithm": b"md5"}),
        ("sha1", "unsupported hash algorithm 'sha1'", {"hash_algorithm": b"sha1"}),
        ("upper-sha", "unsupported hash algorithm 'SHA512'", {"hash_algorithm": b"SHA512"}),
        ("version-2", "unsupported version 2", {"version": 2}),
        ("sshsih", "bad magic", {"magic": b"SSHSIH"}),
        ("empty-ns", "empty namespace", {"namespace": b""}),
    ):
        data = order(f"o-{slug}", f"{slug}.md")
        rejected(slug, reason, data, crafted_signature(data, raw_key, **fields))
    data = order("o-ecdsa", "ecdsa.md", from_=erin.principal)
    rejected("ecdsa", "key type .ecdsa-sha2-nistp256. is not accepted for orders", data, sign(data, key=erin))
    # 15: a valid signature of another order renamed beside this one.
    other = order("o-renamed-a", "a.md", "Another order.\n")
    data = order("o-renamed", "renamed.md")
    rejected("renamed", "bad signature", data, sign(other))
    # 16: sidecar names that are not plain names; a forged order naming a legitimate order's .sig.
    for slug, auth in (
        ("dotdot", "signed:../x.sig"),
        ("absolute", "signed:/etc/x.sig"),
        ("hidden", "signed:.h.sig"),
    ):
        data = order(f"o-{slug}", f"{slug}.md", auth=auth)
        scenario.drop(
            lane, f"{slug}.md", data, "invalid", ident=f"o-{slug}", reason="sidecar must be a plain"
        )
    legit = order("o-legit", "legit.md")
    signed("legit.md", legit, sign(legit), "run", ident="o-legit", runner="action")
    forged = order("o-forged", "forged.md", "Deploy MY build.\n", auth="signed:legit.md.sig")
    scenario.drop(lane, "forged.md", forged, "error", ident="o-forged", reason="bad signature|never arrived")
    # 18, 19: too old, too far in the future.
    data = order("o-old", "old.md", created_at=stamp(timedelta(hours=-2)))
    rejected("old", "expired: created_at", data, sign(data))
    data = order("o-future", "future.md", created_at=stamp(timedelta(minutes=10)))
    rejected("future", "more than 5 minutes in the future", data, sign(data))
    # 20: for another watcher — left in place with its .sig, unanswered.
    data = order("o-elsewhere", "elsewhere.md", to="watcher:otherhost")
    scenario.drop(lane, "elsewhere.md.sig", sign(data), "left")
    scenario.drop(lane, "elsewhere.md", data, "left", ident="o-elsewhere")
    # 21: a .sig that never comes; `auth: none`; an orphan .sig; 25: an unconfigured action.
    scenario.drop(
        lane, "held.md", order("o-held", "held.md"), "error", ident="o-held", reason="never arrived"
    )
    data = order("o-none", "none.md", auth="none")
    scenario.drop(lane, "none.md", data, "error", ident="o-none", reason="says `auth: none`")
    scenario.drop(
        lane, "orphan.md.sig", sign(order("o-orphan", "orphan.md")), "invalid", reason="without its order"
    )
    data = order("o-nuke", "nuke.md", action="nuke")
    rejected("nuke", "action 'nuke' is not configured", data, sign(data))
    data = order("o-handshake", "handshake.md", type="handshake", action="DROP")
    rejected("handshake", "only signed `instigate` orders run", data, sign(data))
    # §8: a signature that is a symlink to, or a hard link of, a valid signature outside the hub.
    for slug, link in (("sym-sig", symlink_to), ("hard-sig", hardlink_to)):
        data = order(f"o-{slug}", f"{slug}.md")
        good = lab.outside / f"{slug}.md.sig"
        good.write_bytes(sign(data))
        age(good)
        scenario.add(lane, f"{slug}.md.sig", link(good), "sidecar", aged=slug == "sym-sig")
        reason = "symbolic link" if slug == "sym-sig" else "hard links"
        scenario.drop(lane, f"{slug}.md", data, "error", ident=f"o-{slug}", reason=reason)
    # 27: an order that is a symlink to a secret; one to /dev/zero.
    scenario.add(lane, "secret.md", symlink_to(lab.secret), "invalid", reason="symbolic link")
    scenario.add(lane, "zero.md", symlink_to("/dev/zero"), "invalid", reason="symbolic link")
    # A valid signed order dropped into the inbox with its .sig: never runs an action.
    data = order("o-in-inbox", "in-inbox.md")
    scenario.drop("inbox", "in-inbox.md.sig", sign(data), "ignored")
    scenario.drop(
        "inbox", "in-inbox.md", data, "refused", ident="o-in-inbox", reason=re.escape(ACTION_OUTSIDE)
    )
    return {"valid.md": valid, "valid.md.sig": valid_sig}


def front(text: str, body: str = "Body.\n") -> bytes:
    """A Markdown file with exactly this front-matter text."""
    return f"---\n{text}\n---\n{body}".encode()


def hostile_inbox(scenario: Scenario, lab: Lab) -> None:
    """Research §9 cases 27-30, 32, 34-37, 39-48, 58, 59, 64, and injection strings in every header."""
    lane = "inbox"
    # 27-30: links and special files.
    scenario.add(lane, "secret.md", symlink_to(lab.secret), "invalid", reason="symbolic link")
    scenario.add(lane, "key.md", symlink_to(lab.alice.path), "invalid", reason="symbolic link")
    scenario.add(lane, "zero.md", symlink_to("/dev/zero"), "invalid", reason="symbolic link")
    scenario.add(lane, "dangling.md", symlink_to(lab.tmp / "nowhere.md"), "invalid", reason="symbolic link")
    other = lab.outside / "other.md"
    other.write_bytes(envelope("i-hardlinked", "instigate", "Never run me.\n"))
    age(other)
    scenario.add(lane, "hard.md", hardlink_to(other), "invalid", reason="hard link", aged=False)
    scenario.add(lane, "fifo.md", fifo, "invalid", reason="FIFO")
    scenario.add(lane, "sock.md", unix_socket, "invalid", reason="socket")
    inner = envelope("i-inside-dir", "instigate", "Never run me either.\n")
    scenario.add(lane, "dir.md", directory_with(inner), "invalid", reason="directory")
    scenario.add(lane, "dir.json", directory_with(inner), "invalid", reason="directory")
    # 34, 64: hostile names (invalid UTF-8, bidi override, newline and ANSI escape).
    name_reason = "not valid UTF-8|control characters"
    scenario.drop(lane, b"bad-\xff\xfe.md", envelope("i-badname", "instigate"), "invalid", reason=name_reason)
    scenario.drop(lane, "evil\u202egnp.md", envelope("i-bidi", "instigate"), "invalid", reason=name_reason)
    scenario.drop(lane, "inj\n\x1b[31m.md", envelope("i-ansi", "instigate"), "invalid", reason=name_reason)
    # 35, 40: NFC and NFD names of one id (the same bytes: a duplicate); conflict copies of one id
    # with other bodies: it runs once, from whichever copy comes first, and each other copy is
    # refused as a conflict (SPEC §14).
    cafe = envelope("i-cafe", "instigate", "Once, whatever the name.\n")
    for name in (unicodedata.normalize("NFC", "café.md"), unicodedata.normalize("NFD", "café.md")):
        scenario.drop(lane, name, cafe, "run", ident="i-cafe", runner="executor")
    for name in (
        "c1.md",
        "c1 (conflicted copy 2026-01-01).md",
        "c1.sync-conflict-20260101-120000-ABCDEFG.md",
        "c1_conflict-20260101-120000.md",
    ):
        body = f"Edited on another replica as {name}.\n"
        scenario.drop(
            lane,
            name,
            envelope("i-conflict", "instigate", body),
            "conflict",
            ident="i-conflict",
            reason="conflict: id i-conflict was already used with other content",
            runner="executor",
        )
    # 36, 37: oversized (real and sparse), invalid UTF-8 inside, a NUL byte.
    scenario.add(lane, "over.md", write_bytes(b"---\n" + b"x" * (1024 * 1024)), "invalid", reason="over the")
    scenario.add(lane, "two-gb.md", sparse(2 * 1024**3), "invalid", reason=f"{2 * 1024**3} bytes, over the")
    scenario.add(lane, "one-tb.md", sparse(1024**4), "invalid", reason=f"{1024**4} bytes, over the")
    latin = envelope("i-latin", body="Caf\xe9 cr\xe8me.\n").decode().encode("latin-1")
    offset = latin.index(b"\xe9")
    scenario.drop(lane, "latin.md", latin, "invalid", reason=rf"UTF-8 \(byte offset {offset}\)")
    scenario.drop(lane, "nul.md", envelope("i-nul", body="a\0b\n"), "invalid", reason="NUL")
    # 32: invalid ids.
    for slug, ident in (
        ("slash", "../../outside/evil"),
        ("dotdot", "a..b"),
        ("dot", ".hidden"),
        ("dash", "-leading-dash"),
        ("long", "a" * 129),
        ("bidi", "'a\u202eb'"),
        ("newline", '"a\\nb"'),
    ):
        scenario.drop(lane, f"id-{slug}.md", envelope(ident), "invalid", reason="id: ")
    # 41-48: YAML and JSON hazards.
    laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 9):
        previous, name = chr(ord("a") + level - 1), chr(ord("a") + level)
        laughs.append(f"{name}: &{name} [{','.join(['*' + previous] * 9)}]")
    pwn = f"x: !!python/object/apply:os.system ['touch {lab.canary}']"
    for name, data, reason in (
        ("laughs.md", front("protocol: slop.v1\nid: i-laughs\n" + "\n".join(laughs)), "alias|anchor"),
        ("brackets.md", front("x: " + "[" * 60_000), "nest"),
        ("braces.md", front("protocol: slop.v1\nx: " + "{a: " * 50_000), "front matter"),
        ("deep.json", b'{"id": "x", "y": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", "nest"),
        ("depth-33.md", envelope("i-depth-33", extra="[" * 32 + "x" + "]" * 32), "nesting deeper than 32"),
        (
            "dup-key.md",
            envelope("i-dup", extra="1").replace(b"extra: 1\n", b"id: i-dup-again\n"),
            "duplicate",
        ),
        ("pwn.md", front(f"protocol: slop.v1\nid: i-pwn\n{pwn}"), "tag"),
        ("list.md", front("- protocol: slop.v1\n- id: i-list"), "mapping"),
        ("scalar.md", front("just some text"), "mapping"),
        ("unclosed.md", b"---\nprotocol: slop.v1\nid: i-unclosed\n", "closing"),
        ("two-docs.md", front("protocol: slop.v1\n--- # two\nid: i-two"), "more than one YAML document"),
        ("json-looking.md", b'{"protocol": "slop.v1", "id": "i-jsonish", "type": "note"}\n', "front matter"),
        ("dup-key.json", b'{"id": "a", "id": "b"}', "duplicate"),
        ("nan.json", b'{"id": "a", "x": NaN}', "NaN"),
        ("from-100k.md", envelope("i-from-100k", from_="f" * 100_000), "front matter is over"),
    ):
        scenario.drop(lane, name, data, "invalid", reason=reason)
    scenario.drop(
        lane,
        "depth-32.md",
        envelope("i-depth-32", extra="[" * 31 + "x" + "]" * 31),
        "ack",
        ident="i-depth-32",
    )
    traps = envelope("i-traps", flag="on", perm="0755", when="12:30", created_at="2026-07-04T07:15:53Z")
    scenario.drop(lane, "traps.md", traps, "ack", ident="i-traps")
    scenario.drop(lane, "bom.md", b"\xef\xbb\xbf" + envelope("i-bom", "note"), "ack", ident="i-bom")
    # 58: injection in the body only ever reaches stdin; a 1 MB single line too.
    injected = (
        f"$(touch {lab.canary}); touch {lab.canary}; `touch {lab.canary}` | id --help\n"
        "-rf --help --output=/etc/passwd\n"
    )
    scenario.drop(
        lane,
        "inj-body.md",
        envelope("i-inj-body", "instigate", injected),
        "run",
        ident="i-inj-body",
        runner="executor",
    )
    big = "A" * 1_000_000 + "\n"
    scenario.drop(
        lane,
        "big-line.md",
        envelope("i-big-line", "instigate", big),
        "run",
        ident="i-big-line",
        runner="executor",
    )
    # Injection strings in every header (59, 64 included): each is refused by that header's rule.
    hostile = f'"$(touch {lab.canary}); id\\n\\e[31m`touch {lab.canary}` --help"'
    for key in (
        "protocol",
        "id",
        "type",
        "from",
        "to",
        "in_reply_to",
        "created_at",
        "auth",
        "mode",
        "action",
    ):
        data = envelope("i-header-" + key.replace("_", "-"), "instigate", **{key: hostile})
        scenario.drop(lane, f"header-{key}.md", data, "invalid", reason=rf"\b{key}: ")
    data = envelope("i-header-extra", "instigate", "Ordinary work.\n", x_note=hostile)
    scenario.drop(lane, "header-extra.md", data, "run", ident="i-header-extra", runner="executor")
    json_hostile = {"protocol": "slop.v1", "id": "i-json", "type": "instigate", "from": "a\n\x1b[31m"}
    json_hostile |= {"to": "watcher", "created_at": "2026-07-04T07:15:53Z", "body": "$(id)"}
    scenario.drop(lane, "hostile.json", json.dumps(json_hostile).encode(), "invalid", reason="from: ")
    # Ordinary routing beside the hostile files.
    scenario.drop(lane, "hello.md", envelope("i-hello"), "ack", ident="i-hello")
    scenario.drop(lane, "query.md", envelope("i-query", "query", to="human"), "discuss", ident="i-query")
    discuss = envelope("i-discuss-only", "instigate", "Discuss only: rename the inbox?\n")
    scenario.drop(lane, "discuss-only.md", discuss, "discuss", ident="i-discuss-only")
    result = envelope("i-result", "result", "Done.\n", in_reply_to="i-older", to="human")
    scenario.drop(lane, "result.md", result, "record", ident="i-result")
    scenario.drop(
        lane,
        "stranger.md",
        envelope("i-stranger", to="somebody"),
        "error",
        ident="i-stranger",
        reason="unknown recipient",
    )
    scenario.drop(
        lane,
        "action.md",
        envelope("i-action", "instigate", action="deploy"),
        "refused",
        ident="i-action",
        reason=re.escape(ACTION_OUTSIDE),
    )
    scenario.drop(
        lane,
        "elsewhere.md",
        envelope("i-elsewhere", "instigate", to="watcher:otherhost"),
        "left",
        ident="i-elsewhere",
    )
    # 39: temp, partial and placeholder names of sync clients and editors: never read.
    temp = envelope("i-temp", "instigate", "Run me once, after the rename.\n")
    for name in (
        ".syncthing.t1.md.tmp",
        "t1.md.partial",
        "~$t1.md",
        ".t1.md.swp",
        "t1.md.crdownload",
        ".t1.md.icloud",
        "4913",
        "#t1.md#",
        "t1.md~",
        "t1.md.part",
        "~syncthing~t1.md.tmp",
        ".t1.md",
        "._t1.md",
        "~t1.md",
        ".~lock.t1.md#",
        "t1.md.sb-1a2b3c-XyZ",
    ):
        scenario.drop(lane, name, temp, "ignored")
    scenario.add(lane, ".#t1.md", symlink_to("root@host.1234:1700000000"), "ignored")  # an emacs lock
    scenario.drop(lane, "notes.txt", b"not an envelope\n", "ignored")


def expected_replies(inputs: list[Input]) -> int:
    count, seen = 0, set()
    for item in inputs:
        if item.kind in ("invalid", "refused"):
            count += 1
        elif item.kind == "conflict":
            count += (
                1 if item.ident in seen else 2
            )  # the copy that ran: ack + result; the others one error each
            seen.add(item.ident)
        elif item.kind in ("error", "ack", "discuss", "run") and item.ident not in seen:
            seen.add(item.ident)
            count += 2 if item.kind == "run" else 1
    return count


# -- checks -------------------------------------------------------------------------------------------


def lane_names(hub: HubDir, lane: str) -> set[bytes]:
    return set(os.listdir(os.fsencode(hub.root / lane)))


def replies(hub: HubDir) -> dict[str, tuple[dict[str, Any], str]]:
    """Every reply in outbox/ by file name: (front matter, body)."""
    return {name: (front_matter(text), body_of(text)) for name, text in hub.outbox().items()}


def check_answers(inputs: list[Input], found: dict[str, tuple[dict[str, Any], str]]) -> list[str]:
    """Each input got exactly the reply its kind calls for, and no reply names a file twice."""
    problems: list[str] = []
    ran: dict[str, list[str]] = {}  # conflict copies answered by running, by id
    by_file: dict[str, list[str]] = {}
    for name, (headers, _) in found.items():
        if "file" in headers:
            by_file.setdefault(headers["file"], []).append(name)
    problems += [
        f"{file} is answered {len(names)} times: {names}" for file, names in by_file.items() if len(names) > 1
    ]
    for item in inputs:
        naming = by_file.get(item.file, [])
        own = {name for name in found if item.ident and name.startswith(f"{item.ident}.")}
        if item.kind == "invalid":
            if len(naming) != 1 or ".invalid-" not in naming[0]:
                problems.append(f"{item.file}: expected one invalid-input error, got {naming}")
                continue
            headers, body = found[naming[0]]
            if headers["type"] != "error" or not re.search(item.reason, body, re.IGNORECASE):
                problems.append(f"{item.file}: {headers['type']} without /{item.reason}/: {body[:300]!r}")
        elif item.kind == "error":
            name = f"{item.ident}.error.md"
            if own != {name} or naming:
                problems.append(f"{item.file}: expected only {name}, got {sorted(own)} / {naming}")
                continue
            body = found[name][1]
            silent_run = item.lane == "authorized" and "nothing was run" not in body
            if not re.search(item.reason, body) or silent_run or f"`{item.file}`" not in body:
                problems.append(f"{item.file}: the error lacks /{item.reason}/ or the file: {body[:300]!r}")
        elif item.kind in ("refused", "conflict"):
            if item.kind == "conflict" and not naming:
                ran.setdefault(str(item.ident), []).append(item.file)  # the copy that ran: checked below
                continue
            if len(naming) != 1 or not naming[0].startswith(f"{item.ident}.invalid-"):
                problems.append(f"{item.file}: expected one refusal, {item.ident}.invalid-…, got {naming}")
                continue
            headers, body = found[naming[0]]
            if (headers["type"], headers["in_reply_to"]) != ("error", item.ident) or not re.search(
                item.reason, body
            ):
                problems.append(f"{item.file}: the refusal lacks /{item.reason}/: {body[:300]!r}")
        elif item.kind in ("ack", "discuss", "run"):
            wanted = {
                "ack": {f"{item.ident}.ack.md"},
                "discuss": {f"{item.ident}.result.md"},
                "run": {f"{item.ident}.ack.md", f"{item.ident}.result.md"},
            }[item.kind]
            if own != wanted or naming:
                problems.append(f"{item.file}: expected {sorted(wanted)}, got {sorted(own)} / {naming}")
                continue
            if item.kind == "run":
                headers, body = found[f"{item.ident}.result.md"]
                if headers["mode"] != "execute" or body != f"{item.runner} done {item.ident}\n":
                    problems.append(f"{item.file}: the result is not the {item.runner}'s: {body[:200]!r}")
            if item.kind == "discuss" and found[f"{item.ident}.result.md"][0]["mode"] != "discuss":
                problems.append(
                    f"{item.file}: the discuss result has mode {found[f'{item.ident}.result.md']}"
                )
        elif own or naming:  # record, left, ignored, sidecar: never answered
            problems.append(f"{item.file} ({item.kind}) was answered: {sorted(own)} / {naming}")
    for ident in {str(item.ident) for item in inputs if item.kind == "conflict"}:
        wanted = {f"{ident}.ack.md", f"{ident}.result.md"}
        if len(ran.get(ident, [])) != 1 or not wanted <= set(found):
            problems.append(f"{ident}: exactly one copy must run (ack + result), got {ran.get(ident)}")
    return problems


def check_lanes(hub: HubDir, inputs: list[Input]) -> list[str]:
    """Answered inputs and their signatures left the lanes; left and ignored ones stayed."""
    problems = []
    for lane in ("inbox", "authorized"):
        stays = {
            os.fsencode(item.name)
            for item in inputs
            if item.lane == lane and item.kind in ("left", "ignored")
        }
        present = lane_names(hub, lane)
        if present != stays:
            problems.append(f"{lane}/ holds {sorted(present - stays)}, lost {sorted(stays - present)}")
    return problems


def check_runs(lab: Lab, executor: list[str], action: list[str]) -> list[str]:
    """The journals hold exactly the legitimate ids, once each; each run saw the configured argv."""
    problems = []
    for path, wanted in ((lab.executor_journal, executor), (lab.action_journal, action)):
        ran = Counter(journal(path))
        if ran != Counter(wanted):
            problems.append(f"{path.name}: ran {dict(ran)}, expected each of {sorted(wanted)} once")
    for path in sorted(lab.records.glob("*.json")):
        record = json.loads(path.read_text())
        argv = lab.executor_argv if path.name.startswith("executor-") else lab.action_argv
        if record["argv"] != argv:
            problems.append(f"{path.name}: argv {record['argv']} is not the configured {argv}")
        leaked = sorted(key for key in record["env"] if not key.startswith("SLOP_"))
        if leaked:
            problems.append(f"{path.name}: the child saw {leaked}")
    if lab.canary.exists():
        problems.append("an injection string was executed: the canary file exists")
    return problems


def record_of(lab: Lab, kind: str, ident: str) -> dict[str, Any]:
    (path,) = lab.records.glob(f"{kind}-{ident}-*.json")
    found: dict[str, Any] = json.loads(path.read_text())
    return found


def check_log(hub: HubDir, stderr: str) -> list[str]:
    """One JSON object per line, no raw escape, no line unbounded, no input that made handling fail."""
    problems = []
    raw = (hub.state / "slopd.log").read_bytes()
    if b"\x1b" in raw:
        problems.append("a raw escape character reached the log")
    records = []
    for line in raw.decode("utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            problems.append(f"a log line is not JSON: {line[:200]!r}")
            continue
        if not isinstance(record, dict):
            problems.append(f"a log line is not an object: {line[:200]!r}")
        elif len(line) > 4096:
            problems.append(f"an unbounded log line ({len(line)} characters): {line[:200]!r}")
        else:
            records.append(record)
    failed = [r for r in records if r.get("event") in ("envelope.failed", "job.failed")]
    problems += [f"handling failed: {r.get('file')!r}: {str(r.get('exception'))[-400:]}" for r in failed]
    for line in stderr.splitlines():  # the same records, on stderr
        try:
            json.loads(line)
        except ValueError:
            problems.append(f"a stderr line is not JSON: {line[:200]!r}")
    written = Counter(r["reply"] for r in records if r.get("event") == "reply.written")
    problems += [f"reply {reply} written {count} times" for reply, count in written.items() if count > 1]
    return problems


def ledger_rows(hub: HubDir, query: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(hub.state / "ledger.sqlite3")) as db:
        return list(db.execute(query))


# -- the run --------------------------------------------------------------------------------------------


EXECUTED_BY_EXECUTOR = ["i-cafe", "i-conflict", "i-inj-body", "i-big-line", "i-header-extra", "i-temp"]
EXECUTED_BY_ACTION = ["o-valid", "o-bom", "o-sig-first", "o-legit"]


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_every_hostile_input_at_once_through_one_running_daemon(hub: HubDir, tmp_path: Path) -> None:
    """One daemon, every hostile case at once: it stays up, answers each input once with the right reply,
    runs only the legitimate ids (once each) and changes nothing outside the hub."""
    lab = build_lab(hub, tmp_path)
    scenario = Scenario(hub)
    replay = signed_orders(scenario, lab)
    hostile_inbox(scenario, lab)
    untouchable = [lab.secret, lab.alice.path, lab.outside / "other.md", *lab.outside.glob("*.sig")]
    for path in untouchable:
        os.utime(path, (OLD - 1000, OLD))
    outside = snapshot(tmp_path, skip={"hub", "state", "journals"})
    for path in untouchable:  # the snapshot read them: their access times are set back after it
        os.utime(path, (OLD - 1000, OLD))
    times = {path: (path.stat().st_atime_ns, path.stat().st_mtime_ns) for path in untouchable}

    with RunningDaemon(hub) as daemon:
        daemon.up(timeout=DEADLINE)
        scenario.place_all()

        first_wave = expected_replies(scenario.inputs)
        done = lambda: (  # noqa: E731
            len(hub.outbox()) >= first_wave
            and len(journal(lab.executor_journal)) >= len(EXECUTED_BY_EXECUTOR) - 1
            and len(journal(lab.action_journal)) >= len(EXECUTED_BY_ACTION)
            and check_lanes(hub, scenario.inputs) == []
        )
        with contextlib.suppress(DeadlineError):  # if not, the checks below say what is missing
            until(done, DEADLINE, POLL)
        assert daemon.alive(), "the daemon died during the hostile wave"

        # Second wave: a temp name renamed to a real one runs once (§9 case 39); the archived valid
        # order and its .sig dropped again, and into the inbox, are duplicates (case 17).
        os.rename(hub.root / "inbox" / "t1.md.partial", hub.root / "inbox" / "t1.md")
        scenario.inputs = [item for item in scenario.inputs if item.name != "t1.md.partial"]
        scenario.inputs.append(Input("inbox", "t1.md", "run", "i-temp", runner="executor"))
        for lane, name, data in (
            ("authorized", "valid.md.sig", replay["valid.md.sig"]),
            ("authorized", "valid.md", replay["valid.md"]),
            ("inbox", "replayed.md", replay["valid.md"]),
        ):
            place(hub.root / lane, name, write_bytes(data))
        second_wave: list[Callable[[], bool]] = [
            (hub.root / "outbox" / "i-temp.result.md").exists,
            lambda: not {b"valid.md", b"valid.md.sig"} & lane_names(hub, "authorized"),
            lambda: b"replayed.md" not in lane_names(hub, "inbox"),
        ]
        for second_wave_done in second_wave:  # each in turn; the checks below say what is missing
            with contextlib.suppress(DeadlineError):
                until(second_wave_done, DEADLINE, POLL)

        # Still up and still answering.
        place(hub.root / "inbox", "final.md", write_bytes(envelope("i-final")))
        with contextlib.suppress(DeadlineError):
            until((hub.root / "outbox" / "i-final.ack.md").exists, DEADLINE, POLL)
        answered = (hub.root / "outbox" / "i-final.ack.md").exists()
        scenario.inputs.append(Input("inbox", "final.md", "ack", "i-final"))
        assert daemon.alive(), "the daemon died"
        assert answered, "the daemon no longer answers a handshake"
        code = daemon.stop()
    output = daemon.stdout + daemon.stderr
    assert code == 0, output[-2000:]

    changed = [
        str(path)
        for path, seen in times.items()
        if (path.stat().st_atime_ns, path.stat().st_mtime_ns) != seen
    ]
    assert not changed, f"files outside the hub were read or written: {changed}"
    after = snapshot(tmp_path, skip={"hub", "state", "journals"})
    assert after == outside, {
        key: (outside.get(key), after.get(key))
        for key in outside.keys() | after.keys()
        if outside.get(key) != after.get(key)
    }

    found = replies(hub)
    problems = check_answers(scenario.inputs, found)
    if len(found) != expected_replies(scenario.inputs):
        problems.append(f"{len(found)} replies, expected {expected_replies(scenario.inputs)}")
    problems += check_lanes(hub, scenario.inputs)
    problems += check_runs(lab, EXECUTED_BY_EXECUTOR, EXECUTED_BY_ACTION)
    problems += check_log(hub, output)
    unfinished = ledger_rows(hub, "SELECT key, status FROM inputs WHERE status != 'done'")
    if unfinished:
        problems.append(f"ledger rows not done: {unfinished}")
    duplicates = Counter(row[0] for row in ledger_rows(hub, "SELECT id FROM duplicates"))
    if duplicates != Counter({"i-cafe": 1, "o-valid": 2}):  # conflict copies are refusals, not duplicates
        problems.append(f"duplicates recorded: {dict(duplicates)}")
    assert not problems, "\n".join(problems)

    # What the legitimate runs received: the exact bytes, on stdin only.
    injected = record_of(lab, "executor", "i-inj-body")
    assert injected["stdin_head"].startswith("$(touch ")
    big = record_of(lab, "executor", "i-big-line")
    assert big["stdin_len"] == 1_000_001
    assert big["stdin_sha256"] == hashlib.sha256(b"A" * 1_000_000 + b"\n").hexdigest()
    order_json = json.loads(record_of(lab, "action", "o-valid")["stdin_head"])
    assert (order_json["flag"], order_json["perm"], order_json["when"]) == ("on", "0755", "12:30")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", order_json["created_at"])
    assert order_json["created_at"] in replay["valid.md"].decode()
