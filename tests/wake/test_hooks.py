"""`slopd hook HOST EVENT` (issue 27 point 5, SPEC §16), black-box: each host's documented input JSON
on stdin, the output checked against the documented shape (tests/wake/hook_shapes.py) — new replies
and pending approvals as `additionalContext`, delivered once; at stop, a bounded request to go on
while this session's envelopes await their replies; bad input a non-blocking error naming why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from slopd.shell.config import parse
from slopd.shell.lanes import Hub
from slopd.shell.ledger import Ledger
from slopd.transport.mcp.seat import Seat
from tests.conftest import SLOPD, HubDir, toml_argv
from tests.e2e.cli.test_command_imports import SERVERS, imported
from tests.wake.hook_shapes import INPUTS, output_schema
from tests.wake.test_slop_wait import GATED


@pytest.fixture(autouse=True)
def _daemons_ledger(hub: HubDir) -> None:
    """The ledger a daemon of this hub keeps in its state dir (a hook reads it, never makes one)."""
    hub.state.mkdir(parents=True, exist_ok=True)
    Ledger(hub.state / "ledger.sqlite3").close()


def hook(
    hub: HubDir, host: str, event: str, seat: str = "alice", *extra: str, **fields: Any
) -> dict[str, Any]:
    """Run the hook with the host's documented input for `event` (fields override it); the output,
    checked against the documented shape."""
    document = {**INPUTS[(host, event)], **fields}
    args = ("hook", host, event, "--hub", str(hub.root), "--state", str(hub.state), "--seat", seat, *extra)
    done = hub.slopd(*args, stdin=json.dumps(document))
    assert done.returncode == 0, done.stderr
    output: dict[str, Any] = json.loads(done.stdout)
    jsonschema.validate(output, output_schema(host, event))
    return output


def watching(pid: int) -> bool:
    """Whether process `pid` holds an inotify instance (its filesystem watch has started; Linux)."""
    fds = Path(f"/proc/{pid}/fd")
    try:
        return any(os.readlink(fd) == "anon_inode:inotify" for fd in fds.iterdir())
    except OSError:  # a descriptor closed while we looked: look again
        return False


def context(output: dict[str, Any]) -> str:
    return str(output.get("hookSpecificOutput", {}).get("additionalContext", ""))


def send(hub: HubDir, seat: str, type: str = "query", body: str = "Is it done?\n") -> str:
    sent = hub.slopd(
        "send", "--hub", str(hub.root), "--type", type, "--from", seat, "--to", "watcher", "-", stdin=body
    )
    assert sent.returncode == 0, sent.stderr
    return sent.stdout.strip()


def test_claude_code_new_replies_arrive_once_as_context_and_the_wake_cursor_is_shared(hub: HubDir) -> None:
    """SessionStart with nothing new says nothing; a reply written after it comes with the next prompt
    (its id, its path, a summary); the next prompt, and `slopd wait`, find it delivered."""
    with hub.running() as daemon:
        assert hook(hub, "claude-code", "SessionStart") == {}
        ident = send(hub, "alice", body="Is the parser merged?\n")
        daemon.until(lambda: f"{ident}.result.md" in hub.outbox())
        output = hook(hub, "claude-code", "UserPromptSubmit")
        text = context(output)
        assert output["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
        assert f"{ident}.result (result, ping) to {ident}" in text
        assert f"outbox/{ident}.result.md" in text
        assert "Is the parser merged?" in text
        assert hook(hub, "claude-code", "UserPromptSubmit") == {}
        waited = hub.slopd(
            "wait", "--hub", str(hub.root), "--state", str(hub.state), "--seat", "alice", "--timeout", "0"
        )
        assert waited.returncode == 1  # already delivered by the hook
        assert hook(hub, "claude-code", "UserPromptSubmit", "bob") == {}  # bob's seat heard nothing of it


def test_pending_approvals_the_seat_asked_for_are_listed_at_start_and_once_at_a_prompt(
    hub: HubDir, tmp_path: Path
) -> None:
    """A draft alice asked for: named with its action at SessionStart (every session) and at the
    first prompt after it was made, not again; bob's draft is not alice's business."""
    opened = Hub(hub.root)
    try:
        for seat in ("alice", "bob"):
            desk = Seat(opened, tmp_path / "mcp", seat, parse('names = ["watcher"]\n'))
            try:
                drafted = desk.request_approval("deploy" if seat == "alice" else "wipe", "Go.", "ready")
            finally:
                desk.close()
            if seat == "alice":
                mine = drafted["path"]
    finally:
        opened.close()
    prompt = context(hook(hub, "claude-code", "UserPromptSubmit"))
    assert f"{mine} (action deploy)" in prompt
    assert "wipe" not in prompt
    assert hook(hub, "claude-code", "UserPromptSubmit") == {}
    start = context(hook(hub, "claude-code", "SessionStart", session_id="another"))
    assert f"{mine} (action deploy)" in start


def test_stop_asks_to_go_on_while_a_reply_is_outstanding_bounded_and_never_when_already_going_on(
    hub: HubDir, tmp_path: Path
) -> None:
    """An instigate runs (its ack came, not its result): Stop blocks with a reason naming the id and how
    to wait; `stop_hook_active` never blocks; three blocks a session at most; once the result is
    written, nothing is outstanding (for a session first seen then, too)."""
    script, go = tmp_path / "gated.py", tmp_path / "go"
    script.write_text(GATED)
    hub.write_config(f"[executor]\ncommand = {toml_argv([sys.executable, str(script), str(go)])}\n")
    with hub.running() as daemon:
        assert hook(hub, "claude-code", "SessionStart") == {}
        ident = send(hub, "alice", "instigate", "Build it.\n")
        daemon.until(lambda: f"{ident}.ack.md" in hub.outbox())
        first = hook(hub, "claude-code", "Stop")
        assert first["decision"] == "block"
        assert ident in first["reason"]
        assert f"slop_wait(ids=['{ident}'])" in first["reason"]
        assert f"--id {ident} --timeout 50" in first["reason"]
        assert hook(hub, "claude-code", "Stop", stop_hook_active=True) == {}
        assert hook(hub, "claude-code", "Stop")["decision"] == "block"
        assert hook(hub, "claude-code", "Stop")["decision"] == "block"
        assert hook(hub, "claude-code", "Stop") == {}  # the cap: three blocks this session
        assert hook(hub, "claude-code", "Stop", "alice", "--max-blocks", "5")["decision"] == "block"
        go.touch()
        daemon.until(lambda: f"{ident}.result.md" in hub.outbox())
        assert hook(hub, "claude-code", "Stop", session_id="fresh-session") == {}


def test_stop_with_wait_hands_over_the_reply_that_comes_meanwhile(hub: HubDir, tmp_path: Path) -> None:
    """`--wait 50`: the Stop hook holds while the execution runs and, when its result is written (the
    gate opened once the hook is running), blocks with the reply as the agent's next instruction."""
    script, go = tmp_path / "gated.py", tmp_path / "go"
    script.write_text(GATED)
    hub.write_config(f"[executor]\ncommand = {toml_argv([sys.executable, str(script), str(go)])}\n")
    with hub.running() as daemon:
        hook(hub, "claude-code", "SessionStart")
        ident = send(hub, "alice", "instigate", "Build it.\n")
        daemon.until(lambda: f"{ident}.ack.md" in hub.outbox())
        args = (
            "hook",
            "claude-code",
            "Stop",
            "--hub",
            str(hub.root),
            "--state",
            str(hub.state),
            "--seat",
            "alice",
        )
        given = tmp_path / "stop.json"
        given.write_text(json.dumps(INPUTS[("claude-code", "Stop")]))
        with given.open() as stdin:
            process = subprocess.Popen(
                [*SLOPD, *args, "--wait", "50"],
                env=hub.env, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            daemon.until(lambda: watching(process.pid), timeout=30)  # the hook waits on its watch now
            go.touch()
            out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    output = json.loads(out)
    jsonschema.validate(output, output_schema("claude-code", "Stop"))
    assert output["decision"] == "block"
    assert "has come" in output["reason"]
    assert f"outbox/{ident}.result.md" in output["reason"]


@pytest.mark.parametrize("host", ["codex", "gemini"])
def test_codex_and_gemini_get_the_same_news_in_their_own_shapes(
    hub: HubDir, host: str, tmp_path: Path
) -> None:
    """Each host's documented input; the prompt event's context names the new reply; the stop event
    asks to go on as that host's protocol says ("block"; Gemini "deny")."""
    prompt, stop = ("BeforeAgent", "AfterAgent") if host == "gemini" else ("UserPromptSubmit", "Stop")
    script, go = tmp_path / "gated.py", tmp_path / "go"
    script.write_text(GATED)
    hub.write_config(f"[executor]\ncommand = {toml_argv([sys.executable, str(script), str(go)])}\n")
    with hub.running() as daemon:
        assert hook(hub, host, "SessionStart") == {}
        asked = send(hub, "alice", body="Which port?\n")
        running = send(hub, "alice", "instigate", "Build it.\n")
        daemon.until(lambda: {f"{asked}.result.md", f"{running}.ack.md"} <= set(hub.outbox()))
        output = hook(hub, host, prompt)
        assert output["hookSpecificOutput"]["hookEventName"] == prompt
        assert f"{asked}.result" in context(output)
        stopping = hook(hub, host, stop)
        assert stopping["decision"] == ("deny" if host == "gemini" else "block")
        assert running in stopping["reason"]
        go.touch()


@pytest.mark.parametrize(
    ("stdin", "reasons"),
    [
        ("not json", ["stdin is not JSON"]),
        ("[1, 2]", ["stdin must be a JSON object, not list"]),
        (
            json.dumps({"hook_event_name": "Stop", "stop_hook_active": "yes"}),
            [
                "hook_event_name is 'Stop', but this command answers 'UserPromptSubmit'",
                "session_id must be",
                "stop_hook_active must be true or false",
            ],
        ),
    ],
)
def test_input_it_cannot_use_is_a_non_blocking_error_naming_every_reason(
    hub: HubDir, stdin: str, reasons: list[str]
) -> None:
    """Exit 1 (the host goes on and shows it), every reason on stderr, nothing on stdout."""
    args = (
        "hook",
        "claude-code",
        "UserPromptSubmit",
        "--hub",
        str(hub.root),
        "--state",
        str(hub.state),
        "--seat",
        "a",
    )
    done = hub.slopd(*args, stdin=stdin)
    assert (done.returncode, done.stdout) == (1, "")
    for reason in reasons:
        assert reason in done.stderr, done.stderr
    unknown = hub.slopd(
        "hook", "claude-code", "PreToolUse", "--hub", str(hub.root), "--seat", "a", stdin="{}"
    )
    assert unknown.returncode == 1
    assert "'PreToolUse' is not one of claude-code's events" in unknown.stderr


def test_the_prompt_hook_loads_no_server_and_no_watcher(hub: HubDir) -> None:
    """It runs at every prompt: no MCP SDK, web stack, asyncio or watchdog (`--wait` only at stop)."""
    modules = imported(
        hub,
        "hook", "claude-code", "UserPromptSubmit", "--hub", str(hub.root), "--state", str(hub.state),
        "--seat", "alice",
        stdin=json.dumps(INPUTS[("claude-code", "UserPromptSubmit")]),
    )  # fmt: skip
    assert "sqlite3" in modules
    assert not modules & (SERVERS | {"watchdog"})


def test_a_hook_that_cannot_work_is_a_non_blocking_error_and_makes_nothing(
    hub: HubDir, tmp_path: Path
) -> None:
    """Exit 1 — never 2, which the hosts read as "block" (a refused prompt, a forced turn) — with
    the reason, for a hub that is not mounted, no seat, or no daemon's ledger to read; no ledger is
    made in a state dir no daemon keeps (SPEC §14)."""
    document = json.dumps(INPUTS[("claude-code", "UserPromptSubmit")])
    elsewhere = tmp_path / "no-daemon-state"
    cases = {
        "not a hub": ("--hub", str(tmp_path / "unmounted"), "--seat", "alice"),
        "give the seat": ("--hub", str(hub.root), "--state", str(hub.state), "--seat", ""),
        "daemon: not found": ("--hub", str(hub.root), "--state", str(elsewhere), "--seat", "alice"),
    }
    for said, options in cases.items():
        done = hub.slopd("hook", "claude-code", "UserPromptSubmit", *options, stdin=document)
        assert done.returncode == 1, (said, done.returncode, done.stderr)
        assert said in done.stderr, done.stderr
        assert done.stdout == ""
    assert not elsewhere.exists()


def test_settings_printed_by_a_module_run_name_a_command_that_runs(hub: HubDir) -> None:
    """`python -m slopd hook HOST settings` names `python -m slopd`, not its `__main__.py` (no program):
    each command it prints answers the host's input."""
    printed = hub.slopd(
        "hook",
        "claude-code",
        "settings",
        "--hub",
        str(hub.root),
        "--seat",
        "alice",
        "--state",
        str(hub.state),
    )
    assert printed.returncode == 0, printed.stderr
    for groups in json.loads(printed.stdout)["hooks"].values():
        command = groups[0]["hooks"][0]["command"]
        assert command.startswith(f"{sys.executable} -m slopd hook claude-code "), command
        assert "__main__" not in command
    start = json.loads(printed.stdout)["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    ran = subprocess.run(
        ["bash", "-c", start], input=json.dumps(INPUTS[("claude-code", "SessionStart")]),
        capture_output=True, text=True, env=hub.env, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
