"""`slopd send`: what an agent runs once per message — drop it into a hub, maybe await its reply."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from slopd import submit
from slopd.core.envelope import EnvelopeError
from slopd.core.errors import UsageError
from slopd.shell.lanes import Hub, require_hub


def _body(source: str | None) -> str:
    if source is None:
        return ""
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{source}: cannot read the body: {error}") from None


def send(args: argparse.Namespace) -> int:
    hub = Hub(require_hub(args.hub))
    attached = []
    for source in args.asset:
        try:
            attached.append(submit.attach(hub, Path(source)))
        except (ValueError, FileExistsError) as error:
            raise UsageError(str(error)) from None
    envelope = submit.compose(
        type=args.type,
        sender=args.sender,
        to=args.to,
        body=_body(args.file),
        in_reply_to=args.in_reply_to,
        mode=args.mode,
        slug=args.slug,
        assets=tuple(attached),
        project=args.project,
    )
    try:
        submit.submit(hub, envelope)
    except EnvelopeError as error:
        raise UsageError("the envelope would be invalid: " + "; ".join(error.reasons)) from None
    print(envelope.id, flush=True)
    if args.wait is None:
        return 0
    kinds = submit.terminal_kinds(envelope.type)
    if not kinds:
        print(f"slopd send: a {envelope.type} gets no reply; not waiting", file=sys.stderr)
        return 0
    reply = submit.await_reply(hub.root, envelope.id, kinds, args.wait)
    if reply is None:
        print(f"slopd send: no reply to {envelope.id} within {args.wait:g} s", file=sys.stderr)
        return 1
    sys.stdout.write(reply.text)
    return 1 if reply.kind == "error" else 0
