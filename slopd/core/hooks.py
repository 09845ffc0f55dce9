"""Agent hooks (SPEC §16): the JSON-on-stdin, JSON-on-stdout protocols of Claude Code, Codex CLI and
Gemini CLI, for three moments — a session starts, a prompt is submitted, the agent would stop. Pure.

Rules:
1. Each host names its events its own way: Claude Code and Codex CLI `SessionStart`,
   `UserPromptSubmit`, `Stop`; Gemini CLI `SessionStart`, `BeforeAgent`, `AfterAgent`. Each is
   one of the moments `start`, `prompt`, `stop`.
2. Input is one JSON object. `hook_event_name`, when present, must be the event the command was
   set up for; `session_id` must be a non-empty string; `stop_hook_active`, when present, a
   boolean. Anything else is a `HookInputError` naming every reason. Unknown keys are the
   host's business and ignored (hosts add fields between releases).
3. Output is one JSON object of documented keys only (Codex checks `additionalProperties:
   false`). News goes in `hookSpecificOutput: {hookEventName, additionalContext}` at start and
   prompt; with nothing to say, `{}`.
4. At stop it may ask the agent to go on — `decision: "block"` (Gemini: `"deny"`) with a
   `reason` — only while envelopes of this session await their terminal replies, never when
   `stop_hook_active` says the host already goes on because of a stop hook, and never past
   `cap` such answers in one session: it can never loop.
5. The context is bounded (`MAX_CONTEXT` characters, under the hosts' own caps); each reply is
   a pointer (id, path) and a summary, never a payload.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

Moment = Literal["start", "prompt", "stop"]
HOSTS: dict[str, dict[str, Moment]] = {  # in `core.vocabulary.HOOK_HOSTS`' order (the parser's choices)
    "claude-code": {"SessionStart": "start", "UserPromptSubmit": "prompt", "Stop": "stop"},
    "codex": {"SessionStart": "start", "UserPromptSubmit": "prompt", "Stop": "stop"},
    "gemini": {"SessionStart": "start", "BeforeAgent": "prompt", "AfterAgent": "stop"},
}
MAX_CONTEXT = 8000
SUMMARY = 300


class HookInputError(ValueError):
    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


@dataclass(frozen=True, slots=True)
class HookInput:
    moment: Moment
    event: str
    session: str
    stop_hook_active: bool


@dataclass(frozen=True, slots=True)
class Brief:
    """A reply, as the agent's context names it."""

    id: str
    type: str
    reply_class: str
    in_reply_to: str | None
    path: str
    summary: str


@dataclass(frozen=True, slots=True)
class News:
    hub: str
    seat: str
    replies: tuple[Brief, ...] = ()
    approvals: tuple[str, ...] = ()  # drafts this seat asked a human to sign, as pointers
    waiting: tuple[str, ...] = ()  # ids of this session's envelopes still without a terminal reply
    arrived: Brief | None = None  # a terminal reply that came while the stop hook waited


def parse(host: str, event: str, data: bytes) -> HookInput:
    """Rules 1 and 2."""
    moments = HOSTS.get(host)
    if moments is None:
        raise HookInputError([f"{host!r} is not a host slopd knows ({', '.join(HOSTS)})"])
    if event not in moments:
        raise HookInputError(
            [f"{event!r} is not one of {host}'s events slopd answers ({', '.join(moments)})"]
        )
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise HookInputError([f"stdin is not JSON: {error}"]) from None
    if not isinstance(document, dict):
        raise HookInputError([f"stdin must be a JSON object, not {type(document).__name__}"])
    reasons = []
    named = document.get("hook_event_name", event)
    if named != event:
        reasons.append(f"hook_event_name is {named!r}, but this command answers {event!r}")
    session = document.get("session_id")
    if not isinstance(session, str) or not session:
        reasons.append("session_id must be a non-empty string")
    active = document.get("stop_hook_active", False)
    if not isinstance(active, bool):
        reasons.append("stop_hook_active must be true or false")
    if reasons:
        raise HookInputError(reasons)
    return HookInput(moments[event], event, str(session), bool(active))


def context(news: News, moment: Moment) -> str:
    """Rule 5: what the agent is told, or "" when there is nothing new."""
    parts = []
    if news.replies:
        parts.append(f"{len(news.replies)} new repl{'y' if len(news.replies) == 1 else 'ies'} for you:")
        parts += [_line(brief) for brief in news.replies]
        parts.append(f"Read one whole with slop_read(id) or from {news.hub}/PATH.")
    if news.approvals:
        parts.append("Approvals you asked for, still waiting for a human's signature:")
        parts += [f"- {approval}" for approval in news.approvals]
    if news.waiting and moment == "start":
        parts.append(f"Still waiting for replies to: {', '.join(news.waiting)}.")
    if not parts:
        return ""
    text = "\n".join([f"slopd (hub {news.hub}, seat {news.seat}):", *parts])
    return text if len(text) <= MAX_CONTEXT else text[: MAX_CONTEXT - 1] + "…"


def _line(brief: Brief) -> str:
    about = f" to {brief.in_reply_to}" if brief.in_reply_to else ""
    return f"- {brief.id} ({brief.type}, {brief.reply_class}){about} [{brief.path}]: {brief.summary}"


def answer(host: str, hook: HookInput, news: News, *, blocks: int, cap: int) -> tuple[dict[str, Any], bool]:
    """Rules 3 and 4: the output object, and whether it asks the agent to go on (a block)."""
    if hook.moment != "stop":
        text = context(news, hook.moment)
        if not text:
            return {}, False
        return {"hookSpecificOutput": {"hookEventName": hook.event, "additionalContext": text}}, False
    if hook.stop_hook_active or blocks >= cap or not (news.waiting or news.arrived):
        return {}, False
    decision = "deny" if host == "gemini" else "block"
    return {"decision": decision, "reason": _reason(news)}, True


def _reason(news: News) -> str:
    """Rule 4: what the agent reads as its next instruction."""
    if news.arrived is not None:
        return (
            f"slopd: a reply you were waiting for has come: {_line(news.arrived)[2:]} "
            f"Read it (slop_read, or {news.hub}/{news.arrived.path}) and carry on with it."
        )
    waiting = news.waiting
    command = f"slopd wait --hub {news.hub} --seat {news.seat} --id {waiting[0]} --timeout 50"
    return (
        f"slopd: the replies to {', '.join(waiting)} (hub {news.hub}, seat {news.seat}) have not come yet. "
        f"If you need them to finish, wait for them — slop_wait(ids={list(waiting)!r}) if you have the "
        f"slopd MCP tools, else run `{command}` — then carry on with the answer; if you do not need "
        "them now, stop."
    )


def settings(host: str, program: str, options: str, stop_wait: float) -> dict[str, Any]:
    """The host's hook configuration running `PROGRAM HOST EVENT OPTIONS` for each of its three
    events: `.claude/settings.json` and Codex's `hooks.json` (timeouts in seconds), Gemini's
    `settings.json` (timeouts in milliseconds, named hooks)."""
    events: dict[str, Any] = {}
    for event, moment in HOSTS[host].items():
        hook: dict[str, Any] = {"type": "command", "command": f"{program} {host} {event} {options}"}
        timeout = 15 + (stop_wait if moment == "stop" else 0)
        if moment == "stop" and stop_wait:
            hook["command"] += f" --wait {stop_wait:g}"
        if host == "gemini":
            hook = {"name": f"slopd-{moment}", **hook, "timeout": int(timeout * 1000)}
        else:
            hook["timeout"] = int(timeout)
        events[event] = [{"hooks": [hook]}]
    return {"hooks": events}
