"""The notices' pure parts (SPEC §16): priority by class, the ntfy headers, the signed webhook body."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

from hypothesis import given
from hypothesis import strategies as st

from slopd.core import notices
from slopd.core.envelope import Envelope
from slopd.core.replies import SHORT_TEXT, error, result

WHEN = __import__("datetime").datetime(2026, 7, 4, 7, 15, 53, tzinfo=__import__("datetime").UTC)


def _result(text: str) -> Envelope:
    return result(answering="Q1", to="alice", text=text, mode="discuss", watcher="watcher:w", now=WHEN)


def test_priority_is_high_for_pings_and_approvals_and_default_for_hybrid_results() -> None:
    """ping, approval and alert 4; hybrid, deliverable and the coalesced summary 3 (SPEC §16)."""
    ping = notices.of_reply(_result("short answer"), "outbox/q1.result.md")
    hybrid = notices.of_reply(_result("A long answer. " * 40), "outbox/q1.result.md")
    assert ping is not None
    assert hybrid is not None
    assert (ping.reply_class, notices.priority(ping)) == ("ping", 4)
    assert (hybrid.reply_class, notices.priority(hybrid)) == ("hybrid", 3)
    assert notices.priority(notices.approval("drafts", "d.md", "sign it")) == 4
    assert notices.priority(notices.alert("two homes")) == 4
    assert notices.priority(notices.coalesced("3 more")) == 3


def test_a_reply_notice_links_to_its_envelopes_page_and_carries_no_payload() -> None:
    """The link is /activity/<answered id, lower case>; a hybrid's text is the summary and the path."""
    body = "First sentence of the answer. Second one.\n\n" + "A later paragraph, SECRET-TAIL. " * 40
    notice = notices.of_reply(_result(body), "outbox/q1.result.md")
    assert notice is not None
    assert notice.link("https://hub.example/") == "https://hub.example/activity/q1"
    assert notice.link(None) is None
    assert "SECRET-TAIL" not in notice.text
    assert len(notice.text) <= SHORT_TEXT + len(" — outbox/q1.result.md")
    silent = notices.of_reply(
        error(
            answering="Q1", to="a", reasons=["x"], file="inbox/q.md", mode="discuss", watcher="w", now=WHEN
        ),
        "outbox/q1.error.md",
    )
    assert silent is not None
    assert silent.title == "error for Q1"


def _incoming(reply_class: str | None, body: str) -> Envelope:
    extra = {} if reply_class is None else {"class": reply_class}
    return Envelope(
        protocol="slop.v1", id="r1", type="result", sender="bob", to="alice", in_reply_to="q1",
        created_at=None, auth="none", mode=None, body=body, extra=extra,
    )  # fmt: skip


def test_an_incoming_reply_is_told_as_its_own_class_says_never_its_payload() -> None:
    """An agent's reply in the inbox is told as slopd's own are (SPEC §5, §16): nothing for a silent
    one, only the path for a deliverable, a summary and the path for a hybrid; without a class, in
    short — never the rest of the body."""
    secret = "The deploy key is SECRET-IN-BODY. " * 30
    assert notices.of_incoming(_incoming("silent", secret), "inbox/r.md") is None
    deliverable = notices.of_incoming(_incoming("deliverable", secret), "inbox/r.md")
    assert deliverable is not None
    assert (deliverable.text, deliverable.reply_class) == ("inbox/r/", "deliverable")
    hybrid = notices.of_incoming(_incoming("hybrid", "Done. " + secret), "inbox/r.md")
    assert hybrid is not None
    assert hybrid.reply_class == "hybrid"
    assert hybrid.text.endswith(" — inbox/r.md")
    assert len(hybrid.text) <= SHORT_TEXT + len(" — inbox/r.md")
    for unknown in (None, "loud"):
        told = notices.of_incoming(_incoming(unknown, secret), "inbox/r.md")
        assert told is not None
        assert (told.reply_class, len(told.text) <= SHORT_TEXT) == ("ping", True)
        assert told.link("https://h.example") == "https://h.example/activity/q1"


def test_ntfy_headers_carry_title_priority_click_and_the_token() -> None:
    """Click only with a base; Authorization only with a token; a non-ASCII title is RFC 2047."""
    notice = notices.approval("drafts", "20260704t1-approve-deploy.md", "alice asks: ünïcode")
    post = notices.ntfy(notice, base="http://127.0.0.1:8787", token="tk_1")
    headers = dict(post.headers)
    assert headers["Priority"] == "4"
    assert headers["Click"] == "http://127.0.0.1:8787/approvals/drafts/20260704t1-approve-deploy.md"
    assert headers["Authorization"] == "Bearer tk_1"
    assert headers["Title"] == "slopd: approval requested: 20260704t1-approve-deploy.md"
    assert post.body == "alice asks: ünïcode".encode()
    bare = dict(notices.ntfy(notices.alert("x"), base=None, token=None).headers)
    assert "Click" not in bare
    assert "Authorization" not in bare
    odd = notices.Notice(event="alert", text="t", title="héllo", reply_class="alert")
    title = dict(notices.ntfy(odd, base=None, token=None).headers)["Title"]
    assert title.isascii()
    assert title.startswith("=?UTF-8?B?")
    assert base64.b64decode(title[10:-2]).decode() == "slopd: héllo"


def test_the_webhook_body_is_the_five_keys_and_its_signature_is_hmac_sha256_of_those_bytes() -> None:
    """{event, id, class, text, link}; the header is sha256=HMAC(secret, exact body)."""
    notice = notices.approval("authorized", "o1.md", "waits for bob", id="o-1")
    post = notices.webhook(notice, base="http://h:1", secret=b"s3cret")
    assert json.loads(post.body) == {
        "event": "approval",
        "id": "o-1",
        "class": "approval",
        "text": "waits for bob",
        "link": "http://h:1/approvals/authorized/o1.md",
    }
    header = dict(post.headers)["X-Slopd-Signature"]
    assert header == "sha256=" + hmac.new(b"s3cret", post.body, hashlib.sha256).hexdigest()
    assert notices.verify(b"s3cret", post.body, header)
    assert not notices.verify(b"other", post.body, header)
    assert not notices.verify(b"s3cret", post.body, None)


@given(st.binary(min_size=1, max_size=200), st.integers(min_value=0), st.integers(min_value=1, max_value=255))
def test_flipping_any_byte_of_a_signed_body_fails_verification(body: bytes, where: int, flip: int) -> None:
    """A receiver's check refuses a body that differs from the signed one by any byte."""
    header = notices.signature(b"key", body)
    changed = bytearray(body)
    changed[where % len(body)] ^= flip
    assert notices.verify(b"key", body, header)
    assert not notices.verify(b"key", bytes(changed), header)
