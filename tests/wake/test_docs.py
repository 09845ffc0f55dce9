"""docs/notifications.md and docs/waking-agents.md, run as written: every ```sh block in a fresh
home with the installed `slopd` (URLs pointed at a receiver of the test's own), every ```python
block executed, every ```json block parsed."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import jsonschema

from tests import ROOT
from tests.docs_blocks import block_env, run_block, shell_block
from tests.wake.hook_shapes import INPUTS, output_schema
from tests.wake.receiver import receiving

DOCS = ROOT / "docs"
HOSTS = (("claude-code", "claude-code"), ("codex", "codex"), ("gemini", "gemini"))  # the snippets' order


def blocks(page: str, language: str) -> list[str]:
    """The fenced blocks of `language` in docs/`page`, in order."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return [str(block) for block in re.findall(rf"^```{language}\n(.*?)^```", text, re.DOTALL | re.MULTILINE)]


def test_the_notifications_block_sends_a_signed_webhook_and_an_ntfy_post(tmp_path: Path) -> None:
    """The page's one shell block, its ntfy.sh and webhook URLs swapped for a local receiver: the daemon
    posts the query's ping to both, and the webhook's signature checks with the secret the block made,
    through the page's own `genuine` function."""
    (block,) = blocks("notifications.md", "sh")
    with receiving() as receiver:
        swapped = block.replace("https://ntfy.sh/", f"{receiver.url}/").replace(
            "https://hooks.example.com/", f"{receiver.url}/"
        )
        assert swapped.count(receiver.url) == 2
        run_block(swapped, tmp_path, XDG_CONFIG_HOME=str(tmp_path / ".config"))
        phone = receiver.wait(1, path="/slopd-6f1d2c0e9a4b7d35e8c1")
        hooks = receiver.wait(1, path="/slopd")
    assert phone[0].headers["priority"] == "4"
    assert "Is the build green?" in phone[0].body.decode()
    secret = (tmp_path / ".config" / "slopd" / "webhook-secret").read_text().strip().encode()
    namespace: dict[str, Any] = {}
    (python,) = blocks("notifications.md", "python")
    exec(python, namespace)  # the page's receiver-side check, as a reader would paste it
    genuine = namespace["genuine"]
    assert genuine(secret, hooks[0].body, hooks[0].headers["x-slopd-signature"])
    assert not genuine(b"another secret", hooks[0].body, hooks[0].headers["x-slopd-signature"])
    assert not genuine(secret, hooks[0].body + b" ", hooks[0].headers["x-slopd-signature"])
    assert hooks[0].headers["x-slopd-signature"] == (
        "sha256=" + hmac.new(secret, hooks[0].body, hashlib.sha256).hexdigest()
    )
    sent = json.loads(hooks[0].body)
    (example,) = blocks("notifications.md", "json")
    assert set(json.loads(example)) == set(sent)  # the page shows the keys that are sent
    assert (sent["event"], sent["class"], sent["text"]) == ("reply", "ping", phone[0].body.decode())


def test_the_slopd_wait_block_runs_and_delivers_each_reply_once(tmp_path: Path) -> None:
    """The page's shell block: a daemon, a query, its reply printed by `--id`, the same reply new to
    the seat once (as JSON), then nothing new (exit 1)."""
    (block,) = blocks("waking-agents.md", "sh")
    result = run_block(block, tmp_path)
    assert "type: result" in result.stdout
    assert "Is the build green?" in result.stdout
    assert "nothing new: exit 1" in result.stdout


def test_each_hook_settings_snippet_is_what_slopd_prints_and_its_commands_answer(tmp_path: Path) -> None:
    """The three JSON blocks (Claude Code, Codex CLI, Gemini CLI) are `slopd hook HOST settings`'
    output for ~/hub (the program's path aside), and every command they name, run by the shell as the
    host would with the host's documented input, exits 0 with output of the documented shape."""
    snippets = [json.loads(block) for block in blocks("waking-agents.md", "json")]
    assert len(snippets) == 3
    run_block("slopd init ~/hub >/dev/null && slopd run --hub ~/hub --once 2>/dev/null", tmp_path)
    env = block_env(tmp_path)
    for snippet, (host, seat) in zip(snippets, HOSTS, strict=True):
        printed = subprocess.run(
            ["slopd", "hook", host, "settings", "--hub", str(tmp_path / "hub"), "--seat", seat],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        normalized = re.sub(r"[^\"\s]*slopd hook ", "slopd hook ", printed.stdout).replace(str(tmp_path), "~")
        assert json.loads(normalized) == snippet, host
        for event, groups in snippet["hooks"].items():
            (group,) = groups
            (command,) = group["hooks"]
            answered = subprocess.run(
                ["bash", "-c", command["command"]],
                input=json.dumps(INPUTS[(host, event)]), env=env, capture_output=True, text=True, check=False,
            )  # fmt: skip
            assert answered.returncode == 0, (host, event, answered.stderr)
            jsonschema.validate(json.loads(answered.stdout), output_schema(host, event))


def test_the_readme_waking_agents_block_writes_claude_settings_that_name_three_hooks(tmp_path: Path) -> None:
    """The README's section, as written: the settings file it writes holds SessionStart,
    UserPromptSubmit and Stop hooks for the hub; the wait finds no reply and says so (exit 1, its
    timeout — not 2: the daemon's ledger is found)."""
    result = run_block(shell_block("README.md", "Waking agents"), tmp_path)
    assert "exit 1: no reply yet" in result.stdout
    workdir = Path(result.stdout.strip().splitlines()[-1])
    written = json.loads((workdir / "project" / ".claude" / "settings.json").read_text())
    assert set(written["hooks"]) == {"SessionStart", "UserPromptSubmit", "Stop"}
    assert all(
        f"--hub {tmp_path / 'hub'}" in group[0]["hooks"][0]["command"] for group in written["hooks"].values()
    )
