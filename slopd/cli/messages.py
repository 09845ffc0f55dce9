"""`slopd send`: what an agent runs once per message — drop it into a hub (or post it to the hub's
HTTP server), maybe await its reply.

With `--wait`, the exit status says how the request ended: 0 done, 1 refused — an `error`
reply, or a reply marked `refused:` (a standup entry that did not lint: a `result`, by the
discuss rule, that still says no) — or no reply in time."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from slopd import submit
from slopd.core import replies
from slopd.core.assets import Asset
from slopd.core.envelope import Envelope, EnvelopeError, render
from slopd.core.errors import UsageError
from slopd.core.validation import parse
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


def _compose(args: argparse.Namespace, body: str, assets: tuple[Asset, ...] = ()) -> Envelope:
    return submit.compose(
        type=args.type,
        sender=args.sender,
        to=args.to,
        body=body,
        in_reply_to=args.in_reply_to,
        mode=args.mode,
        slug=args.slug,
        assets=assets,
        project=args.project,
    )


def send(args: argparse.Namespace) -> int:
    if args.url is not None:
        return _post(args)
    if args.token_file is not None:
        raise UsageError("--token-file goes with --url")
    hub = Hub(require_hub(args.hub))
    attached = []
    for source in args.asset:
        try:
            attached.append(submit.attach(hub, Path(source)))
        except (ValueError, FileExistsError) as error:
            raise UsageError(str(error)) from None
    body = _body(args.file)
    for attempt in range(1, submit.GENERATED_ID_TRIES + 1):
        envelope = _compose(args, body, tuple(attached))
        try:
            submit.submit(hub, envelope)
            break
        except EnvelopeError as error:
            raise UsageError("the envelope would be invalid: " + "; ".join(error.reasons)) from None
        except FileExistsError:  # a generated id already in inbox/ (64 random bits): take another
            if attempt == submit.GENERATED_ID_TRIES:
                raise UsageError(f"inbox/{envelope.id}.md already exists; send again") from None
    print(envelope.id, flush=True)
    kinds = _waiting(args, envelope)
    if not kinds:
        return 0
    reply = submit.await_reply(hub.root, envelope.id, kinds, args.wait)
    if reply is None:
        print(f"slopd send: no reply to {envelope.id} within {args.wait:g} s", file=sys.stderr)
        return 1
    sys.stdout.write(reply.text)
    return _status(reply.kind, reply.text)


def _waiting(args: argparse.Namespace, envelope: Envelope) -> tuple[str, ...]:
    """The reply kinds to wait for: none without --wait, or for a type that gets no reply."""
    if args.wait is None:
        return ()
    kinds = submit.terminal_kinds(envelope.type)
    if not kinds:
        print(f"slopd send: a {envelope.type} gets no reply; not waiting", file=sys.stderr)
    return kinds


def token(args: argparse.Namespace) -> str:
    """The seat's token for --url: --token-file, else $SLOPD_TOKEN."""
    if args.token_file is not None:
        try:
            return Path(args.token_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"{args.token_file}: cannot read the token: {error}") from None
    token = os.environ.get("SLOPD_TOKEN", "").strip()
    if not token:
        raise UsageError("--url needs a token: --token-file FILE or SLOPD_TOKEN")
    return token


def _post(args: argparse.Namespace) -> int:
    """SPEC §12: the same envelope, posted; retried as SLOP §7 says (`transport.client`)."""
    from slopd.transport import client  # noqa: PLC0415  # only a post needs http.client

    if args.asset:
        raise UsageError("--asset copies files into the hub's assets/; with --url, send them as files")
    try:
        server = client.Client(args.url, token(args))
    except ValueError as error:
        raise UsageError(str(error)) from None
    envelope = _compose(args, _body(args.file))
    data = render(envelope)
    try:
        parse(data, name="envelope.md")
    except EnvelopeError as error:
        raise UsageError("the envelope would be invalid: " + "; ".join(error.reasons)) from None

    def say(text: str) -> None:
        print(f"slopd send: {text}", file=sys.stderr, flush=True)

    try:
        server.send(envelope.id, data, say)
    except (client.Refused, client.Unreachable) as error:
        print(f"slopd send: {args.url}: {error}", file=sys.stderr)
        return 1
    print(envelope.id, flush=True)
    kinds = _waiting(args, envelope)
    if not kinds:
        return 0
    try:
        reply = server.await_reply(envelope.id, kinds, args.wait)
    except client.Refused as error:
        print(f"slopd send: {args.url}: {error}", file=sys.stderr)
        return 1
    if reply is None:
        print(f"slopd send: no reply to {envelope.id} within {args.wait:g} s", file=sys.stderr)
        return 1
    sys.stdout.write(reply.get("text") or "")
    return _status(str(reply.get("type")), reply.get("text") or "")


def _status(kind: str, text: str) -> int:
    """1 when the terminal reply is a refusal (`core.replies.refused`), else 0."""
    if kind == "error":
        return 1
    try:
        reply = parse(text.encode("utf-8"), name="reply.md")
    except EnvelopeError:
        return 0  # slopd writes valid replies; a reply it cannot read was not written by slopd
    refused = replies.refused(reply)
    if refused is not None:
        print(f"slopd send: refused ({refused}): see the reply", file=sys.stderr)
    return 1 if refused is not None else 0
