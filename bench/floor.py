"""The physical floor: the least a hub watcher can do per envelope with slopd's durability.

    python bench/floor.py --hub HUB [--ledger PATH] [--polling]
                          [--allowed-signers FILE] [--action NAME=COMMAND ...]

One process, one processing thread, no validation. Per input file:
inotify event (watchdog) → read → front matter split + `yaml.load(Loader=CSafeLoader)` →
[authorized/: read the `NAME.sig` sidecar, verify its Ed25519 SSHSIG with `cryptography`, and
run the named action with the envelope JSON on stdin] → SQLite WAL (synchronous=NORMAL)
`INSERT OR IGNORE` of the id (a known id is archived, unanswered) → reply `outbox/ID.result.md`
(front matter with `in_reply_to: ID`) written tmp + fsync + rename + fsync(outbox) → input
archived by `link` into `archive/` + fsync(archive) + `unlink` (slopd's durability: the archive
link is on disk before the inbox entry goes).

Watching, and the two watchdog pitfalls it avoids (see shared/research/performance-floor.md §6):
* archive by link + unlink, never `rename()` out of the watched lane: an unpaired
  IN_MOVED_FROM makes watchdog's move grouper hold every later event for 0.5 s;
* an `event_filter`, so only the events acted upon cross watchdog's threads. A rename from
  outside the lane is a complete file; with `generate_full_events` it arrives as a move. A file
  written in place arrives as a create at open() — still empty — so the floor acts on its
  IN_CLOSE_WRITE instead (`FileClosedEvent`). `--polling` has no close events: it acts on creates.

At start the watch is added first, then the lanes are listed (sorted) and queued, so nothing is
missed; an input queued twice is harmless (a vanished file is skipped). SIGTERM or SIGINT: exit 0.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import logging
import os
import queue
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from types import FrameType

import yaml
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from watchdog.events import (
    FileClosedEvent,
    FileCreatedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers.api import BaseObserver
from watchdog.observers.inotify import InotifyObserver
from watchdog.observers.polling import PollingObserver

LANES = ("inbox", "authorized")
REPLY = (
    "---\nprotocol: slop.v1\nid: {id}.result\ntype: result\nfrom: watcher:floor\nto: {to}\n"
    "in_reply_to: {id}\ncreated_at: {now}\nauth: none\nmode: {mode}\n---\n{text}"
)
STOP = ("", "")


def fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(directory: str, name: str, data: bytes) -> None:
    temp = os.path.join(directory, f".{name}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(temp, os.path.join(directory, name))
    fsync_dir(directory)


def split(text: str) -> tuple[str, str]:
    if not text.startswith("---\n"):
        raise ValueError("no front matter")
    end = text.find("\n---\n", 3)
    if end < 0:
        raise ValueError("unterminated front matter")
    return text[4 : end + 1], text[end + 5 :]


def _ssh_string(data: bytes, at: int) -> tuple[bytes, int]:
    length = int.from_bytes(data[at : at + 4], "big")
    return data[at + 4 : at + 4 + length], at + 4 + length


def verify_sshsig(message: bytes, armored: bytes, keys: set[bytes], namespace: str) -> bool:
    """An Ed25519 SSHSIG (`ssh-keygen -Y sign`) over `message` by one of `keys`, minimally checked."""
    lines = armored.strip().split(b"\n")
    blob = base64.b64decode(b"".join(lines[1:-1]))
    if blob[:6] != b"SSHSIG":
        return False
    at = 10  # magic + uint32 version
    key_blob, at = _ssh_string(blob, at)
    signed_namespace, at = _ssh_string(blob, at)
    _reserved, at = _ssh_string(blob, at)
    hash_name, at = _ssh_string(blob, at)
    signature_blob, at = _ssh_string(blob, at)
    _key_type, key_at = _ssh_string(key_blob, 0)
    public_key, _ = _ssh_string(key_blob, key_at)
    _sig_type, sig_at = _ssh_string(signature_blob, 0)
    signature, _ = _ssh_string(signature_blob, sig_at)
    if public_key not in keys or signed_namespace != namespace.encode():
        return False
    digest = hashlib.new(hash_name.decode(), message).digest()

    def pack(value: bytes) -> bytes:
        return len(value).to_bytes(4, "big") + value

    signed = b"SSHSIG" + pack(signed_namespace) + pack(b"") + pack(hash_name) + pack(digest)
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, signed)
    except (InvalidSignature, ValueError):
        return False
    return True


def load_keys(path: str | None) -> set[bytes]:
    """The raw Ed25519 keys of an allowed_signers file (`principal ssh-ed25519 BASE64 …`)."""
    keys: set[bytes] = set()
    if path is None:
        return keys
    with open(path, encoding="utf-8") as signers:
        for line in signers:
            fields = line.split()
            if len(fields) >= 3 and fields[1] == "ssh-ed25519":
                blob = base64.b64decode(fields[2])
                _type, at = _ssh_string(blob, 0)
                keys.add(_ssh_string(blob, at)[0])
    return keys


class Enqueue(FileSystemEventHandler):
    def __init__(self, lanes: dict[str, str], put: queue.SimpleQueue[tuple[str, str]], polling: bool) -> None:
        self.lanes, self.put, self.polling = lanes, put, polling

    def dispatch(self, event: FileSystemEvent) -> None:
        if isinstance(event, FileMovedEvent):
            path = os.fsdecode(event.dest_path)
        elif isinstance(event, FileClosedEvent) or (self.polling and isinstance(event, FileCreatedEvent)):
            path = os.fsdecode(event.src_path)
        else:
            return
        lane = self.lanes.get(os.path.dirname(path))
        if lane is not None:
            self.put.put((lane, os.path.basename(path)))


class Floor:
    def __init__(self, args: argparse.Namespace) -> None:
        self.hub = os.path.abspath(args.hub)
        self.outbox = os.path.join(self.hub, "outbox")
        self.archive = os.path.join(self.hub, "archive")
        for lane in (*LANES, "outbox", "archive"):
            os.makedirs(os.path.join(self.hub, lane), exist_ok=True)
        self.db = sqlite3.connect(args.ledger or os.path.join(self.hub, ".floor-ledger.sqlite3"))
        self.db.isolation_level = None
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS ledger (id TEXT PRIMARY KEY, lane TEXT, file TEXT,"
            " received_at REAL) WITHOUT ROWID"
        )
        self.keys = load_keys(args.allowed_signers)
        self.namespace = args.namespace
        self.actions = dict(action.split("=", 1) for action in args.action)
        self.waiting: set[str] = set()  # orders whose signature has not arrived yet

    def handle(self, lane: str, name: str) -> None:
        if name.startswith("."):
            return
        if lane == "authorized" and name.endswith(".md.sig"):
            order = name.removesuffix(".sig")
            if order in self.waiting:
                self.waiting.discard(order)
                self.handle(lane, order)
            return
        if not name.endswith(".md"):
            return
        path = os.path.join(self.hub, lane, name)
        try:
            with open(path, "rb") as source:
                data = source.read()
        except FileNotFoundError:
            return  # queued twice (scan + event): already archived
        try:
            front, body = split(data.decode("utf-8"))
            meta = yaml.load(front, Loader=yaml.CSafeLoader)  # the C *safe* loader
            envelope_id = str(meta["id"])
        except (ValueError, UnicodeDecodeError, yaml.YAMLError, TypeError, KeyError):
            return  # no validation: the floor only measures the valid path
        mode, text = "discuss", f"Received {envelope_id}.\n"
        if lane == "authorized":
            try:
                with open(path + ".sig", "rb") as sidecar:
                    armored = sidecar.read()
            except FileNotFoundError:
                self.waiting.add(name)
                return
            if not verify_sshsig(data, armored, self.keys, self.namespace):
                text = f"Bad signature on {envelope_id}; nothing was run.\n"
            elif meta.get("action") in self.actions:
                order = json.dumps({**meta, "body": body}, default=str).encode()
                run = subprocess.run(
                    shlex.split(self.actions[meta["action"]]), input=order, capture_output=True, check=False
                )
                mode, text = "execute", run.stdout.decode("utf-8", "replace") or "(no output)\n"
        cursor = self.db.execute(
            "INSERT OR IGNORE INTO ledger (id, lane, file, received_at) VALUES (?, ?, ?, ?)",
            (envelope_id, lane, name, time.time()),
        )
        if cursor.rowcount == 1:
            reply = REPLY.format(
                id=envelope_id,
                to=meta.get("from", "human"),
                now=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                mode=mode,
                text=text,
            )
            atomic_write(self.outbox, f"{envelope_id}.result.md", reply.encode())
        self.to_archive(lane, name)
        if lane == "authorized":
            self.to_archive(lane, name + ".sig")

    def to_archive(self, lane: str, name: str) -> None:
        source = os.path.join(self.hub, lane, name)
        target = os.path.join(self.archive, name)
        suffix = 1
        while True:
            try:
                os.link(source, target)
                break
            except FileExistsError:
                suffix += 1
                target = os.path.join(self.archive, f"{name}-{suffix}")
            except FileNotFoundError:
                return
        fsync_dir(self.archive)
        os.unlink(source)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--hub", required=True)
    parser.add_argument("--ledger", help="SQLite ledger (default HUB/.floor-ledger.sqlite3)")
    parser.add_argument("--polling", action="store_true", help="watchdog's PollingObserver, 1 s")
    parser.add_argument("--allowed-signers", help="verify orders in authorized/ against these Ed25519 keys")
    parser.add_argument("--namespace", default="slop")
    parser.add_argument("--action", action="append", default=[], metavar="NAME=COMMAND")
    args = parser.parse_args()

    floor = Floor(args)
    work: queue.SimpleQueue[tuple[str, str]] = queue.SimpleQueue()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        work.put(STOP)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    lanes = {os.path.join(floor.hub, lane): lane for lane in LANES}
    observer: BaseObserver
    if args.polling:
        observer = PollingObserver(timeout=1.0)
        wanted: list[type[FileSystemEvent]] = [FileCreatedEvent, FileMovedEvent]
    else:
        observer = InotifyObserver(generate_full_events=True)
        wanted = [FileMovedEvent, FileClosedEvent]
    handler = Enqueue(lanes, work, args.polling)
    for path in lanes:
        observer.schedule(handler, path, recursive=False, event_filter=wanted)
    observer.daemon = True
    observer.start()
    for path, lane in lanes.items():
        for name in sorted(os.listdir(path)):
            work.put((lane, name))

    while True:
        lane, name = work.get()
        if (lane, name) == STOP:
            break
        floor.handle(lane, name)
    logging.getLogger("watchdog").setLevel(logging.CRITICAL)
    observer.stop()
    observer.join(timeout=5)
    floor.db.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
