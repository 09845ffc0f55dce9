"""The hosts' hook protocols as their documentation states them, written down for the tests: one
sample input per host and event, and the JSON Schema its output must meet.

Sources (read 2026-12): Claude Code's hooks reference (code.claude.com/docs/en/hooks: common input
fields session_id, transcript_path, cwd, permission_mode, hook_event_name; SessionStart adds source
and model, UserPromptSubmit prompt, Stop stop_hook_active; output `continue`, `stopReason`,
`suppressOutput`, `systemMessage`, `decision: "block"` + `reason` for UserPromptSubmit and Stop,
`hookSpecificOutput {hookEventName, additionalContext}` for SessionStart and UserPromptSubmit);
Codex CLI's hooks (developers.openai.com/codex/hooks: the same names; its output schemas forbid
any other key; Stop input adds turn_id, model, last_assistant_message); Gemini CLI's hooks
reference (geminicli.com/docs/hooks/reference: input session_id, transcript_path, cwd,
hook_event_name, timestamp; SessionStart adds source, BeforeAgent prompt, AfterAgent prompt,
prompt_response, stop_hook_active; `decision` is "allow" or "deny" (alias "block"),
`hookSpecificOutput.additionalContext` at SessionStart and BeforeAgent).
"""

from __future__ import annotations

from typing import Any

COMMON = {
    "session_id": "7d1c1e8a-0f5b-4c4e-9c55-2a3f9e2b8b11",
    "transcript_path": "/home/u/.claude/projects/p/7d1c1e8a.jsonl",
    "cwd": "/home/u/project",
    "permission_mode": "default",
}
INPUTS: dict[tuple[str, str], dict[str, Any]] = {
    ("claude-code", "SessionStart"): {
        **COMMON,
        "hook_event_name": "SessionStart",
        "source": "startup",
        "model": "claude-sonnet-4-5",
    },
    ("claude-code", "UserPromptSubmit"): {
        **COMMON,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Carry on.",
    },
    ("claude-code", "Stop"): {**COMMON, "hook_event_name": "Stop", "stop_hook_active": False},
    ("codex", "SessionStart"): {
        **COMMON,
        "hook_event_name": "SessionStart",
        "source": "startup",
        "model": "gpt-5",
    },
    ("codex", "UserPromptSubmit"): {
        **COMMON,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Carry on.",
        "turn_id": "t1",
        "model": "gpt-5",
    },
    ("codex", "Stop"): {
        **COMMON,
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "turn_id": "t2",
        "model": "gpt-5",
        "last_assistant_message": "Done for now.",
    },
    ("gemini", "SessionStart"): {
        "session_id": "g-1",
        "transcript_path": "/home/u/.gemini/tmp/chat.json",
        "cwd": "/home/u/project",
        "hook_event_name": "SessionStart",
        "timestamp": "2026-12-01T10:00:00Z",
        "source": "startup",
    },
    ("gemini", "BeforeAgent"): {
        "session_id": "g-1",
        "transcript_path": "/home/u/.gemini/tmp/chat.json",
        "cwd": "/home/u/project",
        "hook_event_name": "BeforeAgent",
        "timestamp": "2026-12-01T10:01:00Z",
        "prompt": "Carry on.",
    },
    ("gemini", "AfterAgent"): {
        "session_id": "g-1",
        "transcript_path": "/home/u/.gemini/tmp/chat.json",
        "cwd": "/home/u/project",
        "hook_event_name": "AfterAgent",
        "timestamp": "2026-12-01T10:02:00Z",
        "prompt": "Carry on.",
        "prompt_response": "Done for now.",
        "stop_hook_active": False,
    },
}


def _context(event: str) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["hookEventName"],
        "properties": {"hookEventName": {"const": event}, "additionalContext": {"type": "string"}},
    }


_COMMON_OUT = {
    "continue": {"type": "boolean"},
    "stopReason": {"type": "string"},
    "suppressOutput": {"type": "boolean"},
    "systemMessage": {"type": "string"},
}
_BLOCK_NEEDS_REASON = {
    "if": {"required": ["decision"]},
    "then": {"required": ["reason"], "properties": {"reason": {"type": "string", "pattern": r"\S"}}},
}


def output_schema(host: str, event: str) -> dict[str, Any]:
    """The output object's schema for `host`'s `event`."""
    properties: dict[str, Any] = dict(_COMMON_OUT)
    stop = event in ("Stop", "AfterAgent")
    if not stop:
        properties["hookSpecificOutput"] = _context(event)
    if event != "SessionStart":
        decisions = ["deny", "block", "allow"] if host == "gemini" else ["block"]
        properties["decision"] = {"enum": decisions}
        properties["reason"] = {"type": "string"}
    return {"type": "object", "additionalProperties": False, "properties": properties, **_BLOCK_NEEDS_REASON}
