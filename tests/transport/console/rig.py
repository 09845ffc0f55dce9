"""A console to test against: a real `slopd run --http 127.0.0.1:0` over a hub whose actions record
what ran, its allowed_signers outside the hub, and a software passkey that answers WebAuthn calls
as a browser would (`tests.authenticator` rule 5) — so the HTTP-level tests need no browser.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from slopd.core import passkeys, webauthn
from slopd.core.envelope import render
from slopd.core.vocabulary import PROTOCOL
from tests.authenticator import USER_PRESENT, USER_VERIFIED, Authenticator
from tests.conftest import HubDir, RunningDaemon, toml_argv, toml_string

WATCHER = "watcher:testhost"
RECORD = "import os, sys; open(sys.argv[1], 'a').write(os.environ['SLOP_ID'] + '\\n'); print('ran')\n"


@dataclass
class Console:
    hub: HubDir
    daemon: RunningDaemon
    url: str  # http://localhost:PORT, the console's public URL
    allowed: Path
    journal: Path

    def runs(self) -> list[str]:
        return self.journal.read_text().split() if self.journal.exists() else []

    def draft(
        self, ident: str, action: str = "deploy", seat: str = "claude-code", principal: str = "human"
    ) -> str:
        """A draft as `slop_request_approval` writes it, into `outbox/drafts/`; its file name."""
        from slopd.core.envelope import Envelope  # noqa: PLC0415

        name = f"{ident}.md"
        order = Envelope(
            protocol=PROTOCOL, id=ident, type="instigate", sender=principal, to=WATCHER,
            created_at="2026-01-01T00:00:00Z", auth=f"signed:{name}.sig", mode="execute", action=action,
            body=f"Deploy build 42.\n\nRequested by {seat}: tests need it\n", extra={"requested_by": seat},
        )  # fmt: skip
        drafts = self.hub.root / "outbox" / "drafts"
        drafts.mkdir(exist_ok=True)
        (drafts / name).write_bytes(render(order))
        return name


def write_hub(hub: HubDir, tmp: Path, lines: list[str], extra: str = "") -> tuple[Path, Path]:
    allowed = tmp / "trust" / "allowed_signers"
    allowed.parent.mkdir(exist_ok=True)
    allowed.write_text("\n".join(lines) + "\n")
    script, journal = tmp / "record.py", tmp / "journal"
    script.write_text(RECORD)
    command = toml_argv([sys.executable, str(script), str(journal)])
    hub.write_config(
        f'names = ["watcher", "{WATCHER}"]\nsettle = 0.05\n'
        f"[auth]\nallowed_signers = {toml_string(allowed)}\nsig_grace = 600\n"
        f"[actions.deploy]\ncommand = {command}\n"
        f'[actions.vault]\ncommand = {command}\nrequire = "verified"\n'
        f"[actions.pair]\ncommand = {command}\nquorum = 2\n" + extra
    )
    return allowed, journal


@contextmanager
def console(hub: HubDir, tmp: Path, lines: list[str], extra: str = "") -> Iterator[Console]:
    """A served console over `hub`, allowed_signers holding `lines` (`extra`: more config tables);
    stopped after the block."""
    allowed, journal = write_hub(hub, tmp, lines, extra)
    with hub.running("--http", "127.0.0.1:0") as daemon:
        found = daemon.until(lambda: hub.events("console.serving"))
        yield Console(hub, daemon, found[-1]["url"], allowed, journal)


class Browser:
    """A software passkey in an HTTP client: what a browser on the console's page would send."""

    def __init__(self, url: str, passkey: Authenticator | None = None) -> None:
        self.url, self.passkey = url, passkey
        self.client = httpx2.Client(base_url=url, follow_redirects=False, timeout=30)
        self.origin = url
        self.counter = 0

    def close(self) -> None:
        self.client.close()

    def post(
        self, path: str, body: dict[str, Any], *, csrf: str = "", origin: str | None = None
    ) -> httpx2.Response:
        headers = {"Content-Type": "application/json", "Origin": origin or self.origin, "X-CSRF-Token": csrf}
        return self.client.post(path, content=json.dumps(body), headers=headers)

    def answer(self, options: dict[str, Any], *, flags: int = USER_PRESENT | USER_VERIFIED) -> dict[str, Any]:
        """`navigator.credentials.get(options).toJSON()` for this passkey."""
        assert self.passkey is not None
        challenge = passkeys.b64url_decode(options["publicKey"]["challenge"])
        self.counter += 1
        data, client, signature = self.passkey.assertion(
            challenge, origin=self.origin, flags=flags, counter=self.counter
        )
        ident = webauthn.b64url(hashlib.sha256(self.passkey.point).digest())
        return {
            "id": ident, "rawId": ident, "type": "public-key",
            "response": {
                "clientDataJSON": webauthn.b64url(client), "authenticatorData": webauthn.b64url(data),
                "signature": webauthn.b64url(signature),
            },
            "clientExtensionResults": {},
        }  # fmt: skip

    def sign_in(self) -> httpx2.Response:
        begun = self.post("/signin/options", {}).json()
        return self.post(
            "/signin/finish", {"ceremony": begun["ceremony"], "credential": self.answer(begun["options"])}
        )

    def csrf(self, page: str = "/approvals") -> str:
        text = self.client.get(page).text
        marker = '<meta name="csrf-token" content="'
        return text.split(marker, 1)[1].split('"', 1)[0]
