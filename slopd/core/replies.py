"""Replies (SPEC §5): the envelopes slopd writes into `outbox/`, their class and notification.

Rules:
1. A reply's id is derived from what it answers (`core.ids.reply_id`), so a reply written
   again after a crash replaces itself instead of adding a second answer.
2. Class: acks are `silent`; errors are `ping`; a result is `ping` up to 280 characters,
   `hybrid` beyond, `deliverable` when the execution left files.
3. The notification is never the whole payload: ping → the short text (an error also says
   what it answers), hybrid → a summary of
   at most 280 characters and the path, deliverable → the path only, silent → nothing.
4. A `result` or `ack` that answers a request whose effect was refused (a standup entry that
   does not lint) carries `refused: WHAT` in its front matter: a refusal machines can read,
   though by the discuss rule it is not an `error` (`refused`).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from enum import StrEnum

from slopd.core import summary
from slopd.core.envelope import Envelope
from slopd.core.ids import reply_id, timestamp
from slopd.core.outcome import Outcome, Produced
from slopd.core.vocabulary import PROTOCOL

SHORT_TEXT = 280


class ReplyClass(StrEnum):
    SILENT = "silent"
    PING = "ping"
    HYBRID = "hybrid"
    DELIVERABLE = "deliverable"


def _reply(
    *,
    kind: str,
    id: str,
    to: str,
    in_reply_to: str | None,
    body: str,
    reply_class: ReplyClass,
    mode: str,
    watcher: str,
    now: datetime,
    file: str | None = None,
    refused: str | None = None,
) -> Envelope:
    extra: dict[str, str] = {"class": reply_class.value}
    if file is not None:
        extra["file"] = file
    if refused is not None:
        extra["refused"] = refused
    return Envelope(
        protocol=PROTOCOL,
        id=id,
        type=kind,
        sender=watcher,
        to=to,
        in_reply_to=in_reply_to,
        created_at=timestamp(now),
        auth="none",
        mode=mode,
        body=body,
        extra=extra,
    )


def reply_class(reply: Envelope) -> ReplyClass:
    return ReplyClass(str(reply.extra["class"]))


def ack(
    *, answering: str, to: str, text: str, mode: str, watcher: str, now: datetime, refused: str | None = None
) -> Envelope:
    return _reply(
        kind="ack",
        id=reply_id(answering, "ack"),
        to=to,
        in_reply_to=answering,
        body=text + "\n",
        reply_class=ReplyClass.SILENT,
        mode=mode,
        watcher=watcher,
        now=now,
        refused=refused,
    )


def result(
    *,
    answering: str,
    to: str,
    text: str,
    mode: str,
    watcher: str,
    now: datetime,
    files: bool = False,
    refused: str | None = None,
) -> Envelope:
    if files:
        chosen = ReplyClass.DELIVERABLE
    elif len(text.strip()) <= SHORT_TEXT:
        chosen = ReplyClass.PING
    else:
        chosen = ReplyClass.HYBRID
    return _reply(
        kind="result",
        id=reply_id(answering, "result"),
        to=to,
        in_reply_to=answering,
        body=text,
        reply_class=chosen,
        mode=mode,
        watcher=watcher,
        now=now,
        refused=refused,
    )


def error(
    *,
    answering: str,
    to: str,
    reasons: list[str] | tuple[str, ...],
    file: str,
    mode: str,
    watcher: str,
    now: datetime,
    headline: str = "Rejected",
) -> Envelope:
    return _reply(
        kind="error",
        id=reply_id(answering, "error"),
        to=to,
        in_reply_to=answering,
        body=error_body(file, reasons, headline),
        reply_class=ReplyClass.PING,
        mode=mode,
        watcher=watcher,
        now=now,
    )


def of_outcome(
    outcome: Outcome, *, answering: str, to: str, file: str, watcher: str, now: datetime, files: bool
) -> Envelope:
    """The terminal reply to an execution: its `result` (`files`: a deliverable) or its `error`."""
    if isinstance(outcome, Produced):
        return result(
            answering=answering,
            to=to,
            text=outcome.text,
            mode="execute",
            watcher=watcher,
            now=now,
            files=files,
        )
    return error(
        answering=answering,
        to=to,
        reasons=outcome.reasons,
        file=file,
        mode="execute",
        watcher=watcher,
        now=now,
        headline="Execution failed for",
    )


def invalid(
    *,
    file: str,
    reasons: list[str] | tuple[str, ...],
    digest: str,
    id: str | None,
    sender: str | None,
    watcher: str,
    now: datetime,
) -> Envelope:
    """The error for an input that is not a valid envelope; `in_reply_to` only if its id was valid."""
    return _reply(
        kind="error",
        id=reply_id(id or "input", f"invalid-{digest[:12]}"),
        to=sender or "human",
        in_reply_to=id,
        body=error_body(file, reasons),
        reply_class=ReplyClass.PING,
        mode="discuss",
        watcher=watcher,
        now=now,
        file=file,
    )


def noted(reply: Envelope, paragraph: str, *, refused: str | None = None) -> Envelope:
    """`reply` with `paragraph` added to its body (a standup's, rule 4): a result's on a line of its
    own, its class chosen again for the longer text; an ack's on its one line."""
    extra = dict(reply.extra)
    if refused is not None:
        extra["refused"] = refused
    if reply.type == "ack":
        line = reply.body.removesuffix("\n")
        return replace(reply, body=f"{line} {paragraph}\n", extra=extra)
    body = f"{reply.body}\n{paragraph}"
    if extra.get("class") != ReplyClass.DELIVERABLE:
        extra["class"] = (ReplyClass.PING if len(body.strip()) <= SHORT_TEXT else ReplyClass.HYBRID).value
    return replace(reply, body=body, extra=extra)


def error_body(file: str, reasons: list[str] | tuple[str, ...], headline: str = "Rejected") -> str:
    lines = "\n".join(f"- {reason}" for reason in reasons)
    return f"{headline} `{file}`:\n\n{lines}\n"


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def notification(reply: Envelope, path: str) -> str | None:
    """What the human sees for `reply`, written at `path` (relative to the hub)."""
    match reply_class(reply):
        case ReplyClass.SILENT:
            return None
        case ReplyClass.PING if reply.type == "error":
            about = reply.in_reply_to or reply.extra.get("file")
            return _one_line(f"error for {about}: {reply.body}", SHORT_TEXT)
        case ReplyClass.PING:
            return _one_line(reply.body, SHORT_TEXT)
        case ReplyClass.HYBRID:
            gist = summary.first_sentences(reply.body) or summary.title(reply.body)
            return f"{_one_line(gist, SHORT_TEXT)} — {path}"
        case ReplyClass.DELIVERABLE:
            return path.removesuffix(".md") + "/"


def incoming(envelope: Envelope) -> str:
    """The notification for a reply that arrived in the inbox."""
    return _one_line(
        f"{envelope.type} from {envelope.sender} for {envelope.in_reply_to}: {envelope.body}",
        SHORT_TEXT,
    )


def refused(reply: Envelope) -> str | None:
    """Rule 4: what the request asked for that was refused, or None; an `error` is a refusal too."""
    if reply.type == "error":
        return "error"
    value = reply.extra.get("refused")
    return value if isinstance(value, str) and value else None
