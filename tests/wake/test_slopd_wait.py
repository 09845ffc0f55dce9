"""`slopd wait` (issue 27 point 4, SPEC §16), black-box: real `slopd wait` processes beside a real
daemon — a new reply for the seat (from its wake cursor, delivered once) or the terminal reply to an
id; the reply printed, exit 0; exit 1 at the timeout; exit 2 for another seat's id. Over `--url`,
the HTTP feed's long-poll (slow set)."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import SLOPD, HubDir, envelope_text, front_matter
from tests.transport.http_rig import served, with_tokens


def waiting(hub: HubDir, *args: str) -> subprocess.Popen[str]:
    """`slopd wait ARGS` in the background (its output read when it exits)."""
    return subprocess.Popen(
        [*SLOPD, "wait", *args], env=hub.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def on_hub(hub: HubDir, seat: str = "alice") -> tuple[str, ...]:
    return ("--hub", str(hub.root), "--state", str(hub.state), "--seat", seat)


def test_a_new_reply_wakes_it_prints_the_reply_and_is_not_new_again(hub: HubDir) -> None:
    """The first call makes the seat's cursor ("after now": an older reply is not new) and times out
    (exit 1); a waiting `slopd wait` exits 0 printing the next reply once it is written; the same
    reply does not wake the next call."""
    hub.drop("old.md", envelope_text("Before.\n", id="old1", type="query", from_="alice"))
    with hub.running() as daemon:
        daemon.until(lambda: "old1.result.md" in hub.outbox())
        first = hub.slopd("wait", *on_hub(hub), "--timeout", "0")
        assert (first.returncode, first.stdout) == (1, "")
        assert "no reply for the seat within 0 s" in first.stderr
        process = waiting(hub, *on_hub(hub), "--timeout", "60")
        hub.drop("new.md", envelope_text("After?\n", id="new1", type="query", from_="alice"))
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        assert front_matter(out)["in_reply_to"] == "new1"
        assert out == hub.reply("new1", "result")
        again = hub.slopd("wait", *on_hub(hub), "--timeout", "0")
        assert again.returncode == 1


def test_an_id_is_answered_by_its_terminal_reply_even_before_the_daemon_read_it(hub: HubDir) -> None:
    """`slopd send` then `slopd wait --id` at once (the file may still be settling): the result is
    printed, as JSON with its seq under --json."""
    with hub.running():
        send = ("send", "--hub", str(hub.root), "--type", "query", "--from", "bob", "--to", "watcher", "-")
        sent = hub.slopd(*send, stdin="Ready?\n")
        ident = sent.stdout.strip()
        done = hub.slopd("wait", *on_hub(hub, "bob"), "--id", ident, "--json", "--timeout", "60")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert (found["type"], found["in_reply_to"], found["seq"]) == ("result", ident, 1)
    assert found["text"] == hub.reply(ident, "result")


def test_timeouts_and_refusals_exit_1_and_2_naming_the_reason(hub: HubDir) -> None:
    """No reply in time: 1. Another seat's id, a malformed id, a URL option with --hub, no seat: 2."""
    hub.drop("c.md", envelope_text("Carol's.\n", id="c1", type="query", from_="carol"))
    hub.run_once()
    late = hub.slopd("wait", *on_hub(hub, "carol"), "--id", "c1", "--timeout", "0")
    assert late.returncode == 0  # already answered: no wait at all
    for args, reason in [
        ((*on_hub(hub), "--id", "c1", "--timeout", "5"), "c1 is not known to this seat"),
        ((*on_hub(hub), "--id", "not an id!"), "--id 'not an id!': not an envelope id"),
        ((*on_hub(hub), "--after", "3"), "--token-file and --after go with --url"),
        (("--hub", str(hub.root), "--state", str(hub.state)), "--seat ''"),
        ((*on_hub(hub), "--timeout", "-1"), "--timeout -1.0"),
    ]:
        refused = hub.slopd("wait", *args)
        assert refused.returncode == 2, (args, refused.stderr)
        assert reason in refused.stderr, refused.stderr


@pytest.mark.slow
def test_over_url_it_long_polls_the_feed_and_an_envelopes_replies(hub: HubDir) -> None:
    """`--url` with SLOPD_TOKEN: a new reply after the feed's tail; an id's terminal reply; `--after`."""
    tokens = with_tokens(hub, ("alice",))
    env = {**hub.env, "SLOPD_TOKEN": tokens["alice"]}
    with served(hub) as (daemon, url):
        process = subprocess.Popen(
            [*SLOPD, "wait", "--url", url, "--json", "--timeout", "60"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        # Send only once the waiter has read the feed's tail: "new" is after it, and a reply sent
        # before a slow start would be old news to it (the feed itself is durable after that).
        daemon.until(lambda: _tail_read(url), timeout=30)
        send = [*SLOPD, "send", "--url", url, "--type", "query", "--from", "alice", "--to", "watcher", "-"]
        sent = subprocess.run(send, env=env, input="Over HTTP?\n", capture_output=True, text=True, check=True)
        ident = sent.stdout.strip()
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        found = json.loads(out)
        assert (found["in_reply_to"], found["type"]) == (ident, "result")
        by_id = subprocess.run(
            [*SLOPD, "wait", "--url", url, "--id", ident, "--timeout", "30"],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert by_id.returncode == 0, by_id.stderr
        assert front_matter(by_id.stdout)["in_reply_to"] == ident
        after = subprocess.run(
            [*SLOPD, "wait", "--url", url, "--after", str(found["seq"] - 1), "--json", "--timeout", "30"],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert json.loads(after.stdout)["seq"] == found["seq"]
        none = subprocess.run(
            [*SLOPD, "wait", "--url", url, "--timeout", "0.5"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert none.returncode == 1


def _tail_read(url: str) -> bool:
    """`/metrics` counts a finished `GET /v1/replies` (the waiter's tail)."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=5) as answer:  # our loopback URL
        text = answer.read().decode()
    return any(
        line.startswith("slopd_http_requests_total") and 'route="/v1/replies"' in line
        for line in text.splitlines()
    )


def test_the_daemon_writes_its_bell_file_after_each_commit(hub: HubDir) -> None:
    """STATE/ledger.bell is written (its mtime moves) when a reply commits: the event other processes'
    waiters wake on, after the commit is visible (the WAL is written just before)."""
    with hub.running() as daemon:
        bell = hub.state / "ledger.bell"
        before = daemon.until(lambda: (bell.exists() and bell.stat().st_mtime_ns) or None)
        hub.drop("q.md", envelope_text("Ring?\n", id="ring1", type="query"))
        daemon.until(lambda: "ring1.result.md" in hub.outbox())
        daemon.until(lambda: bell.stat().st_mtime_ns != before)


def test_without_a_daemons_ledger_it_says_so_and_makes_none(hub: HubDir, tmp_path: Path) -> None:
    """SPEC §14: no second, empty ledger that no daemon would answer into — exit 2, `daemon: not found`."""
    elsewhere = tmp_path / "never-a-daemon"
    done = hub.slopd(
        "wait", "--hub", str(hub.root), "--state", str(elsewhere), "--seat", "alice", "--timeout", "1"
    )
    assert done.returncode == 2, done.stderr
    assert "daemon: not found — replies will not be tracked" in done.stderr
    assert not elsewhere.exists()
