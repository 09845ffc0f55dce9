"""Shared fixtures: real hubs in temp dirs, driven through the real `slopd` command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

SLOPD = [sys.executable, "-m", "slopd"]


def envelope_text(body: str = "Body text.\n", **fields: Any) -> str:
    """A valid Markdown envelope; keyword arguments override or add front-matter keys.

    `from_` sets `from`; a value of None drops the key.
    """
    headers: dict[str, Any] = {
        "protocol": "slop.v1",
        "id": "20260704t071553z-example",
        "type": "handoff",
        "from": "claude-code",
        "to": "watcher",
        "in_reply_to": "null",
        "created_at": "2026-07-04T07:15:53Z",
        "auth": "none",
    }
    if "from_" in fields:
        fields["from"] = fields.pop("from_")
    headers.update(fields)
    lines = [f"{key}: {value}" for key, value in headers.items() if value is not None]
    return "---\n" + "\n".join(lines) + "\n---\n" + body


def front_matter(text: str) -> dict[str, Any]:
    """The front matter of a reply slopd wrote (plain YAML is fine: we wrote it)."""
    assert text.startswith("---\n"), text
    head = text[4:].split("\n---\n", 1)[0]
    loaded = yaml.safe_load(head)
    assert isinstance(loaded, dict)
    return loaded


def body_of(text: str) -> str:
    return text[4:].split("\n---\n", 1)[1]


@dataclass
class HubDir:
    """A hub made by `slopd init`, with its state dir and config path beside it (outside it)."""

    root: Path
    state: Path
    config: Path
    env: dict[str, str]

    def slopd(
        self, *args: str, stdin: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*SLOPD, *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=timeout,
            check=False,
        )

    def write_config(self, text: str) -> Path:
        self.config.write_text(text, encoding="utf-8")
        return self.config

    def run_once(
        self, *extra: str, config: bool = True, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        args = ["run", "--hub", str(self.root), "--state", str(self.state), "--once", *extra]
        if config and self.config.exists():
            args += ["--config", str(self.config)]
        result = self.slopd(*args, timeout=timeout)
        assert result.returncode == 0, result.stderr
        return result

    def start(self, *extra: str) -> subprocess.Popen[str]:
        """Start `slopd run` in the background (the caller stops it)."""
        args = ["run", "--hub", str(self.root), "--state", str(self.state), *extra]
        if self.config.exists():
            args += ["--config", str(self.config)]
        return subprocess.Popen(
            [*SLOPD, *args], env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    def drop(self, name: str, content: str | bytes, lane: str = "inbox") -> Path:
        """Drop a file the way a careful agent does: a dot temp file renamed into the lane."""
        data = content.encode() if isinstance(content, str) else content
        temp = self.root / lane / f".{name}.tmp"
        temp.write_bytes(data)
        old = time.time() - 5  # already settled: no settle wait in --once runs
        os.utime(temp, (old, old))
        final = self.root / lane / name
        temp.rename(final)
        return final

    def outbox(self) -> dict[str, str]:
        """Reply files by name (deliverable directories are left out)."""
        return {
            path.name: path.read_text(encoding="utf-8")
            for path in sorted((self.root / "outbox").iterdir())
            if path.is_file() and not path.name.startswith(".")
        }

    def reply(self, envelope_id: str, kind: str) -> str:
        return (self.root / "outbox" / f"{envelope_id}.{kind}.md").read_text(encoding="utf-8")

    def replies_to(self, envelope_id: str | None) -> list[dict[str, Any]]:
        found = [front_matter(text) for text in self.outbox().values()]
        return [headers for headers in found if headers.get("in_reply_to") == envelope_id]

    def archived(self) -> list[str]:
        """Names in every archive day folder."""
        return sorted(path.name for path in (self.root / "archive").glob("*/*"))

    def lane(self, lane: str) -> list[str]:
        return sorted(path.name for path in (self.root / lane).iterdir())

    def log_records(self) -> list[dict[str, Any]]:
        path = self.state / "slopd.log"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(name="hub")
def fixture_hub(tmp_path: Path) -> HubDir:
    root = tmp_path / "hub"
    env = dict(os.environ)
    env.update(
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        XDG_STATE_HOME=str(tmp_path / "xdg-state"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    for key in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
        env.pop(key, None)
    made = HubDir(root=root, state=tmp_path / "state", config=tmp_path / "config.toml", env=env)
    result = made.slopd("init", str(root))
    assert result.returncode == 0, result.stderr
    return made


def stop_daemon(
    process: subprocess.Popen[str], drains: list[threading.Thread], sig: int = signal.SIGTERM
) -> int:
    """Stop a background `slopd run` (`sig`, then kill after 30 s), join its output drains,
    close its pipes; returns its exit code."""
    if process.poll() is None:
        process.send_signal(sig)
    try:
        code = process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        code = process.wait()
    for drain in drains:
        drain.join(timeout=10)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()
    return code


def wait_for(condition: Callable[[], Any], timeout: float = 20.0, interval: float = 0.05) -> Any:
    """Poll `condition` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout} s")
        time.sleep(interval)
