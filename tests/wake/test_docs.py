"""docs/notifications.md and docs/waking-agents.md, run as written: every ```sh block in a fresh
home with the installed `slopd` (URLs pointed at a receiver of the test's own), every ```python
block executed, every ```json block parsed."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from pathlib import Path
from typing import Any

from tests.receiver import receiving
from tests.test_readme_sections import ROOT, run_block

DOCS = ROOT / "docs"


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
