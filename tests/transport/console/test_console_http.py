"""The console over a real `slopd run --http` on loopback, driven by a software passkey (no
browser): sign-in by allowed_signers' passkeys only, humans only, Origin and CSRF on every state
change, strict headers, rate-limited sign-in, approve → the daemon runs the order, decline → the
agent's error reply, and every act logged (SPEC §15; the browser suite is test_browser.py)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx2
import pytest

from slopd.core import passkeys, sshsig
from tests.authenticator import Authenticator
from tests.conftest import HubDir, envelope_text
from tests.e2e.signing.test_orders import new_hub
from tests.polling import until
from tests.transport.console.rig import WATCHER, Browser, Console, console
from tests.transport.http_rig import ledger, with_tokens

ALICE = "alice@example.com"
PASSKEY = Authenticator.ecdsa("alice's phone", application="localhost")
ELSEWHERE = Authenticator.ecdsa("alice's phone", application="example.com")  # another RP ID
STRANGER = Authenticator.ecdsa("mallory's phone", application="localhost")  # not in allowed_signers


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    tmp = tmp_path_factory.mktemp("console")
    hub = new_hub(tmp)
    tokens = with_tokens(hub, ("claude-code",))
    lines = [
        passkeys.key_line(ALICE, PASSKEY.point, "localhost"),
        passkeys.key_line(ALICE, ELSEWHERE.point, "example.com"),
    ]
    http = hub.config.read_text()  # with_tokens wrote [http]; console() writes the rest after it
    with console(hub, tmp, lines, http) as found:
        found.tokens = tokens  # type: ignore[attr-defined]
        yield found


@pytest.fixture
def browser(served: Console) -> Iterator[Callable[[Authenticator | None], Browser]]:
    """Software browsers for this console, closed after the test."""
    made: list[Browser] = []

    def make(passkey: Authenticator | None = PASSKEY) -> Browser:
        made.append(Browser(served.url, passkey))
        return made[-1]

    yield make
    for each in made:
        each.close()


@pytest.fixture
def alice(browser: Callable[[Authenticator | None], Browser]) -> Browser:
    signed_in = browser(PASSKEY)
    answer = signed_in.sign_in()
    assert answer.status_code == 200, answer.text
    return signed_in


def test_a_passkey_in_allowed_signers_for_this_rp_id_signs_in_as_its_principal(
    served: Console, browser: Callable[[Authenticator | None], Browser]
) -> None:
    """Sign-in with alice's passkey gives a session for alice@example.com (logged with the key)."""
    signed = browser(PASSKEY)
    answer = signed.sign_in()
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"redirect": "/approvals"}
    page = signed.client.get("/approvals")
    assert page.status_code == 200
    assert ALICE in page.text
    assert served.hub.events("console.signed_in", principal=ALICE, key=PASSKEY.public_key.fingerprint)


def test_after_sign_in_only_a_console_page_is_followed(
    served: Console, browser: Callable[[Authenticator | None], Browser]
) -> None:
    """No open redirect: `next=/\\evil.example` (browsers read `/\\` as `//`) is neither put in the
    sign-in page nor followed after the ceremony; a console path is."""
    signed = browser(PASSKEY)
    page = signed.client.get("/signin", params={"next": "/\\evil.example"}).text
    assert "evil.example" not in page
    for wanted, went in (("/\\evil.example", "/approvals"), ("/activity", "/activity")):
        begun = signed.post("/signin/options", {}).json()
        credential = signed.answer(begun["options"])
        answer = signed.post(
            "/signin/finish", {"ceremony": begun["ceremony"], "credential": credential, "next": wanted}
        )
        assert answer.json() == {"redirect": went}, wanted


@pytest.mark.parametrize("passkey", [STRANGER, ELSEWHERE], ids=["not-in-allowed_signers", "another-rp-id"])
def test_a_passkey_not_listed_for_this_rp_id_cannot_sign_in(
    served: Console, passkey: Authenticator, browser: Callable[[Authenticator | None], Browser]
) -> None:
    """A key absent from allowed_signers, or listed for another RP ID, gets 403 and no cookie."""
    refused = browser(passkey)
    answer = refused.sign_in()
    assert answer.status_code == 403, answer.text
    assert "not one of allowed_signers' keys for this console" in answer.json()["error"]
    assert not answer.cookies
    assert refused.client.get("/approvals").status_code == 303


def test_the_session_cookie_is_httponly_samesite_strict_and_not_secure_on_loopback(
    served: Console, browser: Callable[[Authenticator | None], Browser]
) -> None:
    """Set-Cookie: `slopd-session=…; HttpOnly; Path=/; SameSite=strict`, without `Secure` on http://localhost."""
    answer = browser(PASSKEY).sign_in()
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith("slopd-session=")
    attributes = {part.strip().split("=")[0].lower() for part in cookie.split(";")[1:]}
    assert {"httponly", "path", "samesite", "max-age"} <= attributes
    assert "samesite=strict" in cookie.lower()
    assert "secure" not in attributes


@pytest.mark.parametrize(
    "page", ["/approvals", "/activity", "/standups", "/batons", "/hub", "/approvals/drafts/x.md"]
)
def test_an_agent_bearer_token_opens_nothing_of_the_console(served: Console, page: str) -> None:
    """With a valid seat token and no session, every page redirects to sign-in and shows nothing."""
    token = served.tokens["claude-code"]  # type: ignore[attr-defined]
    answer = httpx2.get(
        served.url + page, headers={"Authorization": f"Bearer {token}"}, follow_redirects=False
    )
    assert answer.status_code == 303
    assert answer.headers["location"].startswith("/signin")
    assert answer.text == ""


def test_a_console_session_cannot_post_as_a_seat(served: Console, alice: Browser) -> None:
    """POST /v1/envelopes with the session cookie and no token: 401, nothing in inbox/."""
    envelope = (
        b"---\nprotocol: slop.v1\nid: by-cookie\ntype: note\nfrom: alice@example.com\nto: watcher\n---\nhi\n"
    )
    answer = alice.client.post("/v1/envelopes", content=envelope, headers={"Content-Type": "text/markdown"})
    assert answer.status_code == 401
    assert "by-cookie.md" not in served.hub.lane("inbox")


def test_every_page_carries_a_strict_content_security_policy(served: Console, alice: Browser) -> None:
    """Only slopd's own scripts and styles; no inline script, no framing, no foreign referrer, nosniff."""
    for page in ("/signin", "/approvals", "/activity", "/hub"):
        headers = alice.client.get(page).headers
        policy = headers["content-security-policy"]
        assert "script-src 'self';" in policy
        assert "style-src 'self';" in policy
        assert "default-src 'none'" in policy
        assert "frame-ancestors 'none'" in policy
        assert "unsafe-inline" not in policy
        assert headers["x-content-type-options"] == "nosniff"
        assert "<script>" not in alice.client.get(page).text


def test_a_decline_from_a_foreign_origin_is_refused_and_changes_nothing(
    served: Console, alice: Browser
) -> None:
    """Origin: https://evil.example on a state change is 403, the draft stays, no reply is sent."""
    name = served.draft("20260704t100000z-foreign")
    form = {"csrf": alice.csrf(), "reason": "no"}
    answer = alice.client.post(
        f"/approvals/drafts/{name}/decline", data=form, headers={"Origin": "https://evil.example"}
    )
    assert answer.status_code == 403
    assert "Origin" in answer.text
    assert (served.hub.root / "outbox" / "drafts" / name).exists()
    assert not ledger(served.hub, "SELECT id FROM replies WHERE in_reply_to = ?", "20260704t100000z-foreign")


def test_a_replayed_form_without_the_session_or_its_csrf_token_is_refused(
    served: Console, alice: Browser
) -> None:
    """The same decline form without a cookie is 401; with the cookie but no CSRF token, 403."""
    name = served.draft("20260704t100000z-replayed")
    csrf = alice.csrf()
    bare = httpx2.post(
        f"{served.url}/approvals/drafts/{name}/decline", data={"csrf": csrf, "reason": "no"},
        headers={"Origin": served.url}, follow_redirects=False,
    )  # fmt: skip
    assert bare.status_code == 401
    missing = alice.client.post(
        f"/approvals/drafts/{name}/decline", data={"reason": "no"}, headers={"Origin": served.url}
    )
    assert missing.status_code == 403
    assert "CSRF" in missing.text
    assert (served.hub.root / "outbox" / "drafts" / name).exists()


def test_a_drafts_ceremony_cannot_sign_an_order_of_the_same_name(served: Console, alice: Browser) -> None:
    """A ceremony begun for drafts/NAME, posted to authorized/NAME/approve, is refused (400) and writes
    nothing: it signs only the item whose bytes the human was shown."""
    name = served.draft("20260704t100000z-same-name")
    page = alice.client.get(f"/approvals/drafts/{name}")
    pin = re.search(r'name="pin" value="([^"]+)"', page.text)
    assert pin, page.text
    csrf = alice.csrf(f"/approvals/drafts/{name}")
    options = alice.post(f"/approvals/drafts/{name}/options", {"pin": pin.group(1)}, csrf=csrf).json()
    answer = {"ceremony": options["ceremony"], "credential": alice.answer(options["options"])}
    before = sorted(path.name for path in (served.hub.root / "authorized").iterdir())
    refused = alice.post(f"/approvals/authorized/{name}/approve", answer, csrf=csrf)
    assert refused.status_code == 400, refused.text
    assert sorted(path.name for path in (served.hub.root / "authorized").iterdir()) == before


def test_approving_a_draft_writes_the_order_and_its_sig_and_the_daemon_runs_it(
    served: Console, alice: Browser
) -> None:
    """The order (from alice, fresh created_at) and a webauthn SSHSIG go into authorized/; the daemon
    runs it once; the agent's feed gets an ack naming alice; the draft is archived; all logged."""
    name = served.draft("20260704t100000z-approve-me")
    page = alice.client.get(f"/approvals/drafts/{name}")
    assert page.status_code == 200
    pin = re.search(r'name="pin" value="([^"]+)"', page.text)
    assert pin, page.text
    shown = re.search(r'<pre class="raw"[^>]*>(.*?)</pre>', page.text, re.S)
    assert shown
    csrf = alice.csrf(f"/approvals/drafts/{name}")
    begun = alice.post(f"/approvals/drafts/{name}/options", {"pin": pin.group(1)}, csrf=csrf)
    assert begun.status_code == 200, begun.text
    options = begun.json()
    answer = {"ceremony": options["ceremony"], "credential": alice.answer(options["options"])}
    done = alice.post(f"/approvals/drafts/{name}/approve", answer, csrf=csrf)
    assert done.status_code == 200, done.text
    ident = "20260704t100000z-approve-me"
    until(lambda: ident in served.runs())
    (approved,) = served.hub.events("console.approved", principal=ALICE)[-1:]
    assert approved["key"] == PASSKEY.public_key.fingerprint

    def copies() -> list[Path]:
        return sorted((served.hub.root / "archive").glob(f"*/{ident}*"))

    until(lambda: any(path.name == f"{name}.sig" for path in copies()))
    (order,) = [
        path.read_bytes() for path in copies() if path.suffix == ".md" and b"from: alice" in path.read_bytes()
    ]
    (signature,) = [path.read_bytes() for path in copies() if path.name == f"{name}.sig"]
    assert approved["sha256"] == __import__("hashlib").sha256(order).hexdigest()
    assert b"from: alice@example.com" in order
    assert isinstance(sshsig.verify(order, signature), sshsig.Verified)
    rows = ledger(
        served.hub, "SELECT id, type, recipient FROM replies WHERE in_reply_to = ? ORDER BY rowid", ident
    )
    assert (f"{ident}.approved", "ack", "claude-code") in rows
    notice = (served.hub.root / "outbox" / f"{ident}.approved.md").read_text()
    assert f"Approved by {ALICE} ({PASSKEY.public_key.fingerprint})" in notice
    assert not (served.hub.root / "outbox" / "drafts" / name).exists()
    assert served.runs().count(ident) == 1


def test_an_order_held_for_a_quorum_is_listed_with_its_signers_and_its_page_shows_its_bytes(
    served: Console, alice: Browser
) -> None:
    """An order in authorized/ with its first signature and not the second is listed naming both
    (the lane read as `slopd status` reads it); its page shows its exact bytes and their sha256,
    and the sidecar alice's signature would go into."""
    ident = "20260704t100000z-held-for-two"
    name = f"{ident}.md"
    text = envelope_text(
        "Pair up on the release.\n", id=ident, type="instigate", from_="bob@example.com", to=WATCHER,
        mode="execute", action="pair", auth=f"signed:{name}.sig,{name}.2.sig",
    )  # fmt: skip
    served.hub.drop(f"{name}.sig", "a signature\n", lane="authorized")
    served.hub.drop(name, text, lane="authorized")
    try:
        listing = alice.client.get("/approvals").text
        assert f"from bob@example.com; signed: {name}.sig; waiting for {name}.2.sig" in listing
        page = alice.client.get(f"/approvals/authorized/{name}")
        assert page.status_code == 200
        assert hashlib.sha256(text.encode()).hexdigest() in page.text
        assert f"authorized/{name}.2.sig" in page.text
    finally:
        for leftover in (name, f"{name}.sig"):
            (served.hub.root / "authorized" / leftover).unlink(missing_ok=True)


def test_declining_a_draft_sends_the_agent_an_error_reply_and_archives_it(
    served: Console, alice: Browser
) -> None:
    """`declined by alice@example.com: REASON` reaches claude-code's feed; the draft is archived."""
    name = served.draft("20260704t100000z-decline-me")
    form = {"csrf": alice.csrf(), "reason": "not on a Friday"}
    answer = alice.client.post(f"/approvals/drafts/{name}/decline", data=form, headers={"Origin": served.url})
    assert answer.status_code == 303, answer.text
    ident = "20260704t100000z-decline-me"
    rows = ledger(served.hub, "SELECT id, type, recipient FROM replies WHERE in_reply_to = ?", ident)
    assert rows == [(f"{ident}.declined", "error", "claude-code")]
    text = (served.hub.root / "outbox" / f"{ident}.declined.md").read_text()
    assert f"declined by {ALICE}: not on a Friday" in text
    assert not (served.hub.root / "outbox" / "drafts" / name).exists()
    assert name in served.hub.archived()
    (declined,) = served.hub.events("console.declined", draft=f"outbox/drafts/{name}")
    assert (declined["principal"], declined["key"]) == (ALICE, PASSKEY.public_key.fingerprint)
    token = served.tokens["claude-code"]  # type: ignore[attr-defined]
    feed = httpx2.get(f"{served.url}/v1/replies", headers={"Authorization": f"Bearer {token}"})
    assert feed.status_code == 200, feed.text
    assert f"{ident}.declined" in [reply["id"] for reply in feed.json()["replies"]]


def test_a_draft_under_another_envelopes_id_never_touches_that_envelopes_replies(
    served: Console, alice: Browser
) -> None:
    """A draft is the agent's to write, id and all: declining one that borrows the id of an
    envelope already answered adds `ID.declined` for the requester and leaves that envelope's own
    `ID.error` (its terminal reply) as it was — never replaced, never counted as already sent."""
    ident = "20260704t100500z-someone-elses"
    earlier = served.hub.root / "outbox" / f"{ident}.error.md"
    earlier.write_text("---\nprotocol: slop.v1\n---\nthe envelope's own answer\n")
    name = served.draft(ident)
    form = {"csrf": alice.csrf(), "reason": "not yours"}
    answer = alice.client.post(f"/approvals/drafts/{name}/decline", data=form, headers={"Origin": served.url})
    assert answer.status_code == 303, answer.text
    assert earlier.read_text() == "---\nprotocol: slop.v1\n---\nthe envelope's own answer\n"
    assert (served.hub.root / "outbox" / f"{ident}.declined.md").exists()


def test_a_decline_needs_a_reason(served: Console, alice: Browser) -> None:
    """An empty reason is 400 naming why; the draft stays."""
    name = served.draft("20260704t100000z-no-reason")
    answer = alice.client.post(
        f"/approvals/drafts/{name}/decline",
        data={"csrf": alice.csrf(), "reason": " "},
        headers={"Origin": served.url},
    )
    assert answer.status_code == 400
    assert "say why you decline" in answer.text
    assert (served.hub.root / "outbox" / "drafts" / name).exists()


def test_sign_in_is_rate_limited_per_client(hub: HubDir, tmp_path: Path) -> None:
    """After 30 ceremonies begun in a minute, the next gets 429 with Retry-After (on its own console,
    so the other tests' sign-ins do not count)."""
    with console(hub, tmp_path, [passkeys.key_line(ALICE, PASSKEY.point, "localhost")]) as own:
        browser = Browser(own.url, STRANGER)
        try:
            statuses = [browser.post("/signin/options", {}).status_code for _ in range(31)]
            assert statuses[:30] == [200] * 30, statuses
            assert statuses[30] == 429
            refused = browser.post("/signin/options", {})
            assert refused.status_code == 429
            assert int(refused.headers["retry-after"]) >= 1
            assert "too many sign-in attempts" in refused.json()["error"]
        finally:
            browser.close()
