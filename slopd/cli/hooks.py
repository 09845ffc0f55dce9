"""`slopd hook HOST EVENT --hub HUB --seat SEAT`: the agent hooks of Claude Code, Codex CLI and Gemini
CLI (SPEC §16; their protocols are `core.hooks`). `slopd hook HOST settings` prints the host's
configuration for the three events.

Rules:
1. It reads the host's JSON on stdin and answers JSON on stdout, exit 0. Anything it cannot do —
   input it cannot use, a hub that is not mounted, no seat, no ledger of a daemon found through
   the hub (`ops.running`; a hook never makes one) — is exit 1 with the reason on stderr: a
   hook's non-blocking error, so the session goes on. Never exit 2, which the hosts read as
   "block": a missing hub must not refuse every prompt, nor keep a session from stopping.
2. start and prompt: the replies new to the seat (its wake cursor, `transport.wakeups`: they
   are delivered, so `slopd wait` and `slop_wait` do not return them again) and the drafts it
   asked a human to sign — at start every one still in `outbox/drafts/`, at a prompt those not
   mentioned before (remembered in the ledger's `announced`); at start also what the session
   still waits for.
3. A session starts when its SessionStart hook first sees it; one first seen by another event
   (no SessionStart hook, or a session older than the hooks) is taken to have started `WINDOW`
   before.
4. stop: the session's outstanding envelopes (sent since it started, no terminal reply yet).
   With `--wait S` (at most 50) it first waits that long for one of their replies, woken by the
   filesystem, and hands over the one that came. It asks the agent to go on at most
   `--max-blocks` times a session (`core.hooks` rule 4).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import sys
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from slopd.core import drafts, hooks
from slopd.core.envelope import EnvelopeError
from slopd.core.errors import SetupError, UsageError
from slopd.core.ids import timestamp
from slopd.core.layout import LEDGER_FILE
from slopd.core.validation import PARTY_PATTERN, parse
from slopd.core.vocabulary import MAX_WAIT
from slopd.ops import running
from slopd.shell.lanes import Hub, LaneError, require_hub
from slopd.shell.ledger import sql
from slopd.shell.reads import Contents

if TYPE_CHECKING:
    from slopd.shell.ledger import Ledger
    from slopd.shell.ledger.receipts import FeedReply
    from slopd.transport.wakeups import Wakeups

WINDOW = timedelta(hours=1)
MAX_INPUT = 1 << 20
NEW_REPLIES = 10


def hook(args: argparse.Namespace) -> int:
    if args.event == "settings":
        return _settings(args)
    said = f"slopd hook {args.host} {args.event}"
    try:
        given = hooks.parse(args.host, args.event, sys.stdin.buffer.read(MAX_INPUT))
        if not 0 <= args.wait <= MAX_WAIT:
            raise UsageError(f"--wait {args.wait:g}: give 0 to {MAX_WAIT:g} seconds")
        output = _answer(args, given)
    except hooks.HookInputError as error:
        print(f"{said}: {'; '.join(error.reasons)}", file=sys.stderr)
        return 1
    except (SetupError, OSError, sql.Error) as error:  # rule 1: never 2, the hosts' "block"
        print(f"{said}: {error}", file=sys.stderr)
        return 1
    print(json.dumps(output, ensure_ascii=False))
    return 0


def _seat(args: argparse.Namespace) -> str:
    seat = args.seat or os.environ.get("SLOPD_SEAT", "")
    if PARTY_PATTERN.fullmatch(seat) is None:
        raise UsageError(f"--seat {seat!r}: give the seat this agent speaks for (a valid `from`)")
    return seat


def _settings(args: argparse.Namespace) -> int:
    """The host's configuration, with this hub and seat (and the absolute path of this slopd)."""
    root = require_hub(args.hub).absolute()
    options = f"--hub {shlex.quote(str(root))} --seat {shlex.quote(_seat(args))}"
    if args.state:
        options += f" --state {shlex.quote(str(args.state))}"
    program = f"{_program()} hook"
    print(json.dumps(hooks.settings(args.host, program, options, args.wait or 10.0), indent=2))
    return 0


def _program() -> str:
    """How the host should run this slopd: its absolute path; `python -m slopd` for a run of the
    module (its `__main__.py` is no program); plain `slopd` when it was found on PATH."""
    argv0 = sys.argv[0]
    if argv0.endswith("__main__.py"):
        return f"{shlex.quote(sys.executable)} -m slopd"
    return shlex.quote(argv0) if os.path.isabs(argv0) else "slopd"


def _answer(args: argparse.Namespace, given: hooks.HookInput) -> dict[str, object]:
    from slopd.shell.ledger import Ledger  # noqa: PLC0415
    from slopd.shell.ledger.cursors import Cursors  # noqa: PLC0415  # SQLite: only once the input is good
    from slopd.shell.ledger.receipts import Receipts  # noqa: PLC0415
    from slopd.shell.waker import Waker  # noqa: PLC0415
    from slopd.transport.wakeups import Wakeups  # noqa: PLC0415

    seat, root = _seat(args), require_hub(args.hub).absolute()
    located = running.locate(root, args.state)
    path = located.state / LEDGER_FILE
    if not path.is_file():
        raise SetupError(f"{running.NOT_FOUND} (no ledger at {located.state})")
    ledger, receipts, cursors = Ledger(path), Receipts(path), Cursors(path)
    hub, waker = Hub(root), Waker(root, path)
    try:
        now = datetime.now(UTC)
        wakeups = Wakeups(receipts, cursors, waker, seat, lambda: datetime.now(UTC))
        first = timestamp(now if given.moment == "start" else now - WINDOW)
        started, blocks = cursors.session(seat, given.session, first)
        news = hooks.News(hub=str(root), seat=seat)
        if given.moment != "stop":
            news = hooks.News(
                str(root),
                seat,
                replies=tuple(_brief(hub, reply) for reply in wakeups.all_new(NEW_REPLIES)),
                approvals=_approvals(hub, ledger, seat, every=given.moment == "start", now=timestamp(now)),
                waiting=tuple(wakeups.outstanding(started)) if given.moment == "start" else (),
            )
        elif not given.stop_hook_active and blocks < args.max_blocks:
            news = _stopping(hub, wakeups, news, started, args.wait)
        output, blocked = hooks.answer(args.host, given, news, blocks=blocks, cap=args.max_blocks)
        if blocked:
            cursors.blocked(seat, given.session)
        return output
    finally:
        waker.close()
        cursors.close()
        receipts.close()
        ledger.close()
        hub.close()


def _stopping(hub: Hub, wakeups: Wakeups, news: hooks.News, started: str, wait: float) -> hooks.News:
    """Rule 4."""
    waiting = tuple(wakeups.outstanding(started))
    if not waiting:
        return news
    arrived = wakeups.terminal(waiting, wait) if wait > 0 else None
    if arrived is not None:
        return hooks.News(news.hub, news.seat, arrived=_brief(hub, arrived))
    return hooks.News(news.hub, news.seat, waiting=waiting)


def _brief(hub: Hub, reply: FeedReply) -> hooks.Brief:
    found = hub.read_path(reply.path, 1 << 20)
    text = found.data.decode("utf-8", "replace") if isinstance(found, Contents) else ""
    body = " ".join(text.split("\n---\n", 1)[-1].split())
    summary = body if len(body) <= hooks.SUMMARY else body[: hooks.SUMMARY - 1] + "…"
    return hooks.Brief(reply.id, reply.type, reply.reply_class, reply.in_reply_to, reply.path, summary)


def _approvals(hub: Hub, ledger: Ledger, seat: str, *, every: bool, now: str) -> tuple[str, ...]:
    """Rule 2: the drafts `seat` asked for that still wait (only those not yet mentioned, unless `every`)."""
    try:
        names = sorted(entry.name for entry in hub.entries(drafts.FOLDER) if drafts.is_draft(entry.name))
    except (OSError, LaneError):
        return ()
    place, found = f"hook:{seat}", []
    mentioned = ledger.announced(place)
    for name in names:
        read = hub.read(drafts.FOLDER, name, 1 << 20)
        if not isinstance(read, Contents):
            continue
        try:
            envelope = parse(read.data, name=name)
        except EnvelopeError:
            continue
        digest = hashlib.sha256(read.data).hexdigest()
        if drafts.requester(envelope) != seat or (not every and (name, digest) in mentioned):
            continue
        found.append(f"{drafts.FOLDER}/{name} (action {envelope.action or '?'})")
        ledger.announce(place, name, digest, now=now)
    return tuple(found)
