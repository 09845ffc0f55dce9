"""`slopd wait`: block until a reply for a seat comes, print it — for shell loops, tmux panes and
hosts without MCP (SPEC §16).

Rules:
1. `--hub`: woken by the filesystem (a watch on `outbox/` and on the ledger's write-ahead log,
   `shell.waker`), not a sleep loop. Without `--id` it waits for the first reply new to the seat
   — after its wake cursor, kept in the daemon's state dir and shared with `slop_wait` and the
   hooks (`transport.wakeups`), made at the seat's tail the first time ("after now") — and
   delivers it (the cursor moves past it). With `--id` (repeatable) it waits for the first
   terminal reply to one of those envelopes, whatever the cursor; an id the daemon has not read
   yet is waited for too (a file still settling).
2. `--url`: the daemon's HTTP feed, long-polled with the token's seat (`--token-file` or
   `SLOPD_TOKEN`): with `--id`, until the server says the envelope's replies are terminal; else
   the first reply after `--after SEQ`, by default after the feed's tail when it starts.
3. It prints the reply file (or, with `--json`, one JSON object: seq, id, type, class,
   in_reply_to, path, written_at, text) and exits 0; at `--timeout` it exits 1 saying so; an id
   that is another seat's, or not an id, is exit 2.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from datetime import UTC, datetime
from typing import Any

from slopd.core.errors import UsageError
from slopd.core.layout import LEDGER_FILE
from slopd.core.validation import ID_PATTERN, PARTY_PATTERN
from slopd.ops import running
from slopd.shell.lanes import Hub, require_hub


def wait(args: argparse.Namespace) -> int:
    for ident in args.id:
        if ID_PATTERN.fullmatch(ident) is None:
            raise UsageError(f"--id {ident!r}: not an envelope id")
    if args.timeout is not None and (not math.isfinite(args.timeout) or args.timeout < 0):
        raise UsageError(f"--timeout {args.timeout}: give seconds, 0 or more")
    timeout = math.inf if args.timeout is None else args.timeout
    found = _from_url(args, timeout) if args.url is not None else _from_hub(args, timeout)
    if found is None:
        what = f"to {', '.join(args.id)}" if args.id else "for the seat"
        print(f"slopd wait: no reply {what} within {args.timeout:g} s", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(found, ensure_ascii=False))
    else:
        sys.stdout.write(str(found.get("text") or ""))
    return 0


def _from_hub(args: argparse.Namespace, timeout: float) -> dict[str, Any] | None:
    """Rule 1."""
    if args.token_file is not None or args.after is not None:
        raise UsageError("--token-file and --after go with --url")
    seat = args.seat or os.environ.get("SLOPD_SEAT", "")
    if PARTY_PATTERN.fullmatch(seat) is None:
        raise UsageError(f"--seat {seat!r}: give the seat whose replies to wait for (a valid `from`)")
    from slopd.shell.ledger.cursors import Cursors  # noqa: PLC0415  # SQLite and watchdog: only here
    from slopd.shell.ledger.receipts import Receipts  # noqa: PLC0415
    from slopd.shell.waker import Waker  # noqa: PLC0415
    from slopd.transport.problems import Problem  # noqa: PLC0415
    from slopd.transport.server import views  # noqa: PLC0415
    from slopd.transport.wakeups import Wakeups  # noqa: PLC0415

    root = require_hub(args.hub).absolute()
    located = running.locate(root, args.state)  # the running daemon's ledger, found through the hub
    ledger = located.state / LEDGER_FILE
    if not ledger.is_file():  # never a second, empty ledger that no daemon will ever answer into
        raise UsageError(f"{running.NOT_FOUND} (no ledger at {located.state}; --state names one)")
    if not located.found:
        print(f"slopd wait: {running.NOT_FOUND}", file=sys.stderr, flush=True)
    receipts, cursors, waker, hub = Receipts(ledger), Cursors(ledger), Waker(root, ledger), Hub(root)
    try:
        wakeups = Wakeups(receipts, cursors, waker, seat, lambda: datetime.now(UTC))
        try:
            reply = wakeups.terminal(args.id, timeout, patient=True) if args.id else wakeups.next_new(timeout)
        except Problem as problem:
            raise UsageError(f"--id: {problem.detail}") from None
        return views.reply(hub, reply) if reply is not None else None
    finally:
        waker.close()
        cursors.close()
        receipts.close()
        hub.close()


def _from_url(args: argparse.Namespace, timeout: float) -> dict[str, Any] | None:
    """Rule 2."""
    if args.seat is not None or args.state is not None:
        raise UsageError("--seat and --state go with --hub; with --url the token's seat is the seat")
    from slopd.cli.messages import token  # noqa: PLC0415
    from slopd.transport import client  # noqa: PLC0415  # stdlib HTTP, only here

    try:
        server = client.Client(args.url, token(args))
    except ValueError as error:
        raise UsageError(str(error)) from None
    try:
        if args.id:
            if len(args.id) > 1:
                raise UsageError("--url waits for one --id at a time")
            return server.await_terminal(args.id[0], timeout)
        after = args.after if args.after is not None else server.tail()
        return server.await_feed(after, timeout)
    except client.Refused as error:
        raise UsageError(f"{args.url}: {error}") from None
