"""The HTTP transport over a real `slopd run --http` on 127.0.0.1: start-up refusals, `slopd send
--url`, long-polls woken by a commit, the drain on SIGTERM, the cursor across a restart, and a
SIGKILL between the file and the 202 followed by the client's retries (slow)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SLOPD, HubDir, RunningDaemon
from tests.polling import until
from tests.ports import free_port
from tests.transport.http_rig import markdown, samples, served, value, with_tokens

pytestmark = pytest.mark.slow  # real daemons on sockets or several watchers: the slow set


def call(
    url: str, token: str, method: str = "GET", data: bytes | None = None, **headers: str
) -> tuple[int, Any]:
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Authorization": f"Bearer {token}", **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            body = response.read()
            return response.status, json.loads(body) if body else None
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def post(url: str, token: str, data: bytes) -> tuple[int, Any]:
    return call(f"{url}/v1/envelopes", token, "POST", data, **{"Content-Type": "text/markdown"})


def parked(url: str) -> float:
    """The long-polls asleep until a commit, from `/metrics` (`slopd_long_polls_parked`)."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as response:
        return value(samples(response.read().decode()), "slopd_long_polls_parked") or 0.0


def start_on_every_address(hub: HubDir) -> subprocess.CompletedProcess[str]:
    """`slopd run --http 0.0.0.0:0` with the hub's config: a start that must be refused."""
    where = ("--hub", str(hub.root), "--state", str(hub.state), "--config", str(hub.config))
    return hub.slopd("run", *where, "--http", "0.0.0.0:0")


def test_a_non_loopback_address_without_tls_or_allow_plaintext_refuses_to_start(hub: HubDir) -> None:
    with_tokens(hub)
    done = start_on_every_address(hub)
    assert done.returncode == 2
    assert "tls_cert" in done.stderr
    assert "allow_plaintext" in done.stderr
    assert "0.0.0.0:0" in done.stderr
    assert not hub.events("http.listening")


def test_a_non_loopback_address_needs_a_tokens_file_even_in_plaintext(hub: HubDir) -> None:
    hub.write_config("[http]\nallow_plaintext = true\n")
    done = start_on_every_address(hub)
    assert done.returncode == 2
    assert "[http] tokens" in done.stderr


def test_run_http_without_the_extra_says_how_to_install_it(hub: HubDir, tmp_path: Path) -> None:
    fake = tmp_path / "no-uvicorn" / "uvicorn"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'uvicorn'\", name='uvicorn')\n"
    )
    env = {**hub.env, "PYTHONPATH": os.pathsep.join([str(fake.parent), str(Path.cwd())])}
    done = subprocess.run(
        [*SLOPD, "run", "--hub", str(hub.root), "--state", str(hub.state), "--http", "127.0.0.1:0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "pip install 'slopd[http]'" in done.stderr
    assert "uvicorn" in done.stderr


def test_send_url_posts_waits_and_prints_the_reply(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    with served(hub) as (_daemon, url):
        env = {**hub.env, "SLOPD_TOKEN": tokens["alice"]}
        done = subprocess.run(
            [
                *SLOPD,
                "send",
                "--url",
                url,
                "--type",
                "query",
                "--from",
                "alice",
                "--to",
                "watcher",
                "--wait",
                "20",
                "-",
            ],
            input="How are things?\n",
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        ident = done.stdout.splitlines()[0]
        assert "type: result" in done.stdout
        assert f"in_reply_to: {ident}" in done.stdout
        wrong = subprocess.run(
            [*SLOPD, "send", "--url", url, "--type", "note", "--from", "bob", "--to", "watcher"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert wrong.returncode == 1
        assert "403" in wrong.stderr
        assert "alice" in wrong.stderr
        assert tokens["alice"] not in wrong.stderr + wrong.stdout


def test_a_long_poll_returns_as_the_reply_commits_and_the_feed_keeps_its_place_across_a_restart(
    hub: HubDir,
) -> None:
    tokens = with_tokens(hub)
    alice = tokens["alice"]
    with served(hub) as (_daemon, url):
        status, first = post(url, alice, markdown("20261201t100000z-one"))
        assert status == 202
        status, page = call(f"{url}/v1/replies?after=0&wait=20", alice)
        assert status == 200
        assert [reply["in_reply_to"] for reply in page["replies"]] == ["20261201t100000z-one"]
        cursor = page["next_cursor"]
        results: dict[str, Any] = {}

        def wait() -> None:
            results["answer"] = call(f"{url}/v1/replies?after={cursor}&wait=25", alice)

        waiter = threading.Thread(target=wait)
        waiter.start()
        until(lambda: parked(url) >= 1)  # asleep before the reply is written: the wake-up is tested
        (hub.root / "inbox" / "20261201t100000z-two.md").write_bytes(markdown("20261201t100000z-two"))
        waiter.join(timeout=30)
        status, page = results["answer"]
        assert status == 200
        assert [reply["in_reply_to"] for reply in page["replies"]] == ["20261201t100000z-two"]
        cursor = page["next_cursor"]
    # A restart: the cursor stays good; nothing is missed, nothing repeated.
    with served(hub) as (_daemon, url):
        post(url, alice, markdown("20261201t100000z-three"))
        status, page = call(f"{url}/v1/replies?after={cursor}&wait=20", alice)
        assert status == 200
        assert [reply["in_reply_to"] for reply in page["replies"]] == ["20261201t100000z-three"]
        status, everything = call(f"{url}/v1/replies?after=0", alice)
        assert [reply["in_reply_to"] for reply in everything["replies"]] == [
            "20261201t100000z-one",
            "20261201t100000z-two",
            "20261201t100000z-three",
        ]
        seqs = [reply["seq"] for reply in everything["replies"]]
        assert seqs == sorted(set(seqs))
        assert first["seq"] >= 1


def test_sigterm_ends_a_long_poll_with_an_answer_and_the_daemon_exits_cleanly(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    with served(hub) as (daemon, url):
        results: dict[str, Any] = {}

        def wait() -> None:
            results["answer"] = call(f"{url}/v1/replies?after=0&wait=30", tokens["bob"])

        waiter = threading.Thread(target=wait)
        waiter.start()
        until(lambda: parked(url) >= 1)  # asleep when SIGTERM comes: the drain must wake it
        assert daemon.stop(signal.SIGTERM) == 0
        waiter.join(timeout=30)
        status, page = results["answer"]
        assert status == 200
        assert page["replies"] == []
    events = [record["event"] for record in hub.log_records()]
    assert events.index("http.drained") < events.index("daemon.stopped")
    # The drain woke the long-poll: nothing was still in progress when it gave up waiting.
    assert [record["unfinished"] for record in hub.events("http.drained")] == [0]


@pytest.mark.slow
def test_a_kill_between_the_file_and_the_202_then_the_clients_retries_leave_one_envelope(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    port = free_port()
    address = f"127.0.0.1:{port}"
    killing = dataclasses.replace(hub, env={**hub.env, "SLOPD_FAULTS": "http.dropped"})
    env = {**hub.env, "SLOPD_TOKEN": tokens["alice"]}
    with RunningDaemon(killing, "--http", address) as first:
        first.until(lambda: hub.events("http.listening"))
        sender = subprocess.Popen(
            [
                *SLOPD,
                "send",
                "--url",
                f"http://{address}",
                "--type",
                "query",
                "--from",
                "alice",
                "--to",
                "watcher",
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        until(lambda: not first.alive(), timeout=30)
        assert first.stop() == -signal.SIGKILL
    with RunningDaemon(hub, "--http", address) as second:
        second.up()
        out, err = sender.communicate(timeout=60)
        assert sender.returncode == 0, err
        ident = out.strip()
        assert "retrying" in err
        second.until(lambda: list((hub.root / "outbox").glob(f"{ident}.*.md")))
        second.until(lambda: not list((hub.root / "inbox").iterdir()))
        assert second.stop() == 0
    archived = [path.name for path in (hub.root / "archive").rglob("*.md")]
    assert archived == [f"{ident}.md"]
    replies = sorted(path.name for path in (hub.root / "outbox").iterdir() if path.is_file())
    assert replies == [f"{ident}.result.md"]  # (outbox/drafts/, the approval drafts' folder, aside)
    with contextlib.closing(sqlite3.connect(hub.state / "ledger.sqlite3")) as db:
        assert [row[0] for row in db.execute("SELECT key FROM inputs")] == [ident]
        assert [row[0] for row in db.execute("SELECT state FROM receipts")] == ["written"]
