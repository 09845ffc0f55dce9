"""The `slopd` command: builds everything, and is the only place that maps failures to exit codes.

Exit status: 0 success, 1 a negative answer (invalid, not found, no reply), 2 a usage or
environment error. Every error message names the file and the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import signal
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from slopd import config as config_module
from slopd import doctor, guide, lock, log, service, status, tail
from slopd.config import ConfigError
from slopd.core import orders, replies, sshsig
from slopd.core.envelope import (
    MAX_ENVELOPE_BYTES,
    PARTY_PATTERN,
    PROTOCOL,
    TYPES,
    Envelope,
    EnvelopeError,
    parse,
    render,
)
from slopd.core.names import Kind, classify
from slopd.daemon import Daemon
from slopd.hub import Hub, LaneError, Unreadable, read_file, write_file
from slopd.hub import init as init_hub
from slopd.ledger import Ledger

LEDGER_NAME = "ledger.sqlite3"
LOG_NAME = "slopd.log"


class UsageError(Exception):
    """A problem with how slopd was called or set up: exit 2."""


def _hub_root(value: str) -> Path:
    root = Path(value)
    if not (root / "inbox").is_dir():
        raise UsageError(f"{root}: not a hub (no inbox/); create one with: slopd init {root}")
    return root


def _state_dir(args: argparse.Namespace, hub: Path) -> Path:
    return Path(args.state) if args.state else config_module.default_state_dir(hub)


def cmd_init(args: argparse.Namespace) -> int:
    root = Path(args.hub)
    text = guide.render(names=config_module.default_names(), max_bytes=MAX_ENVELOPE_BYTES)
    made = init_hub(root, text)
    for path in made:
        print(f"created {path}")
    if not made:
        print(f"{root}: already a hub; nothing changed")
    return 0


def _load_config(args: argparse.Namespace, hub: Path) -> config_module.Config:
    path = Path(args.config) if args.config else None
    config = config_module.load(path)
    chosen = path or config_module.default_config_path()
    if chosen.exists():
        config_module.ensure_outside(hub, chosen, "the config")
    if config.auth.allowed_signers is not None:
        config_module.ensure_outside(hub, config.auth.allowed_signers, "the allowed-signers file")
    return config


def cmd_run(args: argparse.Namespace) -> int:
    hub_root = _hub_root(args.hub)
    config = _load_config(args, hub_root)
    trust = config_module.load_trust(config)
    state = _state_dir(args, hub_root)
    config_module.ensure_outside(hub_root, state, "the state dir")
    state.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        lock_fd = lock.acquire(state)
    except lock.LockHeld as held:
        raise UsageError(f"another slopd holds this hub: {held}") from None
    log.configure(log_file=Path(args.log_file) if args.log_file else state / LOG_NAME, level=args.log_level)
    hub = Hub(hub_root)
    ledger = Ledger(state / LEDGER_NAME)
    daemon = Daemon(hub=hub, ledger=ledger, config=config, state_dir=state, trust=trust)
    stop = threading.Event()

    def on_stop(signum: int, _frame: FrameType | None) -> None:
        stop.set()
        daemon.wakeup.set()

    def on_reload(_signum: int, _frame: FrameType | None) -> None:
        daemon.reload_requested = True
        daemon.wakeup.set()

    def reload() -> config_module.Config:
        return _load_config(args, hub_root)

    daemon.reload = reload
    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    signal.signal(signal.SIGHUP, on_reload)
    started = log.get().bind(hub=str(hub_root), state=str(state), pid=os.getpid())
    started.info("daemon.started", once=args.once)
    try:
        daemon.run(stop=stop, once=args.once, grace=args.grace, polling=args.polling)
    finally:
        ledger.close()
        hub.close()
        log.get().info("daemon.stopped")
        os.close(lock_fd)
    return 0


def _body(source: str | None) -> str:
    if source is None:
        return ""
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{source}: cannot read the body: {error}") from None


def cmd_send(args: argparse.Namespace) -> int:
    hub = Hub(_hub_root(args.hub))
    now = datetime.now(UTC)
    slug = re.sub(r"[^a-z0-9-]+", "-", (args.slug or args.type).lower()).strip("-")[:60] or args.type
    envelope = Envelope(
        protocol=PROTOCOL,
        id=f"{now:%Y%m%dt%H%M%Sz}-{slug}-{secrets.token_hex(2)}",
        type=args.type,
        sender=args.sender,
        to=args.to,
        created_at=replies.timestamp(now),
        in_reply_to=args.in_reply_to,
        mode=args.mode,
        body=_body(args.file),
    )
    data = render(envelope)
    try:
        parse(data, name="send.md")
    except EnvelopeError as error:
        raise UsageError("the envelope would be invalid: " + "; ".join(error.reasons)) from None
    hub.write("inbox", f"{envelope.id}.md", data, replace=False)
    print(envelope.id, flush=True)
    if args.wait is None:
        return 0
    return _wait_for_reply(hub.root, envelope, args.wait)


def _wait_for_reply(root: Path, envelope: Envelope, seconds: float) -> int:
    if envelope.type in ("ack", "result", "error"):
        print(f"slopd send: a {envelope.type} gets no reply; not waiting", file=sys.stderr)
        return 0
    kinds = ("ack",) if envelope.type in ("handshake", "note") else ("result", "error")
    deadline = time.monotonic() + seconds
    while True:
        for kind in kinds:
            path = root / "outbox" / f"{replies.reply_id(envelope.id, kind)}.md"
            if path.is_file():
                sys.stdout.write(path.read_text(encoding="utf-8"))
                return 1 if kind == "error" else 0
        if time.monotonic() >= deadline:
            print(f"slopd send: no reply to {envelope.id} within {seconds:g} s", file=sys.stderr)
            return 1
        time.sleep(0.05)


def cmd_validate(args: argparse.Namespace) -> int:
    worst = 0
    for name in args.files:
        path = Path(name)
        kind = classify(path.name, lane=path.parent.name)
        if kind is Kind.IGNORED:
            print(f"{name}: note: the daemon ignores this name (hidden or temporary) until renamed")
        elif kind in (Kind.OTHER, Kind.BAD_NAME):
            print(f"{name}: note: the daemon does not read this name as an envelope")
        contents = read_file(path, args.max_bytes)
        if isinstance(contents, Unreadable):
            print(f"{name}: invalid\n  - the file {contents.reason}")
            worst = 1
            continue
        try:
            envelope = parse(contents.data, name=path.name, max_bytes=args.max_bytes)
        except EnvelopeError as error:
            print(f"{name}: invalid")
            for reason in error.reasons:
                print(f"  - {reason}")
            worst = 1
            continue
        print(f"{name}: valid ({envelope.type} {envelope.id} from {envelope.sender} to {envelope.to})")
    return worst


def _open_ledger(args: argparse.Namespace, hub: Path) -> Ledger | None:
    path = _state_dir(args, hub) / LEDGER_NAME
    return Ledger(path) if path.exists() else None


def cmd_status(args: argparse.Namespace) -> int:
    hub = _hub_root(args.hub)
    state = _state_dir(args, hub)
    ledger = _open_ledger(args, hub)
    report = status.gather(Hub(hub), ledger, lock.holder(state), state)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(status.render(report))
    return 0


def cmd_tail(args: argparse.Namespace) -> int:
    hub = _hub_root(args.hub)
    path = Path(args.log_file) if args.log_file else _state_dir(args, hub) / LOG_NAME
    if not path.exists() and not args.follow:
        raise UsageError(f"{path}: no log yet (has slopd run on this hub with this state dir?)")
    tail.show(
        path, follow=args.follow, envelope_id=args.id, level=args.level, lines=args.lines, lane=args.lane
    )
    return 0


def cmd_notes(args: argparse.Namespace) -> int:
    hub = _hub_root(args.hub)
    ledger = _open_ledger(args, hub)
    found = ledger.notes(args.search) if ledger is not None else []
    for note in found:
        print(f"## {note.created_at} — {note.sender} — {note.id}\n\n{note.body.strip()}\n")
    if not found:
        print("no notes match" if args.search else "no notes yet", file=sys.stderr)
        return 1 if args.search else 0
    return 0


def _inside_authorized(path: Path) -> bool:
    """Whether `path` sits in a hub's `authorized/` lane (slopd never writes there)."""
    parent = path.resolve().parent
    return parent.name == "authorized" and (parent.parent / "inbox").is_dir()


def cmd_keygen(args: argparse.Namespace) -> int:
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


def cmd_sign(args: argparse.Namespace) -> int:
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


def cmd_verify(args: argparse.Namespace) -> int:
    target = Path(args.file)
    config = config_module.Config(
        names=config_module.default_names(),
        auth=config_module.Auth(allowed_signers=Path(args.allowed_signers), namespace=args.namespace),
    )
    trust = config_module.load_trust(config)
    message = read_file(target, MAX_ENVELOPE_BYTES)
    if isinstance(message, Unreadable):
        print(f"{target}: not verified: the file {message.reason}")
        return 1
    try:
        envelope = parse(message.data, name=target.name)
    except EnvelopeError as error:
        print(f"{target}: not verified: not a valid envelope: {'; '.join(error.reasons)}")
        return 1
    sidecar = envelope.sidecar or f"{target.name}.sig"
    signature = read_file(target.parent / sidecar, sshsig.MAX_SIGNATURE_BYTES)
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
    if isinstance(verdict, orders.Invalid):
        print(f"{target}: not verified: {verdict.reason}")
        return 1
    where = f"{verdict.fingerprint}, allowed_signers line {verdict.line}"
    print(f"{target}: good signature by {verdict.principal} ({where})")
    return 0


def build_parser() -> argparse.ArgumentParser:  # noqa: PLR0915  # one flat list of every option reads best
    parser = argparse.ArgumentParser(prog="slopd", description="A safe SLOP.md handoff hub.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {service.version()}")
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, handler: object, text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=text, description=text)
        sub.set_defaults(handler=handler)
        return sub

    def hub_and_state(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--hub", required=True, help="the hub folder")
        sub.add_argument("--state", help="state dir (default $XDG_STATE_HOME/slopd/<hub-id>)")

    sub = command("init", cmd_init, "create the lanes and HUB.md (changes nothing that exists)")
    sub.add_argument("hub", metavar="HUB")

    sub = command("run", cmd_run, "run the daemon on a hub")
    hub_and_state(sub)
    sub.add_argument("--config", help="TOML config (default $XDG_CONFIG_HOME/slopd/config.toml)")
    sub.add_argument("--once", action="store_true", help="drain what is there, then exit")
    sub.add_argument(
        "--polling", action="store_true", help="poll the lanes (network/FUSE filesystems without events)"
    )
    sub.add_argument("--log-file", help="log file (default STATE/slopd.log)")
    sub.add_argument("--log-level", default="info", choices=log.LEVELS)
    sub.add_argument(
        "--grace",
        type=float,
        default=30.0,
        help="seconds running executions get to finish on SIGTERM (default 30)",
    )

    sub = command("send", cmd_send, "drop a valid envelope into the inbox; prints its id")
    sub.add_argument("--hub", required=True)
    sub.add_argument("--type", required=True, choices=TYPES)
    sub.add_argument("--from", dest="sender", required=True)
    sub.add_argument("--to", required=True)
    sub.add_argument("--in-reply-to")
    sub.add_argument("--mode", choices=("execute", "discuss"))
    sub.add_argument("--slug", help="a few words for the id")
    sub.add_argument("--wait", type=float, metavar="SECS", help="print the terminal reply")
    sub.add_argument("file", nargs="?", metavar="FILE|-", help="the body (- for stdin)")

    sub = command("validate", cmd_validate, "lint envelopes as the daemon would")
    sub.add_argument("files", nargs="+", metavar="FILE")
    sub.add_argument("--max-bytes", type=int, default=MAX_ENVELOPE_BYTES)

    sub = command("keygen", cmd_keygen, "write an OpenSSH Ed25519 key pair; print its allowed_signers line")
    sub.add_argument("path", metavar="PATH")
    sub.add_argument("--principal", required=True, help="who signs with it: the `from` of their orders")
    sub.add_argument("--namespace", default=sshsig.NAMESPACE)

    sub = command("sign", cmd_sign, "sign FILE (SSHSIG, namespace slop) into FILE.sig")
    sub.add_argument("--key", required=True, help="an OpenSSH Ed25519 private key")
    sub.add_argument("--namespace", default=sshsig.NAMESPACE)
    sub.add_argument("--force", action="store_true", help="replace an existing FILE.sig")
    sub.add_argument("file", metavar="FILE")

    sub = command("verify", cmd_verify, "verify FILE and its .sig as the daemon would")
    sub.add_argument("--allowed-signers", required=True)
    sub.add_argument("--namespace", default=sshsig.NAMESPACE)
    sub.add_argument("file", metavar="FILE")

    sub = command("status", cmd_status, "lanes, pending items, last replies, daemon pid")
    hub_and_state(sub)
    sub.add_argument("--json", action="store_true")

    sub = command("tail", cmd_tail, "the JSON log, readable")
    hub_and_state(sub)
    sub.add_argument("-f", "--follow", action="store_true")
    sub.add_argument("--id", help="only lines about this envelope id")
    sub.add_argument("--level", default="debug", choices=log.LEVELS, help="minimum level")
    sub.add_argument("--lane", choices=("inbox", "authorized"), help="only lines about this lane")
    sub.add_argument("-n", "--lines", type=int, default=40, help="how many lines (default 40)")
    sub.add_argument("--log-file", help="log file (default STATE/slopd.log)")

    sub = command("notes", cmd_notes, "the indexed notes, newest first")
    hub_and_state(sub)
    sub.add_argument("--search", metavar="TEXT")
    doctor.register(commands)
    service.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except (UsageError, ConfigError, LaneError) as error:
        print(f"slopd {args.command}: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"slopd {args.command}: {error.filename or ''}: {error.strerror or error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
