"""The console in a real browser: Debian's chromium driven by Playwright, passkeys made by the
DevTools WebAuthn virtual authenticator (SPEC §15; issue 26 point 6). The slow set.

One console for the module, its scenarios in order: enrol and sign in (alice, then bob in his own
browser), approve a draft (the action runs once, `ssh-keygen -Y verify` accepts the archived
signature), decline one (the agent's error reply), a 2-of-2 quorum by two passkeys, a tampered
console-made order refused, the approvals page at 390×844 without horizontal scroll, and a
screenshot of every page at desktop and phone size (docs/screenshots/, written when
SLOPD_SCREENSHOTS=1, so a test run never dirties the work tree).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import ROOT
from tests.conftest import SLOPD
from tests.e2e.signing.test_orders import new_hub
from tests.polling import until
from tests.transport.console.rig import Console, console
from tests.transport.http_rig import ledger

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
SSH_KEYGEN = "/usr/bin/ssh-keygen"
ALICE, BOB = "alice@example.com", "bob@example.com"
OPS_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIF6dZTYEu9lKfaU42AFPg6aoc8fwzTz1QvxY9aTQ6rye"
OPS = f'ops@example.com namespaces="slop" {OPS_KEY}'
SCREENSHOTS = ROOT / "docs" / "screenshots"
sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the dev extra)")
if not CHROMIUM.exists():
    pytest.skip("needs Debian's chromium: apt-get install chromium", allow_module_level=True)


@dataclass
class Human:
    principal: str
    page: Any  # playwright Page


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    tmp = tmp_path_factory.mktemp("browser")
    hub = new_hub(tmp)
    with console(hub, tmp, [OPS]) as found:
        yield found


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM))
        yield browser
        browser.close()


def with_passkeys(browser: Any, size: dict[str, int] | None = None) -> Any:
    """A new page whose tab has a virtual platform authenticator (resident keys, UV, auto touch)."""
    page = browser.new_context(viewport=size or {"width": 1280, "height": 800}).new_page()
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable", {"enableUI": False})
    options = {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True,
    }  # fmt: skip
    cdp.send("WebAuthn.addVirtualAuthenticator", {"options": options})
    return page


def enrol(served: Console, page: Any, principal: str) -> str:
    """`slopd console enroll`, the code typed on the enrolment page, `y` at the terminal: the line."""
    hub = served.hub
    command = subprocess.Popen(
        [*SLOPD, "console", "enroll", "--hub", str(hub.root), "--state", str(hub.state),
         "--config", str(hub.config), "--principal", principal],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=hub.env,
    )  # fmt: skip
    assert command.stdout is not None
    assert command.stdin is not None
    first = command.stdout.readline()
    code = re.search(r"enrolment code for \S+: (\S+)", first)
    assert code, first
    page.goto(f"{served.url}/enroll")
    page.get_by_label("One-time code").fill(code.group(1))
    page.get_by_role("button", name="Create passkey").click()
    shown = page.locator(".allowed-line")
    shown.wait_for(state="visible")
    line = str(shown.inner_text())
    reloads = len(hub.events("trust.reloaded"))
    command.stdin.write("y\n")
    command.stdin.flush()
    out, err = command.communicate(timeout=60)
    assert command.returncode == 0, out + err
    assert line in out
    assert line in served.allowed.read_text().splitlines()
    # No signal: the daemon re-reads allowed_signers when it changes (SPEC §14, docs/setup.md).
    served.daemon.until(lambda: len(hub.events("trust.reloaded")) > reloads)
    return line


def sign_in(served: Console, page: Any) -> None:
    page.goto(f"{served.url}/signin")
    page.get_by_role("button", name="Sign in with passkey").click()
    page.wait_for_url(re.compile(r".*/approvals$"))


@pytest.fixture(scope="module")
def alice(served: Console, chromium: Any) -> Human:
    page = with_passkeys(chromium)
    line = enrol(served, page, ALICE)
    assert line.startswith(f'{ALICE} namespaces="slop" sk-ecdsa-sha2-nistp256@openssh.com AAAA')
    sign_in(served, page)
    return Human(ALICE, page)


@pytest.fixture(scope="module")
def bob(served: Console, chromium: Any) -> Human:
    page = with_passkeys(chromium)
    enrol(served, page, BOB)
    sign_in(served, page)
    return Human(BOB, page)


def approve(served: Console, human: Human, where: str, name: str) -> None:
    page = human.page
    page.goto(f"{served.url}/approvals")
    page.get_by_role("link", name=name).click()
    page.get_by_role("button", name="Approve with passkey").click()
    page.wait_for_url(re.compile(r".*/approvals\?done=approved"))


def test_enrol_then_sign_in_with_the_passkey(served: Console, alice: Human) -> None:
    """The enrolled line is in allowed_signers (after `y`), and the passkey signs alice in."""
    page = alice.page
    assert page.get_by_role("heading", name="Approvals").is_visible()
    assert page.get_by_text(ALICE).first.is_visible()
    assert served.hub.events("console.signed_in", principal=ALICE)


def test_approving_a_draft_runs_the_action_once_and_ssh_keygen_accepts_the_signature(
    served: Console, alice: Human, tmp_path: Path
) -> None:
    """Approve with passkey: the daemon runs the order once; the archived `.sig` verifies with stock
    ssh-keygen against the allowed_signers line the enrolment added."""
    name = served.draft("20260704t110000z-browser-approve")
    approve(served, alice, "drafts", name)
    ident = name.removesuffix(".md")
    until(lambda: ident in served.runs())

    def copies() -> list[Path]:
        return sorted((served.hub.root / "archive").glob(f"*/{ident}*"))

    until(lambda: any(path.name == f"{name}.sig" for path in copies()))
    (order,) = [path for path in copies() if path.suffix == ".md" and b"from: alice" in path.read_bytes()]
    (signature,) = [path for path in copies() if path.name == f"{name}.sig"]
    verified = subprocess.run(
        [SSH_KEYGEN, "-Y", "verify", "-f", str(served.allowed), "-I", ALICE, "-n", "slop",
         "-s", str(signature)],
        input=order.read_bytes(), capture_output=True, timeout=30, check=False,
    )  # fmt: skip
    assert verified.returncode == 0, verified.stderr
    assert b'Good "slop" signature for alice@example.com with ECDSA-SK key' in verified.stdout
    assert served.runs().count(ident) == 1
    assert (f"{ident}.approved", "claude-code") in ledger(
        served.hub, "SELECT id, recipient FROM replies WHERE in_reply_to = ?", ident
    )


def test_declining_a_draft_sends_the_agent_an_error_reply(served: Console, alice: Human) -> None:
    """Decline with a reason: `declined by alice@example.com: REASON` in the agent's error reply."""
    name = served.draft("20260704t110000z-browser-decline")
    page = alice.page
    page.goto(f"{served.url}/approvals/drafts/{name}")
    page.get_by_label("Why do you decline?").fill("wrong build")
    page.get_by_role("button", name="Decline").click()
    page.wait_for_url(re.compile(r".*/approvals\?done=declined"))
    ident = name.removesuffix(".md")
    text = (served.hub.root / "outbox" / f"{ident}.declined.md").read_text()
    assert "to: claude-code" in text
    assert f"declined by {ALICE}: wrong build" in text
    assert ident not in served.runs()


def test_a_two_of_two_quorum_is_completed_by_two_passkeys(served: Console, alice: Human, bob: Human) -> None:
    """Alice approves a `pair` draft (quorum 2): the order waits in authorized/ for NAME.md.2.sig;
    Bob, signed in with his own passkey, signs it there; the daemon runs it once."""
    name = served.draft("20260704t110000z-browser-pair", action="pair")
    approve(served, alice, "drafts", name)
    ident = name.removesuffix(".md")
    assert (served.hub.root / "authorized" / name).exists()
    assert ident not in served.runs()
    bob.page.goto(f"{served.url}/approvals")
    assert bob.page.get_by_role("link", name=name).is_visible()
    approve(served, bob, "authorized", name)
    until(lambda: ident in served.runs())
    assert served.runs().count(ident) == 1
    (verified,) = served.hub.events("order.verified", id=ident)
    assert verified["principal"] == ALICE
    assert any(BOB in cosigner for cosigner in verified["cosigners"])


def test_a_tampered_console_made_order_is_refused(served: Console, alice: Human) -> None:
    """The signed order of an approval, one byte changed (and a new id), with its `.sig`: refused."""
    name = served.draft("20260704t110000z-browser-original")
    approve(served, alice, "drafts", name)
    ident = name.removesuffix(".md")
    until(lambda: ident in served.runs())
    until(lambda: list((served.hub.root / "archive").glob(f"*/{name}.sig")))
    copies = sorted((served.hub.root / "archive").glob(f"*/{ident}*"))
    order = next(
        path.read_bytes() for path in copies if path.suffix == ".md" and b"from: alice" in path.read_bytes()
    )
    signature = next(path.read_bytes() for path in copies if path.name == f"{name}.sig")
    forged = order.replace(ident.encode(), b"20260704t110000z-browser-forged").replace(
        b"build 42", b"build 43"
    )
    served.hub.drop("20260704t110000z-browser-forged.md.sig", signature, lane="authorized")
    served.hub.drop("20260704t110000z-browser-forged.md", forged, lane="authorized")
    until((served.hub.root / "outbox" / "20260704t110000z-browser-forged.error.md").exists)
    text = (served.hub.root / "outbox" / "20260704t110000z-browser-forged.error.md").read_text()
    assert "webauthn: the challenge is not this file's signed data" in text
    assert "20260704t110000z-browser-forged" not in served.runs()


def test_the_approvals_page_fits_a_phone_without_horizontal_scroll(
    served: Console, alice: Human, chromium: Any
) -> None:
    """At 390×844 the approvals page and an approval page (long lines and digests) do not scroll sideways."""
    served.draft("20260704t110000z-browser-a-rather-long-draft-name-for-a-narrow-screen")
    page = alice.page
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        for path in (
            "/approvals",
            "/approvals/drafts/20260704t110000z-browser-a-rather-long-draft-name-for-a-narrow-screen.md",
        ):
            page.goto(f"{served.url}{path}")
            widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            assert widths[0] <= widths[1], (path, widths)
    finally:
        page.set_viewport_size({"width": 1280, "height": 800})


PAGES = {
    "approvals": "/approvals",
    "approval": "/approvals/drafts/20260704t110000z-browser-a-rather-long-draft-name-for-a-narrow-screen.md",
    "activity": "/activity",
    "standups": "/standups",
    "batons": "/batons",
    "hub": "/hub",
    "signin": "/signin",
}


@pytest.mark.skipif(
    os.environ.get("SLOPD_SCREENSHOTS") != "1", reason="set SLOPD_SCREENSHOTS=1 to refresh docs/screenshots/"
)
def test_screenshots_of_every_page_at_desktop_and_phone_size(served: Console, alice: Human) -> None:
    """docs/screenshots/PAGE-desktop.png and PAGE-phone.png for every page (artifacts, never compared)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = alice.page
    for size, viewport in (
        ("desktop", {"width": 1280, "height": 800}),
        ("phone", {"width": 390, "height": 844}),
    ):
        page.set_viewport_size(viewport)
        for label, path in PAGES.items():
            page.goto(f"{served.url}{path}")
            page.screenshot(path=str(SCREENSHOTS / f"{label}-{size}.png"))
            assert (SCREENSHOTS / f"{label}-{size}.png").stat().st_size > 1000
