"""Telling the human (issue 27 point 1, SPEC §16), black-box: the real daemon posts to a real HTTP
receiver on 127.0.0.1 standing in for an ntfy server and a webhook endpoint — a title, a priority
by class and a link to the item's console page; signed JSON; approval requests too; the pipeline
never waits for the network; the rate limit applies; bad settings refuse to start."""

from __future__ import annotations

import hashlib
import hmac
import json
import signal
from pathlib import Path
from typing import Any

import pytest

from slopd.shell.config import ConfigError, parse
from slopd.shell.lanes import Hub
from slopd.transport.mcp.seat import Seat
from tests.conftest import HubDir, envelope_text, toml_string
from tests.e2e.signing.test_orders import ALICE
from tests.e2e.signing.test_quorum import GRACE, QuorumLab, two_person_order
from tests.e2e.signing.test_quorum import fixture_lab as fixture_lab  # noqa: PLC0414  # the quorum lab, reused
from tests.e2e.signing.test_quorum import humans as humans  # noqa: PLC0414
from tests.transport.http_rig import served
from tests.wake.receiver import Received, Receiver, receiving

SECRET = "s3cret-for-the-test"
TOKEN = "tk_phone_token"
LONG = (  # its discuss result is long: a hybrid
    "# Migrate the streaming tokenizer\n\n"
    "The tokenizer now streams its input instead of loading whole files into memory, which fixes "
    "the out-of-memory crash on the large production logs. Error positions are now reported as a "
    "line and a column for every token, including tokens inside nested blocks.\n\n"
    "### What's pending\n"
    "- [ ] Port the YAML conformance tests to the streaming tokenizer (PAYLOAD-TAIL)\n"
    "- [ ] Benchmark the one-gigabyte fixture on the slow disk\n"
)


def configure(hub: HubDir, receiver: Receiver, *, ntfy: bool = True, extra: str = "") -> None:
    """`[notify.ntfy]` (its token file named relative to the config) and `[notify.webhook]`."""
    (hub.config.parent / "ntfy-token").write_text(TOKEN + "\n")
    secret = hub.config.parent / "hook-secret"
    secret.write_text(SECRET + "\n")
    text = extra
    if ntfy:
        text += f'[notify.ntfy]\nurl = "{receiver.url}/phone-topic"\ntoken_file = "ntfy-token"\n'
    text += f'[notify.webhook]\nurl = "{receiver.url}/hook"\nsecret_file = {toml_string(secret)}\n'
    hub.write_config(text)


def webhook(post: Received) -> dict[str, Any]:
    """The JSON of a webhook post, after checking its signature independently of slopd's code."""
    expected = "sha256=" + hmac.new(SECRET.encode(), post.body, hashlib.sha256).hexdigest()
    assert post.headers["x-slopd-signature"] == expected
    assert post.headers["content-type"] == "application/json"
    found: dict[str, Any] = json.loads(post.body)
    assert set(found) == {"event", "id", "class", "text", "link"}
    return found


def by_id(posts: list[Received]) -> dict[str, dict[str, Any]]:
    return {str(found["id"]): found for found in map(webhook, posts)}


def test_replies_reach_ntfy_and_the_webhook_with_priority_title_and_signature(hub: HubDir) -> None:
    """A ping result, a hybrid result and an error reach both; a silent ack reaches neither; the
    hybrid carries its summary and path, never the rest of the payload."""
    with receiving() as receiver:
        configure(hub, receiver)
        hub.drop("q.md", envelope_text("Is the build green?\n", id="q1", type="query"))
        hub.drop("h.md", envelope_text(LONG, id="h1", type="handoff"))
        hub.drop("bad.md", "---\nprotocol: slop.v2\nid: bad1\n---\nNot an envelope.\n")
        hub.drop("n.md", envelope_text("# A note\n", id="n1", type="note"))
        hub.run_once()
        phone = receiver.wait(3, path="/phone-topic")
        hooks = receiver.wait(3, path="/hook")

    assert len(phone) == len(hooks) == 3  # the note's silent ack is no notification
    titles = {post.headers["title"]: post for post in phone}
    assert set(titles) == {"slopd: result for q1", "slopd: result for h1", "slopd: error for bad1"}
    assert [
        titles["slopd: result for q1"].headers["priority"],
        titles["slopd: result for h1"].headers["priority"],
    ] == [
        "4",
        "3",
    ]
    assert titles["slopd: error for bad1"].headers["priority"] == "4"
    assert all(post.headers["authorization"] == f"Bearer {TOKEN}" for post in phone)
    assert all("click" not in post.headers for post in phone)  # no HTTP server: no console to link to
    assert "PAYLOAD-TAIL" not in titles["slopd: result for h1"].body.decode()
    assert "outbox/h1.result.md" in titles["slopd: result for h1"].body.decode()

    sent = {key.split("-")[0]: found for key, found in by_id(hooks).items()}  # bad1.invalid-DIGEST
    assert set(sent) == {"q1.result", "h1.result", "bad1.invalid"}
    assert (sent["q1.result"]["event"], sent["q1.result"]["class"]) == ("reply", "ping")
    assert sent["h1.result"]["class"] == "hybrid"
    assert "PAYLOAD-TAIL" not in json.dumps(sent)
    assert all(found["link"] is None for found in sent.values())
    assert sent["q1.result"]["text"] == titles["slopd: result for q1"].body.decode()
    assert [record["to"] for record in hub.events("notify.delivered")].count("webhook http://127.0.0.1") == 3
    logged = (hub.state / "slopd.log").read_text()
    assert TOKEN not in logged
    assert SECRET not in logged


def test_a_burst_is_rate_limited_to_five_and_the_rest_coalesced_into_one(hub: HubDir) -> None:
    """Seven errors at once: five posts as they come, then one "2 more notifications" (at shutdown here)."""
    with receiving() as receiver:
        configure(hub, receiver, ntfy=False)
        for number in range(7):
            hub.drop(f"bad{number}.md", f"---\nid: bad-{number}\n---\nbroken\n")
        hub.run_once()
        hooks = [webhook(post) for post in receiver.wait(6, path="/hook")]
    assert [found["event"] for found in hooks] == ["reply"] * 5 + ["coalesced"]
    assert hooks[-1]["text"].startswith("2 more notifications")
    assert len(hub.events("notify")) == 7  # every one is still logged


def test_with_http_the_pipeline_answers_while_the_receiver_hangs_and_links_reach_the_console(
    hub: HubDir, tmp_path: Path
) -> None:
    """`slopd run --http`: replies are written and archived while the receiver holds every answer;
    released, it gets each notification with a link to the item's console page on that server. An
    approval request drafted by the MCP tool (another process's work, a file in outbox/drafts/) is
    announced once — not again by the next daemon on the hub."""
    with receiving(hold=True) as receiver:
        configure(hub, receiver)
        with served(hub) as (daemon, url):
            hub.drop("q.md", envelope_text("First?\n", id="Q1", type="query"))
            daemon.until(lambda: "q1.result.md" in hub.outbox() and hub.archived() == ["q.md"])
            hub.drop("r.md", envelope_text("Second?\n", id="r2", type="query"))
            daemon.until(lambda: "r2.result.md" in hub.outbox() and "r.md" in hub.archived())
            assert receiver.posts == []  # nothing was answered yet: the pipeline did not wait for it
            receiver.release()
            sent = by_id(receiver.wait(2, path="/hook"))
            console = url.replace("://127.0.0.1:", "://localhost:")  # the console's origin: its cookie's
            assert sent["q1.result"]["link"] == f"{console}/activity/q1"
            assert sent["r2.result"]["link"] == f"{console}/activity/r2"
            clicks = {
                post.headers["title"]: post.headers["click"] for post in receiver.wait(2, path="/phone-topic")
            }
            assert clicks["slopd: result for Q1"] == f"{console}/activity/q1"

            opened = Hub(hub.root)
            desk = Seat(opened, tmp_path / "mcp-state", "claude-code", parse('names = ["watcher"]\n'))
            try:
                drafted = desk.request_approval("deploy", "Deploy build 42 to production.", "the tests pass")
            finally:
                desk.close()
                opened.close()
            name = Path(drafted["path"]).name
            hooks = receiver.wait(3, path="/hook")
            approval = webhook(hooks[-1])
            assert approval["event"] == "approval"
            assert approval["class"] == "approval"
            assert approval["link"] == f"{console}/approvals/drafts/{name}"
            assert "claude-code" in approval["text"]
            assert "deploy" in approval["text"]
            assert "Deploy build 42" not in approval["text"]  # a pointer, not the order's body
            phone = receiver.wait(3, path="/phone-topic")[-1]
            assert (phone.headers["priority"], phone.headers["click"]) == ("4", approval["link"])
        hub.run_once()  # another daemon's start on the same hub and state: nothing new to announce
        assert len(receiver.posts) == 6


def test_an_order_waiting_for_a_quorum_member_is_announced_once(lab: QuorumLab) -> None:
    """alice signed a two-person order, bob's sidecar is missing: one approval notice naming what it has
    and what it waits for, while held; then the refusal after the grace notifies as an error."""
    lab.configure(sig_grace=GRACE)
    with receiving() as receiver:
        with lab.hub.config.open("a", encoding="utf-8") as config:
            secret = lab.hub.config.parent / "hook-secret"
            secret.write_text(SECRET)
            config.write(
                f'[notify.webhook]\nurl = "{receiver.url}/hook"\nsecret_file = {toml_string(secret)}\n'
            )
        ident, name = "20260704t121000z-alone", "o1.md"
        data = two_person_order(ident, name)
        lab.drop_order(name, data, {f"{name}.sig": lab.sign(name, data)})
        lab.hub.run_once()
        sent = [webhook(post) for post in receiver.wait(2, path="/hook")]
    approvals = [found for found in sent if found["event"] == "approval"]
    assert len(approvals) == 1
    assert approvals[0]["class"] == "approval"
    assert f"authorized/{name}" in approvals[0]["text"]
    assert f"{name}.sig" in approvals[0]["text"]
    assert f"missing {name}.bob.sig" in approvals[0]["text"]
    assert [found["id"] for found in sent if found["event"] == "reply"] == [f"{ident}.error"]
    assert ALICE in lab.hub.reply(ident, "error")


@pytest.mark.parametrize(
    ("toml", "reason"),
    [
        ('[notify.webhook]\nurl = "http://127.0.0.1:9/x"\n', "notify.webhook.secret_file: missing"),
        ('[notify.webhook]\nsecret_file = "s"\n', "notify.webhook.url: missing"),
        (
            '[notify.ntfy]\nurl = "ftp://ntfy.example/t"\n',
            "notify.ntfy.url: expected an http:// or https:// URL",
        ),
        ('[notify.ntfy]\nurl = "https://ntfy.sh/t"\npriority = 5\n', "notify.ntfy.priority: unknown key"),
        (
            '[notify.ntfy]\nurl = "https://ntfy.sh:99999/t"\n',
            "notify.ntfy.url: 'https://ntfy.sh:99999/t' is not a URL",
        ),
        ("[notify]\n", "notify.command: missing (or give [notify.ntfy] or [notify.webhook])"),
    ],
)
def test_notify_tables_are_checked_strictly(toml: str, reason: str) -> None:
    """A missing or unknown key, or a URL that is not http(s), is an error naming the key."""
    with pytest.raises(ConfigError) as raised:
        parse(toml)
    assert reason in str(raised.value)


def test_an_unreadable_or_hub_held_secret_refuses_to_start_naming_the_file(hub: HubDir) -> None:
    """A secret file that cannot be read, or one inside the hub, is exit 2 naming it; nothing runs."""
    missing = hub.config.parent / "nowhere" / "secret"
    hub.write_config(
        f'[notify.webhook]\nurl = "http://127.0.0.1:9/x"\nsecret_file = {toml_string(missing)}\n'
    )
    hub.drop("q.md", envelope_text("Hello?\n", id="q1", type="query"))
    args = ("run", "--hub", str(hub.root), "--state", str(hub.state), "--config", str(hub.config), "--once")
    refused = hub.slopd(*args)
    assert refused.returncode == 2
    assert str(missing) in refused.stderr
    inside = hub.root / "notes" / "secret"
    inside.write_text("s")
    hub.write_config(f'[notify.webhook]\nurl = "http://127.0.0.1:9/x"\nsecret_file = {toml_string(inside)}\n')
    refused = hub.slopd(*args)
    assert refused.returncode == 2
    assert "is inside the hub" in refused.stderr
    assert hub.outbox() == {}


def test_a_reload_moves_the_pushes_to_the_new_webhook_and_a_bad_one_keeps_the_old(hub: HubDir) -> None:
    """SIGHUP with another webhook URL: the next notice goes there; SIGHUP with a secret file that
    cannot be read: logged, and the running webhook keeps working."""
    secret = hub.config.parent / "hook-secret"
    secret.write_text(SECRET)

    def config(url: str, secret_file: Path) -> str:
        return f'[notify.webhook]\nurl = "{url}/hook"\nsecret_file = {toml_string(secret_file)}\n'

    with receiving() as first, receiving() as second:
        hub.write_config(config(first.url, secret))
        with hub.running() as daemon:
            hub.drop("a.md", envelope_text("One?\n", id="a1", type="query"))
            assert webhook(first.wait(1)[0])["id"] == "a1.result"
            hub.write_config(config(second.url, secret))
            daemon.send_signal(signal.SIGHUP)
            daemon.until(lambda: hub.events("config.reloaded"))
            hub.drop("b.md", envelope_text("Two?\n", id="b2", type="query"))
            assert webhook(second.wait(1)[0])["id"] == "b2.result"
            hub.write_config(config(first.url, hub.config.parent / "missing-secret"))
            daemon.send_signal(signal.SIGHUP)
            daemon.until(lambda: hub.events("config.reload_failed"))
            hub.drop("c.md", envelope_text("Three?\n", id="c3", type="query"))
            assert [webhook(post)["id"] for post in second.wait(2)] == ["b2.result", "c3.result"]
        assert len(first.posts) == 1
    (failed,) = hub.events("config.reload_failed")
    assert "missing-secret" in failed["reason"]
