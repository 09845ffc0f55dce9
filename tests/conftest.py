"""Shared fixtures: real hubs in temp dirs, driven through the real `slopd` command.

One helper each for what many test files need: a hub (`HubDir`), a daemon running on it in the
background (`RunningDaemon`, `HubDir.running`), its log (`HubDir.log_records`, `HubDir.events`)
and a command line written into a TOML config (`toml_argv`, `toml_string`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import pytest
import yaml

from tests import polling, slopd_commands

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


def toml_string(value: str | os.PathLike[str]) -> str:
    """`value` as a TOML basic string: quotes, backslashes and control characters escaped."""
    out = []
    for char in os.fspath(value):
        if char in '"\\':
            out.append("\\" + char)
        elif char < " " or char == "\x7f":
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def toml_argv(argv: Iterable[str | os.PathLike[str]]) -> str:
    """`argv` as a TOML array of strings, for a config's `command = …`."""
    return "[" + ", ".join(toml_string(item) for item in argv) + "]"


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

    @contextlib.contextmanager
    def running(
        self, *extra: str, up_timeout: float = 20.0, stop_timeout: float = 30.0
    ) -> Iterator[RunningDaemon]:
        """A background `slopd run` whose watcher is up for the block; SIGTERM after it, which must
        exit 0 (the block may stop it itself: `stop` is idempotent)."""
        with RunningDaemon(self, *extra) as daemon:
            daemon.up(timeout=up_timeout)
            yield daemon
            code = daemon.stop(timeout=stop_timeout)
        assert code == 0, f"slopd run exited {code} when stopped; stderr ends:\n{daemon.stderr_tail()}"

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
        """The records of STATE/slopd.log, complete lines only: a line being written is left for
        the next look. (Tests of the log's own format read its bytes instead.)"""
        try:
            data = (self.state / "slopd.log").read_bytes()
        except FileNotFoundError:
            return []
        complete = data[: data.rfind(b"\n") + 1].decode("utf-8")
        return [json.loads(line) for line in complete.split("\n") if line]

    def events(self, name: str, **match: Any) -> list[dict[str, Any]]:
        """The log records of event `name` whose keys equal every `match` given."""
        return [
            record
            for record in self.log_records()
            if record.get("event") == name and all(record.get(key) == value for key, value in match.items())
        ]


def hub_env(tmp: Path) -> dict[str, str]:
    """The environment slopd runs in for a test: XDG dirs of its own in `tmp`, no systemd."""
    env = dict(os.environ)
    env.update(
        XDG_CONFIG_HOME=str(tmp / "xdg-config"),
        XDG_STATE_HOME=str(tmp / "xdg-state"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    for key in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
        env.pop(key, None)
    return env


def git_env(tmp: Path) -> dict[str, str]:
    """`hub_env` plus a git with an identity of its own and no config of the user's or system's."""
    env = hub_env(tmp)
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env.update(
        HOME=str(home),
        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CEILING_DIRECTORIES=str(tmp),
        GIT_AUTHOR_NAME="Test Author",
        GIT_AUTHOR_EMAIL="author@example.invalid",
        GIT_COMMITTER_NAME="Test Committer",
        GIT_COMMITTER_EMAIL="committer@example.invalid",
        GIT_TERMINAL_PROMPT="0",
        LC_ALL="C.UTF-8",
    )
    return env


@pytest.fixture(name="hub")
def fixture_hub(tmp_path: Path) -> HubDir:
    root = tmp_path / "hub"
    made = HubDir(root=root, state=tmp_path / "state", config=tmp_path / "config.toml", env=hub_env(tmp_path))
    # No home recorded: the first daemon started claims the hub (whatever names its config gives).
    # `slopd init` in this process (the same code as the command, whose own tests spawn it): a
    # process per test's hub cost the suite about a minute on two cores.
    with pytest.MonkeyPatch.context() as patch:  # `init` reads the default config: the test's own
        patch.setenv("XDG_CONFIG_HOME", made.env["XDG_CONFIG_HOME"])
        result = slopd_commands.run("init", "--no-home", str(root))
    assert result.returncode == 0, result.stderr
    return made


class RunningDaemon:
    """`slopd run` as a subprocess on a hub (its config, when there is one, and its state dir).

    Its stdout and stderr are read by threads into `stdout` and `stderr`, so a full pipe never
    blocks it. Every wait (`up`, `until`) fails at once, with the end of its stderr, if it has
    exited. As a context manager it is always stopped on the way out (SIGTERM, then SIGKILL).
    """

    def __init__(self, hub: HubDir, *extra: str) -> None:
        self.hub = hub
        self._watchers_before = len(hub.events("watcher.started"))
        args = ["run", "--hub", str(hub.root), "--state", str(hub.state), *extra]
        if hub.config.exists():
            args += ["--config", str(hub.config)]
        self._process = subprocess.Popen(
            [*SLOPD, *args],
            env=hub.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._out: list[str] = []
        self._err: list[str] = []
        self._code: int | None = None
        assert self._process.stdout is not None
        assert self._process.stderr is not None
        self._drains = [
            threading.Thread(target=self._drain, args=(self._process.stdout, self._out), daemon=True),
            threading.Thread(target=self._drain, args=(self._process.stderr, self._err), daemon=True),
        ]
        for drain in self._drains:
            drain.start()

    @staticmethod
    def _drain(stream: IO[str], into: list[str]) -> None:
        for line in stream:
            into.append(line)

    def __enter__(self) -> RunningDaemon:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def stdout(self) -> str:
        """What it wrote to stdout so far (all of it once stopped)."""
        return "".join(self._out)

    @property
    def stderr(self) -> str:
        """What it wrote to stderr so far (all of it once stopped)."""
        return "".join(self._err)

    def stderr_tail(self, lines: int = 30) -> str:
        return "".join(self._err[-lines:])

    def alive(self) -> bool:
        return self._process.poll() is None

    def check_alive(self) -> None:
        """Fail the test, with the end of its stderr, if the daemon has exited."""
        code = self._process.poll()
        if code is not None:
            pytest.fail(f"slopd run exited with {code}; stderr ends:\n{self.stderr_tail()}")

    def until(self, condition: Callable[[], Any], timeout: float = 20.0, interval: float = 0.05) -> Any:
        """Poll `condition` until it returns something truthy (returned); fail after `timeout`
        seconds, or at once if the daemon exits."""

        def alive_and(condition_now: Callable[[], Any] = condition) -> Any:
            self.check_alive()
            return condition_now()

        alive_and.__qualname__ = getattr(condition, "__qualname__", repr(condition))
        return polling.until(alive_and, timeout, interval)

    def up(self, timeout: float = 20.0) -> None:
        """Wait until this daemon has logged `watcher.started` (it watches its lanes)."""
        self.until(lambda: len(self.hub.events("watcher.started")) > self._watchers_before, timeout)

    def send_signal(self, sig: int) -> None:
        self._process.send_signal(sig)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        """Send `sig` (unless it has exited), wait `timeout` seconds, then SIGKILL it; its exit code.

        Idempotent: once stopped, it returns the same code without signalling anything.
        """
        if self._code is None:
            if self._process.poll() is None:
                self._process.send_signal(sig)
            try:
                code = self._process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._process.kill()
                code = self._process.wait()
            for drain in self._drains:
                drain.join(timeout=10)
            for stream in (self._process.stdout, self._process.stderr):
                if stream is not None:
                    stream.close()
            self._code = code
        return self._code

    def kill9(self) -> None:
        """SIGKILL it, as a crash would, and check that is how it ended."""
        assert self.stop(signal.SIGKILL) == -signal.SIGKILL
