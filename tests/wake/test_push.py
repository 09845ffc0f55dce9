"""The pushes' delivery (SPEC §16), against a real HTTP receiver on 127.0.0.1: retried 2, 4, 8 s (here
shortened through the `delays` seam) then logged as failed; delivered in order; never blocking the
caller; closed within its time at shutdown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from slopd.core import notices
from slopd.core.errors import SetupError
from slopd.shell import log, push
from tests.ports import free_port
from tests.wake.receiver import receiving

FAST = (0.01, 0.02, 0.04)


def test_the_default_retry_delays_are_two_four_and_eight_seconds() -> None:
    """SPEC §16's schedule is the default of every pusher the daemon builds."""
    assert push.DELAYS == (2.0, 4.0, 8.0)
    pusher = push.ntfy("http://127.0.0.1:9/t", None, log.get(), base=lambda: None)
    try:
        assert pusher.delays == (2.0, 4.0, 8.0)
    finally:
        pusher.close(0.5)


def test_a_receiver_answering_500_gets_four_attempts_then_a_logged_failure() -> None:
    """The first try and three retries, each a real POST; then `notify.failed` with every reason."""
    with receiving(default=500) as receiver, log.capture() as logs:
        pusher = push.webhook(receiver.url + "/hook", "s", log.get(), base=lambda: None, delays=FAST)
        pusher.push(notices.alert("the disk is full"))
        posts = receiver.wait(4)
        pusher.close(5)
    assert len(posts) == 4
    assert len({post.body for post in posts}) == 1  # the same signed bytes each time
    (failed,) = [event for event in logs if event["event"] == "notify.failed"]
    assert failed["reasons"] == ["HTTP 500"] * 4
    assert failed["to"] == "webhook http://127.0.0.1"  # kind and host only, never the URL's path
    assert not [event for event in logs if event["event"] == "notify.delivered"]


def test_a_receiver_that_recovers_is_delivered_to_on_the_retry() -> None:
    """500, 503, then 200: delivered at the third attempt, logged with it; no failure."""
    with receiving([500, 503]) as receiver, log.capture() as logs:
        pusher = push.ntfy(receiver.url + "/topic", "tk", log.get(), base=lambda: "http://h", delays=FAST)
        pusher.push(notices.alert("recovering"))
        receiver.wait(3)
        pusher.close(5)
    (delivered,) = [event for event in logs if event["event"] == "notify.delivered"]
    assert (delivered["attempt"], delivered["status"]) == (3, 200)
    assert not [event for event in logs if event["event"] == "notify.failed"]


def test_an_unreachable_receiver_fails_with_the_connection_error_named() -> None:
    """Nothing listens on the port: four refusals, each named, then the failure."""
    port = free_port()
    with log.capture() as logs:
        pusher = push.webhook(f"http://127.0.0.1:{port}/x", "s", log.get(), base=lambda: None, delays=FAST)
        pusher.push(notices.alert("nobody home"))
        pusher.close(5)
    (failed,) = [event for event in logs if event["event"] == "notify.failed"]
    assert len(failed["reasons"]) == 4
    assert all("ConnectionRefusedError" in reason for reason in failed["reasons"])


def test_a_url_the_http_client_cannot_use_is_a_failed_attempt_not_a_dead_worker() -> None:
    """An attempt that fails any way at all (here a port out of range) is that attempt's failure:
    the failure is logged and the next notice is still tried — the worker never dies."""
    with log.capture() as logs:
        pusher = push.webhook("http://127.0.0.1:99999/x", "s", log.get(), base=lambda: None, delays=FAST)
        pusher.push(notices.alert("one"))
        pusher.push(notices.alert("two"))
        pusher.close(5)
    failed = [event for event in logs if event["event"] == "notify.failed"]
    assert len(failed) == 2
    assert all("ValueError" in reason for event in failed for reason in event["reasons"])


def test_push_returns_at_once_while_the_receiver_holds_its_answer_and_order_is_kept() -> None:
    """A receiver that does not answer yet: `push` still returns at once; released, it gets both, in order."""
    with receiving(hold=True) as receiver:
        pusher = push.webhook(receiver.url, "s", log.get(), base=lambda: None, delays=FAST)
        pusher.push(notices.alert("first"))
        pusher.push(notices.alert("second"))
        assert receiver.posts == []  # both calls returned; nothing has been answered yet
        receiver.release()
        posts = receiver.wait(2)
        pusher.close(5)
    assert [json.loads(post.body)["text"] for post in posts] == ["first", "second"]


def test_close_gives_up_on_retries_within_its_time_and_says_what_it_abandoned() -> None:
    """Default delays (14 s of retries) against a failing receiver: close(1) stops the retries — the
    failure is logged after the one attempt made, and no second POST comes."""
    with receiving(default=500) as receiver, log.capture() as logs:
        pusher = push.webhook(receiver.url, "s", log.get(), base=lambda: None)
        pusher.push(notices.alert("one"))
        receiver.wait(1)
        pusher.close(1.0)
        (failed,) = [event for event in logs if event["event"] == "notify.failed"]
        assert (failed["attempts"], len(receiver.posts)) == (1, 1)
    assert [event["event"] for event in logs if event["event"].startswith("notify.")] == ["notify.failed"]


@pytest.mark.parametrize("content", ["", "\n\n", "x" * 5000])
def test_an_unusable_secret_file_is_a_setup_error_naming_it(tmp_path: Path, content: str) -> None:
    """Empty, blank or over 4 KiB: refused, naming the file; a missing file too."""
    path = tmp_path / "secret"
    path.write_text(content)
    with pytest.raises(SetupError, match=str(path)):
        push.read_secret(path, "webhook secret")
    with pytest.raises(SetupError, match="cannot read"):
        push.read_secret(tmp_path / "absent", "webhook secret")
    (tmp_path / "ok").write_text("  s3cret \nignored\n")
    assert push.read_secret(tmp_path / "ok", "webhook secret") == "s3cret"
